/* Reading once per node chosen by the pattern (io/coll/route.c, rule 6):
 * with reads made request-bound by the hint pario_read_call_bytes (as the
 * costs of a network file system make them), a read-only file whose first
 * collective read asks the same bytes on every rank is read through the
 * node's copy from then on, where ranks share nodes. Not where the ranks ask
 * different bytes, too little of the file, with pario_read_once=disable, or
 * where reads are not request-bound. Every read is byte-exact, collective
 * and independent. */
#include <stdlib.h>
#include <string.h>
#include "io/cache/cache.h"
#include "io/file/file.h"
#include "io_test.h"

#define SIZE 300001
#define BAND 1000

static int rank, nranks, shared_nodes;
static unsigned char want[SIZE], got[SIZE];

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
    return ptest_finish();
}
