/* Collective writes kept behind where write calls are request-bound (the
 * hint pario_write_call_bytes, as `pario calibrate` finds on a network file
 * system): at the funnel when ranks are on several nodes
 * (io/coll/funnel_kept.c, PARIO_NODE_SIZE), in the shared window on one
 * (io/coll/kept.c). Small collective calls whose parts make one run per
 * call (IOR's strided pattern: the funnel keeps the runs) and whose parts
 * lie apart, each rank's following on its last (the segmented pattern:
 * each rank keeps its own). Checked, for both:
 *   - the calls reach the file in one write per 10 ms of calls at most
 *     (the flusher writes a run that old) and per rank that keeps, where
 *     writing them takes one per call (or per rank and call): the writes of
 *     all ranks counted, byte for byte after close;
 *   - right after its calls, before any sync, a rank reads its own bytes
 *     back independently while rank 0 waits for a message that rank sends
 *     only after the read (the rank waits for the kept run, not for rank 0);
 *   - get_size on one rank counts every rank's calls, rank 0's right after
 *     them, before the other ranks have written the parts they keep;
 *   - an independent write over the rank's own kept bytes lands after them,
 *     and so do strided calls over segmented ones;
 *   - across nodes, where the writes of the rank that writes the kept runs
 *     fail past RLIMIT_FSIZE (EFBIG, SIGXFSZ ignored; rank 0 for strided
 *     calls, the last rank for its own): every rank stops at
 *     the same call or, all calls made, fails at the next sync, with the
 *     same code and message naming the file; the bytes synced before are
 *     intact; nobody hangs. */
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include "io_test.h"

enum { PART = 4096, CALLS = 64 };
/* The age at which the flusher writes a kept run, seconds (funnel_kept.c). */
#define KEPT_AGE 0.010
/* The limited rank's file size limit in the failure test, past CALLS calls. */
#define LIMIT ((int64_t)4 << 20)

static int rank, nranks;
static _Atomic long long writes; /* this process's write calls */

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off) {
    atomic_fetch_add(&writes, 1);
    return syscall(SYS_pwrite64, fd, buf, len, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off) {
    return pwrite(fd, buf, len, off);
}

ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t off) {
    atomic_fetch_add(&writes, 1);
    return syscall(SYS_pwritev, fd, iov, n, (long)off, (long)((uint64_t)off >> 32));
}

ssize_t pwritev64(int fd, const struct iovec *iov, int n, off_t off) {
    return pwritev(fd, iov, n, off);
}

static const char *const request_bound[] = {"pario_write_call_bytes", "1048576", NULL};

/* IOR's layouts: strided (each call's parts one run, which the funnel
 * keeps) and segmented (each rank's parts one run of its own, which each
 * rank keeps). */
static int segmented;

static int64_t part_at(int64_t base, int call, int r) {
    if (segmented)
        return base + ((int64_t)r * CALLS + call) * PART;
    return base + ((int64_t)call * nranks + r) * PART;
}

/* Bytes of the pattern's calls: every part of every rank. */
static int64_t span(void) {
    return (int64_t)CALLS * nranks * PART;
}

/* Calls [from, to) of the strided pattern from base with salt; stops at the
 * first failure, as a program does, and returns the calls made. */
static int strided(pario_file *fh, int64_t base, int from, int to, int salt) {
    static unsigned char out[PART];
    for (int j = from; j < to; j++) {
        int64_t off = part_at(base, j, rank);
        ptest_pattern_fill(out, PART, off, salt);
        if (pario_file_write_at_all(fh, off, out, PART, MPI_BYTE, NULL) != PARIO_OK)
            return j;
    }
    return to;
}

