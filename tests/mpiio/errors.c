/* Bad input does no damage (MPI 3.1 sections 2.8, 8.3, 13.4, 13.7).
 *
 * Each erroneous call (negative offset or count, MPI_DATATYPE_NULL, an
 * uncommitted derived type, a bad whence, a write through a read-only
 * handle, an invalid file handle, independent and collective) must return
 * the right class on every rank, hang no rank, and leave every byte of the
 * file as it was; reads past the end of file are no error and change
 * nothing. */
#include "conf.h"

#include <signal.h>

/* Bytes each rank writes into the file before the bad calls. */
#define PART 32
/* Room for 8 ranks' parts. */
#define IMAGE (8 * PART)

static unsigned char image[IMAGE];
static size_t image_len;

/* Every rank writes its PART-byte pattern, then closes: the reference image. */
static void write_reference(const char *path) {
    conf_remove(path);
    int rank = conf_rank(), n = conf_size();
    for (int r = 0; r < n; r++)
        conf_pattern(image + r * PART, PART, 60u + (unsigned)r);
    image_len = (size_t)n * PART;
    MPI_File fh;
    if (!PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                                 MPI_INFO_NULL, &fh)))
        return;
    PT_MPI_OK(MPI_File_write_at_all(fh, (MPI_Offset)rank * PART, image + rank * PART, PART,
                                    MPI_BYTE, MPI_STATUS_IGNORE));
    PT_MPI_OK(MPI_File_close(&fh));
    CONF_EXPECT_IMAGE(path, image, image_len);
}

/* How much of an expected failure Open MPI's OMPIO is held to when it is
 * the oracle (see conf_ompio_deviates); pario and MPICH's ROMIO are held to
 * the class. */
enum strictness {
    EVERYWHERE,      /* the class, on every MPI */
    OMPIO_ANY_ERROR, /* OMPIO fails with another class: any error from it */
    OMPIO_ACCEPTS    /* OMPIO returns MPI_SUCCESS: not checked on it */
};

