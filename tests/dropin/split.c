/* Split collectives: the _begin/_end pairs move the data and the end reports
 * the status; misuse (an end without a begin, a second begin while one is
 * outstanding, an end that does not match the begin) fails. pario reports
 * misuse as MPI_ERR_OTHER; the standard names no class, so on the system's
 * MPI-IO only the failure of a second begin is checked (Open MPI 4.1's OMPIO
 * does not detect an end without a begin). */
#include "dropin.h"

/* ints per rank. */
#define DROPIN_SPLIT_INTS 8

static void fill(int *buf, int rank, int seed) {
    for (int k = 0; k < DROPIN_SPLIT_INTS; k++)
        buf[k] = seed * 10000 + rank * 100 + k;
}

static MPI_Offset rank_offset(int rank) {
    return (MPI_Offset)rank * DROPIN_SPLIT_INTS * sizeof(int);
}

static void check_count(MPI_Status *st, int want) {
    int count = -2;
    MPI_Get_count(st, MPI_INT, &count);
    PT_EQ(count, want);
}

/* A misuse must fail; on pario with MPI_ERR_OTHER and a message naming the file. */
static void check_misuse(int rc, const char *path) {
    PT_CHECK(rc != MPI_SUCCESS);
    if (ptest_on_pario())
        PT_MPI_CLASS(rc, MPI_ERR_OTHER);
    DROPIN_STRING_HAS(rc, path);
}

static void check_data(MPI_File fh, int rank) {
    int out[DROPIN_SPLIT_INTS], in[DROPIN_SPLIT_INTS];
    MPI_Status st;
    fill(out, rank, 1);
    PT_MPI_OK(MPI_File_write_at_all_begin(fh, rank_offset(rank), out, DROPIN_SPLIT_INTS, MPI_INT));
    PT_MPI_OK(MPI_File_write_at_all_end(fh, out, &st));
    check_count(&st, DROPIN_SPLIT_INTS);
    memset(in, 0, sizeof in);
    PT_MPI_OK(MPI_File_read_at_all_begin(fh, rank_offset(rank), in, DROPIN_SPLIT_INTS, MPI_INT));
    PT_MPI_OK(MPI_File_read_at_all_end(fh, in, &st));
    check_count(&st, DROPIN_SPLIT_INTS);
    PT_CHECK(memcmp(in, out, sizeof in) == 0);

    fill(out, rank, 2);
    PT_MPI_OK(MPI_File_seek(fh, rank_offset(rank), MPI_SEEK_SET));
    PT_MPI_OK(MPI_File_write_all_begin(fh, out, DROPIN_SPLIT_INTS, MPI_INT));
    PT_MPI_OK(MPI_File_write_all_end(fh, out, &st));
    check_count(&st, DROPIN_SPLIT_INTS);
    PT_MPI_OK(MPI_File_seek(fh, rank_offset(rank), MPI_SEEK_SET));
    memset(in, 0, sizeof in);
    PT_MPI_OK(MPI_File_read_all_begin(fh, in, DROPIN_SPLIT_INTS, MPI_INT));
    PT_MPI_OK(MPI_File_read_all_end(fh, in, MPI_STATUS_IGNORE));
    PT_CHECK(memcmp(in, out, sizeof in) == 0);
}

static void check_misuses(MPI_File fh, int rank, const char *path) {
    int buf[DROPIN_SPLIT_INTS];
    MPI_Status st;
    if (ptest_on_pario())
        check_misuse(MPI_File_read_all_end(fh, buf, &st), path);

    fill(buf, rank, 3);
    PT_MPI_OK(MPI_File_write_at_all_begin(fh, rank_offset(rank), buf, DROPIN_SPLIT_INTS, MPI_INT));
    check_misuse(
        MPI_File_write_at_all_begin(fh, rank_offset(rank), buf, DROPIN_SPLIT_INTS, MPI_INT), path);
    if (ptest_on_pario()) {
        check_misuse(MPI_File_read_all_end(fh, buf, &st), path);
        check_misuse(MPI_File_write_at_all(fh, 0, buf, 1, MPI_INT, &st), path);
    }
    PT_MPI_OK(MPI_File_write_at_all_end(fh, buf, &st));
    check_count(&st, DROPIN_SPLIT_INTS);
    if (ptest_on_pario())
        check_misuse(MPI_File_write_at_all_end(fh, buf, &st), path);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    int rank = dropin_rank();
    char path[DROPIN_PATH_MAX];
    dropin_fresh_path(path, "split.dat");
    MPI_File fh;
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    check_data(fh, rank);
    check_misuses(fh, rank, path);
    PT_MPI_OK(MPI_File_close(&fh));
    if (rank == 0) {
        int got[DROPIN_SPLIT_INTS], want[DROPIN_SPLIT_INTS];
        fill(want, 0, 3);
        PT_EQ(ptest_read_file(path, got, sizeof got), (long long)sizeof got);
        PT_CHECK(memcmp(got, want, sizeof want) == 0);
    }
    return ptest_finish();
}
