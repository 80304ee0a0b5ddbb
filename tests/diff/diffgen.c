/* diffgen: seeded random MPI-IO operation sequences for differential testing.
 *
 *   diffgen [flags] --seed S (--case C | --cases A-B) --dir D [--log L]
 *
 * Case C of seed S opens D/case<C>.dat, runs 5-30 random operations on it and
 * leaves the file in place. The case's shared random stream (every rank draws
 * the same global choices) and each rank's own stream are derived from S and
 * C only, so one case reruns alone with --cases C-C. Operations: set_view
 * (random displacement, etype and filetype, the ranks' parts disjoint: tiles,
 * darrays, bands of rows, contiguous bands; in some views ranks own nothing,
 * their filetype holding no data), write/read at explicit offsets and at the
 * individual pointer, independent (blocking or nonblocking) and collective
 * (blocking, nonblocking or split), some ranks with count 0, seek, set_size,
 * get_size (also right after collective writes), get_position,
 * get_byte_offset, sync, set_info; memory types random too. Hints that steer
 * collective paths differ between ranks at open, set_view and set_info.
 *
 * Every rank records, in order, each call's error class, the bytes it moved,
 * a hash of the data it read, positions and sizes. At the end of each case
 * rank 0 appends all ranks' records to the log (default D/diffgen.log),
 * followed by the size and hash of the file on disk. Two correct MPI-IO
 * implementations produce identical logs and files.
 *
 * Only the MPI API touches the file, so the same binary runs on the system's
 * MPI-IO and, preloaded, on any drop-in replacement.
 *
 * Every rank also keeps a model of the file. A rank records the bytes it wrote
 * since the last sync-barrier-sync point; at each such point the ranks combine
 * their records with MPI_Allreduce. Reads (data, counts, untouched memory
 * outside the type map), sizes, positions and the final file are checked
 * against the model; a mismatch is logged as a FAIL line and makes the exit
 * status non-zero, so a wrong answer shows even when both back ends agree.
 *
 * What keeps the results defined by the MPI standard:
 *  - between sync-barrier-sync points the ranks' views are disjoint, so
 *    concurrent writes never overlap (or the epoch is read-only);
 *  - a read touches only bytes known to exist (below the size at the last sync
 *    point or below the end of the rank's own writes) unless no rank can be
 *    writing at the time, so the count of a read at end of file is defined;
 *  - size queries, SEEK_END and set_size happen between sync-barrier-syncs.
 *
 * Flags that keep known faults of a system MPI-IO out of the comparison:
 *   --seek-end-by-set  emulate SEEK_END with SEEK_SET (Open MPI's OMPIO);
 *                      the log is the same, so use it on the oracle side only
 *   --no-eof-reads     no read runs past the end of file    (MPICH's ROMIO)
 *   --memtype-lb-zero  no memory type with a negative lower bound (ROMIO)
 *   the last two change the cases: give them to both sides.
 *   --trace            copy log lines to stderr as they happen (for hangs)
 *
 * Flags that change the cases (give them to both sides):
 *   --focus-agree  more of what the ranks must agree on: views empty on
 *                  some ranks, hints per rank, get_size after writes
 *   --leave-open   every case ends with collective writes and leaves its
 *                  file open, never closed before MPI_Finalize; rank 0
 *                  checks the files after MPI_Finalize */
#include <dlfcn.h>
#include <limits.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "stripe_image.h"

/* Largest file offset a case may touch; bounds the model arrays. */
enum { FILE_CAP = 1 << 18 };
/* Largest number of data bytes one access moves. */
enum { MAX_XFER = 1 << 13 };
/* Room for a datatype description in a log line. */
enum { DESC_MAX = 240 };
/* Operations per case (inclusive bounds, from the task statement). */
enum { MIN_OPS = 5, MAX_OPS = 30 };
/* Largest view displacement in bytes. */
enum { MAX_DISP = 3000 };
/* Type maps are read back in byte planes: 3 planes cover extents below 16 MiB. */
enum { MAP_PLANES = 3 };
/* Data bytes shown in a read's log line, for debugging a hash mismatch. */
enum { SHOW_BYTES = 8 };
/* Bytes kept free around every user buffer to catch stores outside it. */
enum { MEM_GUARD = 256 };
/* Read size when hashing the final file. */
enum { FINAL_CHUNK = 1 << 16 };
/* Largest filetype extent: a few tiles must fit below FILE_CAP. */
enum { FT_MAX_EXTENT = 1 << 14 };
/* FAIL lines copied to stderr per rank before going quiet. */
enum { MAX_FAIL_PRINTS = 20 };

/* ---------------------------------------------------------------- random */

typedef struct {
    uint64_t state;
} rng_t;

static uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

static uint64_t mix3(uint64_t a, uint64_t b, uint64_t c) {
    return mix64(mix64(mix64(a + 0x9e3779b97f4a7c15ULL) ^ b) ^ c);
}

static rng_t rng_seeded(uint64_t a, uint64_t b, uint64_t c) {
    rng_t r = {mix3(a, b, c)};
    return r;
}

static uint64_t rng_next(rng_t *r) {
    r->state += 0x9e3779b97f4a7c15ULL;
    return mix64(r->state);
}

