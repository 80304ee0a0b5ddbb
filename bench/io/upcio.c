/* upcio: checkpoint and restart of a shared array of doubles (seeds 000, 001, 003).
 *
 * The array (--size bytes in all, default 64 MiB) is a pgas shared array with
 * block factor 1, 128 or [*] ("fit": one block per rank). Each variant writes it
 * to one file in index order and reads it back into a fresh array:
 *   upcio    pario_pgas_fwrite_shared / fread_shared: one collective access, each
 *            rank its own elements through a view built from the layout
 *   mw       master/worker: rank 0 gathers the array (pgas memget) and writes it
 *            with sequential pwrite calls; reading, it reads and scatters (memput)
 *   pwrite   each rank writes (reads) each of its blocks with its own pwrite (pread)
 *   darray   MPI-IO: a cyclic(B) darray view and write_all/read_all on the array's
 *            local memory; run under each back end (pario's drop-in, OMPIO, ROMIO)
 *   upciocomp  upcio, then a computation as long as the access took (the slowest
 *            rank's; each rank spins on the clock, making no MPI call)
 *   asynccomp  the _async call started, a computation as long as the last
 *            upciocomp's access of the same mode, direction and block factor in this
 *            process (the same repetition; UPCIO_COMPUTE_MIB_S over the array's
 *            bytes when there was none), fwait_async: the time of upciocomp when
 *            nothing overlaps, down to half of it when the access runs entirely
 *            in the background meanwhile
 * upcio, mw, pwrite and the computing pair do not use MPI-IO: they run only in
 * the pario back end's process (where libpario-mpiio is loaded) and are skipped
 * under the others.
 * Timed: write (+ computation) + (durable: sync) + close; read (+ computation)
 * alone; open is not timed. */
#include "iobench.h"
#include "pario/pgas_io.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define UPCIO_DEFAULT_BYTES (64LL << 20)
/* Bytes per pwrite/pread call of the master: large sequential requests. */
#define UPCIO_MASTER_CHUNK ((size_t)8 << 20)
/* Slack in each rank's symmetric heap beyond its largest part. */
#define UPCIO_HEAP_SLACK ((size_t)1 << 20)

/* asynccomp's computation when no upciocomp ran before it: as long as moving
 * the whole array at this rate would. */
#define UPCIO_COMPUTE_MIB_S 1024.0

enum upcio_kind {
    KIND_UPCIO,
    KIND_MW,
    KIND_PWRITE,
    KIND_DARRAY,
    KIND_UPCIO_COMPUTE,
    KIND_ASYNC_COMPUTE,
    NKINDS
};
static const char *const kind_names[NKINDS] = {"upcio",  "mw",        "pwrite",
                                               "darray", "upciocomp", "asynccomp"};
enum upcio_block { BLOCK_1, BLOCK_128, BLOCK_FIT, NBLOCKS };
static const char *const block_names[NBLOCKS] = {"b1", "b128", "bfit"};

/* The pgas context lives for the whole program (one per process). */
static pario_pgas *upcio_ctx;

static uint64_t count_of(const ib_ctx *c) {
    long long b = c->size ? ib_parse_bytes(c->size) : UPCIO_DEFAULT_BYTES;
    return b > 0 ? (uint64_t)b / 8 : 0;
}

static uint64_t block_of(const ib_ctx *c, int block) {
    uint64_t n = count_of(c), r = (uint64_t)c->nranks;
    return block == BLOCK_1 ? 1 : block == BLOCK_128 ? 128 : (n + r - 1) / r;
}

static int pario_backend(void) {
    return dlsym(RTLD_DEFAULT, "pario_mpiio_active") != NULL;
}

