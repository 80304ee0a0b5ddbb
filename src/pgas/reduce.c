/* The computational collectives of UPC 1.3: reduce and prefix_reduce over
 * every C integer and floating type.
 *
 * src is walked in runs (a run: consecutive elements in one block on one
 * rank). Each rank folds the runs it owns in place in its segment. reduce:
 * with a commutative op a rank sends one partial result, else one per run;
 * dst's rank gathers them (MPI_Igatherv) and combines them in array order.
 * prefix_reduce: every rank gets every run's total (MPI_Iallgatherv),
 * computes the prefix before each of its runs in array order, scans its runs
 * into a buffer and writes it to dst (viewed like src) with memput's run
 * walk, so dst may start on any rank and phase. */
#include "pgas/pgas_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- per-type folding ---- */

/* acc = acc op x[0] op ... op x[n-1]; with out != NULL each running value
 * is stored in out[i] (an inclusive scan). */
typedef void (*fold_fn)(int op, void *acc, const void *x, uint64_t n, void *out,
                        pario_pgas_reduce_fn fn);

/* One op's loop. P is the type T's values are computed in (small unsigned
 * types in unsigned, so * never overflows a signed int). Elements are loaded
 * and stored with memcpy: a segment need not be aligned for every type
 * (MPI's allocation gives 8 bytes, long double wants 16). */
#define FOLD_LOOP(T, P, EXPR)                                                                      \
    for (uint64_t i = 0; i < n; i++) {                                                             \
        T xi;                                                                                      \
        memcpy(&xi, x + i * sizeof(T), sizeof(T));                                                 \
        P v = (P)xi, s = (P)a;                                                                     \
        a = (T)(EXPR);                                                                             \
        if (out)                                                                                   \
            memcpy(out + i * sizeof(T), &a, sizeof(T));                                            \
    }                                                                                              \
    break

#define INTEGER_OPS(T, P)                                                                          \
    case PARIO_PGAS_AND:                                                                           \
        FOLD_LOOP(T, P, s &v);                                                                     \
    case PARIO_PGAS_OR:                                                                            \
        FOLD_LOOP(T, P, s | v);                                                                    \
    case PARIO_PGAS_XOR:                                                                           \
        FOLD_LOOP(T, P, s ^ v);
#define FLOATING_OPS(T, P)

#define DEFINE_FOLD(NAME, T, P, KIND_OPS)                                                          \
    static void fold_##NAME(int op, void *accp, const void *xp, uint64_t n, void *outp,            \
                            pario_pgas_reduce_fn fn) {                                             \
        const unsigned char *x = xp;                                                               \
        unsigned char *out = outp;                                                                 \
        T a;                                                                                       \
        memcpy(&a, accp, sizeof a);                                                                \
        switch (op) {                                                                              \
        case PARIO_PGAS_ADD:                                                                       \
            FOLD_LOOP(T, P, s + v);                                                                \
        case PARIO_PGAS_MULT:                                                                      \
            FOLD_LOOP(T, P, s *v);                                                                 \
        case PARIO_PGAS_LOGAND:                                                                    \
            FOLD_LOOP(T, P, s &&v);                                                                \
        case PARIO_PGAS_LOGOR:                                                                     \
            FOLD_LOOP(T, P, s || v);                                                               \
        case PARIO_PGAS_MIN:                                                                       \
            FOLD_LOOP(T, P, v < s ? v : s);                                                        \
        case PARIO_PGAS_MAX:                                                                       \
            FOLD_LOOP(T, P, v > s ? v : s);                                                        \
            KIND_OPS(T, P)                                                                         \
        default:                                                                                   \
            for (uint64_t i = 0; i < n; i++) {                                                     \
                T xi;                                                                              \
                memcpy(&xi, x + i * sizeof(T), sizeof(T));                                         \
                fn(&a, &xi);                                                                       \
                if (out)                                                                           \
                    memcpy(out + i * sizeof(T), &a, sizeof(T));                                    \
            }                                                                                      \
        }                                                                                          \
        memcpy(accp, &a, sizeof a);                                                                \
    }

