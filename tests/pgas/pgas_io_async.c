/* pgas io asynchronous calls: the bytes move after the starting call returns,
 * every form round-trips byte for byte, and a failure of the transfer on one
 * rank reaches every rank at the wait.
 *
 * Overlap is shown without timing: with strong consistency (the io layer's
 * atomic mode) every access first takes a byte-range lock over its span, and
 * rank 0 holds a conflicting OFD lock on the file through a descriptor of its
 * own. The starting call must return anyway (a call that moved its bytes
 * itself would block for good; an alarm turns that into a failure),
 * ftest_async must find the call unfinished on every rank and the file still
 * empty; once rank 0 drops its lock, fwait_async completes it and the file
 * holds the array. The forms: local, shared (common and individual
 * pointers), local and shared lists, written and read back asynchronously,
 * synchronisation flags of every kind; fclose with a call outstanding
 * completes it. Failures: one rank's writes past RLIMIT_FSIZE (SIGXFSZ
 * ignored: a real failing pwrite in the background) fail the wait, and
 * fclose, on every rank with the same code and message.
 *
 * With the argument "fault" (registered with PARIO_FAULT failing every write
 * of rank 1 with EIO, tests/fault) only the injected failure is checked: the
 * asynchronous write fails at fwait_async and at an ftest_async on every rank
 * with PARIO_ERR_IO and one message; reads still work afterwards. */
#include "pgas_io_test.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

/* Seconds before a starting call blocked on the lock counts as hung. */
#define ASYNC_ALARM_S 60

static pario_pgas_array alloc(pario_pgas *ctx, uint64_t n, uint32_t es, uint64_t b) {
    pario_pgas_array a;
    PT_EQ(pario_pgas_all_alloc(ctx, n, es, b, &a), PARIO_OK);
    return a;
}

static int ofd_lock(int fd, short type) {
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    return fcntl(fd, F_OFD_SETLK, &fl);
}

/* Polls ftest_async until the call completes; its code, *moved its bytes. */
static int test_until_done(pario_pgas_file *fd, pario_pgas_off *moved) {
    int flag = 0, rc = PARIO_OK;
    while (!flag && rc == PARIO_OK)
        rc = pario_pgas_ftest_async(fd, &flag, moved);
    return rc;
}

/* Rank 0 holds a lock on the whole file while a write and then a read are
 * started: both return, ftest finds them unfinished, the file is untouched. */
