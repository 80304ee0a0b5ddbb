/* overlap: does nonblocking I/O run while the program computes?
 *
 * Each rank moves --size bytes (default 64 MiB) to or from its own contiguous
 * region of a shared file, in transfers of 1 MiB, and computes (spins on the
 * clock, making no MPI call) for as long as moving the bytes at
 * OVERLAP_COMPUTE_MIB_S would take:
 *   blocking     write_at/read_at every transfer, then compute
 *   nonblocking  iwrite_at/iread_at every transfer, compute, MPI_Waitall
 * The timed region covers both (and MPI_File_sync in durable mode), so the
 * rate is bytes / (I/O + compute) when nothing overlaps and approaches
 * bytes / max(I/O, compute) when the I/O runs during the computation. */
#include "iobench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Bytes per rank when --size is not given. */
#define OVERLAP_DEFAULT_BYTES_PER_RANK (64LL << 20)
/* Bytes per call. */
#define OVERLAP_TRANSFER (1LL << 20)
/* The computation lasts as long as moving the rank's bytes at this rate would. */
#define OVERLAP_COMPUTE_MIB_S 1024.0

enum overlap_kind { KIND_BLOCKING, KIND_NONBLOCKING };

static long long bytes_per_rank(const ib_ctx *c) {
    long long b = c->size ? ib_parse_bytes(c->size) : OVERLAP_DEFAULT_BYTES_PER_RANK;
    return b / 8 * 8;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The program's own work: spins for the time its bytes take at the compute rate. */
static void compute(long long bytes) {
    double until = now_s() + (double)bytes / (OVERLAP_COMPUTE_MIB_S * 1048576.0);
    while (now_s() < until) {
    }
}

static int ntransfers(long long len) {
    return (int)((len + OVERLAP_TRANSFER - 1) / OVERLAP_TRANSFER);
}

/* Starts (nonblocking) or performs every transfer of the rank's region. */
static void transfer_all(MPI_File fh, int write, char *buf, long long len, long long base,
                         MPI_Request *reqs) {
    for (int i = 0; i < ntransfers(len); i++) {
        long long off = (long long)i * OVERLAP_TRANSFER;
        int n = (int)(len - off < OVERLAP_TRANSFER ? len - off : OVERLAP_TRANSFER);
        if (reqs)
            ib_mpi_check(write ? MPI_File_iwrite_at(fh, base + off, buf + off, n, MPI_BYTE, &reqs[i])
                               : MPI_File_iread_at(fh, base + off, buf + off, n, MPI_BYTE, &reqs[i]),
                         write ? "MPI_File_iwrite_at" : "MPI_File_iread_at");
        else
            ib_mpi_check(write ? MPI_File_write_at(fh, base + off, buf + off, n, MPI_BYTE,
                                                   MPI_STATUS_IGNORE)
                               : MPI_File_read_at(fh, base + off, buf + off, n, MPI_BYTE,
                                                  MPI_STATUS_IGNORE),
                         write ? "MPI_File_write_at" : "MPI_File_read_at");
    }
}

/* The timed region: the I/O and the computation, overlapped or one after the other. */
static double timed(const ib_ctx *c, const ib_variant *v, MPI_File fh, int write, char *buf,
                    long long len) {
    long long base = (long long)c->rank * len;
    MPI_Request *reqs = NULL;
    if (v->param == KIND_NONBLOCKING)
        reqs = ib_alloc((size_t)ntransfers(len) * sizeof *reqs);
    double t0 = ib_start(c->comm);
    transfer_all(fh, write, buf, len, base, reqs);
    compute(len);
    if (reqs)
        ib_mpi_check(MPI_Waitall(ntransfers(len), reqs, MPI_STATUSES_IGNORE), "MPI_Waitall");
    if (write && c->mode == IB_DURABLE)
        ib_mpi_check(MPI_File_sync(fh), "MPI_File_sync");
    double t = MPI_Wtime() - t0;
    free(reqs);
    return t;
}

static int overlap_write(const ib_ctx *c, const ib_variant *v, ib_timing *t) {
    long long len = bytes_per_rank(c);
    char *buf = ib_alloc((size_t)len);
    ib_fill(buf, (size_t)len, (long long)c->rank * len, c->salt);
    MPI_File fh;
    ib_mpi_check(
        MPI_File_open(c->comm, c->path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
        "MPI_File_open");
    ib_note_file(c, fh);
    t->seconds = timed(c, v, fh, 1, buf, len);
    ib_mpi_check(MPI_File_close(&fh), "MPI_File_close");
    free(buf);
    return MPI_SUCCESS;
}

static int overlap_read(const ib_ctx *c, const ib_variant *v, ib_timing *t) {
    long long len = bytes_per_rank(c);
    char *buf = ib_alloc((size_t)len);
    memset(buf, 0, (size_t)len);
    if (c->mode == IB_DURABLE && c->rank == 0)
        ib_drop_cache(c->path);
    MPI_File fh;
    ib_mpi_check(MPI_File_open(c->comm, c->path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                 "MPI_File_open");
    t->seconds = timed(c, v, fh, 0, buf, len);
    ib_mpi_check(MPI_File_close(&fh), "MPI_File_close");
    t->bad = ib_check(buf, (size_t)len, (long long)c->rank * len, c->salt);
    free(buf);
    return MPI_SUCCESS;
}

static int overlap_setup(const ib_ctx *c, ib_variant *vars, int max_vars, int *nvars) {
    static const char *const names[] = {"blocking", "nonblocking"};
    if (bytes_per_rank(c) < 8 || max_vars < 2)
        return -1;
    for (int i = 0; i < 2; i++) {
        snprintf(vars[i].name, sizeof(vars[i].name), "%s", names[i]);
        vars[i].param = i;
        vars[i].bytes = bytes_per_rank(c) * c->nranks;
        vars[i].write = overlap_write;
        vars[i].read = overlap_read;
    }
    *nvars = 2;
    return 0;
}

int main(int argc, char **argv) {
    return ib_main(argc, argv, "overlap", overlap_setup);
}
