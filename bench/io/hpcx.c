/* hpcx: the many-task file I/O study of seed 001, through MPI-IO.
 *   fpp       file per task: each rank opens its own file (MPI_COMM_SELF)
 *   shared    one shared file, each rank its own contiguous region
 *   readsame  all ranks read the whole of one file (written untimed by rank 0);
 *             only a read is reported
 *   readsame-once  the same with pario_read_once=enable: pario reads the file
 *             once per node into shared memory (other MPI-IOs ignore the hint)
 *   readsame-all  every rank reads the whole file in one MPI_File_read_at_all,
 *             no hint: pario may recognise the pattern (io/coll/route.c, rule 6)
 *   readsame-calls  the same in MPI_File_read_at_all calls of 1 MiB, as a
 *             program reads its input record by record
 * Each rank moves --size bytes (default 16 MiB) in transfers of 1 MiB. As in the
 * study, the timed region includes open and close, and the rate is the bytes of all
 * ranks divided by the time of the slowest rank. */
#include "iobench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes per rank when --size is not given. */
#define HPCX_DEFAULT_BYTES_PER_RANK (16LL << 20)
/* Bytes per write/read call: a large sequential request, as a Fortran record would be. */
#define HPCX_TRANSFER (1LL << 20)

enum hpcx_kind {
    KIND_FPP,
    KIND_SHARED,
    KIND_READSAME,
    KIND_READSAME_ONCE,
    KIND_READSAME_ALL,
    KIND_READSAME_CALLS,
    KINDS
};

static long long bytes_per_rank(const ib_ctx *c) {
    long long b = c->size ? ib_parse_bytes(c->size) : HPCX_DEFAULT_BYTES_PER_RANK;
    return b / 8 * 8;
}

/* Path of this rank's own file (file per task). */
static void own_path(const ib_ctx *c, char *path, size_t len) {
    snprintf(path, len, "%s.%d", c->path, c->rank);
}

/* Writes `len` bytes of `buf` at file offsets file_base.. of the open file, in
 * transfers of HPCX_TRANSFER bytes. */
static void write_region(MPI_File fh, const char *buf, long long len, long long file_base) {
    for (long long off = 0; off < len; off += HPCX_TRANSFER) {
        long long n = len - off < HPCX_TRANSFER ? len - off : HPCX_TRANSFER;
        ib_mpi_check(
            MPI_File_write_at(fh, file_base + off, buf + off, (int)n, MPI_BYTE, MPI_STATUS_IGNORE),
            "MPI_File_write_at");
    }
}

/* How a region is read. */
enum read_way { READ_INDEPENDENT, READ_ONE_COLL, READ_COLL_CALLS };

/* Reads `len` bytes from file offsets file_base.. into `buf`: in transfers,
 * independent or collective, or in one collective call, as a program reads
 * its whole input. */
static void read_region(MPI_File fh, char *buf, long long len, long long file_base,
                        enum read_way way) {
    long long step = way == READ_ONE_COLL ? len : HPCX_TRANSFER;
    for (long long off = 0; off < len; off += step) {
        long long n = len - off < step ? len - off : step;
        if (way == READ_INDEPENDENT)
            ib_mpi_check(MPI_File_read_at(fh, file_base + off, buf + off, (int)n, MPI_BYTE,
                                          MPI_STATUS_IGNORE),
                         "MPI_File_read_at");
        else
            ib_mpi_check(MPI_File_read_at_all(fh, file_base + off, buf + off, (int)n, MPI_BYTE,
                                              MPI_STATUS_IGNORE),
                         "MPI_File_read_at_all");
    }
}

/* Timed open + write (+ sync) + close of one region; returns seconds. */
static double timed_write(const ib_ctx *c, MPI_Comm comm, const char *path, const char *buf,
                          long long len, long long file_base) {
    MPI_File fh;
    double t0 = ib_start(c->comm);
    ib_mpi_check(MPI_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
                 "MPI_File_open");
    write_region(fh, buf, len, file_base);
    if (c->mode == IB_DURABLE)
        ib_mpi_check(MPI_File_sync(fh), "MPI_File_sync");
    ib_mpi_check(MPI_File_close(&fh), "MPI_File_close");
    return MPI_Wtime() - t0;
}

/* Timed open + read + close of one region; returns seconds. */
static double timed_read(const ib_ctx *c, MPI_Comm comm, const char *path, char *buf, long long len,
                         long long file_base, MPI_Info info, enum read_way way) {
    MPI_File fh;
    double t0 = ib_start(c->comm);
    ib_mpi_check(MPI_File_open(comm, path, MPI_MODE_RDONLY, info, &fh), "MPI_File_open");
    ib_note_file(c, fh);
    read_region(fh, buf, len, file_base, way);
    ib_mpi_check(MPI_File_close(&fh), "MPI_File_close");
    return MPI_Wtime() - t0;
}