static void pgas_check(int rc, const char *what) {
    if (rc != PARIO_OK) {
        fprintf(stderr, "%s: %s\n", what,
                upcio_ctx ? pario_pgas_last_error(upcio_ctx)->msg : pario_err_name(rc));
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
}

static pario_pgas *context(const ib_ctx *c) {
    if (!upcio_ctx) {
        uint64_t part = (count_of(c) + (uint64_t)c->nranks - 1) / (uint64_t)c->nranks;
        pario_pgas_config cfg = {(size_t)(part + 128) * 8 + UPCIO_HEAP_SLACK, 0};
        pario_error err;
        if (pario_pgas_init(c->comm, &cfg, &upcio_ctx, &err) != PARIO_OK) {
            fprintf(stderr, "pario_pgas_init: %s\n", err.msg);
            MPI_Abort(MPI_COMM_WORLD, 4);
        }
    }
    return upcio_ctx;
}

/* This rank's part of the array: one contiguous run of local memory. */
static double *local_part(pario_pgas *ctx, const pario_pgas_array *a, uint64_t *count) {
    uint64_t cursor = 0;
    pario_pgas_range r;
    *count = pario_pgas_local_count(a, pario_pgas_mythread(ctx));
    if (!pario_pgas_owned_next(a, pario_pgas_mythread(ctx), &cursor, &r))
        return NULL;
    return pario_pgas_cast(ctx, pario_pgas_elem(a, r.first));
}

static pario_pgas_array make_array(const ib_ctx *c, const ib_variant *v, int fill) {
    pario_pgas *ctx = context(c);
    pario_pgas_array a;
    pgas_check(pario_pgas_all_alloc(ctx, count_of(c), 8, block_of(c, v->param % NBLOCKS), &a),
               "pario_pgas_all_alloc");
    uint64_t cursor = 0, n = 0;
    pario_pgas_range r;
    double *mine = local_part(ctx, &a, &n), *p = mine;
    while (pario_pgas_owned_next(&a, pario_pgas_mythread(ctx), &cursor, &r)) {
        if (fill)
            ib_fill(p, r.count * 8, (long long)r.first * 8, c->salt);
        else
            memset(p, 0, r.count * 8);
        p += r.count;
    }
    return a;
}

static long long check_array(const ib_ctx *c, const pario_pgas_array *a) {
    uint64_t cursor = 0, n = 0;
    long long bad = 0;
    pario_pgas_range r;
    const double *p = local_part(upcio_ctx, a, &n);
    while (pario_pgas_owned_next(a, pario_pgas_mythread(upcio_ctx), &cursor, &r)) {
        bad += ib_check(p, r.count * 8, (long long)r.first * 8, c->salt);
        p += r.count;
    }
    return bad;
}

static void free_array(pario_pgas_array *a) {
    pgas_check(pario_pgas_all_free(upcio_ctx, a), "pario_pgas_all_free");
}

/* ---- upcio: pgas io ------------------------------------------------------------------ */

static void upcio_check(pario_pgas_file *fd, int rc, const char *what) {
    if (rc != PARIO_OK) {
        fprintf(stderr, "%s: %s\n", what, pario_pgas_file_last_error(fd)->msg);
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
}

static pario_pgas_file *upcio_open(const ib_ctx *c, int flags) {
    pario_pgas_file *fd = NULL;
    pario_error err;
    if (pario_pgas_fopen(upcio_ctx, c->path, flags | PARIO_PGAS_COMMON_FP, 0, NULL, &fd, &err) !=
        PARIO_OK) {
        fprintf(stderr, "pario_pgas_fopen %s: %s\n", c->path, err.msg);
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    return fd;
}

static void upcio_write(const ib_ctx *c, const pario_pgas_array *a, ib_timing *t) {
    pario_pgas_file *fd = upcio_open(c, PARIO_PGAS_WRONLY | PARIO_PGAS_CREATE);
    double t0 = ib_start(c->comm);
    upcio_check(fd, pario_pgas_fwrite_shared(fd, a->base, a->base.block, 8, a->count, 0, NULL),
                "pario_pgas_fwrite_shared");
    if (c->mode == IB_DURABLE)
        upcio_check(fd, pario_pgas_fsync(fd), "pario_pgas_fsync");
    upcio_check(fd, pario_pgas_fclose(&fd, NULL), "pario_pgas_fclose");
    t->seconds = MPI_Wtime() - t0;
}

static void upcio_read(const ib_ctx *c, const pario_pgas_array *a, ib_timing *t) {
    pario_pgas_file *fd = upcio_open(c, PARIO_PGAS_RDONLY);
    double t0 = ib_start(c->comm);
    upcio_check(fd, pario_pgas_fread_shared(fd, a->base, a->base.block, 8, a->count, 0, NULL),
                "pario_pgas_fread_shared");
    t->seconds = MPI_Wtime() - t0;
    upcio_check(fd, pario_pgas_fclose(&fd, NULL), "pario_pgas_fclose");
}

/* ---- upcio with a computation: blocking, or asynchronous and overlapped ----------------- */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Seconds of the last upciocomp access, per mode, direction (0 read, 1
 * write) and block factor: the computation asynccomp overlaps with its
 * access (a durable access's time is not a cached one's). */
static double last_io_s[IB_NMODES][2][NBLOCKS];

/* The program's own work: spins for `seconds`, making no MPI call. */
static void compute(double seconds) {
    double until = now_s() + seconds;
    while (now_s() < until) {
    }
}

static double compute_seconds(const ib_ctx *c, const pario_pgas_array *a, int write, int block) {
    double s = last_io_s[c->mode][write][block];
    return s > 0 ? s : (double)(a->count * 8) / (UPCIO_COMPUTE_MIB_S * 1048576.0);
}

/* The slowest rank's seconds since t0: every rank computes as long. */
static double slowest_since(const ib_ctx *c, double t0) {
    double mine = MPI_Wtime() - t0, all = 0;
    ib_mpi_check(MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, c->comm), "MPI_Allreduce");
    return all;
}

/* The access, started (async) or made, then the computation, then the wait. */
static void access_and_compute(const ib_ctx *c, pario_pgas_file *fd, const pario_pgas_array *a,
                               int write, int block, int async, double t0) {
    pario_pgas_ptr b = a->base;
    if (async)
        upcio_check(fd,
                    write ? pario_pgas_fwrite_shared_async(fd, b, b.block, 8, a->count, 0)
                          : pario_pgas_fread_shared_async(fd, b, b.block, 8, a->count, 0),
                    "pario_pgas_f{write,read}_shared_async");
    else
        upcio_check(fd,
                    write ? pario_pgas_fwrite_shared(fd, b, b.block, 8, a->count, 0, NULL)
                          : pario_pgas_fread_shared(fd, b, b.block, 8, a->count, 0, NULL),
                    "pario_pgas_f{write,read}_shared");
    if (!async)
        last_io_s[c->mode][write][block] = slowest_since(c, t0);
    compute(compute_seconds(c, a, write, block));
    if (async)
        upcio_check(fd, pario_pgas_fwait_async(fd, NULL), "pario_pgas_fwait_async");
}

static void compute_write(const ib_ctx *c, const pario_pgas_array *a, int block, ib_timing *t,
                          int async) {
    pario_pgas_file *fd = upcio_open(c, PARIO_PGAS_WRONLY | PARIO_PGAS_CREATE);
    double t0 = ib_start(c->comm);
    access_and_compute(c, fd, a, 1, block, async, t0);
    if (c->mode == IB_DURABLE)
        upcio_check(fd, pario_pgas_fsync(fd), "pario_pgas_fsync");
    upcio_check(fd, pario_pgas_fclose(&fd, NULL), "pario_pgas_fclose");
    t->seconds = MPI_Wtime() - t0;
}

static void compute_read(const ib_ctx *c, const pario_pgas_array *a, int block, ib_timing *t,
                         int async) {
    pario_pgas_file *fd = upcio_open(c, PARIO_PGAS_RDONLY);
    double t0 = ib_start(c->comm);
    access_and_compute(c, fd, a, 0, block, async, t0);
    t->seconds = MPI_Wtime() - t0;
    upcio_check(fd, pario_pgas_fclose(&fd, NULL), "pario_pgas_fclose");
}

/* The block factor's index of an array of this scenario. */
static int block_index(const pario_pgas_array *a) {
    return a->base.block == 1 ? BLOCK_1 : a->base.block == 128 ? BLOCK_128 : BLOCK_FIT;
}

static void upciocomp_write(const ib_ctx *c, const pario_pgas_array *a, ib_timing *t) {
    compute_write(c, a, block_index(a), t, 0);
}
static void asynccomp_write(const ib_ctx *c, const pario_pgas_array *a, ib_timing *t) {
    compute_write(c, a, block_index(a), t, 1);
}
static void upciocomp_read(const ib_ctx *c, const pario_pgas_array *a, ib_timing *t) {
    compute_read(c, a, block_index(a), t, 0);
}
static void asynccomp_read(const ib_ctx *c, const pario_pgas_array *a, ib_timing *t) {
    compute_read(c, a, block_index(a), t, 1);
}

/* ---- plain POSIX: master/worker and pwrite per block ---------------------------------- */

static int open_posix(const ib_ctx *c, int flags) {
    int fd = open(c->path, flags, 0644);
    if (fd < 0) {
        perror(c->path);
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    return fd;
}

static void posix_io(int fd, void *buf, size_t len, off_t off, int write) {
    for (size_t done = 0; done < len;) {
        size_t n = len - done < UPCIO_MASTER_CHUNK ? len - done : UPCIO_MASTER_CHUNK;
        ssize_t got = write ? pwrite(fd, (char *)buf + done, n, off + (off_t)done)
                            : pread(fd, (char *)buf + done, n, off + (off_t)done);
        if (got <= 0) {
            perror(write ? "pwrite" : "pread");
            MPI_Abort(MPI_COMM_WORLD, 4);
        }
        done += (size_t)got;
    }
}

static void close_posix(const ib_ctx *c, int fd, int write) {
    if (write && c->mode == IB_DURABLE && fsync(fd) != 0) {
        perror("fsync");
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    close(fd);
}

static void mw_write(const ib_ctx *c, const pario_pgas_array *a, ib_timing *t) {
    size_t len = a->count * 8;
    double t0 = ib_start(c->comm);
    if (c->rank == 0) {
        void *all = ib_alloc(len);
        pgas_check(pario_pgas_memget(upcio_ctx, all, a, 0, a->count), "pario_pgas_memget");
        int fd = open_posix(c, O_CREAT | O_WRONLY);
        posix_io(fd, all, len, 0, 1);
        close_posix(c, fd, 1);
        free(all);
    }
    ib_mpi_check(MPI_Barrier(c->comm), "MPI_Barrier");
    t->seconds = MPI_Wtime() - t0;
}

static void mw_read(const ib_ctx *c, const pario_pgas_array *a, ib_timing *t) {
    size_t len = a->count * 8;
    double t0 = ib_start(c->comm);
    if (c->rank == 0) {
        void *all = ib_alloc(len);
        int fd = open_posix(c, O_RDONLY);
        posix_io(fd, all, len, 0, 0);
        close(fd);
        pgas_check(pario_pgas_memput(upcio_ctx, a, 0, all, a->count), "pario_pgas_memput");
        free(all);
    }
    ib_mpi_check(MPI_Barrier(c->comm), "MPI_Barrier");
    t->seconds = MPI_Wtime() - t0;
}

/* Each of this rank's blocks with its own call. */
static void blocks_io(const ib_ctx *c, const pario_pgas_array *a, int fd, int write) {
    uint64_t cursor = 0, n = 0;
    pario_pgas_range r;
    char *p = (char *)local_part(upcio_ctx, a, &n);
    while (pario_pgas_owned_next(a, c->rank, &cursor, &r)) {
        ssize_t got = write ? pwrite(fd, p, r.count * 8, (off_t)(r.first * 8))
                            : pread(fd, p, r.count * 8, (off_t)(r.first * 8));
        if (got != (ssize_t)(r.count * 8)) {
            perror(write ? "pwrite" : "pread");
            MPI_Abort(MPI_COMM_WORLD, 4);
        }
        p += r.count * 8;
    }
}

static void pwrite_write(const ib_ctx *c, const pario_pgas_array *a, ib_timing *t) {
    int fd = open_posix(c, O_CREAT | O_WRONLY);
    double t0 = ib_start(c->comm);
    blocks_io(c, a, fd, 1);
    close_posix(c, fd, 1);
    ib_mpi_check(MPI_Barrier(c->comm), "MPI_Barrier");
    t->seconds = MPI_Wtime() - t0;
}

static void pwrite_read(const ib_ctx *c, const pario_pgas_array *a, ib_timing *t) {
    int fd = open_posix(c, O_RDONLY);
    double t0 = ib_start(c->comm);
    blocks_io(c, a, fd, 0);
    t->seconds = MPI_Wtime() - t0;
    close(fd);
}

/* ---- MPI-IO with a darray view --------------------------------------------------------- */

static MPI_File darray_open(const ib_ctx *c, const pario_pgas_array *a, int amode) {
    int gsize = (int)a->count, darg = (int)a->base.block, psize = c->nranks;
    int distrib = MPI_DISTRIBUTE_CYCLIC;
    MPI_Datatype ftype;
    MPI_File fh;
    ib_mpi_check(MPI_Type_create_darray(c->nranks, c->rank, 1, &gsize, &distrib, &darg, &psize,
                                        MPI_ORDER_C, MPI_DOUBLE, &ftype),
                 "MPI_Type_create_darray");
    ib_mpi_check(MPI_Type_commit(&ftype), "MPI_Type_commit");
    ib_mpi_check(MPI_File_open(c->comm, c->path, amode, MPI_INFO_NULL, &fh), "MPI_File_open");
    ib_note_file(c, fh);
    ib_mpi_check(MPI_File_set_view(fh, 0, MPI_DOUBLE, ftype, "native", MPI_INFO_NULL),
                 "MPI_File_set_view");
    MPI_Type_free(&ftype);
    return fh;
}

static void darray_write(const ib_ctx *c, const pario_pgas_array *a, ib_timing *t) {
    uint64_t n = 0;
    double *mine = local_part(upcio_ctx, a, &n);
    MPI_File fh = darray_open(c, a, MPI_MODE_CREATE | MPI_MODE_WRONLY);
    double t0 = ib_start(c->comm);
    ib_mpi_check(MPI_File_write_all(fh, mine, (int)n, MPI_DOUBLE, MPI_STATUS_IGNORE),
                 "MPI_File_write_all");
    if (c->mode == IB_DURABLE)
        ib_mpi_check(MPI_File_sync(fh), "MPI_File_sync");
    ib_mpi_check(MPI_File_close(&fh), "MPI_File_close");
    t->seconds = MPI_Wtime() - t0;
}

static void darray_read(const ib_ctx *c, const pario_pgas_array *a, ib_timing *t) {
    uint64_t n = 0;
    double *mine = local_part(upcio_ctx, a, &n);
    MPI_File fh = darray_open(c, a, MPI_MODE_RDONLY);
    double t0 = ib_start(c->comm);
    ib_mpi_check(MPI_File_read_all(fh, mine, (int)n, MPI_DOUBLE, MPI_STATUS_IGNORE),
                 "MPI_File_read_all");
    t->seconds = MPI_Wtime() - t0;
    ib_mpi_check(MPI_File_close(&fh), "MPI_File_close");
}

/* ---- the driver's entry points ---------------------------------------------------------- */

typedef void (*upcio_op)(const ib_ctx *c, const pario_pgas_array *a, ib_timing *t);
static const upcio_op writers[NKINDS] = {upcio_write,  mw_write,        pwrite_write,
                                         darray_write, upciocomp_write, asynccomp_write};
static const upcio_op readers[NKINDS] = {upcio_read,  mw_read,        pwrite_read,
                                         darray_read, upciocomp_read, asynccomp_read};

static int skipped(const ib_variant *v) {
    return v->param / NBLOCKS != KIND_DARRAY && !pario_backend();
}

static int upcio_write_variant(const ib_ctx *c, const ib_variant *v, ib_timing *t) {
    if (skipped(v)) {
        t->skipped = 1;
        return MPI_SUCCESS;
    }
    pario_pgas_array a = make_array(c, v, 1);
    writers[v->param / NBLOCKS](c, &a, t);
    free_array(&a);
    return MPI_SUCCESS;
}

static int upcio_read_variant(const ib_ctx *c, const ib_variant *v, ib_timing *t) {
    if (skipped(v)) {
        t->skipped = 1;
        return MPI_SUCCESS;
    }
    pario_pgas_array a = make_array(c, v, 0);
    readers[v->param / NBLOCKS](c, &a, t);
    t->bad = check_array(c, &a);
    free_array(&a);
    return MPI_SUCCESS;
}

static int upcio_setup(const ib_ctx *c, ib_variant *vars, int max_vars, int *nvars) {
    uint64_t n = count_of(c);
    if (n == 0 || n > (uint64_t)1 << 30)
        return -1;
    *nvars = 0;
    for (int b = 0; b < NBLOCKS; b++)
        for (int k = 0; k < NKINDS && *nvars < max_vars; k++) {
            ib_variant *v = &vars[(*nvars)++];
            snprintf(v->name, sizeof v->name, "%s-%s", kind_names[k], block_names[b]);
            v->bytes = (long long)n * 8;
            v->param = k * NBLOCKS + b;
            v->write = upcio_write_variant;
            v->read = upcio_read_variant;
            v->follows = k == KIND_ASYNC_COMPUTE; /* it computes for upciocomp's time */
        }
    return 0;
}

int main(int argc, char **argv) {
    int rc = ib_main(argc, argv, "upcio", upcio_setup);
    return rc;
}
