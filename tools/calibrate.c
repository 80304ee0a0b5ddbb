/* pario-calibrate: what requests cost on the file system holding DIR, for
 * `pario calibrate` (tools/pario_calibrate.py), which stores the figures as
 * the file system's record (src/io/cost/cost.h).
 *
 * usage: pario-calibrate [--quick] DIR
 * prints key=value lines (mount points and paths with blanks and backslashes
 * as octal escapes, as in /proc/self/mounts). All on one scratch file in DIR,
 * removed at the end; medians over the repetitions, the order of the two
 * timings of a pair alternating between repetitions.
 *
 * Calls: time = calls x c + bytes / bandwidth. The same bytes are moved in
 * many small calls and in one large call; c is the difference over the extra
 * calls, and c x bandwidth the call's cost in bytes of transfer, the figure
 * the sieving decision weighs calls with. Before each timing the file is
 * synced and its pages dropped from this machine's cache
 * (posix_fadvise(DONTNEED)), so what is timed is what reaches the file system:
 * - writes: buffered pwrite as pario issues them, nothing synced within the
 *   timing (what the file system defers to a later fsync is not counted);
 *   the small writes leave a block's gap between them, as the writes of
 *   noncontiguous blocks do, so no layer can merge them into one request;
 * - reads: small reads of consecutive blocks against one read of them all,
 *   so read-ahead, which brings whole spans in, fetches the same bytes in both
 *   timings; on a local disk the bandwidth is the device's, on a network file
 *   system a read the client does not cache is a round trip.
 * Locks: an exclusive OFD byte-range lock taken and released (F_OFD_SETLKW,
 * as pario locks). Reservation: a fresh file written in 1 MiB calls, plain
 * and with fallocate(FALLOC_FL_KEEP_SIZE) of each call's range first, as
 * pario's posix driver does; it pays when the median is at least 10 % faster. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "io/cost/mount.h"

#define KIB ((int64_t)1 << 10)
#define MIB ((int64_t)1 << 20)
/* Reservation pays when it makes writing at least this much faster. */
#define RESERVE_GAIN 1.10
/* Most repetitions of any timing. */
#define MAX_SAMPLES 256

typedef struct plan {
    int64_t block;         /* bytes of one small call */
    int64_t calls;         /* small calls per timing; the large call moves them all */
    int reps;              /* repetitions of each pair of timings, at least */
    double budget_us;      /* ... and more while a measurement has taken less than this */
    int lock_samples;      /* lock round trips timed */
    int64_t reserve_bytes; /* bytes of fresh file per reservation timing */
    int64_t reserve_call;  /* bytes per write call there */
} plan;

/* About 10 s on a local disk (a busy machine's noise averages out over more
 * repetitions), well under a minute at a round trip of 1 ms per request. */
static const plan full_plan = {4 * KIB, 512, 11, 2e6, 200, 16 * MIB, 1 * MIB};
/* A fraction of a second anywhere: for tests, the figures rough. */
static const plan quick_plan = {4 * KIB, 64, 3, 0, 20, 4 * MIB, 1 * MIB};

typedef struct scratch {
    const char *path;
    int fd;
    char *small, *large; /* one block; all the calls' bytes */
} scratch;

/* One pair of timings fitted to the model. */
typedef struct call_figures {
    double small_us, large_us; /* medians */
    int reps;
    double call_us, mib_s;
    int64_t call_bytes;
} call_figures;

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Whether to time repetition r of a measurement started at t0. */
static int more_reps(const plan *p, int r, double t0) {
    return r < MAX_SAMPLES && (r < p->reps || now_us() - t0 < p->budget_us);
}

static int fail(const char *what, const char *path) {
    fprintf(stderr, "pario-calibrate: %s %s: %s\n", what, path, strerror(errno));
    return -1;
}

/* Write or read exactly len bytes at off. */
static int full_io(int fd, int write, char *buf, int64_t len, int64_t off) {
    while (len > 0) {
        ssize_t n = write ? pwrite(fd, buf, (size_t)len, off) : pread(fd, buf, (size_t)len, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            errno = n == 0 ? EIO : errno;
            return -1;
        }
        buf += n;
        len -= n;
        off += n;
    }
    return 0;
}

/* Sync the file, then either drop its pages from this machine's cache, so
 * the next timing starts from the file system's state, or read it all, so
 * the next timing finds every page in the page cache. */
static int prepare(const scratch *s, const plan *p, int cached) {
    if (fsync(s->fd) != 0)
        return fail("fsync", s->path);
    if (cached) {
        int64_t span = p->block * p->calls;
        return full_io(s->fd, 0, s->large, span, 0) || full_io(s->fd, 0, s->large, span, span)
                   ? fail("read", s->path)
                   : 0;
    }
    int e = posix_fadvise(s->fd, 0, 0, POSIX_FADV_DONTNEED);
    errno = e;
    return e == 0 ? 0 : fail("posix_fadvise", s->path);
}

/* Microseconds for `calls` small calls (writes a block apart, reads
 * consecutive), or one call of all their bytes; < 0 on failure. */
