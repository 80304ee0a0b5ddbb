/* limit: the physical limit for the I/O benchmarks. One process writes N bytes
 * sequentially with large pwrite calls, then reads them back with large pread calls,
 * on the same file system as the MPI runs. Modes as in the MPI programs: cached (no
 * fsync) and durable (fsync inside the write timing; the file's page cache dropped
 * before the read). Only the pwrite/pread/fsync calls are timed; filling and
 * checking the pattern happen outside. Uses the same 8-byte pattern as iobench. An
 * untimed warm-up write of the largest size comes first (see warm_up).
 *
 * Built with LIMIT_RANKS (io_limit_ranks), every MPI rank does the same with its
 * contiguous part of the one file (rank r the r-th of N equal parts, whole 4 KiB
 * pages but the last): the best a library could do with the ranks and mounts of the
 * MPI run. MPI only lines the ranks up before each timed phase and takes the slowest
 * rank's time; the data goes through pwrite/pread alone.
 *
 * usage: io_limit --file PATH --bytes N[,N...] [--modes cached,durable] [--rep R]
 * prints: RESULT {"variant": "seq", "op": ..., "mode": ..., "bytes": N, "seconds": t} */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef LIMIT_RANKS
#include <mpi.h>
#endif

/* Bytes per pwrite/pread: large enough that the call overhead is negligible. */
#define LIMIT_TRANSFER (8LL << 20)
/* Most byte counts one invocation measures. */
#define LIMIT_MAX_SIZES 64

static uint64_t pattern_word(long long off, uint64_t salt) {
    return ((uint64_t)off / 8 + 1) * UINT64_C(0x9E3779B97F4A7C15) ^
           salt * UINT64_C(0xD1B54A32D192ED03);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The processes sharing the work: this one alone, or the MPI ranks. */
typedef struct team {
    int rank, size;
} team;

static team team_join(int *argc, char ***argv) {
    team t = {0, 1};
#ifdef LIMIT_RANKS
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &t.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t.size);
#else
    (void)argc;
    (void)argv;
#endif
    return t;
}

static void team_leave(void) {
#ifdef LIMIT_RANKS
    MPI_Finalize();
#endif
}

/* Every member has reached this point. */
static void team_line_up(void) {
#ifdef LIMIT_RANKS
    MPI_Barrier(MPI_COMM_WORLD);
#endif
}

/* The slowest member's seconds (negative, an error, on every member if any failed). */
static double team_slowest(double s) {
#ifdef LIMIT_RANKS
    double mine[2] = {s, -s}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return all[1] > 0 ? -1 : all[0];
#else
    return s;
#endif
}

/* This member's part [*off, *off + *len) of total bytes. */
static void team_part(team t, long long total, long long *off, long long *len) {
    long long each = total / t.size / 4096 * 4096;
    *off = each * t.rank;
    *len = t.rank == t.size - 1 ? total - *off : each;
}

/* Bytes of the transfer at off, of a part that ends at end. */
static long long transfer_at(long long off, long long end) {
    return end - off < LIMIT_TRANSFER ? end - off : LIMIT_TRANSFER;
}

static void fill(char *buf, long long len, long long off, uint64_t salt) {
    uint64_t w;
    for (long long i = 0; i < len; i += 8) {
        w = pattern_word(off + i, salt);
        memcpy(buf + i, &w, (size_t)(len - i < 8 ? len - i : 8));
    }
}

static long long check(const char *buf, long long len, long long off, uint64_t salt) {
    long long bad = 0;
    uint64_t w;
    for (long long i = 0; i < len; i += 8) {
        w = pattern_word(off + i, salt);
        bad += memcmp(buf + i, &w, (size_t)(len - i < 8 ? len - i : 8)) != 0;
    }
    return bad;
}

static int fail(const char *what, const char *path) {
    fprintf(stderr, "io_limit: %s %s: %s\n", what, path, strerror(errno));
    return -1;
}

/* Writes this member's part of `total` bytes (member 0 makes the file, empty);
 * returns the seconds spent in pwrite (+ fsync), < 0 on error. */
static double timed_write(team t, const char *path, long long total, int durable, uint64_t salt,
                          char *buf) {
    if (t.rank == 0)
        unlink(path);
    int fd = t.rank == 0 ? open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644) : -1;
    team_line_up();
    if (t.rank != 0)
        fd = open(path, O_WRONLY);
    sync(); /* untimed, as the MPI programs do before each timed region */
    team_line_up();
    if (fd < 0)
        return fail("open", path);
    long long first, len;
    team_part(t, total, &first, &len);
    double spent = 0;
    for (long long off = first; off < first + len; off += LIMIT_TRANSFER) {
        long long n = transfer_at(off, first + len);
        fill(buf, n, off, salt);
        double t0 = now();
        if (pwrite(fd, buf, (size_t)n, off) != n)
            return close(fd), fail("pwrite", path);
        spent += now() - t0;
    }
    if (durable) {
        double t0 = now();
        if (fsync(fd) != 0)
            return close(fd), fail("fsync", path);
        spent += now() - t0;
    }
    close(fd);
    return spent;
}