/* Uniform in [lo, hi], both inclusive. */
static int64_t rng_range(rng_t *r, int64_t lo, int64_t hi) {
    if (hi <= lo)
        return lo;
    return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

static int rng_percent(rng_t *r, int pct) {
    return rng_range(r, 0, 99) < pct;
}

/* Picks an index with probability proportional to weights[i]. */
static int rng_weighted(rng_t *r, const int *weights, int n) {
    int total = 0;
    for (int i = 0; i < n; i++)
        total += weights[i];
    int64_t x = rng_range(r, 0, total - 1);
    for (int i = 0; i < n; i++) {
        if (x < weights[i])
            return i;
        x -= weights[i];
    }
    return n - 1;
}

static uint64_t fnv1a(uint64_t h, const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}
static const uint64_t FNV_START = 0xcbf29ce484222325ULL;

/* ------------------------------------------------------------------ text */

typedef struct {
    char *text;
    size_t len, cap;
} textbuf_t;

static void tb_vprintf(textbuf_t *tb, const char *fmt, va_list ap) {
    for (;;) {
        va_list copy;
        va_copy(copy, ap);
        size_t room = tb->cap - tb->len;
        int n = vsnprintf(tb->text ? tb->text + tb->len : NULL, room, fmt, copy);
        va_end(copy);
        if (n < 0)
            return;
        if ((size_t)n < room) {
            tb->len += (size_t)n;
            return;
        }
        size_t cap = tb->cap ? tb->cap * 2 : 4096;
        while (cap - tb->len <= (size_t)n)
            cap *= 2;
        char *grown = realloc(tb->text, cap);
        if (!grown) {
            fprintf(stderr, "diffgen: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        tb->text = grown;
        tb->cap = cap;
    }
}

static void tb_printf(textbuf_t *tb, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    tb_vprintf(tb, fmt, ap);
    va_end(ap);
}

static void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        fprintf(stderr, "diffgen: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

/* ------------------------------------------------------------- datatypes */

/* A datatype with its type map read back as one displacement per data byte. */
typedef struct {
    MPI_Datatype type;
    int owned; /* created here, so freed here */
    MPI_Aint lb, extent;
    int64_t size;
    int64_t *map; /* displacement of data byte k, in type map order */
    char desc[DESC_MAX];
} dtype_t;

/* Reads the type map through MPI_Pack: the source holds plane p of each
 * byte's own displacement, so packed byte k carries plane p of map[k]. */
static void dtype_read_map(dtype_t *d) {
    MPI_Aint tlb, text;
    MPI_Type_get_true_extent(d->type, &tlb, &text);
    d->map = xcalloc((size_t)d->size, sizeof *d->map);
    if (d->size == 0)
        return;
    if (text >= (MPI_Aint)1 << (8 * MAP_PLANES)) {
        fprintf(stderr, "diffgen: type %s too large to map\n", d->desc);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    unsigned char *src = xcalloc((size_t)text, 1);
    unsigned char *packed = xcalloc((size_t)d->size, 1);
    for (int plane = 0; plane < MAP_PLANES; plane++) {
        for (MPI_Aint i = 0; i < text; i++)
            src[i] = (unsigned char)(i >> (8 * plane));
        int pos = 0;
        MPI_Pack(src - tlb, 1, d->type, packed, (int)d->size, &pos, MPI_COMM_SELF);
        for (int64_t k = 0; k < d->size; k++)
            d->map[k] |= (int64_t)packed[k] << (8 * plane);
    }
    for (int64_t k = 0; k < d->size; k++)
        d->map[k] += tlb;
    free(src);
    free(packed);
}

/* Completes a descriptor whose type and desc are set. */
static dtype_t dtype_finish(MPI_Datatype t, int owned, const char *fmt, ...) {
    dtype_t d;
    memset(&d, 0, sizeof d);
    d.type = t;
    d.owned = owned;
    if (owned)
        MPI_Type_commit(&d.type);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d.desc, sizeof d.desc, fmt, ap);
    va_end(ap);
    int size = 0;
    MPI_Type_size(d.type, &size);
    d.size = size;
    MPI_Type_get_extent(d.type, &d.lb, &d.extent);
    dtype_read_map(&d);
    return d;
}

static void dtype_free(dtype_t *d) {
    if (d->owned && d->type != MPI_DATATYPE_NULL)
        MPI_Type_free(&d->type);
    free(d->map);
    memset(d, 0, sizeof *d);
}

/* A filetype usable in a view: displacements non-negative and strictly
 * increasing, and one copy spans less than the extent, so copies tiled at
 * the extent stay increasing. A type with no data and a positive extent is
 * an empty view: the rank takes part in collective calls and moves nothing. */
static int dtype_is_view_safe(const dtype_t *d) {
    if (d->size == 0)
        return d->extent > 0;
    if (d->size < 0 || d->extent <= 0 || d->map[0] < 0)
        return 0;
    for (int64_t k = 1; k < d->size; k++)
        if (d->map[k] <= d->map[k - 1])
            return 0;
    return d->map[d->size - 1] < d->map[0] + d->extent;
}

/* The first ETYPE_DENSE etypes have no gaps (a view of them alone is
 * contiguous); the last has. */
enum { ETYPE_COUNT = 5, ETYPE_DENSE = 4 };

/* The elementary types: byte, int, double, 3 ints, {int, double} resized. */
static void etypes_create(dtype_t *et) {
    et[0] = dtype_finish(MPI_BYTE, 0, "byte");
    et[1] = dtype_finish(MPI_INT, 0, "int");
    et[2] = dtype_finish(MPI_DOUBLE, 0, "double");
    MPI_Datatype t;
    MPI_Type_contiguous(3, MPI_INT, &t);
    et[3] = dtype_finish(t, 1, "int3");
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Datatype s, r;
    MPI_Type_create_struct(2, bl, disp, types, &s);
    /* An extent of 20 leaves a 4-byte gap after the double and an odd stride. */
    MPI_Type_create_resized(s, 0, 20, &r);
    MPI_Type_free(&s);
    et[4] = dtype_finish(r, 1, "intdbl20");
}

/* ------------------------------------------------------------- filetypes */

enum ft_kind {
    FT_CONTIG,
    FT_VECTOR,
    FT_HVECTOR,
    FT_INDEXED,
    FT_HINDEXED,
    FT_INDEXED_BLOCK,
    FT_STRUCT,
    FT_SUBARRAY,
    FT_RESIZED,
    FT_NESTED,
    FT_KINDS
};

/* Increasing block displacements (in units) with gaps of 0..max_gap units. */
static void increasing_blocks(rng_t *g, int count, const int *blens, int max_gap, int *disp) {
    int at = (int)rng_range(g, 0, max_gap);
    for (int i = 0; i < count; i++) {
        disp[i] = at;
        at += blens[i] + (int)rng_range(g, 0, max_gap);
    }
}

enum { MAX_BLOCKS = 6 }; /* blocks per indexed or struct filetype */

/* One constructor applied to base b, all choices from the shared stream. */
static dtype_t ft_wrap(rng_t *g, const dtype_t *b, int kind) {
    MPI_Datatype t;
    int count = (int)rng_range(g, 1, MAX_BLOCKS);
    int blens[MAX_BLOCKS], disp[MAX_BLOCKS];
    MPI_Aint bdisp[MAX_BLOCKS];
    for (int i = 0; i < count; i++)
        blens[i] = (int)rng_range(g, rng_percent(g, 15) ? 0 : 1, 3);
    blens[0] = blens[0] ? blens[0] : 1;
    switch (kind) {
    case FT_CONTIG: {
        int n = (int)rng_range(g, 1, 6);
        MPI_Type_contiguous(n, b->type, &t);
        return dtype_finish(t, 1, "contig(%d,%s)", n, b->desc);
    }
    case FT_VECTOR: {
        int bl = (int)rng_range(g, 1, 3), stride = bl + (int)rng_range(g, 0, 3);
        MPI_Type_vector(count, bl, stride, b->type, &t);
        return dtype_finish(t, 1, "vector(%d,%d,%d,%s)", count, bl, stride, b->desc);
    }
    case FT_HVECTOR: {
        int bl = (int)rng_range(g, 1, 3);
        MPI_Aint stride = bl * b->extent + rng_range(g, 0, 13);
        MPI_Type_create_hvector(count, bl, stride, b->type, &t);
        return dtype_finish(t, 1, "hvector(%d,%d,%ld,%s)", count, bl, (long)stride, b->desc);
    }
    case FT_INDEXED:
        increasing_blocks(g, count, blens, 3, disp);
        MPI_Type_indexed(count, blens, disp, b->type, &t);
        return dtype_finish(t, 1, "indexed(%d,[%d@%d..%d@%d],%s)", count, blens[0], disp[0],
                            blens[count - 1], disp[count - 1], b->desc);
    case FT_HINDEXED:
        increasing_blocks(g, count, blens, 3, disp);
        for (int i = 0; i < count; i++)
            bdisp[i] = disp[i] * b->extent + rng_range(g, 0, 2) * (i > 0);
        /* Keep block i+1 past the end of block i after the byte jitter. */
        for (int i = 1; i < count; i++)
            if (bdisp[i] < bdisp[i - 1] + blens[i - 1] * b->extent)
                bdisp[i] = bdisp[i - 1] + blens[i - 1] * b->extent;
        MPI_Type_create_hindexed(count, blens, bdisp, b->type, &t);
        return dtype_finish(t, 1, "hindexed(%d,[%d@%ld..],%s)", count, blens[0], (long)bdisp[0],
                            b->desc);
    case FT_INDEXED_BLOCK: {
        int bl = (int)rng_range(g, 1, 3);
        for (int i = 0; i < count; i++)
            blens[i] = bl;
        increasing_blocks(g, count, blens, 2, disp);
        MPI_Type_create_indexed_block(count, bl, disp, b->type, &t);
        return dtype_finish(t, 1, "indexed_block(%d,%d,[%d..%d],%s)", count, bl, disp[0],
                            disp[count - 1], b->desc);
    }
    case FT_STRUCT: {
        MPI_Datatype types[MAX_BLOCKS];
        MPI_Aint at = rng_range(g, 0, 5);
        for (int i = 0; i < count; i++) {
            types[i] = b->type;
            bdisp[i] = at;
            at += blens[i] * b->extent + rng_range(g, 0, 9);
        }
        MPI_Type_create_struct(count, blens, bdisp, types, &t);
        return dtype_finish(t, 1, "struct(%d,[%d@%ld..],%s)", count, blens[0], (long)bdisp[0],
                            b->desc);
    }
    case FT_SUBARRAY: {
        int ndims = (int)rng_range(g, 2, 3), sizes[3], subs[3], starts[3];
        int order = rng_percent(g, 70) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        for (int d = 0; d < ndims; d++) {
            sizes[d] = (int)rng_range(g, 1, 5);
            subs[d] = (int)rng_range(g, 1, sizes[d]);
            starts[d] = (int)rng_range(g, 0, sizes[d] - subs[d]);
        }
        MPI_Type_create_subarray(ndims, sizes, subs, starts, order, b->type, &t);
        return dtype_finish(t, 1, "subarray(%c,%dx%dx%d/%dx%dx%d@%d.%d.%d,%s)",
                            order == MPI_ORDER_C ? 'C' : 'F', sizes[0], sizes[1],
                            ndims > 2 ? sizes[2] : 1, subs[0], subs[1], ndims > 2 ? subs[2] : 1,
                            starts[0], starts[1], ndims > 2 ? starts[2] : 0, b->desc);
    }
    default: { /* FT_RESIZED: same lower bound, extent grown by a gap */
        MPI_Aint extent = b->extent + rng_range(g, 0, 24);
        MPI_Type_create_resized(b->type, b->lb, extent, &t);
        return dtype_finish(t, 1, "resized(%ld,%ld,%s)", (long)b->lb, (long)extent, b->desc);
    }
    }
}

/* A random view-safe filetype built from etype e (nested 2 levels for
 * FT_NESTED). Identical on every rank: all choices come from the shared
 * stream, and validity depends only on them. */
static dtype_t ft_build(rng_t *g, const dtype_t *e) {
    int kind = (int)rng_range(g, 0, FT_KINDS - 1);
    dtype_t d;
    if (kind == FT_NESTED) {
        dtype_t inner = ft_wrap(g, e, (int)rng_range(g, 0, FT_NESTED - 1));
        d = ft_wrap(g, &inner, (int)rng_range(g, 0, FT_NESTED - 1));
        dtype_free(&inner);
    } else {
        d = ft_wrap(g, e, kind);
    }
    if (dtype_is_view_safe(&d) && d.extent <= FT_MAX_EXTENT)
        return d;
    dtype_free(&d);
    MPI_Datatype t;
    MPI_Type_contiguous(2, e->type, &t);
    return dtype_finish(t, 1, "contig(2,%s)", e->desc);
}

/* How the ranks split the file in one view epoch. */
enum split_kind {
    SPLIT_TILE_DISP, /* filetype resized to nprocs tiles, per-rank displacement */
    SPLIT_TILE_LB,   /* filetype shifted inside nprocs tiles, same displacement */
    SPLIT_DARRAY,    /* distributed array over the etype */
    SPLIT_ROWS,      /* subarray: each rank owns a band of rows */
    SPLIT_SHARED,    /* same view everywhere: read-only epoch */
    SPLIT_BANDS,     /* contiguous view, each rank a band of the file */
    SPLIT_KINDS
};
static const char *const SPLIT_NAMES[SPLIT_KINDS] = {"tile_disp", "tile_lb", "darray",
                                                     "rows",      "shared",  "bands"};

/* A filetype with no data and the given extent: the view of a rank that
 * owns no block of its split. A type of zero blocks has extent 0, so it is
 * resized; the constructor varies (kind 0-2) as programs' do. */
static dtype_t ft_empty(const dtype_t *e, int kind, MPI_Aint extent) {
    static const char *const names[3] = {"indexed", "hindexed", "contig"};
    MPI_Datatype none, t;
    int blen = 1, disp = 0;
    MPI_Aint bdisp = 0;
    if (kind == 0)
        MPI_Type_indexed(0, &blen, &disp, e->type, &none);
    else if (kind == 1)
        MPI_Type_create_hindexed(0, &blen, &bdisp, e->type, &none);
    else
        MPI_Type_contiguous(0, e->type, &none);
    MPI_Type_create_resized(none, 0, extent, &t);
    MPI_Type_free(&none);
    return dtype_finish(t, 1, "resized(0,%ld,%s(0,%s))", (long)extent, names[kind], e->desc);
}

static dtype_t ft_tile_disp(const dtype_t *base, int nprocs) {
    MPI_Datatype t;
    MPI_Type_create_resized(base->type, base->lb, base->extent * nprocs, &t);
    return dtype_finish(t, 1, "resized(%ld,%ld,%s)", (long)base->lb, (long)base->extent * nprocs,
                        base->desc);
}

static dtype_t ft_tile_lb(const dtype_t *base, int rank, int nprocs) {
    MPI_Datatype shifted, t;
    int one = 1;
    MPI_Aint at = base->extent * rank;
    MPI_Type_create_hindexed(1, &one, &at, base->type, &shifted);
    MPI_Type_create_resized(shifted, base->lb, base->extent * nprocs, &t);
    MPI_Type_free(&shifted);
    return dtype_finish(t, 1, "resized(%ld,%ld,hindexed(1,[1@%ld],%s))", (long)base->lb,
                        (long)base->extent * nprocs, (long)at, base->desc);
}

/* Global size of one darray dimension over p ranks. Even: block sizes
 * divide evenly and a cyclic dimension holds a full round of blocks, so
 * every rank owns elements. Uneven: any size, so with fewer elements than
 * ranks (or than rounds of blocks) some ranks own none. */
static int darray_gsize(rng_t *g, int distrib, int p, int b, int uneven) {
    if (distrib == MPI_DISTRIBUTE_NONE)
        return (int)rng_range(g, 1, 4);
    if (distrib == MPI_DISTRIBUTE_CYCLIC) {
        int even = p * b * (int)rng_range(g, 1, 2) + (int)rng_range(g, 0, p * b - 1);
        return uneven ? (int)rng_range(g, 1, 2 * p * b) : even;
    }
    int even = p * (int)rng_range(g, 1, 3);
    return uneven ? (int)rng_range(g, 1, 3 * p) : even;
}

/* A distributed array over the etype; with uneven sizes some ranks may own
 * no element (their view is empty). */
static dtype_t ft_darray(rng_t *g, const dtype_t *e, int rank, int nprocs, int uneven) {
    int ndims = (int)rng_range(g, 1, 3);
    int psizes[3] = {0, 0, 0}, gsizes[3], distribs[3], dargs[3];
    MPI_Dims_create(nprocs, ndims, psizes);
    int order = rng_percent(g, 70) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
    char dims[96] = "";
    for (int d = 0; d < ndims; d++) {
        int p = psizes[d], pick = (int)rng_range(g, 0, 2);
        if (pick == 0 && p == 1) {
            distribs[d] = MPI_DISTRIBUTE_NONE;
            dargs[d] = MPI_DISTRIBUTE_DFLT_DARG;
        } else if (pick == 1) {
            distribs[d] = MPI_DISTRIBUTE_CYCLIC;
            dargs[d] = (int)rng_range(g, 1, 2);
        } else {
            distribs[d] = MPI_DISTRIBUTE_BLOCK;
            dargs[d] = MPI_DISTRIBUTE_DFLT_DARG;
        }
        gsizes[d] = darray_gsize(g, distribs[d], p, dargs[d] > 0 ? dargs[d] : 1, uneven);
        size_t used = strlen(dims);
        snprintf(dims + used, sizeof dims - used, "%s%d%c%d/%d", d ? "," : "", gsizes[d],
                 "NCB"[distribs[d] == MPI_DISTRIBUTE_NONE     ? 0
                       : distribs[d] == MPI_DISTRIBUTE_CYCLIC ? 1
                                                              : 2],
                 dargs[d] == MPI_DISTRIBUTE_DFLT_DARG ? 0 : dargs[d], p);
    }
    int64_t elements = 1;
    for (int d = 0; d < ndims; d++)
        elements *= gsizes[d];
    if (elements * e->extent > FT_MAX_EXTENT) { /* too big: one block per rank */
        ndims = 1;
        psizes[0] = nprocs;
        gsizes[0] = nprocs;
        distribs[0] = MPI_DISTRIBUTE_BLOCK;
        dargs[0] = MPI_DISTRIBUTE_DFLT_DARG;
        snprintf(dims, sizeof dims, "%dB0/%d", nprocs, nprocs);
    }
    MPI_Datatype t;
    MPI_Type_create_darray(nprocs, rank, ndims, gsizes, distribs, dargs, psizes, order, e->type,
                           &t);
    return dtype_finish(t, 1, "darray(%c,%s,%s)", order == MPI_ORDER_C ? 'C' : 'F', dims, e->desc);
}

/* Each of the first nbands ranks owns a band of rows of a 2-D array (a
 * subarray); the others own no row. MPI allows no subarray of zero rows,
 * so theirs is an empty type with the array's extent. */
static dtype_t ft_rows(rng_t *g, const dtype_t *e, int rank, int nbands, int empty_kind) {
    int band = (int)rng_range(g, 1, 3), cols = (int)rng_range(g, 1, 6);
    int sizes[2] = {band * nbands, cols};
    int subs[2] = {band, (int)rng_range(g, 1, cols)};
    int starts[2] = {band * rank, (int)rng_range(g, 0, cols - subs[1])};
    if (rank >= nbands)
        return ft_empty(e, empty_kind, (MPI_Aint)sizes[0] * sizes[1] * e->extent);
    MPI_Datatype t;
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, e->type, &t);
    return dtype_finish(t, 1, "subarray(C,%dx%d/%dx%d@%d.%d,%s)", sizes[0], sizes[1], subs[0],
                        subs[1], starts[0], starts[1], e->desc);
}

/* A rank's part of a band split: k etypes in a row, so that the view is
 * contiguous when the etype has no gaps (split_part places the ranks' bands
 * one after another). */
static dtype_t ft_band(const dtype_t *e, int k) {
    MPI_Datatype t;
    MPI_Type_contiguous(k, e->type, &t);
    return dtype_finish(t, 1, "contig(%d,%s)", k, e->desc);
}

/* ------------------------------------------------------------- memtypes */

enum mt_kind { MT_ETYPE, MT_CONTIG, MT_VECTOR, MT_INDEXED, MT_STRUCT, MT_RESIZED, MT_KINDS };

/* Random slot order: a memory type need not be monotonic. */
static void shuffled_slots(rng_t *r, int n, int *slot) {
    for (int i = 0; i < n; i++)
        slot[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_range(r, 0, i);
        int tmp = slot[i];
        slot[i] = slot[j];
        slot[j] = tmp;
    }
}

/* A random memory type built from etype e, non-overlapping (reads into it
 * are legal), choices from the rank's own stream. */
static dtype_t mt_build(rng_t *r, const dtype_t *e, int lb_zero) {
    MPI_Datatype t;
    int kind = (int)rng_range(r, 0, MT_KINDS - 1);
    int n = (int)rng_range(r, 1, 4), slot[MAX_BLOCKS], blens[MAX_BLOCKS], disp[MAX_BLOCKS];
    switch (kind) {
    case MT_ETYPE:
        MPI_Type_dup(e->type, &t);
        return dtype_finish(t, 1, "%s", e->desc);
    case MT_CONTIG:
        MPI_Type_contiguous(n, e->type, &t);
        return dtype_finish(t, 1, "contig(%d,%s)", n, e->desc);
    case MT_VECTOR: {
        int bl = (int)rng_range(r, 1, 3), stride = bl + (int)rng_range(r, 1, 3);
        MPI_Type_vector(n, bl, stride, e->type, &t);
        return dtype_finish(t, 1, "vector(%d,%d,%d,%s)", n, bl, stride, e->desc);
    }
    case MT_INDEXED: { /* blocks of 2 slots each, filled in shuffled order */
        shuffled_slots(r, n, slot);
        for (int i = 0; i < n; i++) {
            blens[i] = (int)rng_range(r, 1, 2);
            disp[i] = slot[i] * 3;
        }
        MPI_Type_indexed(n, blens, disp, e->type, &t);
        return dtype_finish(t, 1, "indexed(%d,[%d@%d..],%s)", n, blens[0], disp[0], e->desc);
    }
    case MT_STRUCT: {
        MPI_Aint bdisp[MAX_BLOCKS];
        MPI_Datatype types[MAX_BLOCKS];
        shuffled_slots(r, n, slot);
        for (int i = 0; i < n; i++) {
            blens[i] = 1;
            types[i] = e->type;
            bdisp[i] = slot[i] * (e->extent + 5);
        }
        MPI_Type_create_struct(n, blens, bdisp, types, &t);
        return dtype_finish(t, 1, "struct(%d,[@%ld..],%s)", n, (long)bdisp[0], e->desc);
    }
    default: { /* MT_RESIZED: negative lower bound and a trailing gap */
        MPI_Datatype v;
        MPI_Type_vector(2, 1, 2, e->type, &v);
        MPI_Aint tlb, text;
        MPI_Type_get_true_extent(v, &tlb, &text);
        MPI_Aint lb = -rng_range(r, 0, 16), extent = text - lb + rng_range(r, 0, 16);
        if (lb_zero)
            lb = 0;
        MPI_Type_create_resized(v, lb, extent, &t);
        MPI_Type_free(&v);
        return dtype_finish(t, 1, "resized(%ld,%ld,vector(2,1,2,%s))", (long)lb, (long)extent,
                            e->desc);
    }
    }
}

/* A user buffer for count copies of a memory type, with a mask of the bytes
 * the type map covers. */
typedef struct {
    unsigned char *mem;  /* allocation */
    unsigned char *mask; /* 1 where the type map covers the byte */
    int64_t lo, len;     /* mem[i] is at displacement lo + i */
    const dtype_t *mt;
    int count;
} membuf_t;

static int64_t membuf_index(const membuf_t *b, int64_t k) {
    int64_t copy = k / b->mt->size, within = k % b->mt->size;
    return copy * b->mt->extent + b->mt->map[within] - b->lo;
}

static void membuf_init(membuf_t *b, const dtype_t *mt, int count) {
    b->mt = mt;
    b->count = count;
    int64_t lo = 0, hi = 1;
    if (mt->size > 0 && count > 0) {
        lo = INT64_MAX;
        hi = INT64_MIN;
        for (int64_t k = 0; k < mt->size; k++) {
            lo = mt->map[k] < lo ? mt->map[k] : lo;
            hi = mt->map[k] + 1 > hi ? mt->map[k] + 1 : hi;
        }
        hi += (int64_t)(count - 1) * mt->extent;
    }
    /* Guard bytes on both sides turn a stray store into a FAIL, not a crash. */
    lo -= MEM_GUARD;
    hi += MEM_GUARD;
    b->lo = lo;
    b->len = hi - lo;
    b->mem = xcalloc((size_t)b->len, 1);
    b->mask = xcalloc((size_t)b->len, 1);
    for (int64_t k = 0; k < mt->size * count; k++)
        b->mask[membuf_index(b, k)] = 1;
}

static void *membuf_base(const membuf_t *b) {
    return b->mem - b->lo;
}

static void membuf_free(membuf_t *b) {
    free(b->mem);
    free(b->mask);
}

/* ------------------------------------------------------------ generator */

/* A case's file left open, with the model's image of it. */
typedef struct {
    long casenum;
    char path[PATH_MAX];
    unsigned char *image;
    int64_t size;
} unclosed_t;

typedef struct {
    int rank, nprocs;
    uint64_t seed;
    long casenum;
    rng_t g; /* shared: same draws on every rank */
    rng_t r; /* this rank's own stream */
    char path[PATH_MAX];
    MPI_File fh;
    textbuf_t log;
    long failures;
    int op;
    int seek_end_by_set; /* emulate SEEK_END with SEEK_SET (see op_seek_end) */
    int trace;           /* copy log lines to stderr as they happen */
    /* Restrictions for MPICH's ROMIO, which cannot be the oracle otherwise:
     * it reports a full count for noncontiguous reads past the end of file
     * and misplaces data for memory types whose lower bound is negative. */
    int no_eof_reads;    /* no read runs past the end of file */
    int memtype_lb_zero; /* resized memory types keep lower bound 0 */
    int focus_agree;     /* weight the cases toward what the ranks must agree on */
    /* view */
    const dtype_t *etype;
    dtype_t ft;
    MPI_Offset disp;
    int split;
    int64_t view_cap; /* view bytes whose file offset stays below FILE_CAP */
    int64_t span;     /* view bytes the random offsets range over */
    int64_t pos;      /* individual file pointer, etypes */
    /* model */
    unsigned char *model; /* file contents at the last sync point */
    int64_t msize;        /* file size at the last sync point */
    unsigned char *mine;  /* bytes this rank wrote since then ... */
    unsigned char *wrote; /* ... and where */
    int64_t own_end;      /* end of this rank's writes since then */
    unsigned char *scratch_a, *scratch_b;
    const dtype_t *etypes;
    /* --leave-open: rank 0's record of the files left open */
    unclosed_t *unclosed;
    int n_unclosed;
} gen_t;

static void logline(gen_t *s, const char *fmt, ...) {
    size_t from = s->log.len;
    tb_printf(&s->log, "%d ", s->op);
    va_list ap;
    va_start(ap, fmt);
    tb_vprintf(&s->log, fmt, ap);
    va_end(ap);
    tb_printf(&s->log, "\n");
    if (s->trace) /* the log is written per case: this shows where a case hangs */
        fprintf(stderr, "trace case %ld rank %d: %s", s->casenum, s->rank, s->log.text + from);
}

/* A failed expectation: logged and counted, never fatal. */
static void fail(gen_t *s, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    logline(s, "FAIL %s", msg);
    if (s->failures++ < MAX_FAIL_PRINTS)
        fprintf(stderr, "diffgen: seed %llu case %ld rank %d op %d: FAIL %s\n",
                (unsigned long long)s->seed, s->casenum, s->rank, s->op, msg);
}

static const char *class_name(int rc) {
    static const struct {
        int cls;
        const char *name;
    } names[] = {
        {MPI_SUCCESS, "SUCCESS"},
        {MPI_ERR_ARG, "ERR_ARG"},
        {MPI_ERR_TYPE, "ERR_TYPE"},
        {MPI_ERR_COUNT, "ERR_COUNT"},
        {MPI_ERR_OTHER, "ERR_OTHER"},
        {MPI_ERR_INTERN, "ERR_INTERN"},
        {MPI_ERR_FILE, "ERR_FILE"},
        {MPI_ERR_ACCESS, "ERR_ACCESS"},
        {MPI_ERR_AMODE, "ERR_AMODE"},
        {MPI_ERR_BAD_FILE, "ERR_BAD_FILE"},
        {MPI_ERR_NO_SUCH_FILE, "ERR_NO_SUCH_FILE"},
        {MPI_ERR_FILE_EXISTS, "ERR_FILE_EXISTS"},
        {MPI_ERR_IO, "ERR_IO"},
        {MPI_ERR_NO_SPACE, "ERR_NO_SPACE"},
        {MPI_ERR_READ_ONLY, "ERR_READ_ONLY"},
        {MPI_ERR_UNSUPPORTED_DATAREP, "ERR_UNSUPPORTED_DATAREP"},
        {MPI_ERR_UNSUPPORTED_OPERATION, "ERR_UNSUPPORTED_OPERATION"},
        {MPI_ERR_NOT_SAME, "ERR_NOT_SAME"},
    };
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].cls == cls)
            return names[i].name;
    return "ERR_UNKNOWN_CLASS";
}

/* An MPI-IO call that must succeed here. */
static void expect_ok(gen_t *s, int rc, const char *what) {
    if (rc != MPI_SUCCESS)
        fail(s, "%s returned %s", what, class_name(rc));
}

static int64_t esize(const gen_t *s) {
    return s->etype->size;
}

/* An empty view: the rank's filetype holds no data. */
static int view_empty(const gen_t *s) {
    return s->ft.size == 0;
}

/* File offset of view byte p (p counts data bytes from the view's start). */
static int64_t view_offset(const gen_t *s, int64_t p) {
    int64_t tile = p / s->ft.size, within = p % s->ft.size;
    return s->disp + tile * s->ft.extent + s->ft.map[within];
}

/* View bytes from p on that lie below file offset limit (a prefix, as the
 * view's offsets increase). */
static int64_t view_bytes_below(const gen_t *s, int64_t p, int64_t n, int64_t limit) {
    int64_t k = 0;
    while (k < n && !view_empty(s) && view_offset(s, p + k) < limit)
        k++;
    return k;
}

/* Number of view bytes whose file offset lies below limit, however far the
 * view reaches (the offsets increase, so this is a binary search). */
static int64_t view_bytes_before(const gen_t *s, int64_t limit) {
    if (view_empty(s) || view_offset(s, 0) >= limit)
        return 0;
    int64_t lo = 0, hi = s->ft.size; /* view_offset(lo) < limit */
    while (view_offset(s, hi) < limit) {
        lo = hi;
        hi *= 2;
    }
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (view_offset(s, mid) < limit)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

/* ----------------------------------------------------------------- model */

static void model_reset(gen_t *s) {
    memset(s->model, 0, FILE_CAP);
    memset(s->mine, 0, FILE_CAP);
    memset(s->wrote, 0, FILE_CAP);
    s->msize = 0;
    s->own_end = 0;
}

/* Folds every rank's writes since the last sync point into the model. Must
 * follow a sync-barrier-sync; checks that no two ranks wrote the same byte. */
static void model_merge(gen_t *s) {
    long long end = s->own_end, all_end = 0;
    MPI_Allreduce(&end, &all_end, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (all_end > 0) {
        int n = (int)all_end;
        MPI_Allreduce(s->wrote, s->scratch_a, n, MPI_UNSIGNED_CHAR, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(s->mine, s->scratch_b, n, MPI_UNSIGNED_CHAR, MPI_BOR, MPI_COMM_WORLD);
        int64_t overlaps = 0;
        for (int i = 0; i < n; i++) {
            if (s->scratch_a[i] > 1)
                overlaps++;
            if (s->scratch_a[i])
                s->model[i] = s->scratch_b[i];
        }
        if (overlaps)
            fail(s, "generator: %lld bytes written by two ranks in one epoch", (long long)overlaps);
        memset(s->mine, 0, (size_t)n);
        memset(s->wrote, 0, (size_t)n);
    }
    if (all_end > s->msize)
        s->msize = all_end;
    s->own_end = 0;
}

/* The byte at file offset x as this rank must read it now. */
static unsigned char model_byte(const gen_t *s, int64_t x) {
    if (s->wrote[x])
        return s->mine[x];
    return x < s->msize ? s->model[x] : 0;
}

static int64_t known_size(const gen_t *s) {
    return s->own_end > s->msize ? s->own_end : s->msize;
}

/* sync-barrier-sync: afterwards every rank sees every write; the model is
 * brought up to date. */
static void settle(gen_t *s) {
    int rc1 = MPI_File_sync(s->fh);
    MPI_Barrier(MPI_COMM_WORLD);
    int rc2 = MPI_File_sync(s->fh);
    logline(s, "settle rc=%s,%s", class_name(rc1), class_name(rc2));
    expect_ok(s, rc1, "sync");
    expect_ok(s, rc2, "sync");
    model_merge(s);
}

/* ----------------------------------------------------------------- hints */

/* Hints that steer pario's collective paths, given per rank with values of
 * the rank's own: pario takes rank 0's value everywhere, since ranks taking
 * different paths wait for each other forever or place bytes wrongly.
 * OMPIO (4.1) ignores the romio_ and pario_ keys, and striping_unit outside
 * Lustre; it reads cb_nodes and cb_buffer_size, but only its aggregating
 * components use them, and the individual component the oracle runs with
 * aggregates nothing. So both back ends get the differing values (on OMPIO
 * they gave no hang and no failed check). */
static const char *const HINT_SWITCHES[] = {"romio_cb_write", "romio_cb_read",
                                            "pario_cb_write_behind"};
static const char *const SWITCH_VALUES[] = {"enable", "disable", "automatic"};
static const char *const BUFFER_SIZES[] = {"256", "4096", "65536", "1048576", "16777216"};
static const char *const STRIPING_UNITS[] = {"512", "4096", "65536", "1048576"};
#define COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

typedef struct {
    MPI_Info info;
    char desc[DESC_MAX];
} hints_t;

static void hint_set(hints_t *h, const char *key, const char *value) {
    MPI_Info_set(h->info, key, value);
    size_t used = strlen(h->desc);
    snprintf(h->desc + used, sizeof h->desc - used, "%s%s=%s", used ? "," : "", key, value);
}

static const char *pick(rng_t *r, const char *const *values, int n) {
    return values[rng_range(r, 0, n - 1)];
}

/* This rank's hints: each key with chance one half. */
static hints_t random_hints(gen_t *s) {
    hints_t h;
    h.desc[0] = 0;
    MPI_Info_create(&h.info);
    for (int i = 0; i < COUNT_OF(HINT_SWITCHES); i++)
        if (rng_percent(&s->r, 50))
            hint_set(&h, HINT_SWITCHES[i], pick(&s->r, SWITCH_VALUES, COUNT_OF(SWITCH_VALUES)));
    if (rng_percent(&s->r, 50))
        hint_set(&h, "cb_buffer_size", pick(&s->r, BUFFER_SIZES, COUNT_OF(BUFFER_SIZES)));
    if (rng_percent(&s->r, 50)) {
        char nodes[16];
        snprintf(nodes, sizeof nodes, "%d", (int)rng_range(&s->r, 1, s->nprocs + 1));
        hint_set(&h, "cb_nodes", nodes);
    }
    if (rng_percent(&s->r, 50))
        hint_set(&h, "striping_unit", pick(&s->r, STRIPING_UNITS, COUNT_OF(STRIPING_UNITS)));
    if (!h.desc[0])
        snprintf(h.desc, sizeof h.desc, "empty");
    return h;
}

/* Hints for a call that takes an MPI_Info: on some ranks random ones, on
 * the others none (MPI_INFO_NULL). */
static hints_t maybe_hints(gen_t *s, int pct) {
    if (rng_percent(&s->r, pct))
        return random_hints(s);
    hints_t none = {MPI_INFO_NULL, "none"};
    return none;
}

static void hints_free(hints_t *h) {
    if (h->info != MPI_INFO_NULL)
        MPI_Info_free(&h->info);
}

/* ------------------------------------------------------------ operations */

enum access_kind { AT_EXPLICIT, AT_INDIVIDUAL };

/* How a data access is issued: blocking call, nonblocking call completed by
 * MPI_Wait, or split collective (begin/end). */
enum call_mode { CALL_BLOCKING, CALL_NONBLOCKING, CALL_SPLIT, CALL_MODES };
static const char *const MODE_NAMES[CALL_MODES] = {"blocking", "nonblocking", "split"};

typedef struct {
    const char *name;
    int is_write, collective, at;
    int64_t off; /* etypes, for explicit-offset calls */
    int count;
    int may_cross_eof; /* a read that may run past the end of file */
    int mode;          /* enum call_mode */
} access_t;

static void fill_pattern(gen_t *s, membuf_t *b, int is_write) {
    uint64_t base = mix3(s->seed, (uint64_t)s->casenum, ((uint64_t)s->op << 8) | (uint64_t)s->rank);
    for (int64_t i = 0; i < b->len; i++) {
        unsigned char v = (unsigned char)mix64(base + (uint64_t)i);
        /* Reads start from a fixed pattern so that stray stores are visible. */
        b->mem[i] = is_write ? v : (unsigned char)(0xA5 ^ (i * 7));
    }
}

static int call_blocking(gen_t *s, const access_t *a, void *buf, MPI_Datatype t, MPI_Status *st) {
    MPI_Offset off = a->off;
    if (a->is_write) {
        if (a->at == AT_EXPLICIT)
            return a->collective ? MPI_File_write_at_all(s->fh, off, buf, a->count, t, st)
                                 : MPI_File_write_at(s->fh, off, buf, a->count, t, st);
        return a->collective ? MPI_File_write_all(s->fh, buf, a->count, t, st)
                             : MPI_File_write(s->fh, buf, a->count, t, st);
    }
    if (a->at == AT_EXPLICIT)
        return a->collective ? MPI_File_read_at_all(s->fh, off, buf, a->count, t, st)
                             : MPI_File_read_at(s->fh, off, buf, a->count, t, st);
    return a->collective ? MPI_File_read_all(s->fh, buf, a->count, t, st)
                         : MPI_File_read(s->fh, buf, a->count, t, st);
}

static int start_nonblocking(gen_t *s, const access_t *a, void *buf, MPI_Datatype t,
                             MPI_Request *req) {
    MPI_Offset off = a->off;
    if (a->is_write) {
        if (a->at == AT_EXPLICIT)
            return a->collective ? MPI_File_iwrite_at_all(s->fh, off, buf, a->count, t, req)
                                 : MPI_File_iwrite_at(s->fh, off, buf, a->count, t, req);
        return a->collective ? MPI_File_iwrite_all(s->fh, buf, a->count, t, req)
                             : MPI_File_iwrite(s->fh, buf, a->count, t, req);
    }
    if (a->at == AT_EXPLICIT)
        return a->collective ? MPI_File_iread_at_all(s->fh, off, buf, a->count, t, req)
                             : MPI_File_iread_at(s->fh, off, buf, a->count, t, req);
    return a->collective ? MPI_File_iread_all(s->fh, buf, a->count, t, req)
                         : MPI_File_iread(s->fh, buf, a->count, t, req);
}

/* Split collectives exist for collective calls only. */
static int call_split(gen_t *s, const access_t *a, void *buf, MPI_Datatype t, MPI_Status *st) {
    MPI_Offset off = a->off;
    int rc;
    if (a->is_write && a->at == AT_EXPLICIT) {
        rc = MPI_File_write_at_all_begin(s->fh, off, buf, a->count, t);
        return rc != MPI_SUCCESS ? rc : MPI_File_write_at_all_end(s->fh, buf, st);
    }
    if (a->is_write) {
        rc = MPI_File_write_all_begin(s->fh, buf, a->count, t);
        return rc != MPI_SUCCESS ? rc : MPI_File_write_all_end(s->fh, buf, st);
    }
    if (a->at == AT_EXPLICIT) {
        rc = MPI_File_read_at_all_begin(s->fh, off, buf, a->count, t);
        return rc != MPI_SUCCESS ? rc : MPI_File_read_at_all_end(s->fh, buf, st);
    }
    rc = MPI_File_read_all_begin(s->fh, buf, a->count, t);
    return rc != MPI_SUCCESS ? rc : MPI_File_read_all_end(s->fh, buf, st);
}

static int do_access_call(gen_t *s, const access_t *a, membuf_t *b, MPI_Status *st) {
    void *buf = membuf_base(b);
    MPI_Datatype t = b->mt->type;
    if (a->mode == CALL_SPLIT)
        return call_split(s, a, buf, t, st);
    if (a->mode == CALL_BLOCKING)
        return call_blocking(s, a, buf, t, st);
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = start_nonblocking(s, a, buf, t, &req);
    return rc != MPI_SUCCESS ? rc : MPI_Wait(&req, st);
}

static void record_write(gen_t *s, int64_t start, const membuf_t *b, int64_t n) {
    for (int64_t k = 0; k < n; k++) {
        int64_t x = view_offset(s, start + k);
        s->mine[x] = b->mem[membuf_index(b, k)];
        s->wrote[x] = 1;
        if (x + 1 > s->own_end)
            s->own_end = x + 1;
    }
}

/* Hashes the first got data bytes and checks them, and the memory the type
 * map does not cover, against expectations. */
static void check_read(gen_t *s, int64_t start, const membuf_t *b, int64_t got, uint64_t *hash,
                       char *show) {
    uint64_t h = FNV_START;
    int64_t bad = -1;
    show[0] = 0;
    for (int64_t k = 0; k < got; k++) {
        unsigned char v = b->mem[membuf_index(b, k)];
        h = fnv1a(h, &v, 1);
        if (k < SHOW_BYTES)
            sprintf(show + 2 * k, "%02x", v);
        int64_t x = view_offset(s, start + k);
        if (bad < 0 && x < FILE_CAP && v != model_byte(s, x))
            bad = k;
    }
    *hash = h;
    if (bad >= 0) {
        int64_t x = view_offset(s, start + bad);
        fail(s, "read byte %lld (file offset %lld) is %02x, expected %02x", (long long)bad,
             (long long)x, b->mem[membuf_index(b, bad)], model_byte(s, x));
    }
    for (int64_t i = 0; i < b->len; i++)
        if (!b->mask[i] && b->mem[i] != (unsigned char)(0xA5 ^ (i * 7))) {
            fail(s, "read changed memory outside the type map at buffer byte %lld", (long long)i);
            break;
        }
}

/* Largest count (copies of the memory type) of at most want, such that the
 * access from view byte start stays within the file cap and, when limit is
 * not negative, below file offset limit. */
static int clip_count(const gen_t *s, int64_t start, const dtype_t *mt, int want, int64_t limit) {
    if (mt->size == 0)
        return want;
    int64_t n = (int64_t)want * mt->size;
    if (start + n > s->view_cap)
        n = s->view_cap > start ? s->view_cap - start : 0;
    if (limit >= 0)
        n = view_bytes_below(s, start, n, limit);
    return (int)(n / mt->size);
}

/* Open MPI 4.1's OMPIO never completes a nonblocking or split collective
 * read that reaches the end of file, so only blocking reads run past it. */
static int read_may_cross_eof(const gen_t *s, const access_t *a) {
    return a->may_cross_eof && !s->no_eof_reads && a->mode == CALL_BLOCKING;
}

/* The count of an access through an empty view: reads at explicit offsets
 * ask for data and must find none. Writes of data through an empty view
 * are erroneous (pario refuses them, OMPIO drops the data and reports
 * success), and OMPIO's blocking read_all reports the full count read, so
 * accesses at the individual pointer move nothing. */
static int empty_view_count(const access_t *a, int want) {
    return !a->is_write && a->at == AT_EXPLICIT ? want : 0;
}

/* One data access by this rank: build a memory type, choose the count, call,
 * check and log. For collectives every rank calls this. Some calls of
 * either kind have count 0 (the rank takes part and moves nothing). */
static void run_access(gen_t *s, access_t a) {
    dtype_t mt = mt_build(&s->r, s->etype, s->memtype_lb_zero);
    int64_t room = MAX_XFER / mt.size;
    int want = (int)rng_range(&s->r, rng_percent(&s->r, 10) ? 0 : 1, room > 1 ? room : 1);
    if (rng_percent(&s->r, a.collective ? 25 : 5))
        want = 0;
    int64_t start_etypes = a.at == AT_EXPLICIT ? a.off : s->pos;
    int64_t start = start_etypes * esize(s);
    if (view_empty(s))
        a.count = empty_view_count(&a, want);
    else if (a.is_write)
        a.count = clip_count(s, start, &mt, want, -1);
    else
        a.count = clip_count(s, start, &mt, want, read_may_cross_eof(s, &a) ? -1 : known_size(s));
    int64_t n = (int64_t)a.count * mt.size;
    int64_t expect = a.is_write ? n : view_bytes_below(s, start, n, known_size(s));

    membuf_t b;
    membuf_init(&b, &mt, a.count);
    fill_pattern(s, &b, a.is_write);
    MPI_Status st;
    memset(&st, 0, sizeof st);
    int rc = do_access_call(s, &a, &b, &st);
    int got = -1;
    if (rc == MPI_SUCCESS)
        MPI_Get_count(&st, MPI_BYTE, &got);
    char args[64];
    if (a.at == AT_EXPLICIT)
        snprintf(args, sizeof args, "off=%lld", (long long)a.off);
    else
        snprintf(args, sizeof args, "pos=%lld", (long long)s->pos);

    if (a.is_write) {
        logline(s, "%s %s %s count=%d mt=%s rc=%s n=%d", a.name, MODE_NAMES[a.mode], args, a.count,
                mt.desc, class_name(rc), got);
        if (rc == MPI_SUCCESS && got != n)
            fail(s, "%s moved %d bytes, expected %lld", a.name, got, (long long)n);
        record_write(s, start, &b, n);
    } else {
        uint64_t h = FNV_START;
        char show[2 * SHOW_BYTES + 1] = "";
        if (got >= 0) /* an empty view has no byte to compare: the count says it */
            check_read(s, start, &b, view_empty(s) ? 0 : got < n ? got : n, &h, show);
        logline(s, "%s %s %s count=%d mt=%s rc=%s n=%d h=%016llx d=%s", a.name, MODE_NAMES[a.mode],
                args, a.count, mt.desc, class_name(rc), got, (unsigned long long)h, show);
        if (rc == MPI_SUCCESS && got != expect)
            fail(s, "%s moved %d bytes, expected %lld", a.name, got, (long long)expect);
    }
    expect_ok(s, rc, a.name);
    if (a.at == AT_INDIVIDUAL)
        s->pos += n / esize(s);
    membuf_free(&b);
    dtype_free(&mt);
}

static int64_t random_offset(gen_t *s) {
    return rng_range(&s->r, 0, s->span / esize(s));
}

/* One rank's part of an epoch's split. */
typedef struct {
    dtype_t ft;
    MPI_Offset shift; /* added to the displacement: per-rank tiles and bands */
    int64_t cap;      /* view bytes the rank may touch (its band); -1: up to FILE_CAP */
} part_t;

/* Which ranks own nothing in an epoch that leaves some out (bit r for rank
 * r, at most 64 ranks), from the shared stream: the draws are the same on
 * every rank whatever its own part. */
static uint64_t empty_ranks(gen_t *s, int leave_out) {
    uint64_t mask = 0;
    for (int i = 0; i < s->nprocs && i < 64; i++)
        if (rng_percent(&s->g, 40) && leave_out)
            mask |= (uint64_t)1 << i;
    return mask;
}

/* This rank's filetype for one epoch. In some epochs ranks are left out:
 * their filetype holds no data (tiles, bands), or the array has fewer
 * blocks or bands than there are ranks (darray, rows). */
static part_t split_part(gen_t *s, int split, const dtype_t *e, const dtype_t *base) {
    part_t p = {.shift = 0, .cap = -1};
    int leave_out = rng_percent(&s->g, s->focus_agree ? 60 : 25);
    uint64_t empty = empty_ranks(s, leave_out);
    int mine_empty = s->rank < 64 && (empty >> s->rank & 1);
    int empty_kind = (int)rng_range(&s->g, 0, 2);
    switch (split) {
    case SPLIT_TILE_DISP:
        p.shift = base->extent * s->rank;
        p.ft = mine_empty ? ft_empty(e, empty_kind, base->extent * s->nprocs)
                          : ft_tile_disp(base, s->nprocs);
        return p;
    case SPLIT_TILE_LB:
        p.ft = mine_empty ? ft_empty(e, empty_kind, base->extent * s->nprocs)
                          : ft_tile_lb(base, s->rank, s->nprocs);
        return p;
    case SPLIT_DARRAY:
        p.ft = ft_darray(&s->g, e, s->rank, s->nprocs, leave_out);
        return p;
    case SPLIT_ROWS: {
        int nbands = leave_out ? (int)rng_range(&s->g, 1, s->nprocs) : s->nprocs;
        p.ft = ft_rows(&s->g, e, s->rank, nbands, empty_kind);
        return p;
    }
    case SPLIT_BANDS: {
        int k = (int)rng_range(&s->g, 1, 4);
        int64_t len = rng_range(&s->g, 1, 512); /* etypes per band */
        p.shift = len * e->extent * s->rank;
        p.cap = len * e->size;
        p.ft = mine_empty ? ft_empty(e, empty_kind, k * e->extent) : ft_band(e, k);
        return p;
    }
    default:
        p.ft = ft_build(&s->g, e);
        return p;
    }
}

/* The part every rank falls back to when some rank's filetype is unusable:
 * tiles of the base type, no rank left out, no draw. */
static part_t fallback_part(gen_t *s, const dtype_t *base) {
    part_t p = {.shift = base->extent * s->rank, .cap = -1};
    p.ft = ft_tile_disp(base, s->nprocs);
    return p;
}

/* Sets the view's bookkeeping: file pointer reset, offsets the random
 * accesses range over. */
static void adopt_view(gen_t *s, const dtype_t *e, part_t p, MPI_Offset disp, int split) {
    dtype_free(&s->ft);
    s->ft = p.ft;
    s->etype = e;
    s->disp = disp;
    s->split = split;
    s->pos = 0;
    if (view_empty(s)) { /* no byte to touch; explicit reads still range */
        s->view_cap = 0;
        s->span = 64 * e->size;
        return;
    }
    int64_t last = p.ft.map[p.ft.size - 1] + 1;
    int64_t tiles = (FILE_CAP - disp - last) / p.ft.extent;
    s->view_cap = FILE_CAP - disp - last >= 0 ? (tiles + 1) * p.ft.size : 0;
    if (p.cap >= 0 && p.cap < s->view_cap)
        s->view_cap = p.cap;
    s->span = 3 * p.ft.size + 64 * e->size;
    if (s->span > s->view_cap)
        s->span = s->view_cap;
}

/* A new view after a sync point: split kind forced (and the etype one
 * without gaps, so that the view can be contiguous), or drawn when < 0. */
static void set_view_split(gen_t *s, int forced) {
    settle(s);
    int etypes = forced >= 0 ? ETYPE_DENSE : ETYPE_COUNT;
    const dtype_t *e = &s->etypes[rng_range(&s->g, 0, etypes - 1)];
    int split = (int)rng_range(&s->g, 0, SPLIT_KINDS - 1);
    if (forced >= 0)
        split = forced;
    MPI_Offset disp = rng_percent(&s->g, 30) ? 0 : rng_range(&s->g, 0, MAX_DISP);
    dtype_t base = ft_build(&s->g, e);
    part_t p = split_part(s, split, e, &base);
    /* A rank's filetype may be unusable (a darray in Fortran order need not
     * increase): then every rank falls back to tiling the base type. */
    int safe = dtype_is_view_safe(&p.ft), all_safe = 0;
    MPI_Allreduce(&safe, &all_safe, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all_safe) {
        logline(s, "set_view fallback from %s", safe ? "another rank's filetype" : p.ft.desc);
        dtype_free(&p.ft);
        split = SPLIT_TILE_DISP;
        p = fallback_part(s, &base);
    }
    dtype_free(&base);
    disp += p.shift;
    hints_t h = maybe_hints(s, s->focus_agree ? 60 : 0);
    int rc = MPI_File_set_view(s->fh, disp, e->type, p.ft.type, "native", h.info);
    logline(s, "set_view split=%s disp=%lld etype=%s ft=%s%s hints=%s rc=%s", SPLIT_NAMES[split],
            (long long)disp, e->desc, p.ft.desc, p.ft.size ? "" : " (empty)", h.desc,
            class_name(rc));
    expect_ok(s, rc, "set_view");
    hints_free(&h);
    adopt_view(s, e, p, disp, split);
}

static void op_set_view(gen_t *s) {
    set_view_split(s, -1);
}

static int writes_allowed(const gen_t *s) {
    return s->split != SPLIT_SHARED;
}

static void op_independent(gen_t *s) {
    enum { W_AT, R_AT, W_PTR, R_PTR, SEEK, POSITION, BYTE_OFFSET, KINDS };
    static const int weights[KINDS] = {25, 20, 15, 15, 10, 5, 5};
    int kind = rng_weighted(&s->r, weights, KINDS);
    if (!writes_allowed(s) && (kind == W_AT || kind == W_PTR))
        kind = kind == W_AT ? R_AT : R_PTR;
    /* Seeking in an empty view and asking where an offset lies have no
     * answer both back ends give (OMPIO ignores the seek). */
    if (view_empty(s) && (kind == SEEK || kind == BYTE_OFFSET))
        kind = R_AT;
    access_t a = {0};
    a.mode = rng_percent(&s->r, 30) ? CALL_NONBLOCKING : CALL_BLOCKING;
    switch (kind) {
    case W_AT:
    case R_AT:
        a.name = kind == W_AT ? "write_at" : "read_at";
        a.is_write = kind == W_AT;
        a.at = AT_EXPLICIT;
        a.off = random_offset(s);
        a.may_cross_eof = !writes_allowed(s);
        run_access(s, a);
        return;
    case W_PTR:
    case R_PTR:
        a.name = kind == W_PTR ? "write" : "read";
        a.is_write = kind == W_PTR;
        a.at = AT_INDIVIDUAL;
        run_access(s, a);
        return;
    case SEEK: {
        int cur = rng_percent(&s->r, 50);
        MPI_Offset target = random_offset(s);
        MPI_Offset arg = cur ? target - s->pos : target;
        int rc = MPI_File_seek(s->fh, arg, cur ? MPI_SEEK_CUR : MPI_SEEK_SET);
        logline(s, "seek %s %lld rc=%s", cur ? "cur" : "set", (long long)arg, class_name(rc));
        expect_ok(s, rc, "seek");
        s->pos = target;
        return;
    }
    case POSITION: {
        MPI_Offset at = -1;
        int rc = MPI_File_get_position(s->fh, &at);
        logline(s, "get_position rc=%s pos=%lld", class_name(rc), (long long)at);
        expect_ok(s, rc, "get_position");
        if (rc == MPI_SUCCESS && at != s->pos)
            fail(s, "position %lld, expected %lld", (long long)at, (long long)s->pos);
        return;
    }
    default: {
        MPI_Offset off = random_offset(s), byte = -1;
        int rc = MPI_File_get_byte_offset(s->fh, off, &byte);
        logline(s, "get_byte_offset %lld rc=%s byte=%lld", (long long)off, class_name(rc),
                (long long)byte);
        expect_ok(s, rc, "get_byte_offset");
        int64_t want = view_offset(s, off * esize(s));
        if (rc == MPI_SUCCESS && byte != want)
            fail(s, "byte offset %lld, expected %lld", (long long)byte, (long long)want);
        return;
    }
    }
}

/* get_size after a collective write, every rank's call returned (a
 * barrier) but no sync between: pario counts every rank's part (a rank
 * publishes the part it keeps in memory before its call returns, and
 * get_size writes every published part; its other collective writes end
 * with an agreement). get_size is not collective, so without the barrier
 * a rank may ask before another rank's call even started; OMPIO's
 * individual component also returns from a collective write without
 * waiting for the other ranks. MPI leaves the size undefined before a
 * sync. The allreduce that finds the expected size comes after every
 * rank's get_size, so no later write can be counted. */
static void size_after_collective_write(gen_t *s) {
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset size = -1;
    int rc = MPI_File_get_size(s->fh, &size);
    long long end = s->own_end, all_end = 0;
    MPI_Allreduce(&end, &all_end, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    int64_t want = all_end > s->msize ? all_end : s->msize;
    logline(s, "get_size after write rc=%s size=%lld", class_name(rc), (long long)size);
    expect_ok(s, rc, "get_size");
    if (rc == MPI_SUCCESS && size != want)
        fail(s, "size after a collective write %lld, expected %lld", (long long)size,
             (long long)want);
}

enum { COLL_WRITE_AT, COLL_READ_AT, COLL_WRITE, COLL_READ, COLL_KINDS };

/* One collective access of the given kind; after a write, get_size with
 * chance size_pct. */
static void collective_access(gen_t *s, int kind, int size_pct) {
    static const char *const names[COLL_KINDS] = {"write_at_all", "read_at_all", "write_all",
                                                  "read_all"};
    access_t a = {0};
    a.name = names[kind];
    a.is_write = kind == COLL_WRITE_AT || kind == COLL_WRITE;
    a.collective = 1;
    /* Every rank must make the same kind of collective call. */
    static const int mode_weights[CALL_MODES] = {60, 20, 20};
    a.mode = rng_weighted(&s->g, mode_weights, CALL_MODES);
    a.at = kind == COLL_WRITE_AT || kind == COLL_READ_AT ? AT_EXPLICIT : AT_INDIVIDUAL;
    a.may_cross_eof = a.at == AT_EXPLICIT && !writes_allowed(s);
    if (a.at == AT_EXPLICIT)
        a.off = random_offset(s);
    run_access(s, a);
    if (a.is_write && rng_percent(&s->g, size_pct))
        size_after_collective_write(s);
}

static void op_collective(gen_t *s) {
    int kind = (int)rng_range(&s->g, 0, COLL_KINDS - 1);
    if (!writes_allowed(s) && (kind == COLL_WRITE_AT || kind == COLL_WRITE))
        kind++;
    collective_access(s, kind, s->focus_agree ? 70 : 30);
}

/* A read that may run past the end of file, while no rank writes. */
static void op_read_past_end(gen_t *s) {
    settle(s);
    access_t a = {0};
    a.name = "read_at_end";
    a.at = AT_EXPLICIT;
    a.may_cross_eof = 1;
    /* Start near the end of file, in view terms, so reads straddle it. */
    int64_t below = view_bytes_before(s, s->msize) / esize(s);
    a.off = rng_range(&s->r, below > 8 ? below - 8 : 0, below + 4);
    if (a.off * esize(s) > s->view_cap)
        a.off = 0;
    run_access(s, a);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void op_set_size(gen_t *s) {
    settle(s);
    int grow = rng_percent(&s->g, 50);
    MPI_Offset size = grow ? s->msize + rng_range(&s->g, 1, 5000) : rng_range(&s->g, 0, s->msize);
    if (size > FILE_CAP)
        size = FILE_CAP;
    int rc = MPI_File_set_size(s->fh, size);
    logline(s, "set_size %lld rc=%s", (long long)size, class_name(rc));
    expect_ok(s, rc, "set_size");
    if (size < s->msize)
        memset(s->model + size, 0, (size_t)(s->msize - size));
    s->msize = size;
    settle(s);
}

static void op_get_size(gen_t *s) {
    settle(s);
    MPI_Offset size = -1;
    int rc = MPI_File_get_size(s->fh, &size);
    logline(s, "get_size rc=%s size=%lld", class_name(rc), (long long)size);
    expect_ok(s, rc, "get_size");
    if (rc == MPI_SUCCESS && size != s->msize)
        fail(s, "size %lld, expected %lld", (long long)size, (long long)s->msize);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* SEEK_END: the standard puts the end of file at the first etype of the view
 * at or past the last byte of the file. Open MPI 4.1's OMPIO divides the
 * byte size of the file by the etype size instead and sometimes lands
 * elsewhere still, so with --seek-end-by-set the pointer is moved to the
 * standard's place with SEEK_SET. The log line is the same either way, so a
 * back end doing real SEEK_ENDs can be compared against OMPIO doing SETs. */
static void op_seek_end(gen_t *s) {
    settle(s);
    if (view_empty(s)) { /* see op_independent */
        logline(s, "seek_end skipped: empty view");
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    int64_t before = view_bytes_before(s, s->msize);
    int64_t eof = (before + esize(s) - 1) / esize(s);
    MPI_Offset arg = rng_range(&s->r, eof > 4 ? -4 : -eof, 4);
    int rc = s->seek_end_by_set ? MPI_File_seek(s->fh, eof + arg, MPI_SEEK_SET)
                                : MPI_File_seek(s->fh, arg, MPI_SEEK_END);
    MPI_Offset at = -1;
    int rc2 = MPI_File_get_position(s->fh, &at);
    logline(s, "seek_end %lld rc=%s pos=%lld (model: size %lld, end at etype %lld)", (long long)arg,
            class_name(rc), (long long)at, (long long)s->msize, (long long)eof);
    expect_ok(s, rc, "seek end");
    expect_ok(s, rc2, "get_position");
    s->pos = eof + arg;
    if (rc2 == MPI_SUCCESS && at != s->pos)
        fail(s, "position after seek end %lld, expected %lld", (long long)at, (long long)s->pos);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* New hints on every rank, different per rank (see random_hints). */
static void op_set_info(gen_t *s) {
    hints_t h = random_hints(s);
    int rc = MPI_File_set_info(s->fh, h.info);
    logline(s, "set_info %s rc=%s", h.desc, class_name(rc));
    expect_ok(s, rc, "set_info");
    hints_free(&h);
}

static void op_sync(gen_t *s) {
    int rc = MPI_File_sync(s->fh);
    logline(s, "sync rc=%s", class_name(rc));
    expect_ok(s, rc, "sync");
}

enum op_kind {
    OP_SET_VIEW,
    OP_INDEPENDENT,
    OP_COLLECTIVE,
    OP_SET_SIZE,
    OP_GET_SIZE,
    OP_SEEK_END,
    OP_READ_PAST_END,
    OP_SYNC,
    OP_SET_INFO,
    OP_KINDS
};

static void run_op(gen_t *s) {
    /* No set_info (nor hints at set_view) without --focus-agree: pario applies
     * its PARIO_HINT_ variables at open only, so program hints given later
     * would undo what the registrations that force a path set there. */
    static const int weights[OP_KINDS] = {12, 40, 22, 5, 5, 4, 5, 5, 0};
    /* More collective calls, views and hints, fewer independent calls. */
    static const int agree_weights[OP_KINDS] = {14, 26, 32, 4, 4, 3, 4, 5, 8};
    switch (rng_weighted(&s->g, s->focus_agree ? agree_weights : weights, OP_KINDS)) {
    case OP_SET_VIEW:
        op_set_view(s);
        break;
    case OP_INDEPENDENT:
        op_independent(s);
        break;
    case OP_COLLECTIVE:
        op_collective(s);
        break;
    case OP_SET_SIZE:
        op_set_size(s);
        break;
    case OP_GET_SIZE:
        op_get_size(s);
        break;
    case OP_SEEK_END:
        op_seek_end(s);
        break;
    case OP_READ_PAST_END:
        op_read_past_end(s);
        break;
    case OP_SET_INFO:
        op_set_info(s);
        break;
    default:
        op_sync(s);
        break;
    }
}

/* ------------------------------------------------------------------ case */

/* On a mismatch the model's image is kept beside the file as PATH.model, so
 * the two can be compared byte by byte. */
static void keep_model_image(const char *path, const unsigned char *image, int64_t msize) {
    char name[4096];
    snprintf(name, sizeof name, "%s.model", path);
    FILE *f = fopen(name, "wb");
    if (!f)
        return;
    if (msize > 0)
        fwrite(image, 1, (size_t)msize, f);
    fclose(f);
}

/* A striped file's logical bytes (stripe_image.h: pario's stripe driver,
 * run_diff.py --stripe), checked against the model's image; 0 when path is
 * not striped. The log line is the one a plain file gives. */
static int check_striped_file(gen_t *s, const char *path, const unsigned char *image,
                              int64_t msize) {
    stripe_image *layout = xcalloc(1, sizeof *layout);
    int striped = stripe_image_layout(path, layout);
    long long size = striped ? stripe_image_size(layout) : -1;
    unsigned char *bytes = size > 0 ? xcalloc((size_t)size, 1) : NULL;
    if (striped && size > 0)
        size = stripe_image_read(layout, bytes, (size_t)size);
    free(layout);
    if (!striped)
        return 0;
    if (size < 0) {
        fail(s, "cannot read the striped file %s", path);
        free(bytes);
        return 1;
    }
    uint64_t h = fnv1a(FNV_START, bytes ? bytes : image, (size_t)size);
    int64_t first_bad = -1;
    for (int64_t i = 0; i < size && i < msize && first_bad < 0; i++)
        first_bad = bytes[i] != image[i] ? i : -1;
    free(bytes);
    logline(s, "file size=%lld hash=%016llx", size, (unsigned long long)h);
    if (size != msize)
        fail(s, "file size %lld, expected %lld", size, (long long)msize);
    else if (h != fnv1a(FNV_START, image, (size_t)msize)) {
        keep_model_image(path, image, msize);
        fail(s, "file differs from the model first at byte %lld", (long long)first_bad);
    }
    return 1;
}

/* Rank 0 reads a case's file with plain stdio and checks it against the
 * model's image of it (size bytes). */
static void check_file(gen_t *s, const char *path, const unsigned char *image, int64_t msize) {
    if (check_striped_file(s, path, image, msize))
        return;
    FILE *f = fopen(path, "rb");
    if (!f) {
        fail(s, "cannot open %s at the end", path);
        return;
    }
    unsigned char *chunk = xcalloc(FINAL_CHUNK, 1);
    uint64_t h = FNV_START, want = FNV_START;
    int64_t size = 0, first_bad = -1;
    size_t got;
    while ((got = fread(chunk, 1, FINAL_CHUNK, f)) > 0) {
        h = fnv1a(h, chunk, got);
        for (size_t i = 0; i < got && size + (int64_t)i < msize; i++)
            if (first_bad < 0 && chunk[i] != image[size + (int64_t)i])
                first_bad = size + (int64_t)i;
        size += (int64_t)got;
    }
    fclose(f);
    free(chunk);
    want = fnv1a(want, image, (size_t)msize);
    logline(s, "file size=%lld hash=%016llx", (long long)size, (unsigned long long)h);
    if (size != msize)
        fail(s, "file size %lld, expected %lld", (long long)size, (long long)msize);
    else if (h != want) {
        keep_model_image(path, image, msize);
        fail(s, "file differs from the model first at byte %lld", (long long)first_bad);
    }
}

/* Rank 0 checks the closed file of the case. */
static void check_final_file(gen_t *s) {
    check_file(s, s->path, s->model, s->msize);
}

/* Appends every rank's records of the case to the log, rank by rank. */
static void flush_log(gen_t *s, FILE *log) {
    int len = (int)s->log.len;
    int *lens = s->rank == 0 ? xcalloc((size_t)s->nprocs, sizeof(int)) : NULL;
    int *displs = s->rank == 0 ? xcalloc((size_t)s->nprocs, sizeof(int)) : NULL;
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char *all = NULL;
    if (s->rank == 0) {
        int total = 0;
        for (int i = 0; i < s->nprocs; i++) {
            displs[i] = total;
            total += lens[i];
        }
        all = xcalloc((size_t)total + 1, 1);
    }
    MPI_Gatherv(s->log.text ? s->log.text : "", len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0,
                MPI_COMM_WORLD);
    if (s->rank == 0) {
        fprintf(log, "case %ld seed %llu nprocs %d\n", s->casenum, (unsigned long long)s->seed,
                s->nprocs);
        for (int i = 0; i < s->nprocs; i++) {
            fprintf(log, "rank %d\n", i);
            fwrite(all + displs[i], 1, (size_t)lens[i], log);
        }
        fflush(log);
    }
    free(all);
    free(lens);
    free(displs);
    s->log.len = 0;
}

/* The end of a case left open: collective writes through a view of
 * contiguous bands (writes pario keeps behind in memory when every rank
 * shares a node), then neither sync nor close. Erroneous, but common after
 * an error path: MPI_Finalize must leave every byte in the file, as OMPIO,
 * which writes at once, does. The model takes in the writes without a sync
 * point (its merge is bookkeeping only), and rank 0 keeps its image for the
 * check after MPI_Finalize. */
static void end_without_close(gen_t *s) {
    s->op++;
    set_view_split(s, SPLIT_BANDS);
    int writes = (int)rng_range(&s->g, 1, 3);
    for (int i = 0; i < writes; i++) {
        s->op++;
        collective_access(s, rng_percent(&s->g, 50) ? COLL_WRITE : COLL_WRITE_AT, 0);
    }
    model_merge(s);
    logline(s, "left open");
    if (s->rank == 0) {
        unclosed_t *u = &s->unclosed[s->n_unclosed++];
        u->casenum = s->casenum;
        snprintf(u->path, sizeof u->path, "%s", s->path);
        u->size = s->msize;
        u->image = xcalloc((size_t)s->msize, 1);
        memcpy(u->image, s->model, (size_t)s->msize);
    }
}

static void run_case(gen_t *s, const char *dir, FILE *log, int leave_open) {
    s->g = rng_seeded(s->seed, (uint64_t)s->casenum, 0);
    s->r = rng_seeded(s->seed, (uint64_t)s->casenum, (uint64_t)s->rank + 1);
    s->op = 0;
    snprintf(s->path, sizeof s->path, "%s/case%ld.dat", dir, s->casenum);
    model_reset(s);
    if (s->rank == 0)
        unlink(s->path);
    MPI_Barrier(MPI_COMM_WORLD);
    hints_t h = maybe_hints(s, s->focus_agree ? 80 : 30);
    int rc =
        MPI_File_open(MPI_COMM_WORLD, s->path, MPI_MODE_CREATE | MPI_MODE_RDWR, h.info, &s->fh);
    logline(s, "open hints=%s rc=%s", h.desc, class_name(rc));
    expect_ok(s, rc, "open");
    hints_free(&h);
    if (rc == MPI_SUCCESS) {
        MPI_File_set_errhandler(s->fh, MPI_ERRORS_RETURN);
        int ops = (int)rng_range(&s->g, MIN_OPS, MAX_OPS);
        /* The default view is shared by all ranks, so the first operation
         * sets a view that splits the file. */
        for (s->op = 1; s->op <= ops; s->op++) {
            if (s->op == 1)
                op_set_view(s);
            else
                run_op(s);
        }
        if (leave_open) {
            end_without_close(s);
        } else {
            settle(s);
            rc = MPI_File_close(&s->fh);
            logline(s, "close rc=%s", class_name(rc));
            expect_ok(s, rc, "close");
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (s->rank == 0 && !leave_open)
        check_final_file(s);
    flush_log(s, log);
    dtype_free(&s->ft);
}

/* Rank 0, after MPI_Finalize: every file left open holds every byte
 * written; the log gets the results. Open MPI's MPI_Finalize runs
 * MPI_COMM_SELF's attribute callbacks (where a drop-in may write what it
 * kept) first and then waits for every rank, so when it returns here every
 * rank is done. Returns the failures found. */
static long check_after_finalize(gen_t *s, FILE *log) {
    long before = s->failures;
    s->op = 0;
    for (int i = 0; i < s->n_unclosed; i++) {
        unclosed_t *u = &s->unclosed[i];
        s->casenum = u->casenum;
        s->log.len = 0;
        check_file(s, u->path, u->image, u->size);
        fprintf(log, "after finalize: case %ld\n", u->casenum);
        fwrite(s->log.text, 1, s->log.len, log);
        free(u->image);
    }
    return s->failures - before;
}

/* ------------------------------------------------------------------ main */

typedef struct {
    uint64_t seed;
    long first, last;
    const char *dir, *log;
    int seek_end_by_set, no_eof_reads, memtype_lb_zero, trace, focus_agree, leave_open;
} options_t;

static int parse_cases(const char *text, long *first, long *last) {
    char *end;
    *first = strtol(text, &end, 10);
    if (*end == 0) {
        *last = *first;
        return *first >= 0;
    }
    if (*end != '-')
        return 0;
    *last = strtol(end + 1, &end, 10);
    return *end == 0 && *first >= 0 && *last >= *first;
}

/* The flag named k, or NULL when k is no flag (an option with a value). */
static int *flag_named(options_t *o, const char *k) {
    const struct {
        const char *name;
        int *flag;
    } flags[] = {
        {"--seek-end-by-set", &o->seek_end_by_set}, {"--trace", &o->trace},
        {"--no-eof-reads", &o->no_eof_reads},       {"--memtype-lb-zero", &o->memtype_lb_zero},
        {"--focus-agree", &o->focus_agree},         {"--leave-open", &o->leave_open},
    };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (!strcmp(k, flags[i].name))
            return flags[i].flag;
    return NULL;
}

static int parse_options(int argc, char **argv, options_t *o) {
    int have_seed = 0, have_case = 0;
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int *flag = flag_named(o, k);
        if (flag) {
            *flag = 1;
            continue;
        }
        if (!v)
            return 0;
        i++;
        if (!strcmp(k, "--seed")) {
            o->seed = strtoull(v, NULL, 10);
            have_seed = 1;
        } else if (!strcmp(k, "--case") || !strcmp(k, "--cases")) {
            have_case = parse_cases(v, &o->first, &o->last);
        } else if (!strcmp(k, "--dir")) {
            o->dir = v;
        } else if (!strcmp(k, "--log")) {
            o->log = v;
        } else {
            return 0;
        }
    }
    return have_seed && have_case && o->dir;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    options_t o;
    gen_t s;
    memset(&s, 0, sizeof s);
    MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s.nprocs);
    if (!parse_options(argc, argv, &o)) {
        if (s.rank == 0)
            fprintf(stderr, "usage: diffgen [--seek-end-by-set] "
                            "[--no-eof-reads] "
                            "[--memtype-lb-zero] [--focus-agree] [--leave-open] [--trace] --seed S "
                            "(--case C | --cases A-B) --dir D [--log L]\n");
        MPI_Finalize();
        return 2;
    }
    char logpath[PATH_MAX];
    snprintf(logpath, sizeof logpath, "%s", o.log ? o.log : "");
    if (!o.log)
        snprintf(logpath, sizeof logpath, "%s/diffgen.log", o.dir);
    FILE *log = NULL;
    if (s.rank == 0) {
        log = fopen(logpath, "w");
        if (!log) {
            fprintf(stderr, "diffgen: cannot write %s\n", logpath);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        fprintf(stderr, "diffgen: MPI-IO from %s\n",
                dlsym(RTLD_DEFAULT, "pario_mpiio_active") ? "pario" : "the system");
    }
    dtype_t etypes[ETYPE_COUNT];
    etypes_create(etypes);
    s.etypes = etypes;
    s.seed = o.seed;
    s.seek_end_by_set = o.seek_end_by_set;
    s.no_eof_reads = o.no_eof_reads;
    s.trace = o.trace;
    s.memtype_lb_zero = o.memtype_lb_zero;
    s.focus_agree = o.focus_agree;
    s.model = xcalloc(FILE_CAP, 1);
    s.mine = xcalloc(FILE_CAP, 1);
    s.wrote = xcalloc(FILE_CAP, 1);
    s.scratch_a = xcalloc(FILE_CAP, 1);
    s.scratch_b = xcalloc(FILE_CAP, 1);
    s.unclosed = xcalloc((size_t)(o.last - o.first + 1), sizeof *s.unclosed);
    for (long c = o.first; c <= o.last; c++) {
        s.casenum = c;
        run_case(&s, o.dir, log, o.leave_open);
    }
    long failures = s.failures, all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < ETYPE_COUNT; i++)
        dtype_free(&etypes[i]);
    MPI_Finalize();
    if (s.rank == 0) {
        if (o.leave_open)
            all += check_after_finalize(&s, log);
        fprintf(log, "end failures=%ld\n", all);
        fclose(log);
    }
    free(s.model);
    free(s.mine);
    free(s.wrote);
    free(s.scratch_a);
    free(s.scratch_b);
    free(s.log.text);
    free(s.unclosed);
    return all ? 1 : 0;
}
