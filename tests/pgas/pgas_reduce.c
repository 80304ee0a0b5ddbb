/* pgas: reduce and prefix_reduce for every type and op on several layouts
 * (block factors 0, 1, 3, 5, 64; source and destination starting at other
 * ranks and phases; ranks owning nothing), a commutative user function and a
 * non-commutative one (composition of affine maps, whose result depends on
 * the order), checked against serially computed results; bad input fails on
 * every rank alike. */
#include <stdint.h>
#include <stdlib.h>

#include "pgas_test.h"

static const int modes[] = {0, PARIO_PGAS_IN_NOSYNC | PARIO_PGAS_OUT_NOSYNC,
                            PARIO_PGAS_IN_MYSYNC | PARIO_PGAS_OUT_MYSYNC,
                            PARIO_PGAS_IN_ALLSYNC | PARIO_PGAS_OUT_ALLSYNC};

typedef struct layout {
    uint64_t nelems, blk, src_off, dst_off;
} layout;

static const layout layouts[] = {{37, 5, 3, 1}, {37, 5, 0, 0},  {100, 1, 2, 0},
                                 {20, 0, 0, 0}, {64, 64, 0, 5}, {7, 3, 0, 0}};

/* ---- values of each type ---- */

static const size_t tsize[PARIO_PGAS_TYPE_COUNT] = {
    sizeof(signed char), sizeof(unsigned char),      sizeof(short), sizeof(unsigned short),
    sizeof(int),         sizeof(unsigned),           sizeof(long),  sizeof(unsigned long),
    sizeof(long long),   sizeof(unsigned long long), sizeof(float), sizeof(double),
    sizeof(long double)};

static int is_unsigned(pario_pgas_type t) {
    return t == PARIO_PGAS_UCHAR || t == PARIO_PGAS_USHORT || t == PARIO_PGAS_UINT ||
           t == PARIO_PGAS_ULONG || t == PARIO_PGAS_ULLONG;
}
static int is_floating(pario_pgas_type t) {
    return t >= PARIO_PGAS_FLOAT;
}

#define STORE(T) *(T *)p = (T)v
static void store(pario_pgas_type t, void *p, long long v) {
    switch (t) {
    case PARIO_PGAS_CHAR:
        STORE(signed char);
        break;
    case PARIO_PGAS_UCHAR:
        STORE(unsigned char);
        break;
    case PARIO_PGAS_SHORT:
        STORE(short);
        break;
    case PARIO_PGAS_USHORT:
        STORE(unsigned short);
        break;
    case PARIO_PGAS_INT:
        STORE(int);
        break;
    case PARIO_PGAS_UINT:
        STORE(unsigned);
        break;
    case PARIO_PGAS_LONG:
        STORE(long);
        break;
    case PARIO_PGAS_ULONG:
        STORE(unsigned long);
        break;
    case PARIO_PGAS_LLONG:
        STORE(long long);
        break;
    case PARIO_PGAS_ULLONG:
        STORE(unsigned long long);
        break;
    case PARIO_PGAS_FLOAT:
        STORE(float);
        break;
    case PARIO_PGAS_DOUBLE:
        STORE(double);
        break;
    default:
        STORE(long double);
        break;
    }
}

#define LOAD(T) return (long double)*(const T *)p
static long double load(pario_pgas_type t, const void *p) {
    switch (t) {
    case PARIO_PGAS_CHAR:
        LOAD(signed char);
    case PARIO_PGAS_UCHAR:
        LOAD(unsigned char);
    case PARIO_PGAS_SHORT:
        LOAD(short);
    case PARIO_PGAS_USHORT:
        LOAD(unsigned short);
    case PARIO_PGAS_INT:
        LOAD(int);
    case PARIO_PGAS_UINT:
        LOAD(unsigned);
    case PARIO_PGAS_LONG:
        LOAD(long);
    case PARIO_PGAS_ULONG:
        LOAD(unsigned long);
    case PARIO_PGAS_LLONG:
        LOAD(long long);
    case PARIO_PGAS_ULLONG:
        LOAD(unsigned long long);
    case PARIO_PGAS_FLOAT:
        LOAD(float);
    case PARIO_PGAS_DOUBLE:
        LOAD(double);
    default:
        LOAD(long double);
    }
}

/* Element i's value for op: small integers, exact in every type; products
 * stay below 2^9, sums far from overflow in types wider than char (where
 * both sides wrap alike). */