static void overlap_shown_by_a_lock(pario_pgas *ctx, uint64_t block) {
    const char *path = pio_test_path("pgas_io_async.lock");
    int rank = pario_pgas_mythread(ctx);
    uint32_t es = 8;
    uint64_t n = 1000 + 3 * (uint64_t)pario_pgas_threads(ctx);
    pario_pgas_array a = alloc(ctx, n, es, block), b = alloc(ctx, n, es, 1);
    pio_test_fill_owned(ctx, &a, 71);
    pario_pgas_file *fd = pio_test_open(ctx, path,
                                        PARIO_PGAS_RDWR | PARIO_PGAS_CREATE | PARIO_PGAS_TRUNC |
                                            PARIO_PGAS_COMMON_FP | PARIO_PGAS_STRONG_CA);
    int lock_fd = -1;
    if (rank == 0) {
        lock_fd = open(path, O_RDWR);
        PT_CHECK(lock_fd >= 0 && ofd_lock(lock_fd, F_WRLCK) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    alarm(ASYNC_ALARM_S);
    PT_EQ(pario_pgas_fwrite_shared_async(fd, a.base, a.base.block, es, n, 0), PARIO_OK);
    int flag = -1;
    pario_pgas_off moved = 0;
    PT_EQ(pario_pgas_ftest_async(fd, &flag, &moved), PARIO_OK);
    PT_EQ(flag, 0); /* every rank's access waits for rank 0's lock */
    if (rank == 0) {
        struct stat st;
        PT_CHECK(fstat(lock_fd, &st) == 0 && st.st_size == 0);
        PT_CHECK(ofd_lock(lock_fd, F_UNLCK) == 0);
    }
    PT_EQ(pario_pgas_fwait_async(fd, &moved), PARIO_OK);
    PT_EQ(moved, n * es);
    if (rank == 0) {
        PT_EQ(pio_test_file_bad(path, 0, 0, n, es, 71, (long long)(n * es)), 0);
        PT_CHECK(ofd_lock(lock_fd, F_WRLCK) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    PT_EQ(pario_pgas_fseek(fd, 0, PARIO_PGAS_SEEK_SET, NULL), PARIO_OK);
    PT_EQ(pario_pgas_fread_shared_async(fd, b.base, 1, es, n, 0), PARIO_OK);
    PT_EQ(pario_pgas_ftest_async(fd, &flag, &moved), PARIO_OK);
    PT_EQ(flag, 0);
    if (rank == 0)
        PT_CHECK(ofd_lock(lock_fd, F_UNLCK) == 0);
    PT_EQ(pario_pgas_fwait_async(fd, &moved), PARIO_OK);
    alarm(0);
    PT_EQ(moved, n * es);
    PT_EQ(pio_test_owned_bad(ctx, &b, 71, 0, 0, n), 0);
    if (rank == 0)
        close(lock_fd);
    pio_test_close(&fd);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &b), PARIO_OK);
}

/* Shared buffers with individual pointers: rank r writes slice r of a
 * (block 3) at its own pointer, then reads slice n - 1 - r into b (block
 * [*]), so data crosses ranks; with ftest polling and IN/OUT flags. */
static void shared_individual(pario_pgas *ctx) {
    const char *path = pio_test_path("pgas_io_async.shared");
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    uint32_t es = 5;
    uint64_t s = 67, count = s * (uint64_t)n;
    pario_pgas_array a = alloc(ctx, count, es, 3), b = alloc(ctx, count, es, PARIO_PGAS_BLOCK_FIT);
    pio_test_fill_owned(ctx, &a, 73);
    pario_pgas_off moved = 0, pos = -1;
    pario_pgas_file *fd = pio_test_open(ctx, path,
                                        PARIO_PGAS_RDWR | PARIO_PGAS_CREATE | PARIO_PGAS_TRUNC |
                                            PARIO_PGAS_INDIVIDUAL_FP);
    PT_EQ(pario_pgas_fseek(fd, (pario_pgas_off)(rank * s * es), PARIO_PGAS_SEEK_SET, NULL),
          PARIO_OK);
    PT_EQ(pario_pgas_fwrite_shared_async(fd, pario_pgas_elem(&a, rank * s), 3, es, s,
                                         PARIO_PGAS_IN_MYSYNC | PARIO_PGAS_OUT_ALLSYNC),
          PARIO_OK);
    PT_EQ(test_until_done(fd, &moved), PARIO_OK);
    PT_EQ(moved, s * es);
    PT_EQ(pario_pgas_fseek(fd, 0, PARIO_PGAS_SEEK_CUR, &pos), PARIO_OK);
    PT_EQ(pos, (pario_pgas_off)((rank + 1) * s * es)); /* moved by the completed call */
    PT_EQ(pario_pgas_fsync(fd), PARIO_OK);
    if (rank == 0)
        PT_EQ(pio_test_file_bad(path, 0, 0, count, es, 73, (long long)(count * es)), 0);
    int other = n - 1 - rank;
    PT_EQ(pario_pgas_fseek(fd, (pario_pgas_off)(other * s * es), PARIO_PGAS_SEEK_SET, NULL),
          PARIO_OK);
    PT_EQ(pario_pgas_fread_shared_async(fd, pario_pgas_elem(&b, other * s), b.base.block, es, s,
                                        PARIO_PGAS_IN_NOSYNC | PARIO_PGAS_OUT_MYSYNC),
          PARIO_OK);
    PT_EQ(pario_pgas_fwait_async(fd, &moved), PARIO_OK);
    PT_EQ(moved, s * es);
    pio_test_close(&fd);
    MPI_Barrier(MPI_COMM_WORLD); /* OUT_MYSYNC: other ranks' elements after a barrier */
    PT_EQ(pio_test_owned_bad(ctx, &b, 73, 0, 0, count), 0);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &b), PARIO_OK);
}

