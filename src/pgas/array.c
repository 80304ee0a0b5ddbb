/* Shared arrays: layout, allocation and free, validity checks, runs. */
#include "pgas/pgas_internal.h"

/* ---- layout ---- */

/* The block factor an allocation asked for, made concrete ([*] resolved). */
static uint64_t resolve_block(uint64_t count, uint64_t block, int nranks) {
    if (block != PARIO_PGAS_BLOCK_FIT)
        return block;
    uint64_t b = count / (uint64_t)nranks + (count % (uint64_t)nranks != 0);
    return b ? b : 1;
}

/* Bytes each rank's part needs: rank 0 holds the most blocks. 0 with *bytes
 * set, or PARIO_ERR_ARG when the size does not fit in 64 bits. */
static int part_bytes(uint64_t count, uint32_t elem_size, uint64_t block, int nranks,
                      uint64_t *bytes) {
    uint64_t elems = count;
    if (block != 0) {
        uint64_t nblocks = count / block + (count % block != 0);
        uint64_t mine = nblocks / (uint64_t)nranks + (nblocks % (uint64_t)nranks != 0);
        if (__builtin_mul_overflow(mine, block, &elems))
            return PARIO_ERR_ARG;
    }
    return __builtin_mul_overflow(elems, (uint64_t)elem_size, bytes) ? PARIO_ERR_ARG : PARIO_OK;
}

uint64_t pario_pgas_local_count(const pario_pgas_array *a, int rank) {
    uint64_t n = a->base.nranks, b = a->base.block, r = (uint64_t)rank;
    if (rank < 0 || r >= n)
        return 0;
    if (b == 0)
        return a->base.rank == r ? a->count : 0;
    uint64_t nblocks = a->count / b + (a->count % b != 0);
    if (nblocks <= r)
        return 0;
    uint64_t mine = (nblocks - 1 - r) / n + 1;
    uint64_t elems = mine * b;
    if ((nblocks - 1) % n == r) /* the last block may be short */
        elems -= nblocks * b - a->count;
    return elems;
}

/* The run from element p on: at most left elements, within p's block. */
static pgas_run run_from(pario_pgas_ptr p, uint64_t left) {
    if (p.block != 0 && p.block - p.phase < left)
        left = p.block - p.phase;
    return (pgas_run){left, p.rank, p.addr};
}

pgas_run pgas_ptr_run_at(pario_pgas_ptr base, uint64_t i, uint64_t end) {
    return run_from(pario_pgas_ptr_add(base, (int64_t)i), end - i);
}

pgas_run pgas_run_at(const pario_pgas_array *a, uint64_t i, uint64_t end) {
    return run_from(pario_pgas_elem(a, i), end - i);
}

/* x / B and x / nranks for positions and block numbers of a (B >= 1), by
 * the precomputed divisors when the array has them. */
static uint64_t blocks_of(const pario_pgas_array *a, uint64_t x) {
    return a->index_mul == 1 ? pario_pgas_div_mul(x, a->block_mul) : x / a->base.block;
}
static uint64_t ranks_of(const pario_pgas_array *a, uint64_t x) {
    return a->index_mul == 1 ? pario_pgas_div_mul(x, a->ranks_mul) : x / a->base.nranks;
}

int pario_pgas_owned_next(const pario_pgas_array *a, int rank, uint64_t *cursor,
                          pario_pgas_range *r) {
    uint64_t n = a->base.nranks, b = a->base.block, c = *cursor;
    if (rank < 0 || (uint64_t)rank >= n || c >= a->count)
        return 0;
    if (b == 0) {
        if (a->base.rank != (uint32_t)rank)
            return 0;
        *r = (pario_pgas_range){c, a->count - c};
        *cursor = a->count;
        return 1;
    }
    uint64_t k = blocks_of(a, c);                                   /* first candidate block */
    uint64_t ahead = (uint64_t)rank + n - (k - ranks_of(a, k) * n); /* 1 .. 2n - 1 */
    k += ahead >= n ? ahead - n : ahead;
    if (k > blocks_of(a, a->count - 1))
        return 0;
    uint64_t first = k * b > c ? k * b : c;
    uint64_t end = (k + 1) * b < a->count ? (k + 1) * b : a->count;
    *r = (pario_pgas_range){first, end - first};
    *cursor = end;
    return 1;
}

