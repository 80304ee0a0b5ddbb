/* MPI 3.1 sections 13.4.2-13.4.4 and 13.6: collective data access and
 * consistency.
 *
 * write_all/read_all/write_at_all/read_at_all through interleaved views,
 * with some ranks moving nothing; the sync-barrier-sync rule between a
 * writer and a reader; set_atomicity/get_atomicity and atomic-mode
 * visibility. */
#include "conf.h"

/* Blocks of BLOCK ints each rank owns, interleaved round robin. */
#define BLOCK 3
#define BLOCKS 4
/* Room for the image of 8 ranks. */
#define MAX_INTS (8 * BLOCK * BLOCKS)

static int value_of(int r, int i) {
    return 10000 * (r + 1) + i;
}

/* View of rank r: BLOCK ints out of every n*BLOCK, starting at block r. */
static void set_block_view(MPI_File fh, int r, int n) {
    MPI_Datatype blk, ft;
    MPI_Type_contiguous(BLOCK, MPI_INT, &blk);
    MPI_Type_create_resized(blk, 0, (MPI_Aint)n * BLOCK * 4, &ft);
    MPI_Type_commit(&ft);
    PT_MPI_OK(
        MPI_File_set_view(fh, (MPI_Offset)r * BLOCK * 4, MPI_INT, ft, "native", MPI_INFO_NULL));
    MPI_Type_free(&blk);
    MPI_Type_free(&ft);
}

/* Image after each rank r wrote its blocks [0, nblocks[r]) through its
 * view; blocks nobody wrote are zeros (holes) up to the last written int. */
static size_t block_image(int *image, int n, const int *nblocks) {
    size_t len = 0;
    memset(image, 0, MAX_INTS * sizeof(int));
    for (int r = 0; r < n; r++) {
        for (int b = 0; b < nblocks[r]; b++) {
            for (int k = 0; k < BLOCK; k++) {
                size_t at = (size_t)(b * n + r) * BLOCK + (size_t)k;
                image[at] = value_of(r, b * BLOCK + k);
                len = at + 1 > len ? at + 1 : len;
            }
        }
    }
    return len * sizeof(int);
}

/* The value every int of a prefilled file starts with. */
#define FILL 0x5a5a5a5a

/* Rank 0 fills path with `ints` FILL ints before the handle writes. */
static void prefill(MPI_File fh, size_t ints) {
    static int fill[MAX_INTS];
    for (size_t i = 0; i < ints; i++)
        fill[i] = FILL;
    if (conf_rank() == 0)
        PT_MPI_OK(MPI_File_write_at(fh, 0, fill, (int)ints, MPI_INT, MPI_STATUS_IGNORE));
    PT_MPI_OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PT_MPI_OK(MPI_File_sync(fh));
}

/* Rank 0 checks only the ints the ranks wrote (where image is nonzero):
 * for files whose holes the standard leaves unspecified. */
static void expect_written_ints(const char *path, const int *image, size_t len) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (conf_rank() == 0) {
        static int got[MAX_INTS];
        memset(got, 0, sizeof got);
        long long size = conf_read_image(path, (unsigned char *)got, sizeof got);
        PT_EQ(size, (long long)len);
        int same = 1;
        for (size_t i = 0; i < len / sizeof(int); i++)
            same &= image[i] == 0 || got[i] == image[i];
        PT_CHECK(same);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static int count_of(MPI_Status *st) {
    int c = -7;
    MPI_Get_count(st, MPI_INT, &c);
    return c;
}

/* write_all then read_all through the pointer, all ranks moving data. */
static void check_write_read_all(const char *path) {
    int rank = conf_rank(), n = conf_size();
    conf_remove(path);
    MPI_File fh;
    if (!PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                                 MPI_INFO_NULL, &fh)))
        return;
    set_block_view(fh, rank, n);
    int mine[BLOCK * BLOCKS], back[BLOCK * BLOCKS];
    for (int i = 0; i < BLOCK * BLOCKS; i++)
        mine[i] = value_of(rank, i);
    MPI_Status st;
    PT_MPI_OK(MPI_File_write_all(fh, mine, BLOCK * BLOCKS, MPI_INT, &st));
    PT_EQ(count_of(&st), BLOCK * BLOCKS);
    MPI_Offset pos = -1;
    PT_MPI_OK(MPI_File_get_position(fh, &pos));
    PT_EQ(pos, BLOCK * BLOCKS);
    PT_MPI_OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    memset(back, 0, sizeof back);
    PT_MPI_OK(MPI_File_read_all(fh, back, BLOCK * BLOCKS, MPI_INT, &st));
    PT_EQ(count_of(&st), BLOCK * BLOCKS);
    PT_CHECK(memcmp(back, mine, sizeof mine) == 0);
    PT_MPI_OK(MPI_File_close(&fh));
    int nblocks[8];
    for (int r = 0; r < n; r++)
        nblocks[r] = BLOCKS;
    static int image[MAX_INTS];
    size_t len = block_image(image, n, nblocks);
    CONF_EXPECT_IMAGE(path, image, len);
}