/* A call that must fail with cls on every rank. */
static void expect_failure_at(int rc, int cls, enum strictness how, const char *what,
                              const char *file, int line) {
    char text[256];
    snprintf(text, sizeof text, "%s: class %d, expected %d", what, conf_class(rc), cls);
    if (how == EVERYWHERE || !conf_ompio_deviates())
        ptest_check(conf_class(rc) == cls, text, file, line);
    else if (how == OMPIO_ANY_ERROR)
        ptest_check(rc != MPI_SUCCESS, text, file, line);
    if (how != OMPIO_ACCEPTS || !conf_ompio_deviates())
        conf_same_class_at(rc, MPI_COMM_WORLD, file, line);
}
#define EXPECT_FAILURE(call, cls, how)                                                             \
    expect_failure_at((call), (cls), (how), #call, __FILE__, __LINE__)

/* Independent calls with bad arguments on a read-write handle. */
static void check_independent(const char *path) {
    MPI_File fh;
    if (!PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh)))
        return;
    unsigned char junk[PART];
    memset(junk, 0xff, sizeof junk);
    MPI_Offset at = (MPI_Offset)conf_rank() * PART;
    MPI_Status st;

    /* A negative explicit offset lies before the view: MPI_ERR_ARG.
     * Deviation: OMPIO accepts it (returns MPI_SUCCESS, writes nothing). */
    int rc = MPI_File_write_at(fh, -1, junk, PART, MPI_BYTE, &st);
    EXPECT_FAILURE(rc, MPI_ERR_ARG, OMPIO_ACCEPTS);
    CONF_NAMES_FILE(rc, path);
    EXPECT_FAILURE(MPI_File_read_at(fh, -PART, junk, PART, MPI_BYTE, &st), MPI_ERR_ARG,
                   OMPIO_ACCEPTS);
    EXPECT_FAILURE(MPI_File_write_at(fh, at, junk, -1, MPI_BYTE, &st), MPI_ERR_COUNT, EVERYWHERE);
    EXPECT_FAILURE(MPI_File_read_at(fh, at, junk, -4, MPI_BYTE, &st), MPI_ERR_COUNT, EVERYWHERE);
    EXPECT_FAILURE(MPI_File_write(fh, junk, -1, MPI_BYTE, &st), MPI_ERR_COUNT, EVERYWHERE);
    EXPECT_FAILURE(MPI_File_write_at(fh, at, junk, PART, MPI_DATATYPE_NULL, &st), MPI_ERR_TYPE,
                   EVERYWHERE);
    EXPECT_FAILURE(MPI_File_write(fh, junk, PART, MPI_DATATYPE_NULL, &st), MPI_ERR_TYPE,
                   EVERYWHERE);

    MPI_Datatype loose;
    MPI_Type_contiguous(4, MPI_BYTE, &loose);
    EXPECT_FAILURE(MPI_File_write_at(fh, at, junk, 2, loose, &st), MPI_ERR_TYPE, EVERYWHERE);
    EXPECT_FAILURE(MPI_File_read_at(fh, at, junk, 2, loose, &st), MPI_ERR_TYPE, EVERYWHERE);
    MPI_Type_free(&loose);

    EXPECT_FAILURE(MPI_File_seek(fh, 0, 12345), MPI_ERR_ARG, EVERYWHERE);
    EXPECT_FAILURE(MPI_File_write_at(MPI_FILE_NULL, at, junk, PART, MPI_BYTE, &st), MPI_ERR_FILE,
                   EVERYWHERE);

    /* The handle still works and the pointer did not move. */
    MPI_Offset pos = -1;
    PT_MPI_OK(MPI_File_get_position(fh, &pos));
    PT_EQ(pos, 0);
    unsigned char back[PART];
    PT_MPI_OK(MPI_File_read_at(fh, at, back, PART, MPI_BYTE, &st));
    PT_CHECK(memcmp(back, image + at, PART) == 0);
    PT_MPI_OK(MPI_File_close(&fh));
    CONF_EXPECT_IMAGE(path, image, image_len);
}

/* Reads past the end of file are no error and damage nothing. */
static void check_reads_past_end(const char *path) {
    MPI_File fh;
    if (!PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh)))
        return;
    unsigned char back[PART];
    MPI_Status st;
    int got = -1;
    PT_MPI_OK(MPI_File_read_at(fh, (MPI_Offset)image_len + 5, back, PART, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &got);
    PT_EQ(got, 0);
    PT_MPI_OK(MPI_File_read_at(fh, (MPI_Offset)image_len - 8, back, PART, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &got);
    PT_EQ(got, 8);
    PT_CHECK(memcmp(back, image + image_len - 8, 8) == 0);
    PT_MPI_OK(MPI_File_close(&fh));
    CONF_EXPECT_IMAGE(path, image, image_len);
}

/* A read-only handle: every write form fails on every rank, collective
 * ones included, with 13.7's MPI_ERR_READ_ONLY. Deviation: with 4 ranks
 * OMPIO's collective writes on a read-only handle return MPI_SUCCESS
 * (writing nothing), so they are not checked on OMPIO. */
static void check_read_only(const char *path) {
    MPI_File fh;
    if (!PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)))
        return;
    unsigned char junk[PART];
    memset(junk, 0xee, sizeof junk);
    MPI_Offset at = (MPI_Offset)conf_rank() * PART;
    int rc = MPI_File_write_at_all(fh, at, junk, PART, MPI_BYTE, MPI_STATUS_IGNORE);
    EXPECT_FAILURE(rc, MPI_ERR_READ_ONLY, OMPIO_ACCEPTS);
    CONF_NAMES_FILE(rc, path);
    EXPECT_FAILURE(MPI_File_write_all(fh, junk, PART, MPI_BYTE, MPI_STATUS_IGNORE),
                   MPI_ERR_READ_ONLY, OMPIO_ACCEPTS);
    EXPECT_FAILURE(MPI_File_write(fh, junk, PART, MPI_BYTE, MPI_STATUS_IGNORE), MPI_ERR_READ_ONLY,
                   EVERYWHERE);
    PT_MPI_OK(MPI_File_close(&fh));
    CONF_EXPECT_IMAGE(path, image, image_len);
}

