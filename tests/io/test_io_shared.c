/* Shared file pointer: independent calls from all ranks land each record
 * exactly once; ordered calls land in rank order; seek/get_position agree.
 * Built twice: as test_io_shared over MPI's one-sided window, and with
 * shared_side.c as test_io_shared_side, where MPI's one-sided calls fail and
 * the pointer lives in a side file beside the data file (io/shared/side.c),
 * which exists while the file is open and is gone after close. */
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pario/io.h"
#include "ptest.h"

/* Side files while a file is open: one in test_io_shared_side. */
#ifdef SHARED_SIDE
enum { side_file_expected = 1 };
#else
enum { side_file_expected = 0 };
#endif

enum { REC = 16, ROUNDS = 5 };
static int rank, nranks;

/* Side files of the shared pointer in path's directory. */
static int side_files(const char *path) {
    char *dir = strdup(path);
    DIR *d = dir ? opendir(dirname(dir)) : NULL;
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] == '.' && strstr(e->d_name, ".pario-sfp-") != NULL;
    if (d)
        closedir(d);
    free(dir);
    return n;
}

static pario_file *open_rw(const char *path, int extra) {
    pario_file *fh = NULL;
    pario_error err;
    int rc = pario_file_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE | extra,
                             MPI_INFO_NULL, &fh, &err);
    PT_EQ(rc, PARIO_OK);
    PT_EQ(side_files(path), side_file_expected);
    return fh;
}

static void close_checked(pario_file **fh, const char *path) {
    pario_error err;
    PT_EQ(pario_file_close(fh, &err), PARIO_OK);
    MPI_Barrier(MPI_COMM_WORLD);
    PT_EQ(side_files(path), 0);
}

static void read_all_posix(const char *path, unsigned char *img, int64_t n) {
    MPI_Barrier(MPI_COMM_WORLD);
    int fd = open(path, O_RDONLY);
    PT_CHECK(fd >= 0 && pread(fd, img, (size_t)n, 0) == n);
    if (fd >= 0)
        close(fd);
}

static void test_shared_independent(void) {
    const char *path = ptest_path("shared-indep");
    pario_file *fh = open_rw(path, 0);
    unsigned char rec[REC];
    MPI_Count bytes = 0;
    for (int r = 0; r < ROUNDS; r++) {
        memset(rec, 0, sizeof rec);
        rec[0] = (unsigned char)rank;
        rec[1] = (unsigned char)r;
        memset(rec + 2, 'A' + rank, REC - 2);
        PT_EQ(pario_file_write_shared(fh, rec, REC, MPI_BYTE, &bytes), PARIO_OK);
        PT_EQ(bytes, REC);
    }
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    MPI_Offset pos = 0;
    PT_EQ(pario_file_get_position_shared(fh, &pos), PARIO_OK);
    PT_EQ(pos, nranks * ROUNDS * REC);
    /* Every (rank, round) record exactly once, each intact. */
    static unsigned char img[REC * ROUNDS * 64];
    int64_t n = (int64_t)nranks * ROUNDS * REC;
    read_all_posix(path, img, n);
    int seen[64][ROUNDS] = {{0}}, intact = 1;
    for (int64_t i = 0; i < n; i += REC) {
        int who = img[i], round = img[i + 1];
        intact &= who < nranks && round < ROUNDS;
        if (who < nranks && round < ROUNDS)
            seen[who][round]++;
        for (int k = 2; k < REC; k++)
            intact &= img[i + k] == 'A' + who;
    }
    PT_CHECK(intact);
    int once = 1;
    for (int w = 0; w < nranks; w++)
        for (int r = 0; r < ROUNDS; r++)
            once &= seen[w][r] == 1;
    PT_CHECK(once);
    close_checked(&fh, path);
}

static void test_ordered_and_seek(void) {
    const char *path = ptest_path("shared-ordered");
    pario_file *fh = open_rw(path, MPI_MODE_DELETE_ON_CLOSE);
    /* Rank r writes r + 1 ints of value r, in rank order. */
    int vals[64];
    for (int i = 0; i <= rank; i++)
        vals[i] = rank;
    PT_EQ(pario_file_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), PARIO_OK);
    MPI_Count bytes = 0;
    PT_EQ(pario_file_write_ordered(fh, vals, rank + 1, MPI_INT, &bytes), PARIO_OK);
    PT_EQ(bytes, (rank + 1) * (int)sizeof(int));
    int total = nranks * (nranks + 1) / 2;
    MPI_Offset pos = 0;
    PT_EQ(pario_file_get_position_shared(fh, &pos), PARIO_OK);
    PT_EQ(pos, total);
    PT_EQ(pario_file_seek_shared(fh, 0, MPI_SEEK_SET), PARIO_OK);
    int back[64] = {0};
    PT_EQ(pario_file_read_ordered(fh, back, rank + 1, MPI_INT, &bytes), PARIO_OK);
    int ok = 1;
    for (int i = 0; i <= rank; i++)
        ok &= back[i] == rank;
    PT_CHECK(ok);
    PT_EQ(pario_file_seek_shared(fh, -1, MPI_SEEK_END), PARIO_OK);
    PT_EQ(pario_file_get_position_shared(fh, &pos), PARIO_OK);
    PT_EQ(pos, total - 1);
    PT_EQ(pario_file_seek_shared(fh, rank, MPI_SEEK_SET),
          nranks > 1 ? PARIO_ERR_NOT_SAME : PARIO_OK);
    close_checked(&fh, path);
}

/* A bad argument on one rank of an ordered call fails it on every rank,
 * with nothing written and the shared pointer where it was. */
static void test_ordered_bad_arguments(void) {
    const char *path = ptest_path("shared-ordered-bad");
    pario_file *fh = open_rw(path, 0);
    PT_EQ(pario_file_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), PARIO_OK);
    int vals[4] = {7, 7, 7, 7};
    MPI_Count bytes = -1;
    int last = nranks - 1;
    int rc = pario_file_write_ordered(fh, vals, rank == last ? -1 : 2, MPI_INT, &bytes);
    PT_EQ(rc, PARIO_ERR_COUNT_ARG);
    PT_EQ(bytes, 0);
    if (rank != last) /* the others hear why, naming the file */
        PT_CHECK(strstr(pario_file_last_error(fh)->msg, path) != NULL);
    /* 6 bytes are not whole 4-byte etypes */
    rc = pario_file_write_ordered(fh, vals, rank == 0 ? 6 : 8, MPI_BYTE, &bytes);
    PT_EQ(rc, PARIO_ERR_TYPE);
    MPI_Offset pos = -1, size = -1;
    PT_EQ(pario_file_get_position_shared(fh, &pos), PARIO_OK);
    PT_EQ(pos, 0);
    PT_EQ(pario_file_get_size(fh, &size), PARIO_OK);
    PT_EQ(size, 0);
    close_checked(&fh, path);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    ptest_init();
    test_shared_independent();
    test_ordered_and_seek();
    test_ordered_bad_arguments();
    return ptest_finish();
}
