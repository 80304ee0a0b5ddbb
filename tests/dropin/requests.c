/* Nonblocking access: the requests of MPI_File_i* complete through MPI_Wait,
 * MPI_Test, MPI_Waitall and MPI_Testsome, their statuses count the data in
 * the program's datatype, and the data lands byte for byte.
 *
 * Each rank owns three pieces of DROPIN_PIECE ints: A and B in its own
 * region [rank*2P, rank*2P+2P) and C after all regions; int i of the rank's
 * data (A, B, C in turn) is rank*1000+i. */
#include "dropin.h"

/* ints per piece. */
#define DROPIN_PIECE 16
/* MPI_Test / MPI_Testsome rounds before giving up on a request. */
#define DROPIN_TEST_ROUNDS 1000000

static int value(int rank, int i) {
    return rank * 1000 + i;
}

static MPI_Offset region_a(int rank) {
    return (MPI_Offset)rank * 2 * DROPIN_PIECE * sizeof(int);
}
static MPI_Offset region_c(int rank, int nranks) {
    return (MPI_Offset)(nranks * 2 * DROPIN_PIECE + rank * DROPIN_PIECE) * sizeof(int);
}

static void fill(int *buf, int rank, int first) {
    for (int k = 0; k < DROPIN_PIECE; k++)
        buf[k] = value(rank, first + k);
}

static void check_count(MPI_Status *st, MPI_Datatype type, int want) {
    int count = -2;
    MPI_Get_count(st, type, &count);
    PT_EQ(count, want);
}

/* A by iwrite_at + MPI_Wait, B by seek + iwrite + MPI_Test. */
static void write_own_region(MPI_File fh, int rank) {
    int a[DROPIN_PIECE], b[DROPIN_PIECE];
    fill(a, rank, 0);
    fill(b, rank, DROPIN_PIECE);
    MPI_Request req;
    MPI_Status st;
    PT_MPI_OK(MPI_File_iwrite_at(fh, region_a(rank), a, DROPIN_PIECE, MPI_INT, &req));
    PT_MPI_OK(MPI_Wait(&req, &st));
    PT_CHECK(req == MPI_REQUEST_NULL);
    check_count(&st, MPI_INT, DROPIN_PIECE);

    PT_MPI_OK(MPI_File_seek(fh, region_a(rank) + DROPIN_PIECE * sizeof(int), MPI_SEEK_SET));
    PT_MPI_OK(MPI_File_iwrite(fh, b, DROPIN_PIECE, MPI_INT, &req));
    int done = 0, rc = MPI_SUCCESS;
    for (int i = 0; i < DROPIN_TEST_ROUNDS && !done && rc == MPI_SUCCESS; i++)
        rc = MPI_Test(&req, &done, &st);
    PT_MPI_OK(rc);
    PT_CHECK(done);
    check_count(&st, MPI_INT, DROPIN_PIECE);
}

/* C by iwrite_at_all, completed with MPI_Testsome. */
static void write_shared_tail(MPI_File fh, int rank, int nranks) {
    int c[DROPIN_PIECE];
    fill(c, rank, 2 * DROPIN_PIECE);
    MPI_Request req;
    PT_MPI_OK(MPI_File_iwrite_at_all(fh, region_c(rank, nranks), c, DROPIN_PIECE, MPI_INT, &req));
    int outcount = 0, index = -1;
    MPI_Status st;
    for (int i = 0; i < DROPIN_TEST_ROUNDS && outcount == 0; i++)
        if (MPI_Testsome(1, &req, &outcount, &index, &st) != MPI_SUCCESS)
            break;
    PT_EQ(outcount, 1);
    PT_EQ(index, 0);
    check_count(&st, MPI_INT, DROPIN_PIECE);
}

