/* STREAM (copy, scale, add, triad on arrays of doubles) over pgas shared
 * arrays, the experiment of seed 000. Every rank works on the elements with
 * its affinity (upc_forall (...; &a[i])), reached by one of four access
 * methods, next to plain C arrays and plain MPI:
 *
 *   ptr      element by element, a[i] found from the index (its slot once
 *            per index for the arrays of one layout), read and written with
 *            the unchecked typed accesses (UPC's x = a[i])
 *   walk     the same with a pointer-to-shared stepped with p + 1
 *   checked  walk through the checked get/put (every access tests its pointer)
 *   cast     one cast of each array's local part (pario_pgas_cast_part, UPC's
 *            cast of &a[MYTHREAD]), then plain C loops; shifted: one cast
 *            per owned block (the next rank's block is another part)
 *   bulk  memget / memput of each owned block in chunks, computed locally
 *   c     plain C arrays, one process per rank
 *   mpi   each rank its part in an MPI window (MPI_Get for the neighbour)
 *
 * for block factors 1, 128 and the largest ([*]). The shifted variants read
 * the first operand one block further on, i.e. from the next rank's block
 * (across nodes under PARIO_NODE_SIZE=1); they add the kernel "fetch" (the
 * neighbour's block copied into a local buffer: memget against MPI_Get +
 * MPI_Win_flush of the same chunks).
 *
 * Repetition r runs every configuration once before repetition r + 1 starts.
 * Each repetition initialises the arrays (a = 1, b = 2, c = 0), runs the four
 * kernels once, each timed between barriers on every rank, and checks the
 * result as STREAM does (every element against the scalar recurrence). Once
 * per configuration, before the timed repetitions, a triad on index-dependent
 * values is checked element by element (wrong indexing cannot pass).
 * Output: one JSON object per configuration and kernel on rank 0; the exit
 * status is 1 when any check failed.
 *
 * Usage: pgas_bench_stream [-n ELEMS] [-r REPS] [-m SLOW_ELEMS] [-M METHODS]
 *   ELEMS       elements per array (default: STREAM's rule, the three
 *               arrays together at least 4 x the last-level cache this
 *               machine reports, and at least 6291456)
 *   SLOW_ELEMS  elements of the arrays of the element-wise shifted runs
 *               across nodes, where every access is a round trip
 *               (default 65536)
 *   METHODS     comma-separated methods to run (default all), e.g. cast,c */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_stats.h"
#include "pario/pgas.h"

#define STREAM_SCALAR 3.0
/* Doubles per bulk transfer and per MPI_Get: 256 KiB, a buffer that stays
 * in the second-level cache while it is computed on. */
#define CHUNK_ELEMS ((uint64_t)32768)
/* The smallest default array (3 x 48 MiB); larger when the last-level cache
 * is larger than 36 MiB. */
#define MIN_DEFAULT_ELEMS ((uint64_t)6291456)
/* Default sizes are multiples of 128 x every rank count up to 8 (840 is the
 * least common multiple of 1..8), so every run of one machine has the same. */
#define ELEMS_QUANTUM ((uint64_t)128 * 840)
#define DEFAULT_SLOW_ELEMS ((uint64_t)65536)
#define DEFAULT_REPS 5
#define MAX_REPS 64
/* STREAM's tolerance for the average relative error of doubles. */
#define STREAM_EPSILON 1e-13

enum kernel { K_COPY, K_SCALE, K_ADD, K_TRIAD, K_FETCH, NKERNELS };
static const char *const kernel_name[NKERNELS] = {"copy", "scale", "add", "triad", "fetch"};
/* Doubles each kernel moves per element (STREAM's counting). */
static const int kernel_words[NKERNELS] = {2, 2, 3, 3, 1};

enum method { M_PTR, M_WALK, M_CHECKED, M_CAST, M_BULK, M_C, M_MPI, NMETHODS };
static const char *const method_name[NMETHODS] = {"ptr",  "walk", "checked", "cast",
                                                  "bulk", "c",    "mpi"};

enum { ARR_A, ARR_B, ARR_C, NARRAYS };
/* Which arrays a kernel writes (dst) and reads (u, then v; -1 = none). The
 * shifted variants read u one block further on. */
typedef struct operands {
    int dst, u, v;
} operands;
static const operands kernel_ops[NKERNELS] = {
    {ARR_C, ARR_A, -1},    /* copy:  c = a */
    {ARR_B, ARR_C, -1},    /* scale: b = s c */
    {ARR_C, ARR_A, ARR_B}, /* add:   c = a + b */
    {ARR_A, ARR_B, ARR_C}, /* triad: a = b + s c */
    {-1, ARR_B, -1},       /* fetch: u into a local buffer */
};

/* The three shared arrays of one block factor. */
typedef struct shared_set {
    pario_pgas_array arr[NARRAYS];
    uint64_t block; /* resolved block factor */
    const char *block_name;
    uint64_t count;
} shared_set;

/* The plain arrays of one rank: c (malloc) or mpi (one window over a|b|c). */
typedef struct plain_set {
    double *mem; /* NARRAYS * n doubles */
    uint64_t n;  /* this rank's elements */
    MPI_Win win;
} plain_set;

