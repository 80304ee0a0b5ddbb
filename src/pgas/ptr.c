/* Pointer-to-shared arithmetic that does not fit inline: the general step
 * (with divisions), the precomputed divisors of pario_pgas_elem and the
 * index kind of pario_pgas_elem_loc. */
#include "pgas/pgas_internal.h"

/* Floor division (C's / truncates toward zero). */
static int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

pario_pgas_place pario_pgas_ptr_place_any(pario_pgas_ptr p, int64_t n) {
    int64_t es = (int64_t)p.elem_size;
    if (p.block == 0 || p.nranks == 0)
        return (pario_pgas_place){(uint64_t)((int64_t)p.addr + n * es), p.phase, p.rank};
    int64_t b = (int64_t)p.block, row = b * (int64_t)p.nranks;
    int64_t pos = (int64_t)p.rank * b + (int64_t)p.phase + n; /* in the current row */
    int64_t rows = floor_div(pos, row);
    int64_t in_row = pos - rows * row;
    int64_t phase = in_row % b;
    return (pario_pgas_place){
        (uint64_t)((int64_t)p.addr + (phase - (int64_t)p.phase) * es + rows * b * es),
        (uint64_t)phase, (uint32_t)(in_row / b)};
}

pario_pgas_ptr pario_pgas_ptr_add_any(pario_pgas_ptr p, int64_t n) {
    return pario_pgas_ptr_at_place(p, pario_pgas_ptr_place_any(p, n));
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

/* log2 of x when x is a power of two, else -1. */
static int exact_log2(uint64_t x) {
    return x != 0 && (x & (x - 1)) == 0 ? __builtin_ctzll(x) : -1;
}

/* The index path's formula for a's layout (pario_pgas_elem_loc); needs the
 * divisors set first. Multiplications only (array checks run it). */
static void choose_index_kind(const pario_pgas_array *a, pario_pgas_array *to) {
    uint64_t b = a->base.block, n = a->base.nranks, row = 0;
    int divisors = a->index_mul == 1, lb = exact_log2(b), ln = exact_log2(n);
    to->index_kind = PARIO_PGAS_INDEX_ANY;
    to->block_shift = to->ranks_shift = 0;
    if (n == 0)
        return;
    if (b == 0 || n == 1)
        to->index_kind = PARIO_PGAS_INDEX_ONE_RANK;
    else if (divisors && b == 1)
        to->index_kind = PARIO_PGAS_INDEX_CYCLIC;
    else if (divisors && !__builtin_mul_overflow(b, n, &row) && a->count <= row)
        to->index_kind = PARIO_PGAS_INDEX_ONE_ROW;
    else if (lb >= 0 && ln >= 0 && lb + ln < 64) {
        to->index_kind = PARIO_PGAS_INDEX_POW2;
        to->block_shift = (uint32_t)lb;
        to->ranks_shift = (uint32_t)ln;
    } else if (divisors)
        to->index_kind = PARIO_PGAS_INDEX_DIV;
}

void pgas_set_divisors(pario_pgas_array *a) {
    uint64_t xmax = 0;
    a->index_mul = 0;
    a->block_mul = 0;
    a->ranks_mul = 0;
    if (position_limit(a, &xmax)) {
        uint64_t bm = 0, rm = 0;
        if (pario_pgas_div_mul_exact(a->base.block, xmax, &bm) &&
            pario_pgas_div_mul_exact(a->base.nranks, xmax / a->base.block, &rm)) {
            a->index_mul = 1;
            a->block_mul = bm;
            a->ranks_mul = rm;
        }
    }
    choose_index_kind(a, a);
}

/* The divisors part of pgas_divisors_valid. */
static int muls_valid(const pario_pgas_array *a) {
    uint64_t xmax = 0;
    if (a->index_mul == 0)
        return a->block_mul == 0 && a->ranks_mul == 0;
    /* xmax / B bounds the block numbers; div_mul gives it once block_mul is exact */
    return a->index_mul == 1 && position_limit(a, &xmax) &&
           mul_exact(a->base.block, a->block_mul, xmax) &&
           mul_exact(a->base.nranks, a->ranks_mul, pario_pgas_div_mul(xmax, a->block_mul));
}

int pgas_divisors_valid(const pario_pgas_array *a) {
    if (!muls_valid(a))
        return 0;
    if (a->index_kind == PARIO_PGAS_INDEX_ANY)
        return a->block_shift == 0 && a->ranks_shift == 0 && a->reserved == 0;
    pario_pgas_array want = *a;
    choose_index_kind(a, &want);
    return a->index_kind == want.index_kind && a->block_shift == want.block_shift &&
           a->ranks_shift == want.ranks_shift && a->reserved == 0;
}

int pario_pgas_same_layout(const pario_pgas_array *a, const pario_pgas_array *b) {
    const pario_pgas_ptr p = a->base, q = b->base;
    return a->count == b->count && p.block == q.block && p.nranks == q.nranks && p.rank == q.rank &&
           p.phase == q.phase && a->index_kind == b->index_kind && a->index_mul == b->index_mul &&
           a->block_mul == b->block_mul && a->ranks_mul == b->ranks_mul &&
           a->block_shift == b->block_shift && a->ranks_shift == b->ranks_shift;
}