static double time_calls(const scratch *s, const plan *p, int write, int cached, int small) {
    if (prepare(s, p, cached) != 0)
        return -1;
    double t0 = now_us();
    if (!small) {
        if (full_io(s->fd, write, s->large, p->block * p->calls, 0) != 0)
            return fail(write ? "write" : "read", s->path);
        return now_us() - t0;
    }
    int64_t step = write ? 2 * p->block : p->block;
    for (int64_t i = 0; i < p->calls; i++)
        if (full_io(s->fd, write, s->small, p->block, i * step) != 0)
            return fail(write ? "write" : "read", s->path);
    return now_us() - t0;
}

/* Fit time = calls x c + bytes / bandwidth to the medians. */
static void fit_calls(call_figures *f, const plan *p) {
    double bytes = (double)(p->block * p->calls);
    double c = (f->small_us - f->large_us) / (double)(p->calls - 1);
    c = c > 0 ? c : 0;
    double transfer_us = f->large_us - c > 0 ? f->large_us - c : f->large_us;
    double bytes_per_us = bytes / transfer_us;
    f->call_us = c;
    f->mib_s = bytes_per_us * 1e6 / (double)MIB;
    f->call_bytes = (int64_t)(c * bytes_per_us + 0.5);
    f->call_bytes = f->call_bytes > 0 ? f->call_bytes : 1; /* no call is free */
}

static int measure_calls(const scratch *s, const plan *p, int write, int cached, call_figures *f) {
    double small[MAX_SAMPLES], large[MAX_SAMPLES];
    double t0 = now_us();
    int r = 0;
    for (; more_reps(p, r, t0); r++) {
        int small_first = r % 2 == 0;
        double a = time_calls(s, p, write, cached, small_first);
        double b = time_calls(s, p, write, cached, !small_first);
        if (a < 0 || b < 0)
            return -1;
        small[r] = small_first ? a : b;
        large[r] = small_first ? b : a;
    }
    f->small_us = median(small, r);
    f->large_us = median(large, r);
    f->reps = r;
    fit_calls(f, p);
    return 0;
}

static int lock_op(int fd, short type) {
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 4 * KIB};
    int rc;
    do
        rc = fcntl(fd, type == F_UNLCK ? F_OFD_SETLK : F_OFD_SETLKW, &fl);
    while (rc != 0 && errno == EINTR);
    return rc;
}

/* Median microseconds of taking and releasing an exclusive lock. */
static int measure_lock(const scratch *s, const plan *p, double *us) {
    double v[MAX_SAMPLES];
    for (int i = 0; i < p->lock_samples; i++) {
        double t0 = now_us();
        if (lock_op(s->fd, F_WRLCK) != 0 || lock_op(s->fd, F_UNLCK) != 0)
            return fail("lock", s->path);
        v[i] = now_us() - t0;
    }
    *us = median(v, p->lock_samples);
    return 0;
}

/* MiB/s writing a fresh file in reserve_call-byte calls, each call's blocks
 * reserved first when `reserve`; 0 when the file system cannot reserve. */