typedef struct config {
    int method;
    int shifted;
    shared_set *set; /* shared methods */
    plain_set *plain;
} config;

typedef struct bench {
    pario_pgas *ctx;
    int rank, nranks;
    int reps;
    unsigned methods; /* bit m: method m runs (-M) */
    double *buf[3]; /* CHUNK_ELEMS each: u, v, dst of bulk and fetch */
    int failures;
} bench;

/* ---- the kernels on local memory (plain C, cast, bulk and mpi share them) ---- */

static void kernel_local(int k, double *restrict d, const double *restrict u,
                         const double *restrict v, uint64_t n) {
    const double s = STREAM_SCALAR;
    switch (k) {
    case K_COPY:
        for (uint64_t j = 0; j < n; j++)
            d[j] = u[j];
        break;
    case K_SCALE:
        for (uint64_t j = 0; j < n; j++)
            d[j] = s * u[j];
        break;
    case K_ADD:
        for (uint64_t j = 0; j < n; j++)
            d[j] = u[j] + v[j];
        break;
    case K_TRIAD:
        for (uint64_t j = 0; j < n; j++)
            d[j] = u[j] + s * v[j];
        break;
    default:
        break;
    }
}

static inline double combine(int k, double x, double y) {
    switch (k) {
    case K_SCALE:
        return STREAM_SCALAR * x;
    case K_ADD:
        return x + y;
    case K_TRIAD:
        return x + STREAM_SCALAR * y;
    default:
        return x;
    }
}

/* Index of the u operand of element i: one block further on when shifted. */
static inline uint64_t shifted_index(const shared_set *s, uint64_t i, int shifted) {
    if (!shifted)
        return i;
    uint64_t j = i + s->block;
    return j >= s->count ? j - s->count : j;
}

/* ---- shared-array methods: one owned run ---- */

/* The element-wise loops are written once per kernel and shift (k and
 * shifted are constants where these always-inline loops are called), as a
 * UPC program writes one loop per kernel: no test of the kernel per element. */
#define ELEMENT_LOOP static inline __attribute__((always_inline)) int

static int reads_v(int k) {
    return k == K_ADD || k == K_TRIAD;
}

/* The owned elements a loop visits: count elements from first, stride
 * apart. A run of one block has stride 1; at B = 1 the rank's elements are
 * one row apart (upc_forall over a cyclic array: i = MYTHREAD; i +=
 * THREADS), so one strided run covers them all. */
typedef struct owned_run {
    uint64_t first, count, stride;
} owned_run;

/* ptr: d[i] = combine(u[i'], v[i]), each element found from its index
 * (UPC's a[i]): the slot of i (owner and local index) found once for the
 * three arrays, which share one layout (checked at set-up: UPC arrays of
 * one type, for which a compiler finds the thread and offset of i once),
 * then each array's address and the access; the shifted u's slot on its
 * own. The loop is written once per index kind (kind is a constant where it
 * is called), as a UPC compiler emits the index arithmetic of the array's
 * type; the arrays' descriptors are copied into locals so their fields stay
 * in registers. */
ELEMENT_LOOP ptr_loop(bench *bm, const shared_set *s, const int k, const int shifted,
                      const uint32_t kind, owned_run r) {
    const operands o = kernel_ops[k];
    const pario_pgas_array d = s->arr[o.dst], u = s->arr[o.u];
    const pario_pgas_array v = reads_v(k) ? s->arr[o.v] : u;
    const uint32_t es = sizeof(double);
    int bad = 0;
    uint64_t i = r.first;
    for (uint64_t j = 0; j < r.count && !bad; j++, i += r.stride) {
        double x = 0, y = 0;
        pario_pgas_slot at = pario_pgas_index_slot(&d, i, kind);
        pario_pgas_slot at_u =
            shifted ? pario_pgas_index_slot(&u, shifted_index(s, i, shifted), kind) : at;
        bad = pario_pgas_load_double_loc(bm->ctx, pario_pgas_slot_loc(&u, at_u, es), &x);
        if (reads_v(k))
            bad |= pario_pgas_load_double_loc(bm->ctx, pario_pgas_slot_loc(&v, at, es), &y);
        bad |=
            pario_pgas_store_double_loc(bm->ctx, pario_pgas_slot_loc(&d, at, es), combine(k, x, y));
    }
    return bad;
}

/* walk: the same with three pointers-to-shared stepped to the next owned
 * element, p + 1 inside a block run and p += THREADS at B = 1, by a step
 * worked out once per run as a compiler does for a constant step (checked:
 * the accesses are the checked get/put). */
