/* Prefetch: reading a read-only file's streams ahead of small reads
 * (io/file/prefetch.c), where read calls are request-bound (the hint, as
 * `pario calibrate` finds on a network file system), in CALLS calls of one
 * record per rank. IOR's strided pattern (each rank's record after the
 * previous rank's) read collectively: one aggregator reads each call's span,
 * and prefetching it reads the stream in growing reads, far fewer than one
 * per call. IOR's segmented pattern (each rank's records one after the other
 * in a segment of its own) read collectively, which goes each rank's own
 * way, and independently: prefetching, each rank reads its segment ahead.
 * With pario_cb_prefetch=disable, or on a file open for writing too, one
 * read per call and record. Records of 4 KiB, then of 64 KiB, whose
 * prefetches grow past 1 MiB and are read in parts side by side. Every byte
 * is checked: past the end of the file (the last call is short), and after
 * another handle's writes to bytes already prefetched, made visible by sync,
 * barrier, sync (the prefetch is dropped at the sync). Streams that end:
 * each rank reads blocks of 1 MiB apart from each other in 4 KiB calls, and
 * the prefetch reads at most half again the bytes it serves (it grew to a
 * quarter of cb_buffer_size and read twice the bytes). The test counts the
 * pread calls of all ranks and the bytes they read (IOT_COUNT_PREADS). */
#include <stdlib.h>
#define IOT_COUNT_PREADS
#include "io_test.h"

enum { CALLS = 64, CHANGED = CALLS / 2, BIG_RECORD = 64 << 10 };
static int64_t RECORD = 4096; /* the record of the pass */

static int rank, nranks;

/* Where rank r's record of a call lies. */
typedef int64_t (*layout)(int call, int r);

static int64_t strided(int call, int r) {
    return ((int64_t)call * nranks + r) * RECORD;
}

static int64_t segmented(int call, int r) {
    return ((int64_t)r * CALLS + call) * RECORD;
}

/* The file: CALLS calls' records but half of the last one. */
static int64_t file_size(void) {
    return strided(CALLS, 0) - RECORD / 2;
}

/* Reads of calls [from, to) through fh (collective or not), each checked
 * against want (the file's bytes); returns the preads of all ranks. */
