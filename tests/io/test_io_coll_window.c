/* The window of a two-phase cycle (io/coll/route.c, rule 7): where read
 * calls are request-bound (the hint, as `pario calibrate` finds on a
 * network file system) and no hint sets pario_cb_cycle_size, an aggregator
 * moves cb_buffer_size per cycle; elsewhere, or with the hint, the hint's
 * 1 MiB. get_info reports the window in effect. A collective write and
 * read through a view interleaving every rank's 64 KiB blocks checks every
 * byte both ways, and the read's requests: one per aggregator with the
 * whole buffer, at least one per MiB with the hint's window. The test
 * counts the pread calls the process makes (it defines pread, which the
 * library's calls reach first). */
#include <stdlib.h>
#define IOT_COUNT_PREADS
#include "io_test.h"

enum { BLOCK = 64 << 10, BLOCKS = 128 }; /* 8 MiB per rank */

static int rank, nranks;

static unsigned char byte_of(int r, int64_t i) {
    return (unsigned char)(i * 13 + i / 509 + r * 41 + 1);
}

/* Every rank's blocks in turn: rank r's block j at (j * nranks + r) * BLOCK. */
static MPI_Datatype interleaved_view(void) {
    MPI_Datatype block, view;
    MPI_Type_contiguous(BLOCK, MPI_BYTE, &block);
    MPI_Type_create_resized(block, 0, (MPI_Aint)nranks * BLOCK, &view);
    MPI_Type_commit(&view);
    MPI_Type_free(&block);
    return view;
}

/* Writes and reads back this rank's blocks collectively; returns the pread
 * calls of all ranks in the read. */
static long long write_read(pario_file *fh, MPI_Datatype view) {
    int64_t n = (int64_t)BLOCK * BLOCKS;
    unsigned char *out = malloc((size_t)n), *in = calloc(1, (size_t)n);
    for (int64_t i = 0; i < n; i++)
        out[i] = byte_of(rank, i);
    PT_EQ(
        pario_file_set_view(fh, (MPI_Offset)rank * BLOCK, MPI_BYTE, view, "native", MPI_INFO_NULL),
        PARIO_OK);
    PT_EQ(pario_file_write_all(fh, out, n, MPI_BYTE, NULL), PARIO_OK);
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    MPI_Barrier(MPI_COMM_WORLD);
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    PT_EQ(pario_file_seek(fh, 0, MPI_SEEK_SET), PARIO_OK);
    atomic_store(&iot_preads, 0);
    PT_EQ(pario_file_read_all(fh, in, n, MPI_BYTE, NULL), PARIO_OK);
    long long mine = atomic_load(&iot_preads), all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    PT_EQ(memcmp(in, out, (size_t)n), 0);
    free(out);
    free(in);
    return all;
}

/* Opens path with hints kv, checks the window get_info reports, and for
 * want_preads != 0 writes and reads through the view: at most that many
 * reads when positive, at least minus that many when negative. */
static void check(const char *path, const char *const *kv, const char *window, MPI_Datatype view,
                  long long want_preads) {
    pario_file *fh = iot_open(path, MPI_MODE_CREATE | MPI_MODE_RDWR, kv);
    if (!fh)
        return;
    PT_CHECK(iot_hint_is(fh, "pario_cb_cycle_size", window));
    if (want_preads > 0)
        PT_CHECK(write_read(fh, view) <= want_preads);
    else if (want_preads < 0)
        PT_CHECK(write_read(fh, view) >= -want_preads);
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *path = ptest_path("coll-window");
    if (rank == 0)
        remove(path);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Datatype view = interleaved_view();
    const char *bound[] = {"pario_read_call_bytes", "1048576", NULL};
    const char *bound_4m[] = {"pario_read_call_bytes", "1048576", "cb_buffer_size", "4194304",
                              NULL};
    const char *bound_hinted[] = {"pario_read_call_bytes", "1048576", "pario_cb_cycle_size",
                                  "1048576", NULL};
    const char *local[] = {"pario_read_call_bytes", "4096", NULL};
    /* The whole buffer: each aggregator's domain (8 MiB per rank in all) in
     * one request. */
    check(path, bound, "16777216", view, nranks);
    check(path, bound_4m, "4194304", MPI_DATATYPE_NULL, 0);
    /* The hint's window: a request per MiB at least. */
    check(path, bound_hinted, "1048576", view, -(long long)BLOCKS * BLOCK / (1 << 20) * nranks);
    check(path, local, "1048576", MPI_DATATYPE_NULL, 0);
    MPI_Type_free(&view);
    return ptest_finish();
}