ELEMENT_LOOP walk_loop(bench *bm, const shared_set *s, const int k, const int shifted,
                       const int checked, owned_run r) {
    const operands o = kernel_ops[k];
    pario_pgas_ptr pd = pario_pgas_elem(&s->arr[o.dst], r.first);
    pario_pgas_ptr pu = pario_pgas_elem(&s->arr[o.u], shifted_index(s, r.first, shifted));
    pario_pgas_ptr pv = reads_v(k) ? pario_pgas_elem(&s->arr[o.v], r.first) : pu;
    const pario_pgas_step st = pario_pgas_step_of(pd, (int64_t)r.stride);
    int bad = 0;
    for (uint64_t j = 0; j < r.count && !bad; j++) {
        double x = 0, y = 0;
        if (checked) {
            bad = pario_pgas_get(bm->ctx, pu, &x);
            if (reads_v(k))
                bad |= pario_pgas_get(bm->ctx, pv, &y);
            double z = combine(k, x, y);
            bad |= pario_pgas_put(bm->ctx, pd, &z);
        } else {
            bad = pario_pgas_load_double(bm->ctx, pu, &x);
            if (reads_v(k))
                bad |= pario_pgas_load_double(bm->ctx, pv, &y);
            bad |= pario_pgas_store_double(bm->ctx, pd, combine(k, x, y));
        }
        pu = pario_pgas_ptr_step(pu, st);
        if (reads_v(k))
            pv = pario_pgas_ptr_step(pv, st);
        pd = pario_pgas_ptr_step(pd, st);
    }
    return bad;
}

/* One instance of a loop per kernel and shift. */
#define PER_KERNEL(call_k_s)                                                                       \
    switch (k * 2 + (shifted != 0)) {                                                              \
    case K_COPY * 2:                                                                               \
        return call_k_s(K_COPY, 0);                                                                \
    case K_COPY * 2 + 1:                                                                           \
        return call_k_s(K_COPY, 1);                                                                \
    case K_SCALE * 2:                                                                              \
        return call_k_s(K_SCALE, 0);                                                               \
    case K_SCALE * 2 + 1:                                                                          \
        return call_k_s(K_SCALE, 1);                                                               \
    case K_ADD * 2:                                                                                \
        return call_k_s(K_ADD, 0);                                                                 \
    case K_ADD * 2 + 1:                                                                            \
        return call_k_s(K_ADD, 1);                                                                 \
    case K_TRIAD * 2:                                                                              \
        return call_k_s(K_TRIAD, 0);                                                               \
    case K_TRIAD * 2 + 1:                                                                          \
        return call_k_s(K_TRIAD, 1);                                                               \
    default:                                                                                       \
        return PARIO_ERR_ARG;                                                                      \
    }

/* ptr, one instance per index kind of the set's arrays (all three share it). */
#define PTR_KIND(KIND)                                                                             \
    static int run_ptr_##KIND(bench *bm, const shared_set *s, int k, int shifted, owned_run r) {   \
        PER_KERNEL(PTR_CALL_##KIND)                                                                \
    }
#define PTR_CALL_ANY(K, S) ptr_loop(bm, s, K, S, PARIO_PGAS_INDEX_ANY, r)
#define PTR_CALL_ONE_RANK(K, S) ptr_loop(bm, s, K, S, PARIO_PGAS_INDEX_ONE_RANK, r)
#define PTR_CALL_CYCLIC(K, S) ptr_loop(bm, s, K, S, PARIO_PGAS_INDEX_CYCLIC, r)
#define PTR_CALL_ONE_ROW(K, S) ptr_loop(bm, s, K, S, PARIO_PGAS_INDEX_ONE_ROW, r)
#define PTR_CALL_POW2(K, S) ptr_loop(bm, s, K, S, PARIO_PGAS_INDEX_POW2, r)
#define PTR_CALL_DIV(K, S) ptr_loop(bm, s, K, S, PARIO_PGAS_INDEX_DIV, r)
PTR_KIND(ANY)
PTR_KIND(ONE_RANK)
PTR_KIND(CYCLIC)
PTR_KIND(ONE_ROW)
PTR_KIND(POW2)
PTR_KIND(DIV)

static int run_ptr(bench *bm, const shared_set *s, int k, int shifted, owned_run r) {
    switch (s->arr[ARR_A].index_kind) {
    case PARIO_PGAS_INDEX_ONE_RANK:
        return run_ptr_ONE_RANK(bm, s, k, shifted, r);
    case PARIO_PGAS_INDEX_CYCLIC:
        return run_ptr_CYCLIC(bm, s, k, shifted, r);
    case PARIO_PGAS_INDEX_ONE_ROW:
        return run_ptr_ONE_ROW(bm, s, k, shifted, r);
    case PARIO_PGAS_INDEX_POW2:
        return run_ptr_POW2(bm, s, k, shifted, r);
    case PARIO_PGAS_INDEX_DIV:
        return run_ptr_DIV(bm, s, k, shifted, r);
    default:
        return run_ptr_ANY(bm, s, k, shifted, r);
    }
}

static int run_walk(bench *bm, const shared_set *s, int k, int shifted, owned_run r) {
#define WALK_CALL(K, S) walk_loop(bm, s, K, S, 0, r)
    PER_KERNEL(WALK_CALL)
#undef WALK_CALL
}

static int run_checked(bench *bm, const shared_set *s, int k, int shifted, owned_run r) {
#define CHECKED_CALL(K, S) walk_loop(bm, s, K, S, 1, r)
    PER_KERNEL(CHECKED_CALL)
#undef CHECKED_CALL
}

