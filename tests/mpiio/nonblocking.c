/* MPI 3.1 sections 13.4.2-13.4.5: nonblocking and split collective access.
 *
 * iwrite_at/iread_at, iwrite/iread through the individual pointer,
 * iwrite_at_all/iread_at_all, and the split collectives
 * write_at_all_begin/end and read_all_begin/end: requests complete through
 * MPI_Wait, MPI_Waitall and MPI_Test, the status counts what moved, the
 * file holds exactly the bytes written. */
#include "conf.h"

/* Ints each rank moves per call. */
#define INTS 8
/* Room for the image of 8 ranks and the two halves of the file. */
#define MAX_INTS (8 * 2 * INTS)

static int value_of(int r, int i) {
    return 100 * (r + 1) + i;
}

static int count_of(MPI_Status *st) {
    int c = -7;
    MPI_Get_count(st, MPI_INT, &c);
    return c;
}

static MPI_File open_fresh(const char *path) {
    conf_remove(path);
    MPI_File fh = MPI_FILE_NULL;
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    return fh;
}

/* Expected image: rank r's INTS ints at int r*INTS, then (second half) its
 * ints again offset by 50 at int (n + r) * INTS. */
static size_t two_halves(int *image, int n) {
    for (int r = 0; r < n; r++)
        for (int i = 0; i < INTS; i++) {
            image[r * INTS + i] = value_of(r, i);
            image[(n + r) * INTS + i] = value_of(r, i) + 50;
        }
    return (size_t)2 * n * INTS * sizeof(int);
}

/* Completes req with MPI_Test, polling (the request must finish). */
static void test_until_done(MPI_Request *req, MPI_Status *st) {
    int done = 0, rc = MPI_SUCCESS;
    while (!done && rc == MPI_SUCCESS)
        rc = MPI_Test(req, &done, st);
    PT_MPI_OK(rc);
    PT_CHECK(*req == MPI_REQUEST_NULL);
}

/* Independent nonblocking calls with explicit offsets and the pointer. */
static void check_independent(const char *path) {
    MPI_File fh = open_fresh(path);
    if (fh == MPI_FILE_NULL)
        return;
    int rank = conf_rank(), n = conf_size();
    int mine[INTS], later[INTS], back[INTS], back2[INTS];
    for (int i = 0; i < INTS; i++) {
        mine[i] = value_of(rank, i);
        later[i] = value_of(rank, i) + 50;
    }
    MPI_Request reqs[2];
    MPI_Status sts[2];
    PT_MPI_OK(MPI_File_iwrite_at(fh, (MPI_Offset)rank * INTS * 4, mine, INTS, MPI_INT, &reqs[0]));
    PT_MPI_OK(MPI_File_seek(fh, (MPI_Offset)(n + rank) * INTS * 4, MPI_SEEK_SET));
    PT_MPI_OK(MPI_File_iwrite(fh, later, INTS, MPI_INT, &reqs[1]));
    /* The pointer moves when the call starts, not when it completes. */
    MPI_Offset pos = -1;
    PT_MPI_OK(MPI_File_get_position(fh, &pos));
    PT_EQ(pos, (MPI_Offset)(n + rank + 1) * INTS * 4);
    PT_CHECK(MPI_Waitall(2, reqs, sts) == MPI_SUCCESS);
    PT_EQ(count_of(&sts[0]), INTS);
    PT_EQ(count_of(&sts[1]), INTS);

    MPI_Request req;
    MPI_Status st;
    PT_MPI_OK(MPI_File_iread_at(fh, (MPI_Offset)rank * INTS * 4, back, INTS, MPI_INT, &req));
    PT_CHECK(MPI_Wait(&req, &st) == MPI_SUCCESS);
    PT_EQ(count_of(&st), INTS);
    PT_CHECK(memcmp(back, mine, sizeof mine) == 0);
    PT_MPI_OK(MPI_File_seek(fh, (MPI_Offset)(n + rank) * INTS * 4, MPI_SEEK_SET));
    PT_MPI_OK(MPI_File_iread(fh, back2, INTS, MPI_INT, &req));
    test_until_done(&req, &st);
    PT_EQ(count_of(&st), INTS);
    PT_CHECK(memcmp(back2, later, sizeof later) == 0);
    PT_MPI_OK(MPI_File_close(&fh));
    static int image[MAX_INTS];
    size_t len = two_halves(image, n);
    CONF_EXPECT_IMAGE(path, image, len);
}

