/* A read needs the file's size only to stop at its end: a rank that already
 * knows the file reaches past the read asks no one (on a network file
 * system a round trip per rank per call). Under MPI's rules only set_size
 * and what a sync makes visible can make a file shorter, so both make the
 * rank ask again. Checked here with IOR's strided view (4 KiB blocks, one per
 * rank in turn), collective reads (two-phase across nodes, each rank's own
 * on one node) and independent ones:
 *
 * - reads of the whole file, twice, return every byte;
 * - rank 0 cuts the file to half through POSIX (another handle); after
 *   sync, barrier, sync every read returns the bytes before the cut only;
 * - set_size cuts it to a quarter; every read returns that much. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "io_test.h"

#define BLOCK 4096
#define ROWS 8

static int rank, nranks;

static unsigned char byte_of(int r, int row, int i) {
    return (unsigned char)(r * 31 + row * 7 + i % 251 + 1);
}

/* Every rank's row blocks, as the view places them. */
static void fill(unsigned char *buf) {
    for (int row = 0; row < ROWS; row++)
        for (int i = 0; i < BLOCK; i++)
            buf[row * BLOCK + i] = byte_of(rank, row, i);
}

/* Reads all ROWS blocks (collective or not): `rows` of them must come back,
 * the count saying so. */
static void read_expect(pario_file *fh, int collective, int rows) {
    unsigned char *got = calloc(ROWS, BLOCK);
    MPI_Count bytes = -1;
    int rc = collective ? pario_file_read_at_all(fh, 0, got, ROWS * BLOCK, MPI_BYTE, &bytes)
                        : pario_file_read_at(fh, 0, got, ROWS * BLOCK, MPI_BYTE, &bytes);
    PT_EQ(rc, PARIO_OK);
    PT_EQ(bytes, (MPI_Count)rows * BLOCK);
    int bad = 0;
    for (int row = 0; row < rows; row++)
        for (int i = 0; i < BLOCK; i++)
            bad += got[row * BLOCK + i] != byte_of(rank, row, i);
    PT_EQ(bad, 0);
    free(got);
}

static void read_all_ways(pario_file *fh, int rows) {
    read_expect(fh, 1, rows);
    read_expect(fh, 1, rows); /* the size is known now */
    read_expect(fh, 0, rows);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *path = ptest_path("size_known");
    if (rank == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    pario_file *fh = iot_open(path, MPI_MODE_RDWR | MPI_MODE_CREATE, (const char *const[]){NULL});
    MPI_Datatype block, strided;
    MPI_Type_contiguous(BLOCK, MPI_BYTE, &block);
    MPI_Type_create_resized(block, 0, (MPI_Aint)nranks * BLOCK, &strided);
    MPI_Type_commit(&strided);
    PT_EQ(pario_file_set_view(fh, (MPI_Offset)rank * BLOCK, MPI_BYTE, strided, "native",
                              MPI_INFO_NULL),
          PARIO_OK);
    unsigned char *mine = malloc(ROWS * BLOCK);
    fill(mine);
    PT_EQ(pario_file_write_at_all(fh, 0, mine, ROWS * BLOCK, MPI_BYTE, NULL), PARIO_OK);
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    read_all_ways(fh, ROWS);

    MPI_Barrier(MPI_COMM_WORLD); /* every rank has read */
    if (rank == 0)               /* another handle makes the file shorter */
        PT_EQ(truncate(path, (off_t)ROWS / 2 * nranks * BLOCK), 0);
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    MPI_Barrier(MPI_COMM_WORLD);
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    read_all_ways(fh, ROWS / 2);

    PT_EQ(pario_file_set_size(fh, (MPI_Offset)ROWS / 4 * nranks * BLOCK), PARIO_OK);
    read_all_ways(fh, ROWS / 4);

    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    MPI_Type_free(&block);
    MPI_Type_free(&strided);
    free(mine);
    return ptest_finish();
}