/* Reads this member's part of `total` bytes back; returns seconds in pread, < 0 on
 * error or mismatch. */
static double timed_read(team t, const char *path, long long total, int durable, uint64_t salt,
                         char *buf) {
    int fd = open(path, O_RDONLY);
    long long first, len;
    team_part(t, total, &first, &len);
    if (durable && fd >= 0)
        posix_fadvise(fd, first, len, POSIX_FADV_DONTNEED);
    sync();
    team_line_up();
    if (fd < 0)
        return fail("open", path);
    double spent = 0;
    long long bad = 0;
    for (long long off = first; off < first + len; off += LIMIT_TRANSFER) {
        long long n = transfer_at(off, first + len);
        memset(buf, 0, (size_t)n);
        double t0 = now();
        if (pread(fd, buf, (size_t)n, off) != n)
            return close(fd), fail("pread", path);
        spent += now() - t0;
        bad += check(buf, n, off, salt);
    }
    close(fd);
    if (bad) {
        fprintf(stderr, "VERIFY-FAIL io_limit %s: %lld words differ from the pattern\n", path, bad);
        return -1;
    }
    return spent;
}

/* Writes and removes one file of `total` bytes, untimed. The first large write of a
 * process after other programs ran is often several times slower (the kernel first
 * reclaims memory for the page cache); the limit should be the best case, so that
 * cost is paid here and not inside a measurement. */
static void warm_up(team t, const char *path, long long total, char *buf) {
    if (team_slowest(timed_write(t, path, total, 0, 0, buf)) >= 0 && t.rank == 0)
        unlink(path);
}

static void print_result(team t, const char *op, const char *mode, long long bytes, double s) {
    if (t.rank != 0)
        return;
    printf("RESULT {\"variant\": \"seq\", \"op\": \"%s\", \"mode\": \"%s\", \"bytes\": %lld, "
           "\"seconds\": %.9f}\n",
           op, mode, bytes, s);
    fflush(stdout);
}

/* Parses a comma-separated list of byte counts; returns how many, -1 on error. */
static int parse_sizes(char *list, long long *sizes, int max) {
    int n = 0;
    char *save = NULL;
    for (char *p = strtok_r(list, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        char *end = NULL;
        long long v = strtoll(p, &end, 10);
        if (*end || v <= 0 || n == max)
            return -1;
        sizes[n++] = v;
    }
    return n;
}

int main(int argc, char **argv) {
    team t = team_join(&argc, &argv);
    const char *path = NULL, *modes = "cached,durable";
    char *sizes_arg = NULL;
    int rep = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--file"))
            path = argv[i + 1];
        else if (!strcmp(argv[i], "--bytes"))
            sizes_arg = argv[i + 1];
        else if (!strcmp(argv[i], "--modes"))
            modes = argv[i + 1];
        else if (!strcmp(argv[i], "--rep"))
            rep = atoi(argv[i + 1]);
    }
    long long sizes[LIMIT_MAX_SIZES];
    int nsizes = sizes_arg ? parse_sizes(sizes_arg, sizes, LIMIT_MAX_SIZES) : -1;
    if (!path || nsizes <= 0) {
        fprintf(stderr, "usage: io_limit --file PATH --bytes N[,N...] [--modes cached,durable] "
                        "[--rep R]\n");
        return team_leave(), 2;
    }
    char *buf = malloc((size_t)LIMIT_TRANSFER);
    if (!buf)
        return team_leave(), 4;
    static const char *const mode_names[] = {"cached", "durable"};
    long long largest = 0;
    for (int s = 0; s < nsizes; s++)
        largest = sizes[s] > largest ? sizes[s] : largest;
    warm_up(t, path, largest, buf);
    int rc = 0;
    for (int s = 0; s < nsizes && rc == 0; s++)
        for (int m = 0; m < 2 && rc == 0; m++) {
            if (!strstr(modes, mode_names[m]))
                continue;
            uint64_t salt = (uint64_t)rep * 7919u + (uint64_t)s * 31u + (uint64_t)m + 1u;
            double w = team_slowest(timed_write(t, path, sizes[s], m, salt, buf));
            double r = team_slowest(w < 0 ? -1 : timed_read(t, path, sizes[s], m, salt, buf));
            team_line_up(); /* everybody has closed the file */
            if (t.rank == 0)
                unlink(path);
            if (w < 0 || r < 0) {
                rc = 3;
                break;
            }
            print_result(t, "write", mode_names[m], sizes[s], w);
            print_result(t, "read", mode_names[m], sizes[s], r);
        }
    free(buf);
    team_leave();
    return rc;
}