/* write_at_all/read_at_all where odd ranks move nothing (count 0) and the
 * last rank writes fewer blocks. In a prefilled file the ints nobody wrote
 * keep their bytes. In a new file they are holes, which POSIX reads as
 * zeros; the standard leaves bytes nobody wrote undefined, and both OMPIO
 * (4 ranks) and ROMIO (2 ranks) write stale buffer bytes into them, so the
 * zero holes are pario's own promise, checked under pario only. */
static void check_at_all_with_idle_ranks(const char *path, int prefilled) {
    int rank = conf_rank(), n = conf_size();
    conf_remove(path);
    MPI_File fh;
    if (!PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                                 MPI_INFO_NULL, &fh)))
        return;
    int nblocks[8];
    for (int r = 0; r < n; r++)
        nblocks[r] = r % 2 ? 0 : (r == n - 1 && r > 0 ? 1 : BLOCKS);
    static int image[MAX_INTS];
    size_t len = block_image(image, n, nblocks);
    if (prefilled)
        prefill(fh, MAX_INTS);
    set_block_view(fh, rank, n);
    int mine[BLOCK * BLOCKS], back[BLOCK * BLOCKS];
    for (int i = 0; i < BLOCK * BLOCKS; i++)
        mine[i] = value_of(rank, i);
    int count = nblocks[rank] * BLOCK;
    MPI_Status st;
    PT_MPI_OK(MPI_File_write_at_all(fh, 0, mine, count, MPI_INT, &st));
    PT_EQ(count_of(&st), count);
    /* Explicit offsets leave the individual pointer alone. */
    MPI_Offset pos = -1;
    PT_MPI_OK(MPI_File_get_position(fh, &pos));
    PT_EQ(pos, 0);
    PT_MPI_OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PT_MPI_OK(MPI_File_sync(fh));

    /* Every rank reads back its next rank's blocks at offset BLOCK (in the
     * neighbour's view) with read_at_all, idle ranks included. */
    int next = (rank + 1) % n;
    set_block_view(fh, next, n);
    memset(back, 0, sizeof back);
    int want = nblocks[next] * BLOCK - BLOCK;
    want = want < 0 ? 0 : want;
    int rcount = rank % 2 ? 0 : want;
    PT_MPI_OK(MPI_File_read_at_all(fh, BLOCK, back, rcount, MPI_INT, &st));
    PT_EQ(count_of(&st), rcount);
    for (int i = 0; i < rcount; i++)
        PT_EQ(back[i], value_of(next, BLOCK + i));
    PT_MPI_OK(MPI_File_close(&fh));
    if (prefilled) {
        for (size_t i = 0; i < MAX_INTS; i++)
            image[i] = image[i] ? image[i] : FILL;
        CONF_EXPECT_IMAGE(path, image, sizeof image);
    } else if (ptest_on_pario()) {
        CONF_EXPECT_IMAGE(path, image, len);
    } else {
        expect_written_ints(path, image, len);
    }
}

/* All ranks but the last pass count 0 to write_all: the file holds only
 * the last rank's data, at its view position (holes as above: zeros under
 * pario only). */
