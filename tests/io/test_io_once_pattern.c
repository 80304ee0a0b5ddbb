/* Reading once per node chosen by the pattern (io/coll/route.c, rule 6):
 * with reads made request-bound by the hint pario_read_call_bytes (as the
 * costs of a network file system make them), a read-only file whose first
 * collective read asks the same bytes on every rank is read through the
 * node's copy from then on, where ranks share nodes. Not where the ranks ask
 * different bytes, too little of the file, with pario_read_once=disable, or
 * where reads are not request-bound. A larger file read in calls of 1 MiB
 * turns it on at the first call, and is loaded piece by piece as the calls
 * go (one process of a node loads a piece while the others read ahead); a
 * header all ranks read does not. Every read is byte-exact, collective
 * and independent. */
#include <stdlib.h>
#include <string.h>
#include "io/cache/cache.h"
#include "io/file/file.h"
#include "io_test.h"

#define SIZE 300001
#define BAND 1000
/* The larger file: two 1 MiB pieces and part of a third, read in calls
 * that cross the pieces' boundaries. */
#define BIG ((2 << 20) + 300007)
#define CALL 400009

static int rank, nranks, shared_nodes;
static unsigned char want[BIG], got[BIG];

/* Every rank [at, at + len) collectively, then an independent read of its band. */
static void read_and_check(pario_file *fh, int64_t at, int64_t len) {
    MPI_Count n = 0;
    memset(got, 0, SIZE);
    PT_EQ(pario_file_read_at_all(fh, at, got, (MPI_Count)len, MPI_BYTE, &n), PARIO_OK);
    PT_EQ(n, len);
    PT_CHECK(memcmp(got, want + at, (size_t)len) == 0);
    int64_t band = (int64_t)rank * BAND;
    PT_EQ(pario_file_read_at(fh, band, got, BAND, MPI_BYTE, &n), PARIO_OK);
    PT_EQ(n, BAND);
    PT_CHECK(memcmp(got, want + band, BAND) == 0);
}

/* Opens path with the hints, makes the reads and tells whether the file was
 * then read through the node's copy. */
static int once_after(const char *path, const char *const *kv, int same, int64_t len) {
    pario_file *fh = iot_open(path, MPI_MODE_RDONLY, kv);
    if (!fh)
        return -1;
    if (same)
        read_and_check(fh, 0, len);
    else /* each rank its own band */
        read_and_check(fh, (int64_t)rank * BAND, BAND);
    int on = io_cache_once_on(&fh->io);
    if (same) /* a second call of the same pattern reads through it just as well */
        read_and_check(fh, 0, len);
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    return on;
}

/* How many collective calls read from the node's copy (pario_coll_routes). */
static long long node_copy_calls(pario_file *fh) {
    char v[256];
    PT_CHECK(iot_coll_routes(fh, v, (int)sizeof v));
    long long n = iot_route_count(v, "node_copy");
    PT_CHECK(n >= 0);
    return n;
}

/* Every rank reads [0, first) of the larger file collectively, then the
 * rest in calls of CALL bytes, collective and independent in turn; whether
 * the file was read through the node's copy. */
static int calls_after(const char *path, const char *const *kv, int64_t first) {
    pario_file *fh = iot_open(path, MPI_MODE_RDONLY, kv);
    if (!fh)
        return -1;
    MPI_Count n = 0;
    memset(got, 0, BIG);
    PT_EQ(pario_file_read_at_all(fh, 0, got, (MPI_Count)first, MPI_BYTE, &n), PARIO_OK);
    int on = io_cache_once_on(&fh->io);
    long long coll_calls = 1;
    for (int64_t at = first, i = 0; at < BIG; at += CALL, i++) {
        MPI_Count len = BIG - at < CALL ? BIG - at : CALL;
        int rc = i % 2 ? pario_file_read_at(fh, at, got + at, len, MPI_BYTE, &n)
                       : pario_file_read_at_all(fh, at, got + at, len, MPI_BYTE, &n);
        coll_calls += i % 2 == 0;
        PT_EQ(rc, PARIO_OK);
        PT_EQ(n, len);
    }
    PT_CHECK(memcmp(got, want, BIG) == 0);
    /* the route of every collective call once on; where the hint turns the
     * copy on at open, one rank alone reads as its own node does */
    if (nranks > 1)
        PT_EQ(node_copy_calls(fh), on ? coll_calls : 0);
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    return on;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    ptest_init();
    const char *path = ptest_path("once-pattern");
    iot_pattern_file(path, want, SIZE, 13);
    const char *bound[] = {"pario_read_call_bytes", "1048576", NULL};
    const char *bound_off[] = {"pario_read_call_bytes", "1048576", "pario_read_once", "disable",
                               NULL};
    /* the pattern's verdict needs ranks that share a node */
    const char *none[] = {NULL};
    pario_file *probe = iot_open(path, MPI_MODE_RDONLY, none);
    if (probe) {
        shared_nodes = probe->nnodes < probe->nranks;
        pario_file_close(&probe, NULL);
    }
    PT_EQ(once_after(path, bound, 1, SIZE), shared_nodes);
    PT_EQ(once_after(path, bound, 1, SIZE / 2 + 1), shared_nodes); /* half the file */
    PT_EQ(once_after(path, bound, 1, SIZE / 4), 0);                /* too little of it */
    PT_EQ(once_after(path, bound, 0, BAND), 0);
    PT_EQ(once_after(path, bound_off, 1, SIZE), 0);
    PT_EQ(once_after(path, none, 1, SIZE), 0); /* local disk costs: not request-bound */
    const char *big = ptest_path("once-pattern-big");
    iot_pattern_file(big, want, BIG, 17);
    PT_EQ(calls_after(big, bound, 1 << 20), shared_nodes); /* a piece: on from the first call */
    PT_EQ(calls_after(big, bound, 4096), 0);               /* a header: not */
    PT_EQ(calls_after(big, none, 1 << 20), 0);
    const char *hint[] = {"pario_read_once", "enable", NULL};
    PT_EQ(calls_after(big, hint, CALL), 1); /* the hint: on from the open, loaded call by call */
    return ptest_finish();
}
