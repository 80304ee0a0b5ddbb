/* pgas: the index path (pario_pgas_elem_loc, index_slot / slot_loc,
 * load_at / store_at; the typed _at forms are in pgas_access), UPC's a[i],
 * against the checked path: every block factor (0, 1, 3, 128, [*], a power
 * of two), element sizes 1 to 16, every index kind, views, one slot for
 * arrays of one layout, steps of whole rows (ptr_step), and (debug checks on here) the
 * last index and the one past it. Run node-local, with PARIO_NODE_SIZE=1
 * (other ranks' elements through gas) and mixed. */
#define PARIO_PGAS_DEBUG_CHECKS 1
#include <mpi.h>
#include <stdio.h>

#include "pgas_test.h"

/* A prime: blocks and rows end unevenly; more than 128 x 4 elements, so
 * B = 128 and B = 64 have several rows at 2 and 4 ranks (kinds POW2 and,
 * at 3 ranks, DIV). */
#define COUNT 1031
#define MAX_ELEM 16

static const uint64_t blocks[] = {0, 1, 3, 128, PARIO_PGAS_BLOCK_FIT, 64};

static int same_loc(pario_pgas_loc l, pario_pgas_ptr p) {
    return l.rank == p.rank && l.addr == p.addr;
}

/* elem_loc, elem_loc_as with the array's kind and with ANY, for every index,
 * against pario_pgas_elem; also from views (base moved to element j). */
static uint64_t loc_mismatches(const pario_pgas_array *a) {
    uint64_t bad = 0, es = a->base.elem_size;
    for (uint64_t i = 0; i < a->count; i++) {
        pario_pgas_ptr p = pario_pgas_elem(a, i);
        bad += !same_loc(pario_pgas_elem_loc(a, i), p) ||
               !same_loc(pario_pgas_elem_loc_as(a, i, (uint32_t)es, a->index_kind), p) ||
               !same_loc(pario_pgas_elem_loc_as(a, i, (uint32_t)es, PARIO_PGAS_INDEX_ANY), p);
    }
    for (uint64_t j = 1; j < a->count; j += 97) {
        pario_pgas_array view = *a;
        view.base = pario_pgas_elem(a, j);
        for (uint64_t i = 0; i + j < a->count; i++) {
            pario_pgas_slot s = pario_pgas_index_slot(&view, i, view.index_kind);
            pario_pgas_slot any = pario_pgas_index_slot(&view, i, PARIO_PGAS_INDEX_ANY);
            bad += !same_loc(pario_pgas_elem_loc_as(&view, i, (uint32_t)es, view.index_kind),
                             pario_pgas_elem(a, i + j)) ||
                   s.rank != any.rank || s.local != any.local;
        }
    }
    return bad;
}

/* One slot serves every array of the layout: b (same count and block
 * factor, 8-byte elements) at a's slot of i is b's element i; an array of
 * another count is not the same layout, nor is a view whose base moved to
 * another rank or phase. */
static uint64_t shared_slot_mismatches(pario_pgas *ctx, const pario_pgas_array *a) {
    pario_pgas_array b, other;
    uint64_t bad = 0;
    PT_EQ(pario_pgas_all_alloc(ctx, a->count, 8, a->base.block, &b), PARIO_OK);
    PT_EQ(pario_pgas_all_alloc(ctx, a->count + 1, 8, a->base.block, &other), PARIO_OK);
    bad += pario_pgas_same_layout(a, &b) != 1 || pario_pgas_same_layout(&b, a) != 1;
    bad += pario_pgas_same_layout(a, &other) != 0;
    for (uint64_t i = 0; i < a->count; i++) {
        pario_pgas_slot s = pario_pgas_index_slot(a, i, a->index_kind);
        bad += !same_loc(pario_pgas_slot_loc(&b, s, 8), pario_pgas_elem(&b, i));
    }
    /* a view whose base moved to element 1 keeps the layout only where that
     * element has the base's rank and phase (B = 0, or B = 1 on one rank) */
    pario_pgas_array view = *a;
    view.base = pario_pgas_elem(a, a->count > 1);
    int kept = view.base.rank == a->base.rank && view.base.phase == a->base.phase;
    bad += pario_pgas_same_layout(a, &view) != kept;
    PT_EQ(pario_pgas_all_free(ctx, &other), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &b), PARIO_OK);
    return bad;
}