/* Collective calls whose arguments are bad on every rank. */
static void check_collective_all_bad(const char *path) {
    MPI_File fh;
    if (!PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh)))
        return;
    unsigned char junk[PART];
    memset(junk, 0xdd, sizeof junk);
    MPI_Offset at = (MPI_Offset)conf_rank() * PART;
    /* Deviation: OMPIO accepts the negative offset (see above). */
    EXPECT_FAILURE(MPI_File_write_at_all(fh, -1, junk, PART, MPI_BYTE, MPI_STATUS_IGNORE),
                   MPI_ERR_ARG, OMPIO_ACCEPTS);
    EXPECT_FAILURE(MPI_File_write_at_all(fh, at, junk, -1, MPI_BYTE, MPI_STATUS_IGNORE),
                   MPI_ERR_COUNT, EVERYWHERE);
    EXPECT_FAILURE(MPI_File_write_all(fh, junk, PART, MPI_DATATYPE_NULL, MPI_STATUS_IGNORE),
                   MPI_ERR_TYPE, EVERYWHERE);
    EXPECT_FAILURE(MPI_File_read_at_all(fh, at, junk, -2, MPI_BYTE, MPI_STATUS_IGNORE),
                   MPI_ERR_COUNT, EVERYWHERE);
    PT_MPI_OK(MPI_File_close(&fh));
    CONF_EXPECT_IMAGE(path, image, image_len);
}

/* Seconds the one-bad-rank collective checks may take before the program
 * reports a hang and exits (each call takes milliseconds when correct). */
#define HANG_SECONDS 20

static void report_hang(int sig) {
    (void)sig;
    static const char msg[] = "FAIL errors.c: a collective call with a bad argument on one "
                              "rank hangs the others\n";
    ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)ignored;
    _exit(1);
}

/* A collective call with a bad argument on the last rank only: no rank may
 * hang. With collective writes not kept behind (pario_cb_write_behind
 * disabled) every rank returns the same error and nothing is written; kept
 * (the default for contiguous views on one node) each rank checks its own
 * arguments: the last rank fails, the others' parts reach the file. No MPI
 * promises either for the system's MPI-IO (OMPIO's other ranks wait in the
 * collective forever), so it runs under pario only. */
static void check_collective_one_bad(const char *path) {
    if (!ptest_on_pario() || conf_size() < 2)
        return;
    MPI_File fh;
    MPI_Info agreed;
    MPI_Info_create(&agreed);
    MPI_Info_set(agreed, "pario_cb_write_behind", "disable");
    int opened = PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, agreed, &fh));
    MPI_Info_free(&agreed);
    if (!opened)
        return;
    unsigned char junk[PART];
    memset(junk, 0xcc, sizeof junk);
    int rank = conf_rank(), last = conf_size() - 1;
    MPI_Offset at = (MPI_Offset)rank * PART;
    int count = rank == last ? -1 : PART;
    signal(SIGALRM, report_hang);
    alarm(HANG_SECONDS);
    int rc = MPI_File_write_at_all(fh, at, junk, count, MPI_BYTE, MPI_STATUS_IGNORE);
    PT_MPI_CLASS(rc, MPI_ERR_COUNT);
    CONF_SAME_CLASS(rc);
    MPI_Offset where = rank == last ? -PART : at;
    rc = MPI_File_write_at_all(fh, where, junk, PART, MPI_BYTE, MPI_STATUS_IGNORE);
    PT_MPI_CLASS(rc, MPI_ERR_ARG);
    CONF_SAME_CLASS(rc);
    alarm(0);
    PT_MPI_OK(MPI_File_close(&fh));
    CONF_EXPECT_IMAGE(path, image, image_len);

    if (!PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh)))
        return;
    alarm(HANG_SECONDS);
    rc = MPI_File_write_at_all(fh, where, junk, PART, MPI_BYTE, MPI_STATUS_IGNORE);
    PT_MPI_CLASS(rc, rank == last ? MPI_ERR_ARG : MPI_SUCCESS);
    alarm(0);
    PT_MPI_OK(MPI_File_close(&fh));
    for (int r = 0; r < last; r++)
        memset(image + r * PART, 0xcc, PART);
    CONF_EXPECT_IMAGE(path, image, image_len);
}