/* Rank 0 alone writes the file all ranks will read (not timed). */
static void prepare_same_file(const ib_ctx *c, char *buf, long long len) {
    MPI_File fh;
    ib_fill(buf, (size_t)len, 0, c->salt);
    ib_mpi_check(MPI_File_open(MPI_COMM_SELF, c->path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                               MPI_INFO_NULL, &fh),
                 "MPI_File_open");
    write_region(fh, buf, len, 0);
    if (c->mode == IB_DURABLE)
        ib_mpi_check(MPI_File_sync(fh), "MPI_File_sync");
    ib_mpi_check(MPI_File_close(&fh), "MPI_File_close");
}

static int hpcx_write(const ib_ctx *c, const ib_variant *v, ib_timing *t) {
    long long len = bytes_per_rank(c);
    char *buf = ib_alloc((size_t)len);
    char path[IB_PATH_MAX + 16];
    if (v->param == KIND_FPP) {
        own_path(c, path, sizeof(path));
        MPI_File_delete(path, MPI_INFO_NULL);
        ib_fill(buf, (size_t)len, (long long)c->rank * len, c->salt);
        t->seconds = timed_write(c, MPI_COMM_SELF, path, buf, len, 0);
    } else if (v->param == KIND_SHARED) {
        ib_fill(buf, (size_t)len, (long long)c->rank * len, c->salt);
        t->seconds = timed_write(c, c->comm, c->path, buf, len, (long long)c->rank * len);
    } else {
        /* readsame: rank 0 prepares the file; not a measurement. */
        if (c->rank == 0)
            prepare_same_file(c, buf, len);
        t->skipped = 1;
        ib_mpi_check(MPI_Barrier(c->comm), "MPI_Barrier");
    }
    free(buf);
    return MPI_SUCCESS;
}

static int hpcx_read(const ib_ctx *c, const ib_variant *v, ib_timing *t) {
    long long len = bytes_per_rank(c);
    char *buf = ib_alloc((size_t)len);
    memset(buf, 0, (size_t)len);
    char path[IB_PATH_MAX + 16];
    long long pattern_base = v->param >= KIND_READSAME ? 0 : (long long)c->rank * len;
    if (v->param == KIND_FPP) {
        own_path(c, path, sizeof(path));
        if (c->mode == IB_DURABLE)
            ib_drop_cache(path);
        t->seconds =
            timed_read(c, MPI_COMM_SELF, path, buf, len, 0, MPI_INFO_NULL, READ_INDEPENDENT);
        MPI_File_delete(path, MPI_INFO_NULL);
    } else if (v->param == KIND_SHARED) {
        t->seconds = timed_read(c, c->comm, c->path, buf, len, (long long)c->rank * len,
                                MPI_INFO_NULL, READ_INDEPENDENT);
    } else {
        static const char *const once[] = {"pario_read_once", "enable", NULL};
        MPI_Info info = ib_info(v->param == KIND_READSAME_ONCE ? once : NULL);
        enum read_way way = v->param == KIND_READSAME_ALL     ? READ_ONE_COLL
                            : v->param == KIND_READSAME_CALLS ? READ_COLL_CALLS
                                                              : READ_INDEPENDENT;
        t->seconds = timed_read(c, c->comm, c->path, buf, len, 0, info, way);
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
    }
    t->bad = ib_check(buf, (size_t)len, pattern_base, c->salt);
    free(buf);
    return MPI_SUCCESS;
}

static int hpcx_setup(const ib_ctx *c, ib_variant *vars, int max_vars, int *nvars) {
    static const char *const names[KINDS] = {"fpp",           "shared",       "readsame",
                                             "readsame-once", "readsame-all", "readsame-calls"};
    if (bytes_per_rank(c) < 8 || max_vars < KINDS)
        return -1;
    for (int i = 0; i < KINDS; i++) {
        snprintf(vars[i].name, sizeof(vars[i].name), "%s", names[i]);
        vars[i].param = i;
        vars[i].bytes = bytes_per_rank(c) * c->nranks;
        vars[i].write = hpcx_write;
        vars[i].read = hpcx_read;
    }
    *nvars = KINDS;
    return 0;
}

int main(int argc, char **argv) {
    return ib_main(argc, argv, "hpcx", hpcx_setup);
}
