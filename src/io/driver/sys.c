/* Storage system calls with fault injection and counting (see sys.h). */
#include "io/driver/sys.h"
#include "io/trace/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The kinds of call a fault can match; SYS_ANY matches all of them. */
enum sys_op {
    SYS_WRITE,
    SYS_READ,
    SYS_SYNC,
    SYS_TRUNC,
    SYS_ALLOC,
    SYS_LOCK,
    SYS_MEM, /* not storage: a scratch buffer reserved (io_sys_mem_fails); not in any */
    SYS_NOPS,
    SYS_ANY = SYS_NOPS
};
static const char *const op_names[SYS_NOPS + 1] = {"write", "read", "sync", "trunc",
                                                   "alloc", "lock", "mem",  "any"};

/* Whether op counts as a storage call, one that op=any matches. */
static int in_any(int op) {
    return op != SYS_MEM;
}

/* The `error` of a fault that shortens a transfer instead of failing it. */
#define SYS_SHORT (-1)
/* Most buffers one pwritev takes (Linux's IOV_MAX). */
#define SYS_IOV_MAX 1024
/* Longest PARIO_FAULT value understood. */
#define SYS_SPEC_MAX 256

/* The registry: written once under `once`, then only the counters change. */
static struct {
    pthread_once_t once;
    atomic_int watching; /* PARIO_FAULT or PARIO_FAULT_COUNT is set */
    int armed;           /* a fault applies to this process */
    int op;              /* the calls it counts (enum sys_op) */
    long long call;      /* the matching call that fails first (from 1) */
    int error;           /* errno it fails with, or SYS_SHORT */
    int sticky;          /* every later matching call fails too */
    int rank;            /* this process's rank in MPI_COMM_WORLD, -1 unknown */
    char *count_path;    /* where to append the counts at exit, or NULL */
    atomic_llong calls[SYS_NOPS];
    atomic_llong matched; /* calls matching op so far */
    atomic_llong fired;   /* calls made to fail or shortened */
} sys = {.once = PTHREAD_ONCE_INIT, .rank = -1};

/* A parsed PARIO_FAULT. */
typedef struct fault_spec {
    int rank; /* -1: every rank */
    long long call;
    int op, error, sticky;
} fault_spec;

static int parse_op(const char *v) {
    for (int i = 0; i <= SYS_NOPS; i++)
        if (strcmp(v, op_names[i]) == 0)
            return i;
    return -1;
}

static int parse_error(const char *v, int *error) {
    if (strcmp(v, "ENOSPC") == 0)
        *error = ENOSPC;
    else if (strcmp(v, "EIO") == 0)
        *error = EIO;
    else if (strcmp(v, "ENOMEM") == 0)
        *error = ENOMEM;
    else if (strcmp(v, "short") == 0)
        *error = SYS_SHORT;
    else
        return -1;
    return 0;
}

static int parse_number(const char *v, long long min, long long *out) {
    char *end = NULL;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || x < min)
        return -1;
    *out = x;
    return 0;
}

/* One "key=value" (or "sticky") of the spec into f; -1 when malformed. */
static int parse_item(char *item, fault_spec *f) {
    if (strcmp(item, "sticky") == 0) {
        f->sticky = 1;
        return 0;
    }
    char *v = strchr(item, '=');
    if (!v)
        return -1;
    *v++ = '\0';
    long long x = 0;
    if (strcmp(item, "rank") == 0 && parse_number(v, 0, &x) == 0 && x <= INT_MAX)
        f->rank = (int)x;
    else if (strcmp(item, "call") == 0 && parse_number(v, 1, &x) == 0)
        f->call = x;
    else if (strcmp(item, "op") == 0 && (f->op = parse_op(v)) >= 0)
        return 0;
    else if (strcmp(item, "error") == 0 && parse_error(v, &f->error) == 0)
        return 0;
    else
        return -1;
    return 0;
}