DEFINE_FOLD(char, signed char, int, INTEGER_OPS)
DEFINE_FOLD(uchar, unsigned char, unsigned, INTEGER_OPS)
DEFINE_FOLD(short, short, int, INTEGER_OPS)
DEFINE_FOLD(ushort, unsigned short, unsigned, INTEGER_OPS)
DEFINE_FOLD(int, int, int, INTEGER_OPS)
DEFINE_FOLD(uint, unsigned, unsigned, INTEGER_OPS)
DEFINE_FOLD(long, long, long, INTEGER_OPS)
DEFINE_FOLD(ulong, unsigned long, unsigned long, INTEGER_OPS)
DEFINE_FOLD(llong, long long, long long, INTEGER_OPS)
DEFINE_FOLD(ullong, unsigned long long, unsigned long long, INTEGER_OPS)
DEFINE_FOLD(float, float, float, FLOATING_OPS)
DEFINE_FOLD(double, double, double, FLOATING_OPS)
DEFINE_FOLD(ldouble, long double, long double, FLOATING_OPS)

typedef struct type_info {
    const char *name;
    uint32_t size;
    int floating;
    fold_fn fold;
} type_info;

static const type_info types[PARIO_PGAS_TYPE_COUNT] = {
    [PARIO_PGAS_CHAR] = {"signed char", sizeof(signed char), 0, fold_char},
    [PARIO_PGAS_UCHAR] = {"unsigned char", sizeof(unsigned char), 0, fold_uchar},
    [PARIO_PGAS_SHORT] = {"short", sizeof(short), 0, fold_short},
    [PARIO_PGAS_USHORT] = {"unsigned short", sizeof(unsigned short), 0, fold_ushort},
    [PARIO_PGAS_INT] = {"int", sizeof(int), 0, fold_int},
    [PARIO_PGAS_UINT] = {"unsigned", sizeof(unsigned), 0, fold_uint},
    [PARIO_PGAS_LONG] = {"long", sizeof(long), 0, fold_long},
    [PARIO_PGAS_ULONG] = {"unsigned long", sizeof(unsigned long), 0, fold_ulong},
    [PARIO_PGAS_LLONG] = {"long long", sizeof(long long), 0, fold_llong},
    [PARIO_PGAS_ULLONG] = {"unsigned long long", sizeof(unsigned long long), 0, fold_ullong},
    [PARIO_PGAS_FLOAT] = {"float", sizeof(float), 1, fold_float},
    [PARIO_PGAS_DOUBLE] = {"double", sizeof(double), 1, fold_double},
    [PARIO_PGAS_LDOUBLE] = {"long double", sizeof(long double), 1, fold_ldouble},
};

/* One reduction's parameters, checked. */
typedef struct reduction {
    const type_info *t;
    int op;
    pario_pgas_reduce_fn fn;
    pario_pgas_ptr src; /* viewed as shared [blk_size] T */
    uint64_t nelems;
} reduction;

static int commutative(const reduction *r) {
    return r->op != PARIO_PGAS_NONCOMM_FUNC;
}

/* acc = acc op x[0..n-1], or acc = x[0] op ... when it has no value yet. */
static void fold_into(const reduction *r, unsigned char *acc, int *has, const unsigned char *x,
                      uint64_t n) {
    if (n == 0)
        return;
    if (!*has) {
        memcpy(acc, x, r->t->size);
        *has = 1;
        x += r->t->size;
        n--;
    }
    r->t->fold(r->op, acc, x, n, NULL, r->fn);
}

static int check_op(pario_pgas *ctx, const char *what, pario_pgas_op op, pario_pgas_type type,
                    pario_pgas_reduce_fn fn) {
    if ((unsigned)type >= PARIO_PGAS_TYPE_COUNT)
        return pgas_fail(ctx, PARIO_ERR_ARG, "pgas: %s: unknown type %d", what, (int)type);
    if ((unsigned)op >= PARIO_PGAS_OP_COUNT)
        return pgas_fail(ctx, PARIO_ERR_ARG, "pgas: %s: unknown op %d", what, (int)op);
    int bitwise = op == PARIO_PGAS_AND || op == PARIO_PGAS_OR || op == PARIO_PGAS_XOR;
    if (bitwise && types[type].floating)
        return pgas_fail(ctx, PARIO_ERR_ARG, "pgas: %s: a bitwise op on the floating type %s", what,
                         types[type].name);
    if ((op == PARIO_PGAS_FUNC || op == PARIO_PGAS_NONCOMM_FUNC) && !fn)
        return pgas_fail(ctx, PARIO_ERR_ARG, "pgas: %s: a user op without a function", what);
    return PARIO_OK;
}