static long long value(pario_pgas_op op, pario_pgas_type t, uint64_t i) {
    long long k = (long long)i, shift = is_unsigned(t) ? 0 : 1;
    switch (op) {
    case PARIO_PGAS_ADD:
        return (k * 7 % 11) - 5 * shift;
    case PARIO_PGAS_MULT:
        return k % 13 == 0 ? 2 : 1;
    case PARIO_PGAS_LOGAND:
        return k % 23 == 7 ? 0 : k % 5 + 1;
    case PARIO_PGAS_LOGOR:
        return k % 19 == 4 ? 3 : 0;
    case PARIO_PGAS_MIN:
    case PARIO_PGAS_MAX:
        return (k * 29 + 5) % 97 - 40 * shift;
    default:
        return (k * 37 + 11) & 0x7f;
    }
}

/* The serial fold, in long long (the values keep every op exact there). */
static long long apply(pario_pgas_op op, long long a, long long v) {
    switch (op) {
    case PARIO_PGAS_ADD:
        return a + v;
    case PARIO_PGAS_MULT:
        return a * v;
    case PARIO_PGAS_AND:
        return a & v;
    case PARIO_PGAS_OR:
        return a | v;
    case PARIO_PGAS_XOR:
        return a ^ v;
    case PARIO_PGAS_LOGAND:
        return a && v;
    case PARIO_PGAS_LOGOR:
        return a || v;
    case PARIO_PGAS_MIN:
        return v < a ? v : a;
    default:
        return v > a ? v : a;
    }
}

/* Non-commutative: x -> a x + b as (a << 32 | b), composed first-then-second mod 2^32. */
static void affine_then(void *acc, const void *x) {
    unsigned long long f = *(unsigned long long *)acc, g = *(const unsigned long long *)x;
    uint32_t a1 = (uint32_t)(f >> 32), b1 = (uint32_t)f, a2 = (uint32_t)(g >> 32), b2 = (uint32_t)g;
    uint32_t a = a1 * a2, b = a2 * b1 + b2;
    *(unsigned long long *)acc = (unsigned long long)a << 32 | b;
}
static unsigned long long affine_value(uint64_t i) {
    return (unsigned long long)(2 * i + 1) << 32 | (i * i + 3);
}

static void int_add(void *acc, const void *x) {
    *(int *)acc += *(const int *)x;
}

/* ---- one reduction ---- */

typedef struct arrays {
    pario_pgas_array src, dst, res;
    pario_pgas_ptr s, d, r;
} arrays;

static arrays make_arrays(pario_pgas *ctx, const layout *l, size_t es) {
    int n = pario_pgas_threads(ctx);
    arrays a;
    PT_EQ(pario_pgas_all_alloc(ctx, l->src_off + l->nelems, (uint32_t)es, l->blk, &a.src),
          PARIO_OK);
    PT_EQ(pario_pgas_all_alloc(ctx, l->dst_off + l->nelems, (uint32_t)es, l->blk, &a.dst),
          PARIO_OK);
    PT_EQ(pario_pgas_all_alloc(ctx, (uint64_t)n, (uint32_t)es, 1, &a.res), PARIO_OK);
    a.s = pario_pgas_elem(&a.src, l->src_off);
    a.d = pario_pgas_elem(&a.dst, l->dst_off);
    a.r = pario_pgas_elem(&a.res, (uint64_t)n - 1);
    return a;
}

static void free_arrays(pario_pgas *ctx, arrays *a) {
    PT_EQ(pario_pgas_all_free(ctx, &a->res), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &a->dst), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &a->src), PARIO_OK);
}

/* Rank 0 writes src (elements given in buf), everyone waits. */
static void fill_src(pario_pgas *ctx, const layout *l, const arrays *a, const void *buf) {
    if (pario_pgas_mythread(ctx) == 0)
        PT_EQ(pario_pgas_memput(ctx, &a->src, l->src_off, buf, l->nelems), PARIO_OK);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
}

static void settle(pario_pgas *ctx, int mode) {
    if (mode & (PARIO_PGAS_OUT_NOSYNC | PARIO_PGAS_OUT_MYSYNC))
        PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
}

