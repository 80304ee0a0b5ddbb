/* Two-phase collective access whose data is sparse in its span (io/coll/plan.c,
 * cycle_span): every rank writes and reads PIECES pieces of PIECE bytes, one
 * every STRIDE bytes (HDF5's hyperslabs of a large dataset), through a view,
 * with collective buffering asked for. Each cycle of the exchange is one
 * MPI_Alltoall on every rank (the test defines it and counts); a window of
 * pario_cb_cycle_size file bytes would take the call's span / naggr / 512 KiB
 * cycles (16 or more here), a window grown to carry a cycle's data at most
 * span / cb_buffer_size (4). The file is then read back whole, without the
 * view: every piece holds its rank's bytes and every hole zeros. */
#include <stdlib.h>
#include "io_test.h"

enum { PIECE = 24, PIECES = 64, STRIDE = 1 << 20 };
#define CB_BUFFER ((int64_t)16 << 20) /* the default cb_buffer_size */

static long long alltoalls; /* this rank's MPI_Alltoall calls since the last reset */

int MPI_Alltoall(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                 MPI_Comm c) {
    alltoalls++;
    return PMPI_Alltoall(s, sn, st, r, rn, rt, c);
}

static int rank, nranks;

static unsigned char byte_of(int r, int j, int i) {
    return (unsigned char)(1 + r * 37 + j * 5 + i);
}

/* Piece j of rank r starts here in the file. */
static int64_t piece_at(int r, int j) {
    return (int64_t)j * STRIDE + (int64_t)r * PIECE;
}

/* The view: PIECES blocks of PIECE bytes, STRIDE apart, from this rank's first. */
static MPI_Datatype sparse_view(void) {
    MPI_Datatype v, t;
    MPI_Type_create_hvector(PIECES, PIECE, STRIDE, MPI_BYTE, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint)PIECES * STRIDE, &t);
    MPI_Type_free(&v);
    MPI_Type_commit(&t);
    return t;
}

/* Most cycles a call may take: its span over whole buffers. */
static long long cycles_max(void) {
    int64_t span = piece_at(nranks - 1, PIECES - 1) + PIECE;
    return (long long)((span + CB_BUFFER - 1) / CB_BUFFER);
}

static void write_sparse(pario_file *fh, const unsigned char *out) {
    alltoalls = 0;
    PT_EQ(pario_file_write_all(fh, out, PIECES * PIECE, MPI_BYTE, NULL), PARIO_OK);
    PT_CHECK(alltoalls >= 1 && alltoalls <= cycles_max());
}

static void read_sparse(pario_file *fh, const unsigned char *out) {
    unsigned char *in = calloc(PIECES, PIECE);
    alltoalls = 0;
    PT_EQ(pario_file_seek(fh, 0, MPI_SEEK_SET), PARIO_OK);
    PT_EQ(pario_file_read_all(fh, in, PIECES * PIECE, MPI_BYTE, NULL), PARIO_OK);
    PT_CHECK(alltoalls >= 1 && alltoalls <= cycles_max());
    PT_EQ(memcmp(in, out, (size_t)PIECES * PIECE), 0);
    free(in);
}

/* Rank 0 reads the file whole: pieces and zeros where nobody wrote. */
static void check_file(const char *path) {
    if (rank != 0)
        return;
    int64_t size = piece_at(nranks - 1, PIECES - 1) + PIECE;
    unsigned char *all = malloc((size_t)size);
    FILE *f = fopen(path, "rb");
    PT_CHECK(f != NULL);
    PT_EQ((int64_t)fread(all, 1, (size_t)size + 1, f), size);
    fclose(f);
    int64_t bad = 0, at = 0;
    for (int j = 0; j < PIECES; j++)
        for (int r = 0; r < nranks; r++) {
            for (; at < piece_at(r, j); at++)
                bad += all[at] != 0;
            for (int i = 0; i < PIECE; i++, at++)
                bad += all[at] != byte_of(r, j, i);
        }
    PT_EQ(bad, 0);
    free(all);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *path = ptest_path("sparse");
    if (rank == 0)
        remove(path);
    MPI_Barrier(MPI_COMM_WORLD);
    const char *two_phase[] = {"romio_cb_write", "enable", "romio_cb_read", "enable", NULL};
    pario_file *fh = iot_open(path, MPI_MODE_CREATE | MPI_MODE_RDWR, two_phase);
    unsigned char *out = malloc((size_t)PIECES * PIECE);
    for (int j = 0; j < PIECES; j++)
        for (int i = 0; i < PIECE; i++)
            out[j * PIECE + i] = byte_of(rank, j, i);
    MPI_Datatype view = sparse_view();
    if (fh) {
        PT_EQ(pario_file_set_view(fh, (MPI_Offset)rank * PIECE, MPI_BYTE, view, "native",
                                  MPI_INFO_NULL),
              PARIO_OK);
        write_sparse(fh, out);
        read_sparse(fh, out);
        pario_error err;
        PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    check_file(path);
    MPI_Type_free(&view);
    free(out);
    return ptest_finish();
}
