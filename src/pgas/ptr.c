/* Pointer-to-shared arithmetic that does not fit inline: the general step
 * (with divisions) and the precomputed divisors of pario_pgas_elem. */
#include "pgas/pgas_internal.h"

/* Floor division (C's / truncates toward zero). */
static int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

pario_pgas_ptr pario_pgas_ptr_add_any(pario_pgas_ptr p, int64_t n) {
    int64_t es = (int64_t)p.elem_size;
    if (p.block == 0 || p.nranks == 0) {
        p.addr = (uint64_t)((int64_t)p.addr + n * es);
        return p;
    }
    int64_t b = (int64_t)p.block, row = b * (int64_t)p.nranks;
    int64_t pos = (int64_t)p.rank * b + (int64_t)p.phase + n; /* in the current row */
    int64_t rows = floor_div(pos, row);
    int64_t in_row = pos - rows * row;
    int64_t phase = in_row % b;
    p.addr = (uint64_t)((int64_t)p.addr + (phase - (int64_t)p.phase) * es + rows * b * es);
    p.rank = (uint32_t)(in_row / b);
    p.phase = (uint64_t)phase;
    return p;
}

pario_pgas_ptr pario_pgas_elem_any(const pario_pgas_array *a, uint64_t i) {
    return pario_pgas_ptr_add_any(a->base, (int64_t)i);
}

typedef unsigned __int128 u128;
#define TWO63 ((uint64_t)1 << 63)

/* 1 when mul == ceil(2^63 / d) and pario_pgas_div_mul(x, mul) == x / d for
 * every x <= xmax: mul * d = 2^63 + e with 0 <= e < d, and x * e < 2^63
 * (then x * mul / 2^63 = x / d + x * e / (d 2^63) stays below the next
 * integer). Multiplications only: array checks run it on every call. */
static int mul_exact(uint64_t d, uint64_t mul, uint64_t xmax) {
    u128 prod = (u128)mul * d;
    if (d == 0 || prod < TWO63 || prod - TWO63 >= d || xmax >= TWO63)
        return 0;
    return (u128)xmax * (uint64_t)(prod - TWO63) < TWO63;
}

int pario_pgas_div_mul_exact(uint64_t d, uint64_t xmax, uint64_t *mul) {
    *mul = d ? TWO63 / d + (TWO63 % d != 0) : 0;
    return mul_exact(d, *mul, xmax);
}

/* The largest position elem divides by B for a (count + B * nranks: an
 * index plus a view's offset in its row); 0 when it does not fit. */
static int position_limit(const pario_pgas_array *a, uint64_t *xmax) {
    uint64_t row = 0;
    return a->base.block != 0 && a->base.nranks != 0 &&
           !__builtin_mul_overflow(a->base.block, (uint64_t)a->base.nranks, &row) &&
           !__builtin_add_overflow(a->count, row, xmax);
}

void pgas_set_divisors(pario_pgas_array *a) {
    uint64_t xmax = 0;
    a->index_mul = 0;
    a->block_mul = 0;
    a->ranks_mul = 0;
    if (!position_limit(a, &xmax))
        return;
    uint64_t bm = 0, rm = 0;
    if (pario_pgas_div_mul_exact(a->base.block, xmax, &bm) &&
        pario_pgas_div_mul_exact(a->base.nranks, xmax / a->base.block, &rm)) {
        a->index_mul = 1;
        a->block_mul = bm;
        a->ranks_mul = rm;
    }
}

int pgas_divisors_valid(const pario_pgas_array *a) {
    uint64_t xmax = 0;
    if (a->index_mul == 0)
        return a->block_mul == 0 && a->ranks_mul == 0;
    /* xmax / B bounds the block numbers; div_mul gives it once block_mul is exact */
    return a->index_mul == 1 && position_limit(a, &xmax) &&
           mul_exact(a->base.block, a->block_mul, xmax) &&
           mul_exact(a->base.nranks, a->ranks_mul, pario_pgas_div_mul(xmax, a->block_mul));
}