static int in_heaps(const pario_pgas *ctx, uint64_t addr, uint64_t bytes) {
    return addr >= ctx->sym_lo && addr <= ctx->local_hi && bytes <= ctx->local_hi - addr;
}

/* Every run of p over nelems elements that lies on the caller lies in the
 * heaps (each rank checks its own, so together they check all). */
static int check_my_runs(pario_pgas *ctx, const char *what, const char *name, pario_pgas_ptr p,
                         uint64_t nelems) {
    int rc = pgas_check_ptr(ctx, p, what);
    for (uint64_t i = 0; i < nelems && rc == PARIO_OK;) {
        pgas_run run = pgas_ptr_run_at(p, i, nelems);
        if (run.rank == (uint32_t)ctx->rank && !in_heaps(ctx, run.addr, run.count * p.elem_size))
            rc = pgas_fail(ctx, PARIO_ERR_ARG,
                           "pgas: %s: %s[%llu] on rank %d lies past the shared heaps", what, name,
                           (unsigned long long)i, ctx->rank);
        i += run.count;
    }
    return rc;
}

/* Runs of r->src on each rank: counts[rank] (each rank computes the same). */
static void count_runs(const reduction *r, int nranks, int *counts) {
    memset(counts, 0, sizeof(int) * (size_t)nranks);
    for (uint64_t i = 0; i < r->nelems;) {
        pgas_run run = pgas_ptr_run_at(r->src, i, r->nelems);
        counts[run.rank]++;
        i += run.count;
    }
}

/* Total of each of the caller's runs, in array order, into totals. */
static void fold_my_runs(pario_pgas *ctx, const reduction *r, unsigned char *totals) {
    size_t k = 0;
    for (uint64_t i = 0; i < r->nelems;) {
        pgas_run run = pgas_ptr_run_at(r->src, i, r->nelems);
        if (run.rank == (uint32_t)ctx->rank) {
            int has = 0;
            fold_into(r, totals + k++ * r->t->size, &has, ctx->base[ctx->rank] + run.addr,
                      run.count);
        }
        i += run.count;
    }
}

/* Byte counts and displacements of every rank's partials. */
static int partial_layout(pario_pgas *ctx, const char *what, const reduction *r, const int *runs,
                          int per_rank_one, int *bytes, int *displs, uint64_t *total) {
    uint64_t at = 0, size = r->t->size;
    for (int q = 0; q < ctx->nranks; q++) {
        uint64_t k = per_rank_one ? (runs[q] > 0) : (uint64_t)runs[q];
        if (k * size > INT_MAX || at > INT_MAX)
            return pgas_fail(ctx, PARIO_ERR_ARG, "pgas: %s: too many partial results (%llu)", what,
                             (unsigned long long)k);
        bytes[q] = (int)(k * size);
        displs[q] = (int)at;
        at += k * size;
    }
    *total = at;
    return at > INT_MAX
               ? pgas_fail(ctx, PARIO_ERR_ARG, "pgas: %s: partial results over 2 GiB", what)
               : PARIO_OK;
}

/* Working memory of one call: run counts, partial layout, partials. */
typedef struct work {
    int *runs, *bytes, *displs;
    unsigned char *mine, *all;
    uint64_t all_bytes;
} work;

static void work_free(work *w) {
    free(w->runs);
    free(w->bytes);
    free(w->displs);
    free(w->mine);
    free(w->all);
}