static int run_cast(bench *bm, const shared_set *s, int k, int shifted, owned_run r) {
    const operands o = kernel_ops[k];
    double *d = pario_pgas_cast(bm->ctx, pario_pgas_elem(&s->arr[o.dst], r.first));
    const double *u =
        pario_pgas_cast(bm->ctx, pario_pgas_elem(&s->arr[o.u], shifted_index(s, r.first, shifted)));
    const double *v =
        o.v >= 0 ? pario_pgas_cast(bm->ctx, pario_pgas_elem(&s->arr[o.v], r.first)) : u;
    if (!d || !u || !v)
        return PARIO_ERR_ARG;
    kernel_local(k, d, u, v, r.count);
    return PARIO_OK;
}

static int run_bulk(bench *bm, const shared_set *s, int k, int shifted, owned_run r) {
    const operands o = kernel_ops[k];
    int rc = PARIO_OK;
    for (uint64_t off = 0; off < r.count && rc == PARIO_OK; off += CHUNK_ELEMS) {
        uint64_t n = r.count - off < CHUNK_ELEMS ? r.count - off : CHUNK_ELEMS;
        uint64_t i = r.first + off;
        rc = pario_pgas_memget(bm->ctx, bm->buf[0], &s->arr[o.u], shifted_index(s, i, shifted), n);
        if (rc == PARIO_OK && o.v >= 0)
            rc = pario_pgas_memget(bm->ctx, bm->buf[1], &s->arr[o.v], i, n);
        if (rc != PARIO_OK || k == K_FETCH)
            continue;
        kernel_local(k, bm->buf[2], bm->buf[0], bm->buf[1], n);
        rc = pario_pgas_memput(bm->ctx, &s->arr[o.dst], i, bm->buf[2], n);
    }
    return rc;
}

typedef int (*run_fn)(bench *, const shared_set *, int, int, owned_run);
static const run_fn shared_runs[] = {run_ptr, run_walk, run_checked, run_cast, run_bulk};

/* cast without a shift: the three arrays' local parts, which hold the same
 * indices at the same positions (one layout). */
static int run_cast_parts(bench *bm, const shared_set *s, int k) {
    const operands o = kernel_ops[k];
    void *d = NULL, *u = NULL, *v = NULL;
    uint64_t nd = 0, nu = 0, nv = 0;
    int rc = pario_pgas_cast_part(bm->ctx, &s->arr[o.dst], bm->rank, &d, &nd);
    if (rc == PARIO_OK)
        rc = pario_pgas_cast_part(bm->ctx, &s->arr[o.u], bm->rank, &u, &nu);
    if (o.v < 0) { /* copy and scale read u alone */
        v = u;
        nv = nu;
    } else if (rc == PARIO_OK) {
        rc = pario_pgas_cast_part(bm->ctx, &s->arr[o.v], bm->rank, &v, &nv);
    }
    if (rc != PARIO_OK || nd != nu || nd != nv)
        return rc != PARIO_OK ? rc : PARIO_ERR_ARG;
    if (nd)
        kernel_local(k, d, u, v, nd);
    return PARIO_OK;
}

/* One kernel over every owned run of the set; at B = 1 the element-wise
 * methods take the rank's elements as one strided run (bulk keeps one run
 * per block, cast one run per rank unless shifted). */
static int kernel_shared(bench *bm, const config *c, int k) {
    run_fn run = shared_runs[c->method];
    const pario_pgas_array *a = &c->set->arr[ARR_A];
    if (c->method == M_CAST && !c->shifted)
        return run_cast_parts(bm, c->set, k);
    if (c->set->block == 1 && c->method <= M_CHECKED && !c->shifted) {
        owned_run r = {(uint64_t)bm->rank, pario_pgas_local_count(a, bm->rank),
                       (uint64_t)bm->nranks};
        return r.count ? run(bm, c->set, k, 0, r) : PARIO_OK;
    }
    uint64_t cursor = 0;
    pario_pgas_range g;
    int rc = PARIO_OK;
    while (rc == PARIO_OK && pario_pgas_owned_next(a, bm->rank, &cursor, &g))
        rc = run(bm, c->set, k, c->shifted, (owned_run){g.first, g.count, 1});
    return rc;
}

/* ---- plain methods ---- */

static double *plain_array(plain_set *p, int a) {
    return p->mem + (uint64_t)a * p->n;
}

/* The mpi method's u operand from the next rank: MPI_Get + flush per chunk
 * into a buffer, then the kernel on it. */
static int kernel_mpi_shifted(bench *bm, plain_set *p, int k) {
    const operands o = kernel_ops[k];
    int next = (bm->rank + 1) % bm->nranks;
    for (uint64_t off = 0; off < p->n; off += CHUNK_ELEMS) {
        uint64_t n = p->n - off < CHUNK_ELEMS ? p->n - off : CHUNK_ELEMS;
        MPI_Aint disp = (MPI_Aint)(((uint64_t)o.u * p->n + off) * sizeof(double));
        if (MPI_Get(bm->buf[0], (int)n, MPI_DOUBLE, next, disp, (int)n, MPI_DOUBLE, p->win) !=
                MPI_SUCCESS ||
            MPI_Win_flush(next, p->win) != MPI_SUCCESS)
            return PARIO_ERR_COMM;
        if (k != K_FETCH)
            kernel_local(k, plain_array(p, o.dst) + off, bm->buf[0],
                         o.v >= 0 ? plain_array(p, o.v) + off : bm->buf[0], n);
    }
    return PARIO_OK;
}

