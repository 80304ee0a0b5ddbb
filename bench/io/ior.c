/* ior: IOR's shared-file access patterns through MPI-IO, one call per transfer.
 *
 *   segmented-T-{indep,coll}  the file is S segments; in each segment every rank owns
 *                             one contiguous block written in transfers of T bytes
 *   strided-T-{indep,coll}    transfers interleaved: transfer j of rank r lands at
 *                             (j * nranks + r) * T
 *   hard-coll                 IO500 ior-hard: 47,008-byte records interleaved across
 *                             ranks, collective calls
 * T is 4 KiB, 64 KiB and 1 MiB. Independent variants use MPI_File_write_at /
 * read_at, collective ones MPI_File_write_at_all / read_at_all, like IOR's -c.
 * Each rank moves min(--size, T * --max-calls) bytes, rounded to whole transfers
 * (--size default 8 MiB per rank). */
#include "iobench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes per rank when --size is not given. */
#define IOR_DEFAULT_BYTES_PER_RANK (8LL << 20)
/* Segments of the segmented layout (IOR's -s), when the transfer count allows. */
#define IOR_SEGMENTS 4
/* IO500's ior-hard record size: deliberately not a multiple of any block size. */
#define IOR_HARD_RECORD 47008

enum ior_pattern { PAT_SEGMENTED, PAT_STRIDED, PAT_HARD };

static const long long transfer_sizes[] = {4096, 65536, 1048576};
static const char *const transfer_names[] = {"4k", "64k", "1m"};
#define IOR_NXFER ((int)(sizeof(transfer_sizes) / sizeof(transfer_sizes[0])))

/* A variant's parameters, packed into ib_variant.param. */
typedef struct ior_spec {
    enum ior_pattern pattern;
    long long xfer;
    int coll;
} ior_spec;

static int spec_pack(enum ior_pattern p, int xfer_index, int coll) {
    return (int)p * 100 + xfer_index * 10 + coll;
}

static ior_spec spec_unpack(int param) {
    ior_spec s = {.pattern = (enum ior_pattern)(param / 100), .coll = param % 10};
    s.xfer = s.pattern == PAT_HARD ? IOR_HARD_RECORD : transfer_sizes[(param / 10) % 10];
    return s;
}

static long long bytes_per_rank(const ib_ctx *c) {
    return c->size ? ib_parse_bytes(c->size) : IOR_DEFAULT_BYTES_PER_RANK;
}

/* Transfers per rank for a transfer size: at least one, at most --max-calls. */
static long long transfers_per_rank(const ib_ctx *c, long long xfer) {
    long long n = bytes_per_rank(c) / xfer;
    if (n > c->max_calls)
        n = c->max_calls;
    return n < 1 ? 1 : n;
}

/* File offset of this rank's transfer j. */
static long long transfer_offset(const ib_ctx *c, const ior_spec *s, long long n, long long j) {
    if (s->pattern != PAT_SEGMENTED)
        return (j * c->nranks + c->rank) * s->xfer;
    long long segments = (n >= IOR_SEGMENTS && n % IOR_SEGMENTS == 0) ? IOR_SEGMENTS : 1;
    long long per_segment = n / segments;
    long long block = per_segment * s->xfer;
    long long seg = j / per_segment, within = j % per_segment;
    return (seg * c->nranks + c->rank) * block + within * s->xfer;
}

static MPI_File open_shared(const ib_ctx *c, int amode) {
    MPI_File fh;
    ib_mpi_check(MPI_File_open(c->comm, c->path, amode, MPI_INFO_NULL, &fh), "MPI_File_open");
    ib_note_file(c, fh);
    return fh;
}

static void write_transfer(MPI_File fh, const ior_spec *s, long long off, const char *buf) {
    int n = (int)s->xfer;
    if (s->coll)
        ib_mpi_check(MPI_File_write_at_all(fh, off, buf, n, MPI_BYTE, MPI_STATUS_IGNORE),
                     "MPI_File_write_at_all");
    else
        ib_mpi_check(MPI_File_write_at(fh, off, buf, n, MPI_BYTE, MPI_STATUS_IGNORE),
                     "MPI_File_write_at");
}