/* Lays out the partials (one per rank or one per run) and allocates. */
static int work_make(pario_pgas *ctx, const char *what, const reduction *r, int per_rank_one,
                     work *w) {
    size_t n = (size_t)ctx->nranks;
    w->runs = malloc(sizeof(int) * n);
    w->bytes = malloc(sizeof(int) * n);
    w->displs = malloc(sizeof(int) * n);
    if (!w->runs || !w->bytes || !w->displs)
        return pgas_fail(ctx, PARIO_ERR_NO_MEM, "pgas: %s: out of memory", what);
    count_runs(r, ctx->nranks, w->runs);
    int rc =
        partial_layout(ctx, what, r, w->runs, per_rank_one, w->bytes, w->displs, &w->all_bytes);
    if (rc != PARIO_OK)
        return rc;
    size_t mine = (size_t)w->runs[ctx->rank] * r->t->size + r->t->size;
    w->mine = malloc(mine);
    w->all = malloc((size_t)w->all_bytes + r->t->size);
    if (!w->mine || !w->all)
        return pgas_fail(ctx, PARIO_ERR_NO_MEM, "pgas: %s: out of memory for %llu bytes", what,
                         (unsigned long long)w->all_bytes);
    return PARIO_OK;
}

/* The caller's partials: its run totals, folded into one when commutative. */
static void my_partials(pario_pgas *ctx, const reduction *r, int per_rank_one, work *w) {
    fold_my_runs(ctx, r, w->mine);
    int k = w->runs[ctx->rank], has = 0;
    if (per_rank_one && k > 1) {
        unsigned char *acc = w->mine + (size_t)k * r->t->size; /* the spare slot */
        fold_into(r, acc, &has, w->mine, (uint64_t)k);
        memcpy(w->mine, acc, r->t->size);
    }
}

/* Folds every run total of w->all (rank-major) in array order into acc. */
static void combine_in_order(const reduction *r, int nranks, const work *w, unsigned char *acc,
                             int *has) {
    int *next = calloc((size_t)nranks, sizeof(int)); /* partials of each rank used */
    for (uint64_t i = 0; next && i < r->nelems;) {
        pgas_run run = pgas_ptr_run_at(r->src, i, r->nelems);
        const unsigned char *p =
            w->all + w->displs[run.rank] + (size_t)next[run.rank]++ * r->t->size;
        fold_into(r, acc, has, p, 1);
        i += run.count;
    }
    free(next);
}

/* ---- reduce ---- */

static int reduce_at_root(pario_pgas *ctx, const char *what, const reduction *r, pario_pgas_ptr dst,
                          work *w) {
    int one = commutative(r), root = (int)dst.rank;
    my_partials(ctx, r, one, w);
    MPI_Request req;
    int mrc = MPI_Igatherv(w->mine, w->bytes[ctx->rank], MPI_BYTE, w->all, w->bytes, w->displs,
                           MPI_BYTE, root, ctx->comm, &req);
    int rc = pgas_coll_mpi(ctx, what, mrc, &req);
    if (rc == PARIO_OK && ctx->rank == root) {
        unsigned char *acc = w->mine; /* done with it */
        int has = 0;
        if (one)
            fold_into(r, acc, &has, w->all, w->all_bytes / r->t->size);
        else
            combine_in_order(r, ctx->nranks, w, acc, &has);
        memcpy(ctx->base[ctx->rank] + dst.addr, acc, r->t->size);
    }
    return rc;
}

/* Checks shared by both calls; *r is the reduction when they pass. */
static int check_reduction(pario_pgas *ctx, const char *what, pario_pgas_ptr src, pario_pgas_op op,
                           pario_pgas_type type, uint64_t nelems, uint64_t blk_size,
                           pario_pgas_reduce_fn fn, reduction *r) {
    int rc = check_op(ctx, what, op, type, fn);
    if (rc != PARIO_OK)
        return rc;
    *r = (reduction){&types[type], op, fn, pario_pgas_ptr_retype(src, types[type].size, blk_size),
                     nelems};
    return check_my_runs(ctx, what, "src", r->src, nelems);
}

static uint64_t pack_op(pario_pgas_op op, pario_pgas_type type, int flags) {
    return (uint64_t)(unsigned)op | (uint64_t)(unsigned)type << 8 | (uint64_t)(unsigned)flags << 16;
}