/* p + one row (B * nranks elements) is the element one row on, by ptr_add
 * and by a step worked out once (ptr_step); so are steps of two rows, back
 * one row, and steps that are not whole rows (1, 3, row + 1). */
static uint64_t row_step_mismatches(const pario_pgas_array *a) {
    int64_t row = (int64_t)(a->base.block * a->base.nranks);
    uint64_t bad = 0;
    if (a->count == 0)
        return 0;
    pario_pgas_ptr first = pario_pgas_elem(a, 0);
    const int64_t steps[] = {row, 2 * row, -row, 1, 3, row + 1};
    for (size_t k = 0; k < sizeof steps / sizeof *steps; k++) {
        int64_t n = steps[k];
        pario_pgas_step st = pario_pgas_step_of(first, n);
        bad += st.rows != (a->base.block == 0 || (row != 0 && n % row == 0));
        for (uint64_t i = 0; i < a->count; i++) {
            int64_t to = (int64_t)i + n;
            if (n == 0 || to < 0 || to >= (int64_t)a->count)
                continue;
            pario_pgas_ptr p = pario_pgas_elem(a, i), want = pario_pgas_elem(a, (uint64_t)to);
            pario_pgas_ptr q = pario_pgas_ptr_step(p, st);
            bad += !pario_pgas_ptr_eq(q, want) || q.phase != want.phase;
            if (n == row) {
                q = pario_pgas_ptr_add(p, n);
                bad += !pario_pgas_ptr_eq(q, want) || q.phase != want.phase;
            }
        }
    }
    return bad;
}

/* The index kind the layout must get. */
static uint32_t expected_kind(const pario_pgas_array *a) {
    uint64_t b = a->base.block, n = a->base.nranks;
    if (b == 0 || n == 1)
        return PARIO_PGAS_INDEX_ONE_RANK;
    if (b == 1)
        return PARIO_PGAS_INDEX_CYCLIC;
    if (a->count <= b * n)
        return PARIO_PGAS_INDEX_ONE_ROW;
    if ((b & (b - 1)) == 0 && (n & (n - 1)) == 0)
        return PARIO_PGAS_INDEX_POW2;
    return PARIO_PGAS_INDEX_DIV;
}

/* Every rank stores elements i % nranks == rank with store_at; every rank
 * reads its neighbour's with the checked get_at and with load_at; then the
 * same the other way round (put_at, load_at). Every SAMPLE-th row of ranks
 * (off node each access is a round trip), so many phases and ranks. */
#define SAMPLE 11
static void check_data(pario_pgas *ctx, const pario_pgas_array *a, int salt) {
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    uint32_t es = a->base.elem_size;
    unsigned char buf[MAX_ELEM], got[MAX_ELEM];
    uint64_t bad = 0, next = (uint64_t)(rank + 1) % (uint64_t)n;
    for (uint64_t i = (uint64_t)rank; i < a->count; i += SAMPLE * (uint64_t)n) {
        test_fill(buf, i, 1, es, salt);
        bad += pario_pgas_store_at(ctx, a, i, buf) != PARIO_OK;
    }
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    for (uint64_t i = next; i < a->count; i += SAMPLE * (uint64_t)n) {
        memset(got, 0, sizeof got);
        bad += pario_pgas_get_at(ctx, a, i, got) != PARIO_OK || test_mismatch(got, i, 1, es, salt);
        memset(got, 0, sizeof got);
        bad += pario_pgas_load_at(ctx, a, i, got) != PARIO_OK || test_mismatch(got, i, 1, es, salt);
    }
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    for (uint64_t i = (uint64_t)rank; i < a->count; i += SAMPLE * (uint64_t)n) {
        test_fill(buf, i, 1, es, salt + 1);
        bad += pario_pgas_put_at(ctx, a, i, buf) != PARIO_OK;
    }
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    for (uint64_t i = next; i < a->count; i += SAMPLE * (uint64_t)n) {
        memset(got, 0, sizeof got);
        bad += pario_pgas_load_at(ctx, a, i, got) != PARIO_OK ||
               test_mismatch(got, i, 1, es, salt + 1);
    }
    PT_EQ(bad, 0);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
}