static pario_file *open_fresh(const char *path) {
    if (rank == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    return iot_open(path, MPI_MODE_RDWR | MPI_MODE_CREATE, request_bound);
}

/* Whether bytes [0, len) of path are ptest_pattern_byte(i, salt) but for
 * [odd, odd + PART), which must be of salt odd_salt. */
static int file_holds(const char *path, int64_t len, int salt, int64_t odd, int odd_salt) {
    static unsigned char img[(int64_t)CALLS * 8 * PART];
    int64_t n = ptest_file_image(path, img, len);
    int ok = n == len;
    for (int64_t i = 0; ok && i < n; i++)
        ok = img[i] == ptest_pattern_byte(i, i >= odd && i < odd + PART ? odd_salt : salt);
    return ok;
}

static void test_kept_and_read_back(void) {
    const char *path = ptest_path("funnel-kept");
    pario_file *fh = open_fresh(path);
    if (!fh)
        return;
    long long mine = 0, all = 0;
    double took = MPI_Wtime(), longest = 0;
    writes = 0;
    PT_EQ(strided(fh, 0, 0, CALLS, 1), CALLS);
    mine = writes;
    took = MPI_Wtime() - took;
    MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&took, &longest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    /* A writer's runs: one per KEPT_AGE of calls at most, and the last. */
    long long runs = (long long)(longest / KEPT_AGE) + 2;
    if (nranks > 1)
        PT_CHECK(all <= (segmented ? nranks : 1) * runs);
    /* Rank 0 asks the size (no other rank has written its kept parts), then
     * waits while the last rank reads its own last part back and asks too. */
    int last = nranks - 1;
    MPI_Offset size = 0;
    if (rank == 0 && last > 0) {
        PT_EQ(pario_file_get_size(fh, &size), PARIO_OK);
        PT_EQ(size, span());
        MPI_Send(NULL, 0, MPI_BYTE, last, 0, MPI_COMM_WORLD);
        MPI_Recv(NULL, 0, MPI_BYTE, last, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == last && last > 0) {
        unsigned char in[PART], want[PART];
        int64_t off = part_at(0, CALLS - 1, rank);
        MPI_Count got = 0;
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        ptest_pattern_fill(want, PART, off, 1);
        PT_EQ(pario_file_read_at(fh, off, in, PART, MPI_BYTE, &got), PARIO_OK);
        PT_EQ(got, PART);
        PT_EQ(memcmp(in, want, PART), 0);
        PT_EQ(pario_file_get_size(fh, &size), PARIO_OK);
        PT_EQ(size, span());
        MPI_Send(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
    /* The last rank writes its part of call 0 again, independently. */
    PT_EQ(strided(fh, 0, 0, CALLS, 2), CALLS);
    int64_t odd = part_at(0, 0, last);
    if (rank == last) {
        unsigned char out[PART];
        ptest_pattern_fill(out, PART, odd, 3);
        PT_EQ(pario_file_write_at(fh, odd, out, PART, MPI_BYTE, NULL), PARIO_OK);
    }
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    MPI_Barrier(MPI_COMM_WORLD);
    PT_CHECK(file_holds(path, span(), 2, odd, 3));
}

static void test_failure_reaches_every_rank(void) {
    const char *path = ptest_path("funnel-kept-fail");
    pario_file *fh = open_fresh(path);
    if (!fh)
        return;
    PT_EQ(strided(fh, 0, 0, CALLS, 4), CALLS);
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    struct rlimit old, r;
    int limited = segmented ? nranks - 1 : 0; /* the writer of the kept runs that fail */
    if (rank == limited) {
        signal(SIGXFSZ, SIG_IGN);
        getrlimit(RLIMIT_FSIZE, &old);
        r = old;
        r.rlim_cur = (rlim_t)LIMIT;
        PT_EQ(setrlimit(RLIMIT_FSIZE, &r), 0);
    }
    int made = strided(fh, LIMIT - 4 * PART * nranks, 0, CALLS, 5), least = 0, most = 0;
    int rc = made == CALLS ? pario_file_sync(fh) : pario_file_last_error(fh)->code;
    MPI_Allreduce(&made, &least, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&made, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    PT_EQ(least, most);
    PT_EQ(rc, PARIO_ERR_NO_SPACE);
    const char *msg = pario_file_last_error(fh)->msg;
    PT_CHECK(strstr(msg, path) != NULL);
    PT_CHECK(strstr(msg, "File too large") != NULL);
    PT_CHECK(iot_same_message_everywhere(msg));
    if (rank == limited)
        setrlimit(RLIMIT_FSIZE, &old);
    pario_error err;
    pario_file_close(&fh, &err);
    MPI_Barrier(MPI_COMM_WORLD);
    PT_CHECK(file_holds(path, span(), 4, 0, 4));
}

/* Segmented calls, each rank keeping its own parts, then strided calls over
 * the same bytes, which the funnel keeps or writes: every rank's own parts
 * reach the file first, and the strided calls' bytes are what stays. */
static void test_ways_switch(void) {
    const char *path = ptest_path("funnel-kept-switch");
    pario_file *fh = open_fresh(path);
    if (!fh)
        return;
    segmented = 1;
    PT_EQ(strided(fh, 0, 0, CALLS, 7), CALLS);
    segmented = 0;
    PT_EQ(strided(fh, 0, 0, CALLS, 8), CALLS);
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    MPI_Barrier(MPI_COMM_WORLD);
    PT_CHECK(file_holds(path, span(), 8, 0, 8));
}

/* Whether the ranks span several nodes (PARIO_NODE_SIZE cuts the machine). */
static int across_nodes(void) {
    const char *k = getenv("PARIO_NODE_SIZE");
    return k && atoi(k) > 0 && atoi(k) < nranks;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (segmented = 0; segmented < 2; segmented++) {
        test_kept_and_read_back();
        if (across_nodes())
            test_failure_reaches_every_rank();
    }
    test_ways_switch();
    return ptest_finish();
}