/* Nonblocking collectives and split collectives through a view that
 * interleaves the ranks' INTS-int blocks. */
static void check_collective(const char *path) {
    MPI_File fh = open_fresh(path);
    if (fh == MPI_FILE_NULL)
        return;
    int rank = conf_rank(), n = conf_size();
    MPI_Datatype blk, ft;
    MPI_Type_contiguous(INTS, MPI_INT, &blk);
    MPI_Type_create_resized(blk, 0, (MPI_Aint)n * INTS * 4, &ft);
    MPI_Type_commit(&ft);
    PT_MPI_OK(
        MPI_File_set_view(fh, (MPI_Offset)rank * INTS * 4, MPI_INT, ft, "native", MPI_INFO_NULL));
    int mine[INTS], later[INTS], back[2 * INTS];
    for (int i = 0; i < INTS; i++) {
        mine[i] = value_of(rank, i);
        later[i] = value_of(rank, i) + 50;
    }
    MPI_Request req;
    MPI_Status st;
    PT_MPI_OK(MPI_File_iwrite_at_all(fh, 0, mine, INTS, MPI_INT, &req));
    PT_CHECK(MPI_Wait(&req, &st) == MPI_SUCCESS);
    PT_EQ(count_of(&st), INTS);

    PT_MPI_OK(MPI_File_write_at_all_begin(fh, INTS, later, INTS, MPI_INT));
    PT_MPI_OK(MPI_File_write_at_all_end(fh, later, &st));
    PT_EQ(count_of(&st), INTS);
    PT_MPI_OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PT_MPI_OK(MPI_File_sync(fh));

    memset(back, 0, sizeof back);
    PT_MPI_OK(MPI_File_read_all_begin(fh, back, 2 * INTS, MPI_INT));
    PT_MPI_OK(MPI_File_read_all_end(fh, back, &st));
    PT_EQ(count_of(&st), 2 * INTS);
    PT_CHECK(memcmp(back, mine, sizeof mine) == 0);
    PT_CHECK(memcmp(back + INTS, later, sizeof later) == 0);

    memset(back, 0, sizeof back);
    PT_MPI_OK(MPI_File_iread_at_all(fh, INTS, back, INTS, MPI_INT, &req));
    test_until_done(&req, &st);
    PT_EQ(count_of(&st), INTS);
    PT_CHECK(memcmp(back, later, sizeof later) == 0);
    PT_MPI_OK(MPI_File_close(&fh));
    MPI_Type_free(&blk);
    MPI_Type_free(&ft);
    static int image[MAX_INTS];
    size_t len = two_halves(image, n);
    CONF_EXPECT_IMAGE(path, image, len);
}

/* A second split collective begun before the first ended is erroneous
 * (13.4.5): the standard names no class; the first one still completes. */
static void check_split_misuse(const char *path) {
    MPI_File fh = open_fresh(path);
    if (fh == MPI_FILE_NULL)
        return;
    int rank = conf_rank(), n = conf_size();
    int mine[INTS];
    for (int i = 0; i < INTS; i++)
        mine[i] = value_of(rank, i);
    MPI_Status st;
    MPI_Offset at = (MPI_Offset)rank * INTS * 4;
    PT_MPI_OK(MPI_File_write_at_all_begin(fh, at, mine, INTS, MPI_INT));
    int rc = MPI_File_write_at_all_begin(fh, at, mine, INTS, MPI_INT);
    PT_CHECK(rc != MPI_SUCCESS);
    CONF_SAME_CLASS(rc);
    CONF_NAMES_FILE(rc, path);
    PT_MPI_OK(MPI_File_write_at_all_end(fh, mine, &st));
    PT_EQ(count_of(&st), INTS);
    PT_MPI_OK(MPI_File_close(&fh));
    static int image[MAX_INTS];
    for (int r = 0; r < n; r++)
        for (int i = 0; i < INTS; i++)
            image[r * INTS + i] = value_of(r, i);
    CONF_EXPECT_IMAGE(path, image, (size_t)n * INTS * sizeof(int));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    char path[CONF_PATH_MAX];
    conf_path(path, "nonblocking.dat");
    check_independent(path);
    check_collective(path);
    check_split_misuse(path);
    return ptest_finish();
}