static int kernel_plain(bench *bm, const config *c, int k) {
    const operands o = kernel_ops[k];
    plain_set *p = c->plain;
    if (c->shifted)
        return kernel_mpi_shifted(bm, p, k);
    kernel_local(k, plain_array(p, o.dst), plain_array(p, o.u),
                 o.v >= 0 ? plain_array(p, o.v) : plain_array(p, o.u), p->n);
    return PARIO_OK;
}

static int kernel_run(bench *bm, const config *c, int k) {
    return c->method >= M_C ? kernel_plain(bm, c, k) : kernel_shared(bm, c, k);
}

/* ---- initialisation and checks, through the owner's local memory ---- */

/* Calls fn(local, first, count, arg) for each owned run of the set (or the
 * rank's whole plain part, numbered as its elements in global order). */
typedef void (*visit_fn)(double *const arrays[NARRAYS], uint64_t first, uint64_t n, void *arg);

static void visit_owned(bench *bm, const config *c, visit_fn fn, void *arg) {
    if (c->method >= M_C) {
        plain_set *p = c->plain;
        double *arrays[NARRAYS] = {plain_array(p, 0), plain_array(p, 1), plain_array(p, 2)};
        fn(arrays, (uint64_t)bm->rank * p->n, p->n, arg);
        return;
    }
    uint64_t cursor = 0;
    pario_pgas_range r;
    while (pario_pgas_owned_next(&c->set->arr[ARR_A], bm->rank, &cursor, &r)) {
        double *arrays[NARRAYS];
        for (int a = 0; a < NARRAYS; a++)
            arrays[a] = pario_pgas_cast(bm->ctx, pario_pgas_elem(&c->set->arr[a], r.first));
        fn(arrays, r.first, r.count, arg);
    }
}

static void fill_uniform(double *const arr[NARRAYS], uint64_t first, uint64_t n, void *arg) {
    (void)first;
    (void)arg;
    for (uint64_t j = 0; j < n; j++) {
        arr[ARR_A][j] = 1.0;
        arr[ARR_B][j] = 2.0;
        arr[ARR_C][j] = 0.0;
    }
}

/* Index-dependent values, exact in doubles: b[i] = i, c[i] = 2 i + 1. */
static void fill_indexed(double *const arr[NARRAYS], uint64_t first, uint64_t n, void *arg) {
    (void)arg;
    for (uint64_t j = 0; j < n; j++) {
        arr[ARR_A][j] = -1.0;
        arr[ARR_B][j] = (double)(first + j);
        arr[ARR_C][j] = 2.0 * (double)(first + j) + 1.0;
    }
}

typedef struct index_check {
    const config *c;
    uint64_t count, wrong;
} index_check;

static void check_indexed(double *const arr[NARRAYS], uint64_t first, uint64_t n, void *arg) {
    index_check *ck = arg;
    for (uint64_t j = 0; j < n; j++) {
        uint64_t i = first + j, from = i;
        if (ck->c->shifted) {
            uint64_t step = ck->c->set ? ck->c->set->block : n;
            from = (i + step) % ck->count;
        }
        double want = (double)from + STREAM_SCALAR * (2.0 * (double)i + 1.0);
        ck->wrong += arr[ARR_A][j] != want;
    }
}

typedef struct stream_check {
    double err[NARRAYS];
    uint64_t n;
} stream_check;

static void sum_errors(double *const arr[NARRAYS], uint64_t first, uint64_t n, void *arg) {
    (void)first;
    stream_check *ck = arg;
    /* One pass of the four kernels from a = 1, b = 2, c = 0. */
    double want[NARRAYS];
    want[ARR_C] = 1.0;
    want[ARR_B] = STREAM_SCALAR * want[ARR_C];
    want[ARR_C] = 1.0 + want[ARR_B];
    want[ARR_A] = want[ARR_B] + STREAM_SCALAR * want[ARR_C];
    for (uint64_t j = 0; j < n; j++)
        for (int a = 0; a < NARRAYS; a++)
            ck->err[a] += fabs(arr[a][j] - want[a]) / fabs(want[a]);
    ck->n += n;
}

static uint64_t config_count(const config *c, int nranks) {
    return c->set ? c->set->count : c->plain->n * (uint64_t)nranks;
}