static int parse_spec(const char *spec, fault_spec *f) {
    char buf[SYS_SPEC_MAX];
    if (strlen(spec) >= sizeof buf)
        return -1;
    snprintf(buf, sizeof buf, "%s", spec);
    *f = (fault_spec){.rank = -1, .op = -1, .error = 0};
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save))
        if (parse_item(item, f) != 0)
            return -1;
    return f->call > 0 && f->op >= 0 && f->error != 0 ? 0 : -1;
}

static int world_rank(void) {
    int init = 0, fin = 0, rank = -1;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

/* At exit: this process's counts, one line appended with one write. */
static void report_counts(void) {
    char line[320];
    int n = snprintf(line, sizeof line, "rank=%d", sys.rank);
    long long any = 0;
    for (int i = 0; i < SYS_NOPS; i++) {
        long long c = atomic_load(&sys.calls[i]);
        any += in_any(i) ? c : 0;
        n += snprintf(line + n, sizeof line - (size_t)n, " %s=%lld", op_names[i], c);
    }
    snprintf(line + n, sizeof line - (size_t)n, " any=%lld fired=%lld\n", any,
             (long long)atomic_load(&sys.fired));
    int fd = open(sys.count_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    ssize_t w = write(fd, line, strlen(line)); /* nothing to do about a failure at exit */
    (void)w;
    close(fd);
}

static void setup_once(void) {
    const char *spec = getenv("PARIO_FAULT"), *count = getenv("PARIO_FAULT_COUNT");
    if ((!spec || !*spec) && (!count || !*count))
        return;
    sys.rank = world_rank();
    fault_spec f;
    if (spec && *spec && parse_spec(spec, &f) != 0)
        fprintf(stderr,
                "pario: PARIO_FAULT=\"%s\" not understood "
                "(rank=R,call=N,op=write|read|sync|trunc|alloc|lock|mem|any,"
                "error=ENOSPC|EIO|ENOMEM|short"
                "[,sticky]); no fault injected\n",
                spec);
    else if (spec && *spec && (f.rank < 0 || f.rank == sys.rank)) {
        sys.armed = 1;
        sys.op = f.op;
        sys.call = f.call;
        sys.error = f.error;
        sys.sticky = f.sticky;
    }
    if (count && *count && (sys.count_path = strdup(count)) != NULL)
        atexit(report_counts);
    atomic_store_explicit(&sys.watching, 1, memory_order_release);
}

void io_sys_setup(void) {
    pthread_once(&sys.once, setup_once);
}

/* Counts one call of op; what to do with it: 0 make it, an errno to fail
 * with, or SYS_SHORT. A call that cannot be shortened (it moves no bytes,
 * or one) is made unchanged. */
static int fault_for(int op, int can_short) {
    atomic_fetch_add_explicit(&sys.calls[op], 1, memory_order_relaxed);
    if (!sys.armed || (sys.op != op && (sys.op != SYS_ANY || !in_any(op))))
        return 0;
    long long n = atomic_fetch_add(&sys.matched, 1) + 1;
    if (n < sys.call || (n > sys.call && !sys.sticky))
        return 0;
    if (sys.error == SYS_SHORT && !can_short)
        return 0;
    atomic_fetch_add(&sys.fired, 1);
    return sys.error;
}

static int watching(void) {
    /* acquire: the settings written before the flag are seen with it */
    return __builtin_expect(atomic_load_explicit(&sys.watching, memory_order_acquire), 0);
}

/* The first half (at least one byte) of a write of total bytes. */
static ssize_t short_pwritev(int fd, const struct iovec *iov, int iovcnt, off_t off, size_t total) {
    struct iovec part[SYS_IOV_MAX];
    size_t want = total / 2, have = 0;
    int n = 0;
    while (n < iovcnt && n < SYS_IOV_MAX && have < want) {
        part[n] = iov[n];
        if (part[n].iov_len > want - have)
            part[n].iov_len = want - have;
        have += part[n].iov_len;
        n++;
    }
    return pwritev(fd, part, n, off);
}

/* A transfer of *len bytes about to be made: -1 (errno set) when it is to
 * fail, else 0, with *len halved when it is to come back short. */
static int transfer_fault(int op, size_t *len) {
    if (!watching())
        return 0;
    int f = fault_for(op, *len > 1);
    if (f == SYS_SHORT) {
        *len /= 2;
        return 0;
    }
    if (f == 0)
        return 0;
    errno = f;
    return -1;
}

ssize_t io_sys_pwrite(int fd, const void *buf, size_t len, off_t off) {
    double t0 = io_trace_sys_begin();
    ssize_t n = transfer_fault(SYS_WRITE, &len) ? -1 : pwrite(fd, buf, len, off);
    io_trace_sys_end(fd, IO_TRACE_PWRITE, 0, off, n, t0);
    return n;
}

ssize_t io_sys_pread(int fd, void *buf, size_t len, off_t off) {
    double t0 = io_trace_sys_begin();
    ssize_t n = transfer_fault(SYS_READ, &len) ? -1 : pread(fd, buf, len, off);
    io_trace_sys_end(fd, IO_TRACE_PREAD, 0, off, n, t0);
    return n;
}

static ssize_t faulty_pwritev(int fd, const struct iovec *iov, int iovcnt, off_t off) {
    if (!watching())
        return pwritev(fd, iov, iovcnt, off);
    size_t total = 0;
    for (int i = 0; i < iovcnt; i++)
        total += iov[i].iov_len;
    size_t want = total;
    if (transfer_fault(SYS_WRITE, &want))
        return -1;
    return want < total ? short_pwritev(fd, iov, iovcnt, off, total)
                        : pwritev(fd, iov, iovcnt, off);
}

ssize_t io_sys_pwritev(int fd, const struct iovec *iov, int iovcnt, off_t off) {
    double t0 = io_trace_sys_begin();
    ssize_t n = faulty_pwritev(fd, iov, iovcnt, off);
    io_trace_sys_end(fd, IO_TRACE_PWRITE, IO_TRACE_VECTORED, off, n, t0);
    return n;
}

/* A call that moves no bytes: made, or failed with the fault's errno. */
static int plain_call_fails(int op) {
    int f = watching() ? fault_for(op, 0) : 0;
    if (f > 0)
        errno = f;
    return f > 0;
}

int io_sys_fsync(int fd) {
    double t0 = io_trace_sys_begin();
    int rc = plain_call_fails(SYS_SYNC) ? -1 : fsync(fd);
    io_trace_sys_end(fd, IO_TRACE_SYNC, 0, 0, rc, t0);
    return rc;
}

int io_sys_fdatasync(int fd) {
    double t0 = io_trace_sys_begin();
    int rc = plain_call_fails(SYS_SYNC) ? -1 : fdatasync(fd);
    io_trace_sys_end(fd, IO_TRACE_SYNC, 0, 0, rc, t0);
    return rc;
}

int io_sys_ftruncate(int fd, off_t size) {
    double t0 = io_trace_sys_begin();
    int rc = plain_call_fails(SYS_TRUNC) ? -1 : ftruncate(fd, size);
    io_trace_sys_end(fd, IO_TRACE_TRUNC, 0, size, rc, t0);
    return rc;
}

int io_sys_fallocate(int fd, int mode, off_t off, off_t len) {
    double t0 = io_trace_sys_begin();
    int rc = plain_call_fails(SYS_ALLOC) ? -1 : fallocate(fd, mode, off, len);
    io_trace_sys_end(fd, IO_TRACE_ALLOC, 0, off, rc < 0 ? -1 : (int64_t)len, t0);
    return rc;
}

int io_sys_posix_fallocate(int fd, off_t off, off_t len) {
    double t0 = io_trace_sys_begin();
    int rc = plain_call_fails(SYS_ALLOC) ? errno : posix_fallocate(fd, off, len);
    io_trace_sys_end(fd, IO_TRACE_ALLOC, 0, off, rc ? -1 : (int64_t)len, t0);
    return rc;
}

int io_sys_mem_fails(void) {
    return plain_call_fails(SYS_MEM);
}

int io_sys_lock(int fd, struct flock *fl) {
    if (fl->l_type != F_UNLCK && plain_call_fails(SYS_LOCK))
        return -1;
    return fcntl(fd, F_OFD_SETLKW, fl);
}