/* The entry of both calls: every rank agrees on every argument. */
static int begin_reduction(pario_pgas *ctx, const char *what, int flags, int bad, uint64_t nelems,
                           uint64_t blk_size, pario_pgas_ptr dst, pario_pgas_ptr src,
                           uint64_t op_type_flags) {
    uint64_t args[8] = {nelems,    blk_size,     ((uint64_t)dst.rank << 32) | src.rank,
                        src.addr,  src.phase,    dst.addr,
                        dst.phase, op_type_flags};
    return pgas_coll_begin(ctx, what, flags, bad, args, 8);
}

int pario_pgas_all_reduce(pario_pgas *ctx, pario_pgas_ptr dst, pario_pgas_ptr src, pario_pgas_op op,
                          pario_pgas_type type, uint64_t nelems, uint64_t blk_size,
                          pario_pgas_reduce_fn fn, int flags) {
    const char *what = "pario_pgas_all_reduce";
    reduction r;
    int rc = nelems == 0 ? pgas_fail(ctx, PARIO_ERR_ARG, "pgas: %s: nothing to reduce", what)
                         : check_reduction(ctx, what, src, op, type, nelems, blk_size, fn, &r);
    if (rc == PARIO_OK)
        rc = pgas_check_ptr(ctx, dst, what);
    if (rc == PARIO_OK && dst.rank == (uint32_t)ctx->rank && !in_heaps(ctx, dst.addr, r.t->size))
        rc = pgas_fail(ctx, PARIO_ERR_ARG, "pgas: %s: dst lies past the shared heaps", what);
    work w = {0}; /* made before the agreement: a rank short of memory fails them all */
    if (rc == PARIO_OK)
        rc = work_make(ctx, what, &r, commutative(&r), &w);
    rc = begin_reduction(ctx, what, flags, rc != PARIO_OK, nelems, blk_size, dst, src,
                         pack_op(op, type, flags));
    if (rc == PARIO_OK)
        rc = pgas_coll_end(ctx, what, flags, reduce_at_root(ctx, what, &r, dst, &w));
    work_free(&w);
    return rc;
}

/* ---- prefix_reduce ---- */

/* The value before each of the caller's runs (pre, has_pre per run). */
static void prefixes_before_my_runs(pario_pgas *ctx, const reduction *r, const work *w,
                                    unsigned char *pre, int *has_pre) {
    size_t size = r->t->size, k = 0;
    unsigned char *acc = w->mine + (size_t)w->runs[ctx->rank] * size; /* spare slot */
    int has = 0, *next = calloc((size_t)ctx->nranks, sizeof(int));
    for (uint64_t i = 0; next && i < r->nelems;) {
        pgas_run run = pgas_ptr_run_at(r->src, i, r->nelems);
        if (run.rank == (uint32_t)ctx->rank) {
            memcpy(pre + k * size, acc, size);
            has_pre[k++] = has;
        }
        const unsigned char *total = w->all + w->displs[run.rank] + (size_t)next[run.rank]++ * size;
        fold_into(r, acc, &has, total, 1);
        i += run.count;
    }
    free(next);
}

/* Scans the caller's runs into out (their elements in array order) and
 * writes them to dst's view. */
static int scan_and_write(pario_pgas *ctx, const reduction *r, pario_pgas_ptr dst,
                          const unsigned char *pre, const int *has_pre, unsigned char *out) {
    size_t size = r->t->size, k = 0;
    pario_pgas_array view = {.base = dst, .count = r->nelems, .id = 1, .origin = PARIO_PGAS_ALL};
    PGAS_STACK_BATCH(b);
    int rc = PARIO_OK;
    for (uint64_t i = 0; i < r->nelems && rc == PARIO_OK;) {
        pgas_run run = pgas_ptr_run_at(r->src, i, r->nelems);
        if (run.rank == (uint32_t)ctx->rank) {
            const unsigned char *x = ctx->base[ctx->rank] + run.addr;
            unsigned char acc[sizeof(long double)];
            uint64_t n = run.count, skip = 0;
            if (has_pre[k]) {
                memcpy(acc, pre + k * size, size);
            } else { /* the first run: it starts the scan */
                memcpy(acc, x, size);
                memcpy(out, x, size);
                skip = 1;
            }
            r->t->fold(r->op, acc, x + skip * size, n - skip, out + skip * size, r->fn);
            rc = pgas_memput_runs(ctx, &b, &view, i, out, n);
            out += n * size;
            k++;
        }
        i += run.count;
    }
    int frc = pgas_batch_finish(ctx, &b);
    return rc != PARIO_OK ? rc : frc;
}

