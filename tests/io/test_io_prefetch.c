/* Prefetch: an aggregator reading a read-only file ahead of a stream of
 * small collective reads (io/file/prefetch.c): IOR's strided pattern, each rank's
 * 4 KiB record after the previous rank's, read in CALLS collective calls
 * where read calls are request-bound (the hint, as `pario calibrate` finds
 * on a network file system). One aggregator reads each call's span;
 * prefetching, it reads the stream in growing reads, far fewer than one per
 * call; with pario_cb_prefetch=disable, or on a file open for writing too, one
 * per call. Every byte is checked: past the end of the file (the last call
 * is short), and after another handle's writes to bytes already prefetched,
 * made visible by sync, barrier, sync (the prefetch is dropped at the
 * sync). The test counts the pread calls of all ranks (it defines pread,
 * which the library's calls reach first). */
#include <stdlib.h>
#define IOT_COUNT_PREADS
#include "io_test.h"

enum { CALLS = 64, RECORD = 4096, CHANGED = CALLS / 2 };

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
    unsigned char in[RECORD];
    long long mine = 0, all = 0;
    for (int j = from; j < to; j++) {
        int64_t at = at_of(j, rank);
        int64_t expect = file_size() - at;
        expect = expect < 0 ? 0 : expect > RECORD ? RECORD : expect;
        MPI_Count got = -1;
        memset(in, 0, sizeof in);
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
    return ptest_finish();
}