/* The triad on index-dependent values, every element checked exactly. */
static int check_indexing(bench *bm, const config *c) {
    visit_owned(bm, c, fill_indexed, NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    int rc = kernel_run(bm, c, K_TRIAD);
    MPI_Barrier(MPI_COMM_WORLD);
    index_check ck = {c, config_count(c, bm->nranks), 0};
    visit_owned(bm, c, check_indexed, &ck);
    uint64_t wrong = ck.wrong + (rc != PARIO_OK), total = 0;
    MPI_Allreduce(&wrong, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return total == 0;
}

/* STREAM's check: the average relative error of each array under epsilon. */
static int check_stream(bench *bm, const config *c) {
    stream_check ck = {{0, 0, 0}, 0};
    visit_owned(bm, c, sum_errors, &ck);
    double local[NARRAYS + 1] = {ck.err[0], ck.err[1], ck.err[2], (double)ck.n}, sum[NARRAYS + 1];
    MPI_Allreduce(local, sum, NARRAYS + 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int a = 0; a < NARRAYS; a++)
        if (sum[NARRAYS] == 0 || sum[a] / sum[NARRAYS] > STREAM_EPSILON)
            return 0;
    return 1;
}

/* ---- one repetition of one configuration ---- */

static int config_kernels(const config *c) {
    return c->shifted && (c->method == M_BULK || c->method == M_MPI) ? NKERNELS : K_FETCH;
}

/* Times every kernel; usec[k] gets rank 0's time from the barrier before the
 * kernel to the barrier after it (the slowest rank's end), rank_usec[k *
 * nranks + r] each rank's own time for its part. Returns 1 when the check
 * passed. */
static int config_rep(bench *bm, const config *c, double *usec, double *rank_usec) {
    visit_owned(bm, c, fill_uniform, NULL);
    double mine[NKERNELS] = {0};
    int rc = PARIO_OK;
    for (int k = 0; k < config_kernels(c); k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        rc |= kernel_run(bm, c, k);
        mine[k] = (MPI_Wtime() - t0) * 1e6;
        MPI_Barrier(MPI_COMM_WORLD);
        usec[k] = (MPI_Wtime() - t0) * 1e6;
    }
    MPI_Gather(mine, NKERNELS, MPI_DOUBLE, rank_usec, NKERNELS, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int ok = rc == PARIO_OK, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all && check_stream(bm, c);
}

/* ---- set-up ---- */

static int make_shared_set(bench *bm, shared_set *s, uint64_t count, uint64_t block,
                           const char *name) {
    s->count = count;
    s->block_name = name;
    for (int a = 0; a < NARRAYS; a++) {
        int rc = pario_pgas_all_alloc(bm->ctx, count, sizeof(double), block, &s->arr[a]);
        if (rc != PARIO_OK) {
            if (bm->rank == 0)
                fprintf(stderr, "pgas_bench_stream: %s\n", pario_pgas_last_error(bm->ctx)->msg);
            return rc;
        }
    }
    /* ptr finds each index's slot once for the three arrays */
    for (int a = 1; a < NARRAYS; a++)
        if (!pario_pgas_same_layout(&s->arr[0], &s->arr[a])) {
            if (bm->rank == 0)
                fprintf(stderr, "pgas_bench_stream: arrays of one set differ in layout\n");
            return PARIO_ERR_ARG;
        }
    s->block = s->arr[ARR_A].base.block;
    return PARIO_OK;
}

/* Symmetric heap bytes for the arrays of the given counts and blocks. */
static size_t heap_bytes(const uint64_t *counts, const uint64_t *blocks, int nsets, int nranks) {
    size_t total = (size_t)1 << 20; /* alignment and the allocator's slack */
    for (int i = 0; i < nsets; i++) {
        uint64_t b =
            blocks[i] == PARIO_PGAS_BLOCK_FIT ? (counts[i] + nranks - 1) / nranks : blocks[i];
        uint64_t nblocks = (counts[i] + b - 1) / b;
        uint64_t mine = (nblocks + nranks - 1) / nranks;
        total += NARRAYS * (mine * b * sizeof(double) + 64);
    }
    return total;
}

static int make_plain(bench *bm, plain_set *p, uint64_t count, int windowed) {
    p->n = count / (uint64_t)bm->nranks;
    p->win = MPI_WIN_NULL;
    size_t bytes = NARRAYS * p->n * sizeof(double);
    if (!windowed) {
        p->mem = malloc(bytes ? bytes : 1);
        return p->mem ? PARIO_OK : PARIO_ERR_NO_MEM;
    }
    if (MPI_Alloc_mem((MPI_Aint)bytes, MPI_INFO_NULL, &p->mem) != MPI_SUCCESS)
        return PARIO_ERR_NO_MEM;
    if (MPI_Win_create(p->mem, (MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &p->win) !=
            MPI_SUCCESS ||
        MPI_Win_lock_all(MPI_MODE_NOCHECK, p->win) != MPI_SUCCESS)
        return PARIO_ERR_COMM;
    return PARIO_OK;
}

static void free_plain(plain_set *p) {
    if (p->win != MPI_WIN_NULL) {
        MPI_Win_unlock_all(p->win);
        MPI_Win_free(&p->win);
        MPI_Free_mem(p->mem);
    } else {
        free(p->mem);
    }
}

/* 1 when every rank maps its next rank's memory (one node). */
static int neighbours_mapped(bench *bm) {
    pario_pgas_array probe;
    int mine = 1, all = 0;
    if (pario_pgas_all_alloc(bm->ctx, (uint64_t)bm->nranks, 1, 1, &probe) == PARIO_OK) {
        mine = pario_pgas_cast(bm->ctx, pario_pgas_elem(&probe, (uint64_t)(bm->rank + 1) %
                                                                    (uint64_t)bm->nranks)) != NULL;
        pario_pgas_all_free(bm->ctx, &probe);
    }
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

/* ---- reporting ---- */

/* Bytes of the largest cache the machine reports (0 when it reports none). */
static uint64_t last_level_cache_bytes(void) {
    static const int levels[] = {_SC_LEVEL4_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE,
                                 _SC_LEVEL2_CACHE_SIZE};
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        long bytes = sysconf(levels[i]);
        if (bytes > 0)
            return (uint64_t)bytes;
    }
    return 0;
}

static void report(bench *bm, const config *c, int k, uint64_t count, double *usec,
                   double *rank_usec, int checked) {
    if (bm->rank != 0)
        return;
    int n = bm->nranks, reps = bm->reps;
    double bytes = (double)kernel_words[k] * sizeof(double) * (double)count;
    /* Per rank: each rank's own time for its share, median over ranks and
     * repetitions; total: rank 0's barrier-to-barrier time, median over
     * repetitions. */
    double *per = malloc(sizeof(double) * (size_t)(n * reps));
    for (int r = 0; r < reps; r++)
        for (int q = 0; q < n; q++)
            per[r * n + q] = rank_usec[(r * n + q) * NKERNELS + k];
    bench_stats rank_s = bench_stats_of(per, n * reps);
    for (int r = 0; r < reps; r++)
        per[r] = usec[r * NKERNELS + k];
    bench_stats tot = bench_stats_of(per, reps);
    free(per);
    const shared_set *s = c->set;
    printf("{\"bench\":\"stream\",\"method\":\"%s\",\"block\":\"%s\",\"block_factor\":%llu,"
           "\"shifted\":%d,\"kernel\":\"%s\",\"elems\":%llu,\"ranks\":%d,\"reps\":%d,"
           "\"usec_median\":%.1f,\"usec_min\":%.1f,\"usec_max\":%.1f,"
           "\"mb_s_total\":%.1f,\"mb_s_total_best\":%.1f,\"mb_s_rank\":%.1f,\"validated\":%s,"
           "\"llc_bytes\":%llu}\n",
           method_name[c->method], s ? s->block_name : "-", (unsigned long long)(s ? s->block : 0),
           c->shifted, kernel_name[k], (unsigned long long)count, n, reps, tot.median, tot.min,
           tot.max, bytes / tot.median, bytes / tot.min, bytes / n / rank_s.median,
           checked ? "true" : "false", (unsigned long long)last_level_cache_bytes());
    fflush(stdout);
}

/* ---- main ---- */

typedef struct options {
    uint64_t elems, slow_elems;
    int reps;
    unsigned methods; /* bit m: method m runs */
} options;

/* The bits of a comma-separated list of method names; 0 when a name is unknown. */
static unsigned methods_of(const char *list) {
    unsigned bits = 0;
    char copy[256];
    snprintf(copy, sizeof copy, "%s", list);
    for (char *save = NULL, *name = strtok_r(copy, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        int m = 0;
        while (m < NMETHODS && strcmp(name, method_name[m]) != 0)
            m++;
        if (m == NMETHODS)
            return 0;
        bits |= 1u << m;
    }
    return bits;
}

/* STREAM's rule: the arrays together at least 4 x the last-level cache, so
 * no kernel runs from the cache. */
static uint64_t default_elems(void) {
    uint64_t need = 4 * last_level_cache_bytes() / (NARRAYS * sizeof(double));
    uint64_t elems = need > MIN_DEFAULT_ELEMS ? need : MIN_DEFAULT_ELEMS;
    return (elems + ELEMS_QUANTUM - 1) / ELEMS_QUANTUM * ELEMS_QUANTUM;
}

static int parse_options(int argc, char **argv, options *o) {
    *o = (options){default_elems(), DEFAULT_SLOW_ELEMS, DEFAULT_REPS, (1u << NMETHODS) - 1};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-n"))
            o->elems = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-m"))
            o->slow_elems = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-r"))
            o->reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-M"))
            o->methods = methods_of(argv[i + 1]);
        else
            return 0;
    }
    return (argc % 2) == 1 && o->reps >= 1 && o->reps <= MAX_REPS && o->elems > 0 &&
           o->slow_elems > 0 && o->methods != 0;
}

enum { SET_1, SET_128, SET_FIT, SMALL_128, SMALL_FIT, NSETS };
#define MAX_CONFIGS 32

/* Adds a configuration of a method -M chose. */
static int add_config(const bench *bm, config *cs, int n, int method, int shifted, shared_set *s,
                      plain_set *p) {
    if (!(bm->methods & (1u << method)))
        return n;
    cs[n] = (config){method, shifted, s, p};
    return n + 1;
}

/* Every configuration of the run, in the order each repetition runs them. */
static int plan(bench *bm, shared_set *sets, plain_set *c_set, plain_set *mpi_set, int local,
                config *cs) {
    int n = 0;
    for (int b = SET_1; b <= SET_FIT; b++)
        for (int m = M_PTR; m <= M_BULK; m++)
            n = add_config(bm, cs, n, m, 0, &sets[b], NULL);
    n = add_config(bm, cs, n, M_C, 0, NULL, c_set);
    n = add_config(bm, cs, n, M_MPI, 0, NULL, mpi_set);
    if (bm->nranks < 2)
        return n;
    for (int b = SET_128; b <= SET_FIT; b++) {
        shared_set *slow = local ? &sets[b] : &sets[b - SET_128 + SMALL_128];
        n = add_config(bm, cs, n, M_PTR, 1, slow, NULL);
        n = add_config(bm, cs, n, M_WALK, 1, slow, NULL);
        if (local)
            n = add_config(bm, cs, n, M_CAST, 1, &sets[b], NULL);
        n = add_config(bm, cs, n, M_BULK, 1, &sets[b], NULL);
    }
    return add_config(bm, cs, n, M_MPI, 1, NULL, mpi_set);
}

static int run(bench *bm, const options *o) {
    shared_set sets[NSETS];
    memset(sets, 0, sizeof sets);
    plain_set c_set, mpi_set;
    int local = neighbours_mapped(bm);
    static const char *const names[NSETS] = {"1", "128", "largest", "128", "largest"};
    const uint64_t blocks[NSETS] = {1, 128, PARIO_PGAS_BLOCK_FIT, 128, PARIO_PGAS_BLOCK_FIT};
    int nsets = local || bm->nranks < 2 ? SMALL_128 : NSETS;
    for (int i = 0; i < nsets; i++)
        if (make_shared_set(bm, &sets[i], i < SMALL_128 ? o->elems : o->slow_elems, blocks[i],
                            names[i]) != PARIO_OK)
            return 1;
    if (make_plain(bm, &c_set, o->elems, 0) != PARIO_OK ||
        make_plain(bm, &mpi_set, o->elems, bm->nranks > 1) != PARIO_OK) {
        fprintf(stderr, "pgas_bench_stream: no memory for the plain arrays\n");
        return 1;
    }
    config cs[MAX_CONFIGS];
    int nconf = plan(bm, sets, &c_set, &mpi_set, local, cs);
    int *indexing_ok = calloc((size_t)nconf, sizeof(int)),
        *stream_ok = calloc((size_t)nconf, sizeof(int));
    size_t per_conf = (size_t)bm->reps * NKERNELS;
    double *usec = calloc((size_t)nconf * per_conf, sizeof(double));
    double *rank_usec = calloc((size_t)nconf * per_conf * (size_t)bm->nranks, sizeof(double));
    for (int i = 0; i < nconf; i++) {
        indexing_ok[i] = check_indexing(bm, &cs[i]);
        stream_ok[i] = 1;
    }
    for (int r = 0; r < bm->reps; r++)
        for (int i = 0; i < nconf; i++)
            stream_ok[i] &= config_rep(
                bm, &cs[i], usec + (size_t)i * per_conf + (size_t)r * NKERNELS,
                rank_usec + ((size_t)i * per_conf + (size_t)r * NKERNELS) * (size_t)bm->nranks);
    for (int i = 0; i < nconf; i++) {
        int ok = indexing_ok[i] && stream_ok[i];
        if (!ok && bm->rank == 0)
            fprintf(stderr, "VERIFY-FAIL stream %s block %s%s: %s\n", method_name[cs[i].method],
                    cs[i].set ? cs[i].set->block_name : "-", cs[i].shifted ? " shifted" : "",
                    indexing_ok[i] ? "STREAM check failed" : "wrong element values");
        bm->failures += !ok;
        for (int k = 0; k < config_kernels(&cs[i]); k++)
            report(bm, &cs[i], k, config_count(&cs[i], bm->nranks), usec + (size_t)i * per_conf,
                   rank_usec + (size_t)i * per_conf * (size_t)bm->nranks, ok);
    }
    free(indexing_ok);
    free(stream_ok);
    free(usec);
    free(rank_usec);
    free_plain(&c_set);
    free_plain(&mpi_set);
    for (int i = 0; i < nsets; i++)
        for (int a = 0; a < NARRAYS; a++)
            pario_pgas_all_free(bm->ctx, &sets[i].arr[a]);
    return bm->failures != 0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    bench bm = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &bm.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &bm.nranks);
    options o;
    if (!parse_options(argc, argv, &o) || o.elems % (128 * (uint64_t)bm.nranks) ||
        o.slow_elems % (128 * (uint64_t)bm.nranks)) {
        if (bm.rank == 0)
            fprintf(stderr,
                    "usage: pgas_bench_stream [-n ELEMS] [-r REPS (1..%d)] "
                    "[-m SLOW_ELEMS] [-M METHODS]; element counts multiples of 128 x ranks\n",
                    MAX_REPS);
        MPI_Finalize();
        return 2;
    }
    bm.reps = o.reps;
    bm.methods = o.methods;
    const uint64_t counts[NSETS] = {o.elems, o.elems, o.elems, o.slow_elems, o.slow_elems};
    const uint64_t blocks[NSETS] = {1, 128, PARIO_PGAS_BLOCK_FIT, 128, PARIO_PGAS_BLOCK_FIT};
    pario_pgas_config cfg = {heap_bytes(counts, blocks, NSETS, bm.nranks), 0};
    pario_error err;
    if (pario_pgas_init(MPI_COMM_WORLD, &cfg, &bm.ctx, &err) != PARIO_OK) {
        fprintf(stderr, "pgas_bench_stream: %s\n", err.msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < 3; i++)
        bm.buf[i] = malloc(CHUNK_ELEMS * sizeof(double));
    int status = run(&bm, &o);
    for (int i = 0; i < 3; i++)
        free(bm.buf[i]);
    pario_pgas_finalize(&bm.ctx);
    MPI_Finalize();
    return status;
}