static void check_all_idle_but_one(const char *path) {
    int rank = conf_rank(), n = conf_size();
    conf_remove(path);
    MPI_File fh;
    if (!PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                                 MPI_INFO_NULL, &fh)))
        return;
    set_block_view(fh, rank, n);
    int nblocks[8] = {0};
    nblocks[n - 1] = 2;
    int mine[BLOCK * BLOCKS];
    for (int i = 0; i < BLOCK * BLOCKS; i++)
        mine[i] = value_of(rank, i);
    MPI_Status st;
    PT_MPI_OK(MPI_File_write_all(fh, mine, nblocks[rank] * BLOCK, MPI_INT, &st));
    PT_EQ(count_of(&st), nblocks[rank] * BLOCK);
    /* Reading past the end collectively returns what is there: two blocks
     * in every rank's view (holes before the last rank's data included).
     * Deviation: OMPIO's read_at_all reports the count requested (4 ranks)
     * or 0 (1 rank), ROMIO's a wrong count at 2 ranks, so the count is not
     * checked on either. */
    int back[BLOCK * BLOCKS];
    memset(back, 0, sizeof back);
    PT_MPI_OK(MPI_File_read_at_all(fh, 0, back, BLOCK * BLOCKS, MPI_INT, &st));
    if (conf_strict())
        PT_EQ(count_of(&st), 2 * BLOCK);
    if (rank == n - 1)
        for (int i = 0; i < 2 * BLOCK; i++)
            PT_EQ(back[i], value_of(rank, i));
    PT_MPI_OK(MPI_File_close(&fh));
    static int image[MAX_INTS];
    size_t len = block_image(image, n, nblocks);
    if (ptest_on_pario())
        CONF_EXPECT_IMAGE(path, image, len);
    else
        expect_written_ints(path, image, len);
}

/* sync-barrier-sync (13.6.10): rank 0 writes, every other rank then reads
 * the new bytes through its own handle. */
static void check_sync_barrier_sync(const char *path) {
    int rank = conf_rank(), n = conf_size();
    conf_remove(path);
    MPI_File fh;
    if (!PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                                 MPI_INFO_NULL, &fh)))
        return;
    unsigned char data[64], back[64];
    for (int round = 0; round < 2; round++) {
        conf_pattern(data, sizeof data, 40u + (unsigned)round);
        int writer = round % n;
        if (rank == writer)
            PT_MPI_OK(MPI_File_write_at(fh, 0, data, sizeof data, MPI_BYTE, MPI_STATUS_IGNORE));
        PT_MPI_OK(MPI_File_sync(fh));
        MPI_Barrier(MPI_COMM_WORLD);
        PT_MPI_OK(MPI_File_sync(fh));
        memset(back, 0, sizeof back);
        MPI_Status st;
        PT_MPI_OK(MPI_File_read_at(fh, 0, back, sizeof back, MPI_BYTE, &st));
        int got = -1;
        MPI_Get_count(&st, MPI_BYTE, &got);
        PT_EQ(got, sizeof back);
        PT_CHECK(memcmp(back, data, sizeof data) == 0);
        /* Nobody writes the next round before everyone has read. */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    PT_MPI_OK(MPI_File_close(&fh));
    CONF_EXPECT_IMAGE(path, data, sizeof data);
}

/* set_atomicity/get_atomicity round trip; in atomic mode a write is seen
 * by another rank after a barrier alone. */
static void check_atomicity(const char *path) {
    int rank = conf_rank(), n = conf_size();
    conf_remove(path);
    MPI_File fh;
    if (!PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                                 MPI_INFO_NULL, &fh)))
        return;
    int flag = -1;
    PT_MPI_OK(MPI_File_get_atomicity(fh, &flag));
    PT_EQ(flag, 0);
    PT_MPI_OK(MPI_File_set_atomicity(fh, 1));
    PT_MPI_OK(MPI_File_get_atomicity(fh, &flag));
    PT_CHECK(flag != 0);

    int v = value_of(rank, 0), back = 0;
    PT_MPI_OK(MPI_File_write_at(fh, (MPI_Offset)rank * 4, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    int other = (rank + 1) % n;
    PT_MPI_OK(MPI_File_read_at(fh, (MPI_Offset)other * 4, &back, 1, MPI_INT, MPI_STATUS_IGNORE));
    PT_EQ(back, value_of(other, 0));

    PT_MPI_OK(MPI_File_set_atomicity(fh, 0));
    PT_MPI_OK(MPI_File_get_atomicity(fh, &flag));
    PT_EQ(flag, 0);
    PT_MPI_OK(MPI_File_close(&fh));
    int image[8];
    for (int r = 0; r < n; r++)
        image[r] = value_of(r, 0);
    CONF_EXPECT_IMAGE(path, image, (size_t)n * 4);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    char path[CONF_PATH_MAX];
    conf_path(path, "coll.dat");
    check_write_read_all(path);
    check_at_all_with_idle_ranks(path, 1);
    check_at_all_with_idle_ranks(path, 0);
    check_all_idle_but_one(path);
    check_sync_barrier_sync(path);
    check_atomicity(path);
    return ptest_finish();
}