static void check_layout(pario_pgas *ctx, uint64_t block, uint32_t es, int salt) {
    pario_pgas_array a;
    PT_EQ(pario_pgas_all_alloc(ctx, COUNT, es, block, &a), PARIO_OK);
    PT_EQ(a.index_kind, expected_kind(&a));
    PT_EQ(loc_mismatches(&a), 0);
    PT_EQ(row_step_mismatches(&a), 0);
    PT_EQ(shared_slot_mismatches(ctx, &a), 0);
    check_data(ctx, &a, salt);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
}

/* Debug checks: the last index is fine, the one past it fails naming the
 * index and nothing is written; a typed form of another size fails. */
static void check_bounds(pario_pgas *ctx, uint64_t block) {
    pario_pgas_array a;
    PT_EQ(pario_pgas_all_alloc(ctx, COUNT, 8, block, &a), PARIO_OK);
    double v = 1.5, got = 0;
    PT_EQ(pario_pgas_store_double_at(ctx, &a, COUNT - 1, v), PARIO_OK);
    PT_EQ(pario_pgas_load_double_at(ctx, &a, COUNT - 1, &got), PARIO_OK);
    PT_EQ(got == v, 1);
    got = -2;
    PT_EQ(pario_pgas_load_double_at(ctx, &a, COUNT, &got), PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "index 1031 outside the array of 1031 elements"));
    PT_CHECK(test_msg_has(ctx, "pario_pgas_load_double_at"));
    PT_EQ(got == -2, 1);
    PT_EQ(pario_pgas_store_double_at(ctx, &a, COUNT, v), PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "index 1031"));
    PT_EQ(pario_pgas_store_at(ctx, &a, UINT64_MAX, &v), PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "index 18446744073709551615"));
    PT_EQ(pario_pgas_load_at(ctx, &a, COUNT, &got), PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "pario_pgas_load_at"));
    uint32_t small = 0;
    PT_EQ(pario_pgas_load_u32_at(ctx, &a, 0, &small), PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "8-byte elements used for 4 bytes"));
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
}

/* A corrupted index kind is not an array (the checked calls refuse it). */
static void check_kind_validated(pario_pgas *ctx) {
    pario_pgas_array a, junk;
    PT_EQ(pario_pgas_all_alloc(ctx, COUNT, 8, 128, &a), PARIO_OK);
    double got = 0;
    junk = a;
    junk.index_kind = PARIO_PGAS_INDEX_ONE_RANK + PARIO_PGAS_INDEX_DIV - a.index_kind;
    PT_EQ(pario_pgas_get_at(ctx, &junk, 0, &got), PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "not a shared array"));
    junk = a;
    junk.block_shift++;
    PT_EQ(pario_pgas_load_double_at(ctx, &junk, 0, &got), PARIO_ERR_ARG);
    junk = a;
    junk.reserved = 1;
    PT_EQ(pario_pgas_get_at(ctx, &junk, 0, &got), PARIO_ERR_ARG);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    pario_pgas *ctx = test_pgas_init();
    int salt = 0;
    for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++)
        for (uint32_t es = 1; es <= MAX_ELEM; es++)
            check_layout(ctx, blocks[b], es, salt += 3);
    for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++)
        check_bounds(ctx, blocks[b]);
    check_kind_validated(ctx);
    PT_EQ(pario_pgas_finalize(&ctx), PARIO_OK);
    PT_CHECK(ctx == NULL);
    return ptest_finish();
}