static int time_fresh_write(const scratch *s, const plan *p, int reserve, double *mib_s) {
    unlink(s->path);
    int fd = open(s->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return fail("create", s->path);
    double t0 = now_us();
    int rc = 0;
    for (int64_t off = 0; off < p->reserve_bytes && rc == 0; off += p->reserve_call) {
        if (reserve && fallocate(fd, FALLOC_FL_KEEP_SIZE, off, p->reserve_call) != 0) {
            rc = errno == EOPNOTSUPP || errno == ENOSYS ? 1 : fail("fallocate", s->path);
            break;
        }
        rc = full_io(fd, 1, s->large, p->reserve_call, off) ? fail("write", s->path) : 0;
    }
    double us = now_us() - t0;
    close(fd);
    unlink(s->path);
    *mib_s = rc == 0 ? (double)p->reserve_bytes / us * 1e6 / (double)MIB : 0;
    return rc < 0 ? -1 : 0;
}

static int measure_reserve(const scratch *s, const plan *p, double *plain, double *first) {
    double a[MAX_SAMPLES], b[MAX_SAMPLES];
    double t0 = now_us();
    int r = 0;
    for (; more_reps(p, r, t0); r++) {
        int plain_first = r % 2 == 0;
        if (time_fresh_write(s, p, !plain_first, plain_first ? &a[r] : &b[r]) != 0 ||
            time_fresh_write(s, p, plain_first, plain_first ? &b[r] : &a[r]) != 0)
            return -1;
    }
    *plain = median(a, r);
    *first = median(b, r);
    printf("reserve_reps=%d\n", r);
    return 0;
}

/* The scratch file: twice the small calls' span, on the storage. */
static int scratch_open(scratch *s, const plan *p) {
    s->small = malloc((size_t)p->block);
    int64_t large = p->block * p->calls > p->reserve_call ? p->block * p->calls : p->reserve_call;
    s->large = malloc((size_t)large);
    if (!s->small || !s->large) {
        errno = ENOMEM;
        return fail("allocate", "buffers");
    }
    memset(s->small, 0x5a, (size_t)p->block);
    for (int64_t i = 0; i < large; i++)
        s->large[i] = (char)(i * 131 + 7);
    s->fd = open(s->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (s->fd < 0)
        return fail("create", s->path);
    int64_t span = p->block * p->calls;
    if (full_io(s->fd, 1, s->large, span, 0) != 0 || full_io(s->fd, 1, s->large, span, span) != 0)
        return fail("write", s->path);
    return 0;
}

/* key=value with blanks and backslashes as octal escapes. */
static void print_escaped(const char *key, const char *v) {
    printf("%s=", key);
    for (; *v; v++) {
        if (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\\')
            printf("\\%03o", (unsigned char)*v);
        else
            putchar(*v);
    }
    putchar('\n');
}

static void print_calls(const char *op, const char *state, const call_figures *f) {
    printf("%s_%s_small_us=%.1f\n", op, state, f->small_us);
    printf("%s_%s_large_us=%.1f\n", op, state, f->large_us);
    printf("%s_%s_call_us=%.2f\n", op, state, f->call_us);
    printf("%s_%s_mib_s=%.0f\n", op, state, f->mib_s);
    printf("%s_%s_call_bytes=%lld\n", op, state, (long long)f->call_bytes);
    printf("%s_%s_reps=%d\n", op, state, f->reps);
}

/* Writes: the file's pages not in the page cache, as new data finds them.
 * (Rewriting cached pages was no cheaper per call on the development VM's
 * ext4: 512 small overwrites took 2.8-19 ms against 1.3-1.7 ms uncached, and
 * the one large call ran from the CPU cache, so those figures say more about
 * the copy than about the call.) */
static int measure_writes(const scratch *s, const plan *p) {
    call_figures f;
    if (measure_calls(s, p, 1, 0, &f) != 0)
        return -1;
    print_calls("write", "uncached", &f);
    printf("write_call_bytes=%lld\n", (long long)f.call_bytes);
    return 0;
}

/* Reads: with the file's pages cached and not; the figure kept is the
 * larger. A read call costs at least what it costs with the data in the page
 * cache; where it costs more uncached (a round trip to a server), that is what
 * pario meets. Where it costs less uncached (a local disk: one large read
 * waits for the device in steps, while consecutive small reads are served by
 * read-ahead running in the background), the kernel reads ahead over the gaps
 * between a view's blocks anyway, so reading block by block fetches no fewer
 * bytes from the device than sieving does. */
static int measure_reads(const scratch *s, const plan *p) {
    call_figures cached, uncached;
    if (measure_calls(s, p, 0, 1, &cached) != 0 || measure_calls(s, p, 0, 0, &uncached) != 0)
        return -1;
    print_calls("read", "cached", &cached);
    print_calls("read", "uncached", &uncached);
    int64_t kept =
        cached.call_bytes > uncached.call_bytes ? cached.call_bytes : uncached.call_bytes;
    printf("read_call_bytes=%lld\n", (long long)kept);
    return 0;
}

static int calibrate(scratch *s, const plan *p) {
    double lock_us = 0, plain = 0, first = 0;
    double t0 = now_us();
    printf("block_bytes=%lld\ncalls=%lld\n", (long long)p->block, (long long)p->calls);
    if (scratch_open(s, p) != 0 || measure_writes(s, p) != 0 || measure_reads(s, p) != 0 ||
        measure_lock(s, p, &lock_us) != 0)
        return -1;
    close(s->fd);
    s->fd = -1;
    if (measure_reserve(s, p, &plain, &first) != 0)
        return -1;
    printf("lock_us=%.1f\n", lock_us);
    printf("reserve_plain_mib_s=%.0f\nreserve_first_mib_s=%.0f\n", plain, first);
    printf("reserve=%s\n", first > 0 && first >= RESERVE_GAIN * plain ? "yes" : "no");
    printf("seconds=%.1f\n", (now_us() - t0) / 1e6);
    return 0;
}

int main(int argc, char **argv) {
    const plan *p = &full_plan;
    const char *dir = NULL;
    int usage = argc < 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            p = &quick_plan;
        else if (argv[i][0] != '-' && !dir)
            dir = argv[i];
        else
            usage = 1;
    }
    if (usage || !dir) {
        fprintf(stderr, "usage: pario-calibrate [--quick] DIR\n");
        return 2;
    }
    char mount[4096], type[64], path[4096 + 64];
    if (io_mount_of(dir, mount, sizeof mount, type, sizeof type) != 0) {
        fprintf(stderr, "pario-calibrate: %s: no mounted file system holds it\n", dir);
        return 1;
    }
    snprintf(path, sizeof path, "%s/.pario-calibrate.%ld", dir, (long)getpid());
    print_escaped("mount", mount);
    print_escaped("type", type);
    scratch s = {.path = path, .fd = -1};
    int rc = calibrate(&s, p);
    if (s.fd >= 0)
        close(s.fd);
    unlink(path);
    free(s.small);
    free(s.large);
    return rc == 0 ? 0 : 1;
}
