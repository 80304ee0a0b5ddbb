/* Atomic mode: concurrent overlapping accesses are sequentially consistent.
 *
 * Every rank writes the same noncontiguous region (a vector of blocks with
 * holes) at the same time, each with its own byte value, in pieces small
 * enough (ind_wr_buffer_size 1 KiB) that a write is several system calls.
 * Meanwhile rank 0 reads the region back, also in several calls. In atomic
 * mode each access behaves as one indivisible step, so every read sees the
 * whole region written by one rank (or still empty), never a mix, and after
 * each round the file holds one rank's data everywhere and the holes are
 * untouched. */
#include <string.h>
#include "io_test.h"

/* The region: BLOCKS blocks of BLOCK bytes, STRIDE bytes apart. */
#define BLOCKS 64
#define BLOCK 64
#define STRIDE 128
#define ROUNDS 20
/* Byte the holes hold (written once before the rounds). */
#define HOLE 0xEE

static int rank, nranks;

static MPI_Datatype region_type(void) {
    MPI_Datatype t;
    MPI_Type_vector(BLOCKS, BLOCK, STRIDE, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    return t;
}

/* The value all region bytes of buf share, or -1 when they differ. */
static int uniform(const unsigned char *buf, int n) {
    for (int i = 1; i < n; i++)
        if (buf[i] != buf[0])
            return -1;
    return buf[0];
}

static pario_file *open_atomic(const char *path) {
    const char *kv[] = {"ind_wr_buffer_size",
                        "1024",
                        "ind_rd_buffer_size",
                        "1024",
                        "romio_ds_write",
                        "enable",
                        NULL};
    pario_file *fh = iot_open(path, MPI_MODE_RDWR | MPI_MODE_CREATE, kv);
    PT_EQ(pario_file_set_atomicity(fh, 1), PARIO_OK);
    return fh;
}

static void fill_holes(pario_file *fh) {
    static unsigned char holes[BLOCKS * STRIDE];
    memset(holes, HOLE, sizeof holes);
    if (rank == 0)
        PT_EQ(pario_file_write_at(fh, 0, holes, sizeof holes, MPI_BYTE, NULL), PARIO_OK);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    ptest_init();
    pario_file *fh = open_atomic(ptest_path("atomic"));
    fill_holes(fh);
    MPI_Datatype region = region_type();
    PT_EQ(pario_file_set_view(fh, 0, MPI_BYTE, region, "native", MPI_INFO_NULL), PARIO_OK);
    static unsigned char mine[BLOCKS * BLOCK], seen[BLOCKS * BLOCK], whole[BLOCKS * STRIDE];
    int torn_reads = 0, torn_files = 0, bad_holes = 0;
    for (int round = 0; round < ROUNDS; round++) {
        memset(mine, 1 + rank + nranks * round, sizeof mine);
        if (rank == 0) /* reader first, then writer, racing the others */
            for (int k = 0; k < 4; k++) {
                PT_EQ(pario_file_read_at(fh, 0, seen, sizeof seen, MPI_BYTE, NULL), PARIO_OK);
                torn_reads += uniform(seen, sizeof seen) < 0;
            }
        PT_EQ(pario_file_write_at(fh, 0, mine, sizeof mine, MPI_BYTE, NULL), PARIO_OK);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            PT_EQ(pario_file_read_at(fh, 0, seen, sizeof seen, MPI_BYTE, NULL), PARIO_OK);
            int v = uniform(seen, sizeof seen);
            torn_files += v < 1 + nranks * round || v > nranks * (round + 1);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    PT_EQ(torn_reads, 0);
    PT_EQ(torn_files, 0);
    PT_EQ(pario_file_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), PARIO_OK);
    PT_EQ(pario_file_read_at(fh, 0, whole, sizeof whole, MPI_BYTE, NULL), PARIO_OK);
    for (int b = 0; b < BLOCKS; b++)
        bad_holes += uniform(whole + b * STRIDE + BLOCK, STRIDE - BLOCK) != HOLE;
    PT_EQ(bad_holes, 0);
    MPI_Type_free(&region);
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    return ptest_finish();
}