/* ---- checks ---- */

int pgas_check_ptr(pario_pgas *ctx, pario_pgas_ptr p, const char *what) {
    const char *why = NULL;
    if (p.nranks == 0)
        why = "the null pointer-to-shared";
    else if (p.nranks != (uint32_t)ctx->nranks || p.rank >= p.nranks)
        why = "not a pointer of this context (rank or team size)";
    else if (p.elem_size == 0 || (p.block == 0 ? p.phase != 0 : p.phase >= p.block))
        why = "not a pointer-to-shared (element size or phase)";
    else if (p.addr < ctx->sym_lo || p.addr >= ctx->local_hi ||
             p.elem_size > ctx->local_hi - p.addr)
        why = "address outside the shared heaps";
    if (!why)
        return PARIO_OK;
    return pgas_fail(ctx, PARIO_ERR_ARG, "pgas: %s: pointer (rank %u, phase %llu, addr %llu): %s",
                     what, p.rank, (unsigned long long)p.phase, (unsigned long long)p.addr, why);
}

int pgas_check_array(pario_pgas *ctx, const pario_pgas_array *a, const char *what) {
    if (!a)
        return pgas_fail(ctx, PARIO_ERR_ARG, "pgas: %s: NULL array", what);
    int rc = pgas_check_ptr(ctx, a->base, what);
    if (rc != PARIO_OK)
        return rc;
    uint64_t bytes = 0;
    int bad = a->origin < PARIO_PGAS_ALL || a->origin > PARIO_PGAS_LOCAL || a->id == 0 ||
              (a->base.block != 0 && (a->base.rank != 0 || a->base.phase != 0)) ||
              part_bytes(a->count, a->base.elem_size, a->base.block, ctx->nranks, &bytes) ||
              bytes > ctx->local_hi - a->base.addr || !pgas_divisors_valid(a);
    if (bad)
        return pgas_fail(ctx, PARIO_ERR_ARG, "pgas: %s: not a shared array of this context", what);
    return PARIO_OK;
}

int pgas_check_range(pario_pgas *ctx, const pario_pgas_array *a, uint64_t first, uint64_t count,
                     const char *what) {
    int rc = pgas_check_array(ctx, a, what);
    if (rc != PARIO_OK)
        return rc;
    if (first <= a->count && count <= a->count - first)
        return PARIO_OK;
    uint64_t outside = first > a->count ? first : a->count;
    return pgas_fail(ctx, PARIO_ERR_ARG,
                     "pgas: %s: index %llu outside the array of %llu elements (range %llu + %llu)",
                     what, (unsigned long long)outside, (unsigned long long)a->count,
                     (unsigned long long)first, (unsigned long long)count);
}

int pario_pgas_index(pario_pgas *ctx, const pario_pgas_array *a, uint64_t i, pario_pgas_ptr *p) {
    int rc = pgas_check_range(ctx, a, i, 1, "pario_pgas_index");
    if (rc == PARIO_OK)
        *p = pario_pgas_elem(a, i);
    return rc;
}

/* ---- allocation ---- */

/* Where an array with this block factor lives and who keeps that book. */
static int region_of(uint64_t block) {
    return block == 0 ? PGAS_LOCAL : PGAS_SYMMETRIC;
}
static int keeper_of(const pario_pgas_array *a) {
    return a->base.block == 0 ? (int)a->base.rank : 0;
}

/* Checks the arguments of an allocation; *bytes is what each part needs. */
static int check_alloc_args(pario_pgas *ctx, uint64_t count, uint32_t elem_size, uint64_t block,
                            uint64_t *bytes, const char *what) {
    if (elem_size == 0)
        return pgas_fail(ctx, PARIO_ERR_ARG, "pgas: %s: element size 0", what);
    if (part_bytes(count, elem_size, block, ctx->nranks, bytes) != PARIO_OK ||
        *bytes > ctx->local_hi)
        return pgas_fail(ctx, PARIO_ERR_NO_MEM,
                         "pgas: %s: %llu elements of %u bytes in blocks of %llu do not fit a heap",
                         what, (unsigned long long)count, elem_size, (unsigned long long)block);
    return PARIO_OK;
}