static void check_builtin(pario_pgas *ctx, pario_pgas_type t, pario_pgas_op op, const layout *l,
                          int mode) {
    size_t es = tsize[t];
    arrays a = make_arrays(ctx, l, es);
    unsigned char *buf = malloc(l->nelems * es), *got = malloc(l->nelems * es), one[16], want[16];
    long long *prefix = malloc(sizeof(long long) * l->nelems), acc = 0;
    for (uint64_t i = 0; i < l->nelems; i++) {
        long long v = value(op, t, i);
        store(t, buf + i * es, v);
        acc = i == 0 ? v : apply(op, acc, v);
        prefix[i] = acc;
    }
    fill_src(ctx, l, &a, buf);
    PT_EQ(pario_pgas_all_reduce(ctx, a.r, a.s, op, t, l->nelems, l->blk, NULL, mode), PARIO_OK);
    PT_EQ(pario_pgas_all_prefix_reduce(ctx, a.d, a.s, op, t, l->nelems, l->blk, NULL, mode),
          PARIO_OK);
    settle(ctx, mode);
    PT_EQ(pario_pgas_get(ctx, a.r, one), PARIO_OK);
    store(t, want, prefix[l->nelems - 1]);
    if (load(t, one) != load(t, want))
        fprintf(stderr, "reduce type %d op %d: got %Lg want %Lg\n", (int)t, (int)op, load(t, one),
                load(t, want));
    PT_CHECK(load(t, one) == load(t, want));
    PT_EQ(pario_pgas_memget(ctx, got, &a.dst, l->dst_off, l->nelems), PARIO_OK);
    uint64_t bad = 0;
    for (uint64_t i = 0; i < l->nelems; i++) {
        store(t, want, prefix[i]);
        bad += load(t, got + i * es) != load(t, want);
    }
    PT_EQ(bad, 0);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    free(buf);
    free(got);
    free(prefix);
    free_arrays(ctx, &a);
}

/* The affine composition (non-commutative) and an int sum by a user function. */
static void check_user_ops(pario_pgas *ctx, const layout *l, int mode) {
    arrays a = make_arrays(ctx, l, sizeof(unsigned long long));
    unsigned long long *buf = malloc(sizeof *buf * l->nelems),
                       *pre = malloc(sizeof *pre * l->nelems);
    for (uint64_t i = 0; i < l->nelems; i++) {
        buf[i] = affine_value(i);
        pre[i] = buf[i];
        if (i > 0) {
            pre[i] = pre[i - 1];
            affine_then(&pre[i], &buf[i]);
        }
    }
    fill_src(ctx, l, &a, buf);
    PT_EQ(pario_pgas_all_reduce(ctx, a.r, a.s, PARIO_PGAS_NONCOMM_FUNC, PARIO_PGAS_ULLONG,
                                l->nelems, l->blk, affine_then, mode),
          PARIO_OK);
    PT_EQ(pario_pgas_all_prefix_reduce(ctx, a.d, a.s, PARIO_PGAS_NONCOMM_FUNC, PARIO_PGAS_ULLONG,
                                       l->nelems, l->blk, affine_then, mode),
          PARIO_OK);
    settle(ctx, mode);
    unsigned long long r = 0;
    PT_EQ(pario_pgas_get(ctx, a.r, &r), PARIO_OK);
    PT_EQ(r, pre[l->nelems - 1]);
    PT_EQ(pario_pgas_memget(ctx, buf, &a.dst, l->dst_off, l->nelems), PARIO_OK);
    uint64_t bad = 0;
    for (uint64_t i = 0; i < l->nelems; i++)
        bad += buf[i] != pre[i];
    PT_EQ(bad, 0);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    free_arrays(ctx, &a);
    /* a commutative user function: int sum */
    a = make_arrays(ctx, l, sizeof(int));
    int *ints = (int *)buf, sum = 0;
    for (uint64_t i = 0; i < l->nelems; i++)
        sum += ints[i] = (int)(i * 3) - 50;
    fill_src(ctx, l, &a, ints);
    PT_EQ(pario_pgas_all_reduce(ctx, a.r, a.s, PARIO_PGAS_FUNC, PARIO_PGAS_INT, l->nelems, l->blk,
                                int_add, mode),
          PARIO_OK);
    settle(ctx, mode);
    int got[4] = {0}; /* room for any element size the copy may take */
    PT_EQ(pario_pgas_get(ctx, a.r, got), PARIO_OK);
    PT_EQ(got[0], sum);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    free_arrays(ctx, &a);
    free(buf);
    free(pre);
}