static long long read_calls(pario_file *fh, layout at_of, int coll, const unsigned char *want,
                            int from, int to) {
    static unsigned char in[BIG_RECORD];
    long long mine = 0, all = 0;
    for (int j = from; j < to; j++) {
        int64_t at = at_of(j, rank);
        int64_t expect = file_size() - at;
        expect = expect < 0 ? 0 : expect > RECORD ? RECORD : expect;
        MPI_Count got = -1;
        memset(in, 0, (size_t)RECORD);
        iot_preads = 0;
        int rc = coll ? pario_file_read_at_all(fh, at, in, RECORD, MPI_BYTE, &got)
                      : pario_file_read_at(fh, at, in, RECORD, MPI_BYTE, &got);
        PT_EQ(rc, PARIO_OK);
        mine += iot_preads;
        PT_EQ(got, expect);
        PT_EQ(memcmp(in, want + at, (size_t)expect), 0);
    }
    MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

/* Every call through a handle open with amode and hints; returns the preads
 * of all ranks. */
static long long read_all_calls(const char *path, int amode, const char *const *hints, layout at_of,
                                int coll, const unsigned char *want) {
    pario_file *fh = iot_open(path, amode, hints);
    if (!fh)
        return -1;
    long long n = read_calls(fh, at_of, coll, want, 0, CALLS);
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    return n;
}

/* Half the stream, then rank 0 writes new bytes over the next call's records
 * through another handle; after sync, barrier, sync the reads see them. */
static void test_changed_after_sync(const char *path, const char *const *hints,
                                    unsigned char *want) {
    pario_file *fh = iot_open(path, MPI_MODE_RDONLY, hints);
    pario_file *w = iot_open(path, MPI_MODE_RDWR, hints);
    if (!fh || !w)
        return;
    read_calls(fh, strided, 1, want, 0, CHANGED);
    int64_t at = strided(CHANGED, 0), len = strided(CHANGED + 1, 0) - at;
    ptest_pattern_fill(want + at, len, at, 2);
    if (rank == 0)
        PT_EQ(pario_file_write_at(w, at, want + at, len, MPI_BYTE, NULL), PARIO_OK);
    PT_EQ(pario_file_sync(w), PARIO_OK);
    MPI_Barrier(MPI_COMM_WORLD);
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    read_calls(fh, strided, 1, want, CHANGED, CALLS);
    pario_error err;
    PT_EQ(pario_file_close(&w, &err), PARIO_OK);
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
}

/* IOR's segmented layout with BLOCKS blocks per rank: block k of rank r
 * holds BLOCK_CALLS records and follows block k of rank r - 1. Each rank
 * reads its blocks in order, independently, through a handle with the
 * hints; every byte is checked. The bytes read from storage by all ranks
 * are at most 1.5 times those asked for. */
enum { BLOCKS = 2, BLOCK_CALLS = 256 };
static void test_streams_end(const char *path, const char *const *hints) {
    RECORD = 4096;
    int64_t block = (int64_t)BLOCK_CALLS * RECORD, size = block * BLOCKS * nranks;
    unsigned char *want = malloc((size_t)size), in[4096];
    iot_pattern_file(path, want, (size_t)size, 5);
    pario_file *fh = iot_open(path, MPI_MODE_RDONLY, hints);
    long long mine = 0, all = 0;
    iot_pread_bytes = 0;
    for (int k = 0; fh && k < BLOCKS; k++)
        for (int j = 0; j < BLOCK_CALLS; j++) {
            int64_t at = ((int64_t)k * nranks + rank) * block + j * RECORD;
            MPI_Count got = -1;
            PT_EQ(pario_file_read_at(fh, at, in, RECORD, MPI_BYTE, &got), PARIO_OK);
            PT_EQ(got, RECORD);
            PT_EQ(memcmp(in, want + at, (size_t)RECORD), 0);
        }
    mine = iot_pread_bytes;
    MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    PT_CHECK(all >= size && 2 * all <= 3 * size);
    pario_error err;
    if (fh)
        PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    free(want);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *path = ptest_path("prefetch");
    unsigned char *want = malloc((size_t)file_size());
    iot_pattern_file(path, want, (size_t)file_size(), 1);
    const char *on[] = {"pario_read_call_bytes", "1048576", NULL};
    const char *off[] = {"pario_read_call_bytes", "1048576", "pario_cb_prefetch", "disable", NULL};
    long long with = read_all_calls(path, MPI_MODE_RDONLY, on, strided, 1, want);
    long long without = read_all_calls(path, MPI_MODE_RDONLY, off, strided, 1, want);
    long long writable = read_all_calls(path, MPI_MODE_RDWR, on, strided, 1, want);
    if (nranks > 1) { /* one rank reads on its own: no aggregator */
        PT_CHECK(with > 0 && with <= CALLS / 4);
        PT_CHECK(without >= CALLS);
        PT_CHECK(writable >= CALLS);
    }
    for (int coll = 0; coll < 2; coll++) {
        with = read_all_calls(path, MPI_MODE_RDONLY, on, segmented, coll, want);
        without = read_all_calls(path, MPI_MODE_RDONLY, off, segmented, coll, want);
        PT_CHECK(with > 0 && with <= (long long)CALLS * nranks / 4);
        PT_CHECK(without >= (long long)CALLS * nranks);
    }
    test_changed_after_sync(path, on, want);
    free(want);
    /* Records of 64 KiB: prefetches grow to 1 MiB and more; the aggregator's
     * (strided calls) are read in parts side by side, the last of them short
     * at the end of the file. */
    RECORD = BIG_RECORD;
    want = malloc((size_t)file_size());
    iot_pattern_file(path, want, (size_t)file_size(), 3);
    for (int coll = 0; coll < 2; coll++) {
        with = read_all_calls(path, MPI_MODE_RDONLY, on, segmented, coll, want);
        without = read_all_calls(path, MPI_MODE_RDONLY, off, segmented, coll, want);
        PT_CHECK(with > 0 && with < without);
    }
    with = read_all_calls(path, MPI_MODE_RDONLY, on, strided, 1, want);
    if (nranks > 1)
        PT_CHECK(with > 0 && with < CALLS);
    free(want);
    test_streams_end(path, on);
    return ptest_finish();
}