static void read_transfer(MPI_File fh, const ior_spec *s, long long off, char *buf) {
    int n = (int)s->xfer;
    if (s->coll)
        ib_mpi_check(MPI_File_read_at_all(fh, off, buf, n, MPI_BYTE, MPI_STATUS_IGNORE),
                     "MPI_File_read_at_all");
    else
        ib_mpi_check(MPI_File_read_at(fh, off, buf, n, MPI_BYTE, MPI_STATUS_IGNORE),
                     "MPI_File_read_at");
}

static int ior_write(const ib_ctx *c, const ib_variant *v, ib_timing *t) {
    ior_spec s = spec_unpack(v->param);
    long long n = transfers_per_rank(c, s.xfer);
    char *buf = ib_alloc((size_t)(n * s.xfer));
    for (long long j = 0; j < n; j++)
        ib_fill(buf + j * s.xfer, (size_t)s.xfer, transfer_offset(c, &s, n, j), c->salt);
    MPI_File fh = open_shared(c, MPI_MODE_CREATE | MPI_MODE_WRONLY);
    double t0 = ib_start(c->comm);
    for (long long j = 0; j < n; j++)
        write_transfer(fh, &s, transfer_offset(c, &s, n, j), buf + j * s.xfer);
    if (c->mode == IB_DURABLE)
        ib_mpi_check(MPI_File_sync(fh), "MPI_File_sync");
    ib_mpi_check(MPI_File_close(&fh), "MPI_File_close"); /* timed, as IOR times it */
    t->seconds = MPI_Wtime() - t0;
    free(buf);
    return MPI_SUCCESS;
}

static int ior_read(const ib_ctx *c, const ib_variant *v, ib_timing *t) {
    ior_spec s = spec_unpack(v->param);
    long long n = transfers_per_rank(c, s.xfer);
    char *buf = ib_alloc((size_t)(n * s.xfer));
    memset(buf, 0, (size_t)(n * s.xfer));
    MPI_File fh = open_shared(c, MPI_MODE_RDONLY);
    double t0 = ib_start(c->comm);
    for (long long j = 0; j < n; j++)
        read_transfer(fh, &s, transfer_offset(c, &s, n, j), buf + j * s.xfer);
    t->seconds = MPI_Wtime() - t0;
    ib_mpi_check(MPI_File_close(&fh), "MPI_File_close");
    for (long long j = 0; j < n; j++)
        t->bad += ib_check(buf + j * s.xfer, (size_t)s.xfer, transfer_offset(c, &s, n, j), c->salt);
    free(buf);
    return MPI_SUCCESS;
}

static void add_variant(const ib_ctx *c, ib_variant *v, const char *name, int param) {
    ior_spec s = spec_unpack(param);
    snprintf(v->name, sizeof(v->name), "%s", name);
    v->param = param;
    v->bytes = transfers_per_rank(c, s.xfer) * s.xfer * c->nranks;
    v->write = ior_write;
    v->read = ior_read;
}

static int ior_setup(const ib_ctx *c, ib_variant *vars, int max_vars, int *nvars) {
    if (bytes_per_rank(c) < 1 || max_vars < 4 * IOR_NXFER + 1)
        return -1;
    static const char *const pattern_names[] = {"segmented", "strided"};
    static const char *const coll_names[] = {"indep", "coll"};
    int n = 0;
    for (int p = PAT_SEGMENTED; p <= PAT_STRIDED; p++)
        for (int x = 0; x < IOR_NXFER; x++)
            for (int coll = 0; coll < 2; coll++) {
                char name[IB_NAME_MAX];
                snprintf(name, sizeof(name), "%s-%s-%s", pattern_names[p], transfer_names[x],
                         coll_names[coll]);
                add_variant(c, &vars[n++], name, spec_pack((enum ior_pattern)p, x, coll));
            }
    add_variant(c, &vars[n++], "hard-coll", spec_pack(PAT_HARD, 0, 1));
    *nvars = n;
    return 0;
}

int main(int argc, char **argv) {
    return ib_main(argc, argv, "ior", ior_setup);
}