/* Local buffers and local lists: rank r's elements of runs j * n + r. */
static void local_forms(pario_pgas *ctx) {
    const char *path = pio_test_path("pgas_io_async.local");
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    uint32_t es = 3;
    uint64_t k = 37, runs = 3, total = runs * k * (uint64_t)n;
    unsigned char *buf = malloc(runs * k * es), *in = calloc(runs * k * es, 1);
    pario_pgas_filevec fv[3];
    for (uint64_t j = 0; j < runs; j++) {
        uint64_t first = (j * (uint64_t)n + (uint64_t)rank) * k;
        test_fill(buf + j * k * es, first, k, es, 79);
        fv[j] = (pario_pgas_filevec){(pario_pgas_off)(first * es), k * es};
    }
    size_t cut = k * es + 2;
    pario_pgas_local_memvec mv[2] = {{buf, cut}, {buf + cut, runs * k * es - cut}};
    pario_pgas_off moved = 0;
    pario_pgas_file *fd = pio_test_open(ctx, path,
                                        PARIO_PGAS_RDWR | PARIO_PGAS_CREATE | PARIO_PGAS_TRUNC |
                                            PARIO_PGAS_INDIVIDUAL_FP);
    PT_EQ(pario_pgas_fwrite_list_local_async(fd, 2, mv, 3, fv, 0), PARIO_OK);
    PT_EQ(pario_pgas_fwait_async(fd, &moved), PARIO_OK);
    PT_EQ(moved, runs * k * es);
    PT_EQ(pario_pgas_fsync(fd), PARIO_OK);
    if (rank == 0)
        PT_EQ(pio_test_file_bad(path, 0, 0, total, es, 79, (long long)(total * es)), 0);
    pario_pgas_local_memvec mv_in = {in, runs * k * es};
    PT_EQ(pario_pgas_fread_list_local_async(fd, 1, &mv_in, 3, fv, PARIO_PGAS_OUT_NOSYNC), PARIO_OK);
    PT_EQ(test_until_done(fd, &moved), PARIO_OK);
    PT_EQ(moved, runs * k * es);
    PT_EQ(memcmp(in, buf, runs * k * es), 0);
    /* Local buffers at the pointer: run j = 1 of this rank, read back past the
     * end of file, which cuts the read. */
    PT_EQ(pario_pgas_fseek(fd, fv[1].offset, PARIO_PGAS_SEEK_SET, NULL), PARIO_OK);
    memset(in, 0, runs * k * es);
    PT_EQ(pario_pgas_fread_local_async(fd, in, es, k, 0), PARIO_OK);
    PT_EQ(pario_pgas_fwait_async(fd, &moved), PARIO_OK);
    PT_EQ(moved, k * es);
    PT_EQ(memcmp(in, buf + k * es, k * es), 0);
    PT_EQ(pario_pgas_fseek(fd, (pario_pgas_off)(total * es - es), PARIO_PGAS_SEEK_SET, NULL),
          PARIO_OK);
    PT_EQ(pario_pgas_fread_local_async(fd, in, es, k, 0), PARIO_OK);
    PT_EQ(pario_pgas_fwait_async(fd, &moved), PARIO_OK);
    PT_EQ(moved, es);
    /* Each rank's run 0 (elements r * k ...) appended at end + r * k elements. */
    PT_EQ(pario_pgas_fseek(fd, (pario_pgas_off)((total + (uint64_t)rank * k) * es),
                           PARIO_PGAS_SEEK_SET, NULL),
          PARIO_OK);
    PT_EQ(pario_pgas_fwrite_local_async(fd, buf, es, k, 0), PARIO_OK);
    PT_EQ(pario_pgas_fwait_async(fd, &moved), PARIO_OK);
    PT_EQ(moved, k * es);
    pio_test_close(&fd);
    if (rank == 0)
        PT_EQ(pio_test_file_bad(path, total * es, 0, k * (uint64_t)n, es, 79,
                                (long long)((total + k * (uint64_t)n) * es)),
              0);
    free(buf);
    free(in);
}

/* Shared lists with a common pointer (lists ignore it): rank r gives slice r
 * of a in two file entries, then reads slice n - 1 - r into b. */
static void shared_lists(pario_pgas *ctx) {
    const char *path = pio_test_path("pgas_io_async.slist");
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    uint32_t es = 9;
    uint64_t s = 31, h = 10, count = s * (uint64_t)n;
    pario_pgas_array a = alloc(ctx, count, es, 128), b = alloc(ctx, count, es, 0);
    pio_test_fill_owned(ctx, &a, 83);
    pario_pgas_shared_memvec mv = {pario_pgas_elem(&a, rank * s), 128 * es, s * es};
    pario_pgas_off at = (pario_pgas_off)(rank * s * es), moved = 0;
    pario_pgas_filevec fv[2] = {{at, h * es}, {at + (pario_pgas_off)(h * es), (s - h) * es}};
    pario_pgas_file *fd = pio_test_open(
        ctx, path, PARIO_PGAS_RDWR | PARIO_PGAS_CREATE | PARIO_PGAS_TRUNC | PARIO_PGAS_COMMON_FP);
    PT_EQ(pario_pgas_fwrite_list_shared_async(fd, 1, &mv, 2, fv, 0), PARIO_OK);
    PT_EQ(pario_pgas_fwait_async(fd, &moved), PARIO_OK);
    PT_EQ(moved, s * es);
    PT_EQ(pario_pgas_fsync(fd), PARIO_OK);
    if (rank == 0)
        PT_EQ(pio_test_file_bad(path, 0, 0, count, es, 83, (long long)(count * es)), 0);
    int other = n - 1 - rank;
    pario_pgas_shared_memvec mv_in = {pario_pgas_elem(&b, other * s), 0, s * es};
    pario_pgas_filevec fv_in = {(pario_pgas_off)(other * s * es), s * es};
    PT_EQ(pario_pgas_fread_list_shared_async(fd, 1, &mv_in, 1, &fv_in, 0), PARIO_OK);
    PT_EQ(test_until_done(fd, &moved), PARIO_OK);
    PT_EQ(moved, s * es);
    pio_test_close(&fd);
    PT_EQ(pio_test_owned_bad(ctx, &b, 83, 0, 0, count), 0);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &b), PARIO_OK);
}