/* One collective read through a view of blk-byte blocks stride bytes apart
 * (this rank's first at rank * blk), with a bad count on the last rank:
 * either only the last rank fails and the others get their bytes (each rank
 * reads for itself), or every rank fails alike and no buffer changes. */
static void read_one_bad(const char *path, const char *cb_read, int blk, int stride,
                         int each_alone) {
    int rank = conf_rank(), n = conf_size(), last = n - 1;
    int blocks = (int)(image_len / (size_t)stride);
    MPI_Datatype ft;
    MPI_Type_vector(blocks, blk, stride, MPI_BYTE, &ft);
    MPI_Type_commit(&ft);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_read", cb_read);
    MPI_File fh;
    int opened = PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &fh));
    MPI_Info_free(&info);
    if (opened) {
        PT_MPI_OK(
            MPI_File_set_view(fh, (MPI_Offset)rank * blk, MPI_BYTE, ft, "native", MPI_INFO_NULL));
        unsigned char got[IMAGE], want[IMAGE];
        memset(got, 0xee, sizeof got);
        memset(want, 0xee, sizeof want);
        int count = rank == last ? -1 : blocks * blk;
        signal(SIGALRM, report_hang);
        alarm(HANG_SECONDS);
        int rc = MPI_File_read_at_all(fh, 0, got, count, MPI_BYTE, MPI_STATUS_IGNORE);
        alarm(0);
        int mine_ok = each_alone && rank != last;
        PT_MPI_CLASS(rc, mine_ok ? MPI_SUCCESS : MPI_ERR_COUNT);
        for (int b = 0; b < blocks && mine_ok; b++)
            memcpy(want + b * blk, image + (size_t)b * stride + (size_t)rank * blk, (size_t)blk);
        PT_CHECK(memcmp(got, want, sizeof got) == 0);
        PT_MPI_OK(MPI_File_close(&fh));
    }
    MPI_Type_free(&ft);
}

/* Collective reads with a bad count on one rank. On one node each rank reads
 * for itself through a view whose blocks are dense enough (4-byte blocks of
 * all ranks interleaved), so only that rank fails; with romio_cb_read=enable
 * (two-phase), or through a view that spreads each rank's bytes thinly
 * (1 byte in 16, past COLL_MAX_SPREAD), every rank fails alike. Runs under
 * pario only, as above. */
static void check_collective_read_one_bad(const char *path) {
    int n = conf_size();
    if (!ptest_on_pario() || n < 2)
        return;
    read_one_bad(path, "automatic", 4, 4 * n, 1);
    read_one_bad(path, "enable", 4, 4 * n, 0);
    if (n <= 16)
        read_one_bad(path, "automatic", 1, 16, 0);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    char path[CONF_PATH_MAX];
    conf_path(path, "errors.dat");
    write_reference(path);
    check_independent(path);
    check_reads_past_end(path);
    check_read_only(path);
    check_collective_all_bad(path);
    check_collective_one_bad(path);
    check_collective_read_one_bad(path);
    return ptest_finish();
}
