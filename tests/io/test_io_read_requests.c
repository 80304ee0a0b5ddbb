/* How many storage requests a collective read makes where read calls are
 * request-bound (io/coll/route.c, rule 5): IO500 ior-hard's pattern, each
 * rank's record of 47,008 bytes after the previous rank's, read on one node
 * or across nodes with a read call costing as much as 1 MiB of transfer
 * (the hint, as `pario calibrate` finds on a network file system) and
 * domains aligned to 128 KiB (the block size FUSE reports). One aggregator
 * reads each call's span in one request; cut at the 128 KiB boundaries the
 * same call took two or three. So do records of 128 KiB (adjacent pieces
 * under COLL_REQUEST_BOUND_PIECE), which ranks read on their own before;
 * records of 1 MiB are still read by each rank on its own, one request per
 * rank and call. Noncontiguous memory is staged in larger steps there
 * (test_staged_read). The test counts the pread calls the process makes (it
 * defines pread, which the library's calls reach first) and checks every
 * byte. */
#include <stdlib.h>
#define IOT_COUNT_PREADS
#include "io_test.h"

enum { CALLS = 3 };
static int64_t RECORD; /* the record size of the pass */

static int rank, nranks;

static unsigned char byte_at(int64_t off) {
    return (unsigned char)(off * 7 + off / 251 + 3);
}

static int64_t record_at(int call) {
    return ((int64_t)call * nranks + rank) * RECORD;
}

/* Every rank writes its records of all calls, on its own. */
static void write_records(pario_file *fh) {
    unsigned char *out = malloc(RECORD);
    for (int j = 0; j < CALLS; j++) {
        for (int64_t i = 0; i < RECORD; i++)
            out[i] = byte_at(record_at(j) + i);
        PT_EQ(pario_file_write_at(fh, record_at(j), out, RECORD, MPI_BYTE, NULL), PARIO_OK);
    }
    free(out);
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    MPI_Barrier(MPI_COMM_WORLD);
    PT_EQ(pario_file_sync(fh), PARIO_OK);
}

/* The collective reads of every call; returns the preads of all ranks. */
static long long read_records(pario_file *fh) {
    unsigned char *in = malloc(RECORD);
    long long all = 0;
    iot_preads = 0;
    for (int j = 0; j < CALLS; j++) {
        memset(in, 0, RECORD);
        PT_EQ(pario_file_read_at_all(fh, record_at(j), in, RECORD, MPI_BYTE, NULL), PARIO_OK);
        int64_t bad = 0;
        for (int64_t i = 0; i < RECORD; i++)
            bad += in[i] != byte_at(record_at(j) + i);
        PT_EQ(bad, 0);
    }
    long long mine = iot_preads;
    MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    free(in);
    return all;
}

/* Noncontiguous memory (4 KiB blocks, a 4 KiB gap after each) read from 1 MiB
 * of the file on this rank's own: staged in steps of 4 MiB where reads are
 * request-bound, so one request; in 256 KiB steps elsewhere, four
 * (io/indep/access.c, stage_step). */
static void test_staged_read(const char *path, const char *const *hints, long long want) {
    const int64_t len = 1 << 20, at = (int64_t)rank << 20;
    pario_file *fh = iot_open(path, MPI_MODE_CREATE | MPI_MODE_RDWR, hints);
    if (!fh)
        return;
    unsigned char *mem = malloc(2 * len);
    for (int64_t i = 0; i < len; i++)
        mem[i] = byte_at(at + i);
    PT_EQ(pario_file_write_at(fh, at, mem, len, MPI_BYTE, NULL), PARIO_OK);
    MPI_Datatype gapped;
    MPI_Type_vector((int)(len / 4096), 4096, 8192, MPI_BYTE, &gapped);
    MPI_Type_commit(&gapped);
    memset(mem, 0, 2 * len);
    iot_preads = 0;
    PT_EQ(pario_file_read_at(fh, at, mem, 1, gapped, NULL), PARIO_OK);
    PT_EQ(iot_preads, want);
    int64_t bad = 0;
    for (int64_t i = 0; i < len; i++)
        bad += mem[i / 4096 * 8192 + i % 4096] != byte_at(at + i);
    PT_EQ(bad, 0);
    MPI_Type_free(&gapped);
    free(mem);
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *path = ptest_path("read-requests");
    if (rank == 0)
        remove(path);
    MPI_Barrier(MPI_COMM_WORLD);
    const char *request_bound[] = {"pario_read_call_bytes", "1048576", "striping_unit", "131072",
                                   NULL};
    /* One request per call, across nodes and on one node alike (where reads
     * are request-bound, rule 2's own reads do not apply); at 1 MiB one per
     * rank and call. */
    const int64_t records[] = {47008, 128 << 10, 1 << 20};
    const long long want[] = {CALLS, CALLS, (long long)CALLS * nranks};
    for (int k = 0; k < 3; k++) {
        RECORD = records[k];
        pario_file *fh = iot_open(path, MPI_MODE_CREATE | MPI_MODE_RDWR, request_bound);
        if (!fh)
            continue;
        write_records(fh);
        PT_EQ(read_records(fh), want[k]);
        pario_error err;
        PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    }
    const char *none[] = {NULL};
    test_staged_read(path, request_bound, 1);
    test_staged_read(path, none, 4);
    return ptest_finish();
}