/* The caller's elements of r->src. */
static uint64_t my_elements(pario_pgas *ctx, const reduction *r) {
    uint64_t mine = 0;
    for (uint64_t i = 0; i < r->nelems;) {
        pgas_run run = pgas_ptr_run_at(r->src, i, r->nelems);
        if (run.rank == (uint32_t)ctx->rank)
            mine += run.count;
        i += run.count;
    }
    return mine;
}

/* Memory of a prefix reduction on top of the partials. */
typedef struct prefix_work {
    work w;
    unsigned char *pre, *out;
    int *has_pre;
} prefix_work;

static void prefix_free(prefix_work *p) {
    work_free(&p->w);
    free(p->pre);
    free(p->out);
    free(p->has_pre);
}

static int prefix_make(pario_pgas *ctx, const char *what, const reduction *r, prefix_work *p) {
    int rc = work_make(ctx, what, r, 0, &p->w);
    if (rc != PARIO_OK)
        return rc;
    size_t k = (size_t)p->w.runs[ctx->rank], size = r->t->size;
    p->pre = malloc(k * size + 1);
    p->has_pre = malloc(k * sizeof(int) + 1);
    p->out = malloc((size_t)my_elements(ctx, r) * size + 1);
    if (!p->pre || !p->has_pre || !p->out)
        return pgas_fail(ctx, PARIO_ERR_NO_MEM, "pgas: %s: out of memory", what);
    return PARIO_OK;
}

static int prefix_everywhere(pario_pgas *ctx, const char *what, const reduction *r,
                             pario_pgas_ptr dst, prefix_work *p) {
    fold_my_runs(ctx, r, p->w.mine);
    MPI_Request req;
    work *w = &p->w;
    int mrc = MPI_Iallgatherv(w->mine, w->bytes[ctx->rank], MPI_BYTE, w->all, w->bytes, w->displs,
                              MPI_BYTE, ctx->comm, &req);
    int rc = pgas_coll_mpi(ctx, what, mrc, &req);
    if (rc != PARIO_OK)
        return rc;
    prefixes_before_my_runs(ctx, r, w, p->pre, p->has_pre);
    return scan_and_write(ctx, r, dst, p->pre, p->has_pre, p->out);
}

int pario_pgas_all_prefix_reduce(pario_pgas *ctx, pario_pgas_ptr dst, pario_pgas_ptr src,
                                 pario_pgas_op op, pario_pgas_type type, uint64_t nelems,
                                 uint64_t blk_size, pario_pgas_reduce_fn fn, int flags) {
    const char *what = "pario_pgas_all_prefix_reduce";
    reduction r;
    prefix_work p = {0};
    int rc = check_reduction(ctx, what, src, op, type, nelems, blk_size, fn, &r);
    pario_pgas_ptr d = pario_pgas_ptr_retype(dst, types[rc == PARIO_OK ? type : 0].size, blk_size);
    if (rc == PARIO_OK)
        rc = check_my_runs(ctx, what, "dst", d, nelems);
    if (rc == PARIO_OK) /* before the agreement: a rank short of memory fails them all */
        rc = prefix_make(ctx, what, &r, &p);
    rc = begin_reduction(ctx, what, flags, rc != PARIO_OK, nelems, blk_size, dst, src,
                         pack_op(op, type, flags));
    if (rc == PARIO_OK && nelems > 0)
        rc = prefix_everywhere(ctx, what, &r, d, &p);
    prefix_free(&p);
    /* others may write into the caller's part of dst: OUT_MYSYNC waits for all */
    int out_flags = flags & ~PARIO_PGAS_OUT_MYSYNC;
    return pgas_coll_end(ctx, what, out_flags, rc);
}
