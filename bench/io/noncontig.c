/* noncontig: small noncontiguous blocks described by MPI vector types (after ROMIO's
 * noncontig tests). Each rank moves --size bytes (default 1 MiB) in blocks of
 * B = 8 B, 64 B, 512 B or 4 KiB, with one write and one read call per operation:
 *   file-B-*  contiguous memory, file view vector(n, B, nranks*B): blocks of all ranks
 *             interleaved in the file
 *   mem-B-*   memory vector(n, B, 2B) (a gap after every block), the rank's contiguous
 *             region of the file
 *   both-B-*  memory vector and file vector together
 * each independent (MPI_File_write/read, the implementation's default data sieving)
 * and collective (MPI_File_write_all/read_all). Memory gaps must survive a read. */
#include "iobench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes per rank when --size is not given. */
#define NONCONTIG_DEFAULT_BYTES_PER_RANK (1LL << 20)
/* Byte stored in memory gaps; a read must leave it untouched. */
#define NONCONTIG_GAP_BYTE 0xA5

enum layout { LAYOUT_FILE, LAYOUT_MEM, LAYOUT_BOTH, LAYOUT_COUNT };

static const char *const layout_names[] = {"file", "mem", "both"};
static const int block_sizes[] = {8, 64, 512, 4096};
static const char *const block_names[] = {"8b", "64b", "512b", "4k"};
#define NONCONTIG_NBLOCKSIZES ((int)(sizeof(block_sizes) / sizeof(block_sizes[0])))

typedef struct nc_spec {
    enum layout layout;
    long long block;
    long long nblocks;
    int coll;
} nc_spec;

static long long bytes_per_rank(const ib_ctx *c) {
    return c->size ? ib_parse_bytes(c->size) : NONCONTIG_DEFAULT_BYTES_PER_RANK;
}

static nc_spec spec_of(const ib_ctx *c, int param) {
    nc_spec s = {.layout = (enum layout)(param / 100), .coll = param % 10};
    s.block = block_sizes[(param / 10) % 10];
    s.nblocks = bytes_per_rank(c) / s.block;
    if (s.nblocks < 1)
        s.nblocks = 1;
    return s;
}

static int file_strided(const nc_spec *s) {
    return s->layout != LAYOUT_MEM;
}
static int mem_strided(const nc_spec *s) {
    return s->layout != LAYOUT_FILE;
}

/* File offset of this rank's block i. */
static long long block_file_offset(const ib_ctx *c, const nc_spec *s, long long i) {
    if (file_strided(s))
        return (i * c->nranks + c->rank) * s->block;
    return (long long)c->rank * s->nblocks * s->block + i * s->block;
}

/* Memory offset of block i in the rank's buffer. */
static long long block_mem_offset(const nc_spec *s, long long i) {
    return i * s->block * (mem_strided(s) ? 2 : 1);
}

static size_t buffer_bytes(const nc_spec *s) {
    return (size_t)(s->nblocks * s->block * (mem_strided(s) ? 2 : 1));
}

static MPI_Datatype vector_type(long long count, long long block, long long stride) {
    MPI_Datatype t;
    ib_mpi_check(MPI_Type_vector((int)count, (int)block, (int)stride, MPI_BYTE, &t),
                 "MPI_Type_vector");
    ib_mpi_check(MPI_Type_commit(&t), "MPI_Type_commit");
    return t;
}

/* Opens the shared file and sets the rank's view. */
static MPI_File open_view(const ib_ctx *c, const nc_spec *s, int amode) {
    MPI_File fh;
    ib_mpi_check(MPI_File_open(c->comm, c->path, amode, MPI_INFO_NULL, &fh), "MPI_File_open");
    ib_note_file(c, fh);
    if (file_strided(s)) {
        MPI_Datatype ft = vector_type(s->nblocks, s->block, s->block * c->nranks);
        ib_mpi_check(MPI_File_set_view(fh, (MPI_Offset)c->rank * s->block, MPI_BYTE, ft, "native",
                                       MPI_INFO_NULL),
                     "MPI_File_set_view");
        MPI_Type_free(&ft);
    } else {
        MPI_Offset disp = (MPI_Offset)c->rank * s->nblocks * s->block;
        ib_mpi_check(MPI_File_set_view(fh, disp, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL),
                     "MPI_File_set_view");
    }
    return fh;
}

/* The memory datatype and count for one call moving all of the rank's blocks. */
static MPI_Datatype memory_type(const nc_spec *s, int *count) {
    if (!mem_strided(s)) {
        *count = (int)(s->nblocks * s->block);
        return MPI_BYTE;
    }
    *count = 1;
    return vector_type(s->nblocks, s->block, 2 * s->block);
}