/* fclose with a write outstanding completes it: the file holds the array. */
static void close_completes(pario_pgas *ctx) {
    const char *path = pio_test_path("pgas_io_async.close");
    uint32_t es = 16;
    uint64_t n = 513;
    pario_pgas_array a = alloc(ctx, n, es, PARIO_PGAS_BLOCK_FIT);
    pio_test_fill_owned(ctx, &a, 89);
    pario_pgas_file *fd = pio_test_open(
        ctx, path, PARIO_PGAS_WRONLY | PARIO_PGAS_CREATE | PARIO_PGAS_TRUNC | PARIO_PGAS_COMMON_FP);
    PT_EQ(pario_pgas_fwrite_shared_async(fd, a.base, a.base.block, es, n, 0), PARIO_OK);
    pio_test_close(&fd);
    if (pario_pgas_mythread(ctx) == 0)
        PT_EQ(pio_test_file_bad(path, 0, 0, n, es, 89, (long long)(n * es)), 0);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
}

/* 1 when msg is the same string on every rank. */
static int same_everywhere(const char *msg) {
    char first[sizeof(((pario_error *)0)->msg)] = {0};
    snprintf(first, sizeof first, "%s", msg);
    MPI_Bcast(first, (int)sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    int same = strcmp(first, msg) == 0, all = 0;
    MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

/* The last rank cannot write past `limit` bytes of any file (SIGXFSZ ignored). */
static void limit_last_rank(pario_pgas *ctx, rlim_t limit, struct rlimit *old) {
    if (pario_pgas_mythread(ctx) != pario_pgas_threads(ctx) - 1)
        return;
    signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, old);
    struct rlimit r = *old;
    r.rlim_cur = limit;
    PT_EQ(setrlimit(RLIMIT_FSIZE, &r), 0);
}

static void unlimit_last_rank(pario_pgas *ctx, const struct rlimit *old) {
    if (pario_pgas_mythread(ctx) == pario_pgas_threads(ctx) - 1)
        PT_EQ(setrlimit(RLIMIT_FSIZE, old), 0);
}

/* The last rank's part of a [*] array lies past its file size limit: its
 * background write fails; the wait fails on every rank with its message, and
 * so does an fclose that completes such a call. */
static void failure_reaches_every_rank(pario_pgas *ctx) {
    const char *path = pio_test_path("pgas_io_async.fail");
    int n = pario_pgas_threads(ctx);
    uint32_t es = 8;
    uint64_t count = 1024 * (uint64_t)n, part = 1024 * es;
    pario_pgas_array a = alloc(ctx, count, es, PARIO_PGAS_BLOCK_FIT);
    pio_test_fill_owned(ctx, &a, 97);
    struct rlimit old;
    pario_pgas_off moved = 0;
    pario_pgas_file *fd = pio_test_open(
        ctx, path, PARIO_PGAS_RDWR | PARIO_PGAS_CREATE | PARIO_PGAS_TRUNC | PARIO_PGAS_COMMON_FP);
    limit_last_rank(ctx, (rlim_t)((uint64_t)(n - 1) * part + part / 2), &old);
    PT_EQ(pario_pgas_fwrite_shared_async(fd, a.base, a.base.block, es, count, 0), PARIO_OK);
    int rc = pario_pgas_fwait_async(fd, &moved);
    const char *msg = pario_pgas_file_last_error(fd)->msg;
    PT_EQ(rc, PARIO_ERR_NO_SPACE);
    PT_EQ(moved, -1);
    PT_CHECK(strstr(msg, path) != NULL);
    PT_CHECK(same_everywhere(msg));
    int out = -1;
    PT_EQ(pario_pgas_fcntl(fd, PARIO_PGAS_ASYNC_OUTSTANDING, NULL, &out), PARIO_OK);
    PT_EQ(out, 0);
    /* The file is usable afterwards; fclose completes a failing call. */
    PT_EQ(pario_pgas_fseek(fd, 0, PARIO_PGAS_SEEK_SET, NULL), PARIO_OK);
    PT_EQ(pario_pgas_fwrite_shared_async(fd, a.base, a.base.block, es, count, 0), PARIO_OK);
    pario_error err = {0};
    rc = pario_pgas_fclose(&fd, &err);
    unlimit_last_rank(ctx, &old);
    PT_EQ(rc, PARIO_ERR_NO_SPACE);
    PT_CHECK(fd == NULL);
    PT_CHECK(strstr(err.msg, path) != NULL);
    PT_CHECK(same_everywhere(err.msg));
    if (pario_pgas_mythread(ctx) == 0) { /* the other ranks' parts are in the file */
        uint64_t keep = (uint64_t)(n - 1) * part;
        unsigned char *back = malloc(keep + 1);
        PT_CHECK(ptest_read_file(path, back, keep) == (long long)keep);
        PT_EQ(test_mismatch(back, 0, count - 1024, es, 97), 0);
        free(back);
    }
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
}

/* PARIO_FAULT fails every write of rank 1 (EIO): the wait and the test of
 * an asynchronous write report it on every rank; a read of what rank 0
 * wrote before (with its own pwrite) still works. */
static void injected_failure(pario_pgas *ctx) {
    const char *path = pio_test_path("pgas_io_async.fault");
    uint32_t es = 8;
    uint64_t count = 2048 * (uint64_t)pario_pgas_threads(ctx);
    pario_pgas_array a = alloc(ctx, count, es, 128), b = alloc(ctx, count, es, 3);
    pio_test_fill_owned(ctx, &a, 101);
    pario_pgas_off moved = 0;
    pario_pgas_file *fd = pio_test_open(
        ctx, path, PARIO_PGAS_RDWR | PARIO_PGAS_CREATE | PARIO_PGAS_TRUNC | PARIO_PGAS_COMMON_FP);
    PT_EQ(pario_pgas_fwrite_shared_async(fd, a.base, 128, es, count, 0), PARIO_OK);
    int rc = pario_pgas_fwait_async(fd, &moved);
    PT_EQ(rc, PARIO_ERR_IO);
    PT_EQ(moved, -1);
    PT_CHECK(strstr(pario_pgas_file_last_error(fd)->msg, path) != NULL);
    PT_CHECK(same_everywhere(pario_pgas_file_last_error(fd)->msg));
    PT_EQ(pario_pgas_fseek(fd, 0, PARIO_PGAS_SEEK_SET, NULL), PARIO_OK);
    PT_EQ(pario_pgas_fwrite_shared_async(fd, a.base, 128, es, count, 0), PARIO_OK);
    PT_EQ(test_until_done(fd, &moved), PARIO_ERR_IO);
    PT_CHECK(same_everywhere(pario_pgas_file_last_error(fd)->msg));
    pio_test_close(&fd);
    if (pario_pgas_mythread(ctx) == 0) { /* the file as a reader should find it */
        unsigned char *all = malloc(count * es);
        test_fill(all, 0, count, es, 101);
        int posix = open(path, O_WRONLY);
        PT_CHECK(posix >= 0 && pwrite(posix, all, count * es, 0) == (ssize_t)(count * es));
        close(posix);
        free(all);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    fd = pio_test_open(ctx, path, PARIO_PGAS_RDONLY | PARIO_PGAS_COMMON_FP);
    PT_EQ(pario_pgas_fread_shared_async(fd, b.base, 3, es, count, 0), PARIO_OK);
    PT_EQ(pario_pgas_fwait_async(fd, &moved), PARIO_OK);
    PT_EQ(moved, count * es);
    pio_test_close(&fd);
    PT_EQ(pio_test_owned_bad(ctx, &b, 101, 0, 0, count), 0);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &b), PARIO_OK);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    pario_pgas *ctx = test_pgas_init();
    if (argc > 1 && !strcmp(argv[1], "fault")) {
        injected_failure(ctx);
        PT_EQ(pario_pgas_finalize(&ctx), PARIO_OK);
        return ptest_finish();
    }
    overlap_shown_by_a_lock(ctx, 1);
    overlap_shown_by_a_lock(ctx, PARIO_PGAS_BLOCK_FIT);
    shared_individual(ctx);
    local_forms(ctx);
    shared_lists(ctx);
    close_completes(ctx);
    failure_reaches_every_rank(ctx);
    PT_EQ(pario_pgas_finalize(&ctx), PARIO_OK);
    return ptest_finish();
}