static pario_pgas_array make_array(pario_pgas *ctx, uint64_t count, uint32_t elem_size,
                                   uint64_t block, int home, uint64_t offset, uint64_t id,
                                   int origin) {
    pario_pgas_array a = {.count = count, .id = id, .origin = (uint32_t)origin};
    a.base =
        (pario_pgas_ptr){offset, 0, block, elem_size, (uint32_t)home, (uint32_t)ctx->nranks, 0};
    pgas_set_divisors(&a);
    return a;
}

int pario_pgas_all_alloc(pario_pgas *ctx, uint64_t count, uint32_t elem_size, uint64_t block,
                         pario_pgas_array *a) {
    const char *what = "pario_pgas_all_alloc";
    uint64_t b = resolve_block(count, block, ctx->nranks), bytes = 0;
    int bad = check_alloc_args(ctx, count, elem_size, b, &bytes, what) != PARIO_OK;
    uint64_t args[3] = {count, elem_size, block};
    int rc = pgas_agree(ctx, args, 3, bad, what);
    if (rc != PARIO_OK)
        return rc;
    uint64_t got[2] = {0, 0};
    if (ctx->rank == 0)
        rc = pgas_book_alloc(ctx, region_of(b), 0, bytes, &got[0], &got[1]);
    rc = pgas_share_result(ctx, rc, 0, got, 2);
    if (rc == PARIO_OK)
        *a = make_array(ctx, count, elem_size, b, 0, got[0], got[1], PARIO_PGAS_ALL);
    return rc;
}

int pario_pgas_global_alloc(pario_pgas *ctx, uint64_t count, uint32_t elem_size, uint64_t block,
                            pario_pgas_array *a) {
    const char *what = "pario_pgas_global_alloc";
    uint64_t b = resolve_block(count, block, ctx->nranks), bytes = 0, offset = 0, id = 0;
    int rc = check_alloc_args(ctx, count, elem_size, b, &bytes, what);
    if (rc == PARIO_OK)
        rc = pgas_book_alloc(ctx, region_of(b), 0, bytes, &offset, &id);
    if (rc == PARIO_OK)
        *a = make_array(ctx, count, elem_size, b, 0, offset, id, PARIO_PGAS_GLOBAL);
    return rc;
}

int pario_pgas_alloc(pario_pgas *ctx, uint64_t count, uint32_t elem_size, pario_pgas_array *a) {
    const char *what = "pario_pgas_alloc";
    uint64_t bytes = 0, offset = 0, id = 0;
    int rc = check_alloc_args(ctx, count, elem_size, 0, &bytes, what);
    if (rc == PARIO_OK)
        rc = pgas_book_alloc(ctx, PGAS_LOCAL, ctx->rank, bytes, &offset, &id);
    if (rc == PARIO_OK)
        *a = make_array(ctx, count, elem_size, 0, ctx->rank, offset, id, PARIO_PGAS_LOCAL);
    return rc;
}

int pario_pgas_free(pario_pgas *ctx, const pario_pgas_array *a) {
    int rc = pgas_check_array(ctx, a, "pario_pgas_free");
    if (rc != PARIO_OK)
        return rc;
    return pgas_book_free(ctx, region_of(a->base.block), keeper_of(a), a->base.addr, a->id);
}

int pario_pgas_all_free(pario_pgas *ctx, const pario_pgas_array *a) {
    const char *what = "pario_pgas_all_free";
    int bad = pgas_check_array(ctx, a, what) != PARIO_OK;
    uint64_t args[3] = {bad ? 0 : a->base.addr, bad ? 0 : a->id, bad ? 0 : a->base.rank};
    int rc = pgas_agree(ctx, args, 3, bad, what);
    if (rc != PARIO_OK)
        return rc;
    int keeper = keeper_of(a);
    if (ctx->rank == keeper)
        rc = pgas_book_free(ctx, region_of(a->base.block), keeper, a->base.addr, a->id);
    return pgas_share_result(ctx, rc, keeper, args, 0);
}