static void check_errors(pario_pgas *ctx) {
    int n = pario_pgas_threads(ctx), me = pario_pgas_mythread(ctx);
    layout l = {16, 2, 0, 0};
    arrays a = make_arrays(ctx, &l, sizeof(double));
    PT_EQ(pario_pgas_all_reduce(ctx, a.r, a.s, PARIO_PGAS_XOR, PARIO_PGAS_DOUBLE, 16, 2, NULL, 0),
          PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "bitwise op on the floating type double"));
    PT_EQ(pario_pgas_all_prefix_reduce(ctx, a.d, a.s, PARIO_PGAS_FUNC, PARIO_PGAS_DOUBLE, 16, 2,
                                       NULL, 0),
          PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "without a function"));
    PT_EQ(pario_pgas_all_reduce(ctx, a.r, a.s, PARIO_PGAS_ADD, PARIO_PGAS_DOUBLE, 0, 2, NULL, 0),
          PARIO_ERR_ARG);
    PT_EQ(
        pario_pgas_all_reduce(ctx, a.r, a.s, PARIO_PGAS_ADD, PARIO_PGAS_TYPE_COUNT, 16, 2, NULL, 0),
        PARIO_ERR_ARG);
    /* arguments differing between ranks: every rank fails */
    int rc =
        pario_pgas_all_reduce(ctx, a.r, a.s, PARIO_PGAS_ADD,
                              me == n - 1 ? PARIO_PGAS_ULLONG : PARIO_PGAS_DOUBLE, 16, 2, NULL, 0);
    PT_EQ(rc, n > 1 ? PARIO_ERR_NOT_SAME : PARIO_OK);
    rc = pario_pgas_all_prefix_reduce(ctx, a.d, a.s, PARIO_PGAS_MAX, PARIO_PGAS_DOUBLE,
                                      me == 0 ? 15 : 16, 2, NULL, 0);
    PT_EQ(rc, n > 1 ? PARIO_ERR_NOT_SAME : PARIO_OK);
    /* source running past the shared heaps (checked by the ranks owning it) */
    pario_pgas_ptr end = a.s;
    end.addr = pario_pgas_map(ctx)->heap_hi - 64;
    PT_EQ(pario_pgas_all_reduce(ctx, a.r, end, PARIO_PGAS_ADD, PARIO_PGAS_DOUBLE, 16 * (uint64_t)n,
                                2, NULL, 0),
          PARIO_ERR_ARG);
    pario_pgas_ptr null = {0};
    PT_EQ(pario_pgas_all_prefix_reduce(ctx, null, a.s, PARIO_PGAS_ADD, PARIO_PGAS_DOUBLE, 16, 2,
                                       NULL, 0),
          PARIO_ERR_ARG);
    PT_EQ(pario_pgas_all_reduce(ctx, a.r, a.s, PARIO_PGAS_ADD, PARIO_PGAS_DOUBLE, 16, 2, NULL,
                                PARIO_PGAS_OUT_NOSYNC | PARIO_PGAS_OUT_ALLSYNC),
          PARIO_ERR_ARG);
    free_arrays(ctx, &a);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    pario_pgas *ctx = test_pgas_init();
    int k = 0, nmodes = (int)(sizeof modes / sizeof *modes);
    for (int t = 0; t < PARIO_PGAS_TYPE_COUNT; t++)
        for (int op = PARIO_PGAS_ADD; op <= PARIO_PGAS_MAX; op++) {
            int bitwise = op == PARIO_PGAS_AND || op == PARIO_PGAS_OR || op == PARIO_PGAS_XOR;
            if (!(bitwise && is_floating((pario_pgas_type)t)))
                check_builtin(ctx, (pario_pgas_type)t, (pario_pgas_op)op, &layouts[0],
                              modes[k++ % nmodes]);
        }
    static const int some_types[] = {PARIO_PGAS_INT, PARIO_PGAS_DOUBLE, PARIO_PGAS_UCHAR,
                                     PARIO_PGAS_LDOUBLE};
    static const int some_ops[] = {PARIO_PGAS_ADD, PARIO_PGAS_MIN, PARIO_PGAS_XOR, PARIO_PGAS_MAX};
    for (size_t l = 0; l < sizeof layouts / sizeof *layouts; l++) {
        for (int s = 0; s < 4; s++)
            check_builtin(ctx, (pario_pgas_type)some_types[s], (pario_pgas_op)some_ops[s],
                          &layouts[l], modes[k++ % nmodes]);
        check_user_ops(ctx, &layouts[l], modes[k++ % nmodes]);
    }
    check_errors(ctx);
    PT_EQ(pario_pgas_finalize(&ctx), PARIO_OK);
    return ptest_finish();
}