static void free_memory_type(MPI_Datatype *t) {
    if (*t != MPI_BYTE)
        MPI_Type_free(t);
}

static int nc_write(const ib_ctx *c, const ib_variant *v, ib_timing *t) {
    nc_spec s = spec_of(c, v->param);
    char *buf = ib_alloc(buffer_bytes(&s));
    memset(buf, NONCONTIG_GAP_BYTE, buffer_bytes(&s));
    for (long long i = 0; i < s.nblocks; i++)
        ib_fill(buf + block_mem_offset(&s, i), (size_t)s.block, block_file_offset(c, &s, i),
                c->salt);
    int count = 0;
    MPI_Datatype mt = memory_type(&s, &count);
    MPI_File fh = open_view(c, &s, MPI_MODE_CREATE | MPI_MODE_WRONLY);
    double t0 = ib_start(c->comm);
    if (s.coll)
        ib_mpi_check(MPI_File_write_all(fh, buf, count, mt, MPI_STATUS_IGNORE),
                     "MPI_File_write_all");
    else
        ib_mpi_check(MPI_File_write(fh, buf, count, mt, MPI_STATUS_IGNORE), "MPI_File_write");
    if (c->mode == IB_DURABLE)
        ib_mpi_check(MPI_File_sync(fh), "MPI_File_sync");
    ib_mpi_check(MPI_File_close(&fh), "MPI_File_close"); /* writes may end at close */
    t->seconds = MPI_Wtime() - t0;
    free_memory_type(&mt);
    free(buf);
    return MPI_SUCCESS;
}

/* Counts wrong words in the blocks and touched bytes in the gaps. */
static long long check_buffer(const ib_ctx *c, const nc_spec *s, const char *buf) {
    long long bad = 0;
    for (long long i = 0; i < s->nblocks; i++) {
        long long mo = block_mem_offset(s, i);
        bad += ib_check(buf + mo, (size_t)s->block, block_file_offset(c, s, i), c->salt);
        if (mem_strided(s))
            bad += ib_check_fill(buf + mo + s->block, (size_t)s->block, NONCONTIG_GAP_BYTE);
    }
    return bad;
}

static int nc_read(const ib_ctx *c, const ib_variant *v, ib_timing *t) {
    nc_spec s = spec_of(c, v->param);
    char *buf = ib_alloc(buffer_bytes(&s));
    memset(buf, NONCONTIG_GAP_BYTE, buffer_bytes(&s));
    int count = 0;
    MPI_Datatype mt = memory_type(&s, &count);
    MPI_File fh = open_view(c, &s, MPI_MODE_RDONLY);
    double t0 = ib_start(c->comm);
    if (s.coll)
        ib_mpi_check(MPI_File_read_all(fh, buf, count, mt, MPI_STATUS_IGNORE), "MPI_File_read_all");
    else
        ib_mpi_check(MPI_File_read(fh, buf, count, mt, MPI_STATUS_IGNORE), "MPI_File_read");
    t->seconds = MPI_Wtime() - t0;
    ib_mpi_check(MPI_File_close(&fh), "MPI_File_close");
    t->bad = check_buffer(c, &s, buf);
    free_memory_type(&mt);
    free(buf);
    return MPI_SUCCESS;
}

static int nc_setup(const ib_ctx *c, ib_variant *vars, int max_vars, int *nvars) {
    if (bytes_per_rank(c) < 1 || max_vars < LAYOUT_COUNT * NONCONTIG_NBLOCKSIZES * 2)
        return -1;
    static const char *const coll_names[] = {"indep", "coll"};
    int n = 0;
    for (int l = 0; l < LAYOUT_COUNT; l++)
        for (int b = 0; b < NONCONTIG_NBLOCKSIZES; b++)
            for (int coll = 0; coll < 2; coll++) {
                ib_variant *v = &vars[n++];
                snprintf(v->name, sizeof(v->name), "%s-%s-%s", layout_names[l], block_names[b],
                         coll_names[coll]);
                v->param = l * 100 + b * 10 + coll;
                nc_spec s = spec_of(c, v->param);
                v->bytes = s.nblocks * s.block * c->nranks;
                v->write = nc_write;
                v->read = nc_read;
            }
    *nvars = n;
    return 0;
}

int main(int argc, char **argv) {
    return ib_main(argc, argv, "noncontig", nc_setup);
}