/* The three pieces read back by three iread_at and one MPI_Waitall. */
static void read_pieces(MPI_File fh, int rank, int nranks) {
    int got[3][DROPIN_PIECE], want[DROPIN_PIECE];
    MPI_Offset at[3] = {region_a(rank), region_a(rank) + DROPIN_PIECE * sizeof(int),
                        region_c(rank, nranks)};
    MPI_Request reqs[3];
    MPI_Status sts[3];
    memset(got, 0, sizeof got);
    for (int p = 0; p < 3; p++)
        PT_MPI_OK(MPI_File_iread_at(fh, at[p], got[p], DROPIN_PIECE, MPI_INT, &reqs[p]));
    PT_MPI_OK(MPI_Waitall(3, reqs, sts));
    for (int p = 0; p < 3; p++) {
        fill(want, rank, p * DROPIN_PIECE);
        PT_CHECK(memcmp(got[p], want, sizeof want) == 0);
        check_count(&sts[p], MPI_INT, DROPIN_PIECE);
        PT_CHECK(reqs[p] == MPI_REQUEST_NULL);
    }
}

/* A and B read by iread_all at the individual pointer; the bytes counted in
 * a type they do not fill; a read past the end moves nothing. */
static void read_collective(MPI_File fh, int rank, int nranks) {
    int got[2 * DROPIN_PIECE], want[2 * DROPIN_PIECE];
    fill(want, rank, 0);
    fill(want + DROPIN_PIECE, rank, DROPIN_PIECE);
    PT_MPI_OK(MPI_File_seek(fh, region_a(rank), MPI_SEEK_SET));
    MPI_Request req;
    MPI_Status st;
    PT_MPI_OK(MPI_File_iread_all(fh, got, 2 * DROPIN_PIECE, MPI_INT, &req));
    PT_MPI_OK(MPI_Wait(&req, &st));
    PT_CHECK(memcmp(got, want, sizeof want) == 0);
    check_count(&st, MPI_INT, 2 * DROPIN_PIECE);

    char bytes[12];
    PT_MPI_OK(MPI_File_iread_at(fh, region_a(rank), bytes, 12, MPI_BYTE, &req));
    PT_MPI_OK(MPI_Wait(&req, &st));
    check_count(&st, MPI_DOUBLE, MPI_UNDEFINED);
    check_count(&st, MPI_BYTE, 12);

    /* Past the end: Open MPI 4.1's OMPIO never completes a nonblocking read
     * there and its collective reads count the bytes asked for, not those
     * read, so this is checked on pario only. */
    if (!ptest_on_pario())
        return;
    MPI_Offset end = region_c(nranks, nranks);
    PT_MPI_OK(MPI_File_read_at_all(fh, end, got, DROPIN_PIECE, MPI_INT, &st));
    check_count(&st, MPI_INT, 0);
    PT_MPI_OK(MPI_File_iread_at_all(fh, end, got, DROPIN_PIECE, MPI_INT, &req));
    PT_MPI_OK(MPI_Wait(&req, &st));
    check_count(&st, MPI_INT, 0);
}

#if MPI_VERSION >= 4
/* The large-count forms move the same data. */
static void check_large_count(MPI_File fh, int rank) {
    int got[DROPIN_PIECE], want[DROPIN_PIECE];
    fill(want, rank, 0);
    MPI_Request req;
    MPI_Status st;
    MPI_Count n = DROPIN_PIECE;
    PT_MPI_OK(MPI_File_iread_at_c(fh, region_a(rank), got, n, MPI_INT, &req));
    PT_MPI_OK(MPI_Wait(&req, &st));
    PT_CHECK(memcmp(got, want, sizeof want) == 0);
    memset(got, 0, sizeof got);
    PT_MPI_OK(MPI_File_read_at_all_c(fh, region_a(rank), got, n, MPI_INT, &st));
    PT_CHECK(memcmp(got, want, sizeof want) == 0);
    check_count(&st, MPI_INT, DROPIN_PIECE);
}
#endif

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    int rank = dropin_rank(), nranks = dropin_size();
    char path[DROPIN_PATH_MAX];
    dropin_fresh_path(path, "requests.dat");
    MPI_File fh;
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    write_own_region(fh, rank);
    write_shared_tail(fh, rank, nranks);
    PT_MPI_OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PT_MPI_OK(MPI_File_sync(fh));
    read_pieces(fh, rank, nranks);
    read_collective(fh, rank, nranks);
#if MPI_VERSION >= 4
    check_large_count(fh, rank);
#endif
    PT_MPI_OK(MPI_File_close(&fh));
    PT_EQ(dropin_file_size(path), (long long)region_c(nranks, nranks));
    return ptest_finish();
}
