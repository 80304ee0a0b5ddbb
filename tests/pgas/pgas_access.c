/* pgas: element get/put, strict access, memget/memput/memcpy/memset, byte
 * exact, on every layout and element size; arrays from all_alloc,
 * global_alloc and alloc, freed by other ranks; the unchecked load/store
 * (generic for 1 .. 16 bytes, typed) against get. */
#include <stdint.h>
#include <stdlib.h>

#include "pgas_test.h"

#define COUNT 203 /* elements: a prime, so blocks and rows end unevenly */

static const uint64_t blocks[] = {0, 1, 3, 16, PARIO_PGAS_BLOCK_FIT};
static const uint32_t sizes[] = {1, 8, 12};

/* Every rank puts the elements i with i % nranks == rank, element by element
 * through pointers; every rank then reads every element. */
static void check_elements(pario_pgas *ctx, const pario_pgas_array *a, int salt) {
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    uint32_t es = a->base.elem_size;
    unsigned char *buf = malloc(es);
    for (uint64_t i = (uint64_t)rank; i < a->count; i += (uint64_t)n) {
        test_fill(buf, i, 1, es, salt);
        PT_EQ(pario_pgas_put(ctx, pario_pgas_elem(a, i), buf), PARIO_OK);
    }
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    uint64_t bad = 0;
    for (uint64_t i = 0; i < a->count; i++) {
        memset(buf, 0, es);
        PT_EQ(pario_pgas_get(ctx, pario_pgas_elem(a, i), buf), PARIO_OK);
        bad += test_mismatch(buf, i, 1, es, salt);
    }
    PT_EQ(bad, 0);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    free(buf);
}

/* Rank r memputs the r-th of n slices, everyone memgets all of it in pieces
 * of odd lengths starting anywhere. */
static void check_bulk(pario_pgas *ctx, const pario_pgas_array *a, int salt) {
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    uint32_t es = a->base.elem_size;
    uint64_t per = a->count / (uint64_t)n, first = per * (uint64_t)rank;
    uint64_t count = rank == n - 1 ? a->count - first : per;
    unsigned char *buf = malloc(a->count * es + 1);
    test_fill(buf, first, count, es, salt);
    PT_EQ(pario_pgas_memput(ctx, a, first, buf, count), PARIO_OK);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    uint64_t bad = 0;
    for (uint64_t start = 0, len = 1; start < a->count; start += len, len = len * 3 + 1) {
        uint64_t take = a->count - start < len ? a->count - start : len;
        memset(buf, 0, take * es + 1);
        PT_EQ(pario_pgas_memget(ctx, buf, a, start, take), PARIO_OK);
        bad += test_mismatch(buf, start, take, es, salt);
        bad += buf[take * es] != 0; /* nothing written past the end */
    }
    PT_EQ(bad, 0);
    memset(buf, 0, a->count * es);
    PT_EQ(pario_pgas_memget(ctx, buf, a, 0, a->count), PARIO_OK);
    PT_EQ(test_mismatch(buf, 0, a->count, es, salt), 0);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    free(buf);
}

/* memset of a middle range by the last rank, then memcpy from another
 * layout; every byte checked by memget. */
static void check_copy_set(pario_pgas *ctx, const pario_pgas_array *a, const pario_pgas_array *src,
                           int salt) {
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    uint32_t es = a->base.elem_size;
    uint64_t c = a->count;
    unsigned char *buf = malloc(c * es);
    if (rank == 0) { /* the source holds pattern salt + 1 */
        test_fill(buf, 0, c, es, salt + 1);
        PT_EQ(pario_pgas_memput(ctx, src, 0, buf, c), PARIO_OK);
    }
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    uint64_t set_first = c / 5, set_count = c / 3;
    if (rank == n - 1)
        PT_EQ(pario_pgas_memset(ctx, a, set_first, 0xA5, set_count), PARIO_OK);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    PT_EQ(pario_pgas_memget(ctx, buf, a, 0, c), PARIO_OK);
    uint64_t bad = 0;
    for (uint64_t i = 0; i < c; i++) {
        int in_set = i >= set_first && i < set_first + set_count;
        for (uint32_t k = 0; k < es; k++)
            bad += buf[i * es + k] != (in_set ? 0xA5 : test_byte(i, k, salt));
    }
    PT_EQ(bad, 0);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    /* Rank n-1 copies src[7 ..] into a[c/2 ..]: shifted by c/2 - 7. */
    uint64_t to = c / 2, from = 7, len = c - c / 2;
    if (rank == n - 1)
        PT_EQ(pario_pgas_memcpy(ctx, a, to, src, from, len), PARIO_OK);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    PT_EQ(pario_pgas_memget(ctx, buf, a, to, len), PARIO_OK);
    PT_EQ(test_mismatch(buf, from, len, es, salt + 1), 0);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    free(buf);
}

/* The unchecked accesses: every rank stores the elements i with i % nranks
 * == rank through a pointer stepped by ptr_inc (elements of other ranks go
 * the off-node way across nodes); every rank then walks the whole array
 * with load, against the bytes, against the checked get and against elem. */
static void check_load_store(pario_pgas *ctx, const pario_pgas_array *a, int salt) {
    uint64_t rank = (uint64_t)pario_pgas_mythread(ctx), n = (uint64_t)pario_pgas_threads(ctx);
    uint32_t es = a->base.elem_size;
    unsigned char *buf = malloc(es), *got = malloc(es);
    pario_pgas_ptr p = pario_pgas_elem(a, 0);
    for (uint64_t i = 0; i < a->count; i++, p = pario_pgas_ptr_inc(p)) {
        if (i % n != rank)
            continue;
        test_fill(buf, i, 1, es, salt);
        PT_EQ(pario_pgas_store(ctx, p, buf), PARIO_OK);
    }
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    uint64_t bad = 0;
    p = pario_pgas_elem(a, 0);
    for (uint64_t i = 0; i < a->count; i++, p = pario_pgas_ptr_inc(p)) {
        memset(buf, 0, es);
        memset(got, 0xa5, es);
        bad += pario_pgas_load(ctx, p, buf) != PARIO_OK;
        bad += pario_pgas_get(ctx, pario_pgas_elem(a, i), got) != PARIO_OK;
        bad += test_mismatch(buf, i, 1, es, salt) + (memcmp(buf, got, es) != 0);
        bad +=
            !pario_pgas_ptr_eq(p, pario_pgas_elem(a, i)) || p.phase != pario_pgas_elem(a, i).phase;
    }
    PT_EQ(bad, 0);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    free(buf);
    free(got);
}

/* Every element size from 1 to 16 bytes with B = 0, 1, 3 and [*]. */
static void check_unchecked_sizes(pario_pgas *ctx) {
    const uint64_t bs[] = {0, 1, 3, 64, PARIO_PGAS_BLOCK_FIT};
    for (size_t b = 0; b < sizeof bs / sizeof *bs; b++)
        for (uint32_t es = 1; es <= 16; es++) {
            pario_pgas_array a;
            PT_EQ(pario_pgas_all_alloc(ctx, COUNT, es, bs[b], &a), PARIO_OK);
            check_load_store(ctx, &a, (int)(es * 3 + b));
            PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
        }
}

/* A value of every type for element i, in -100 .. 99 (exact in float). */
#define TYPED_VALUE(T, i) ((T)((int64_t)((i)*37 % 200) - 100))

/* The typed forms of one type: the same pattern as check_load_store (odd
 * elements stored by index, store_T_at), the value compared as the type and
 * as bytes against get, and read by index (load_T_at) too. */
#define CHECK_TYPED(NAME, T)                                                                       \
    static void check_typed_##NAME(pario_pgas *ctx, uint64_t block) {                              \
        uint64_t rank = (uint64_t)pario_pgas_mythread(ctx);                                        \
        uint64_t n = (uint64_t)pario_pgas_threads(ctx);                                            \
        pario_pgas_array a;                                                                        \
        PT_EQ(pario_pgas_all_alloc(ctx, COUNT, sizeof(T), block, &a), PARIO_OK);                   \
        pario_pgas_ptr p = pario_pgas_elem(&a, 0);                                                 \
        for (uint64_t i = 0; i < COUNT; i++, p = pario_pgas_ptr_inc(p))                            \
            if (i % n == rank)                                                                     \
                PT_EQ(i % 2 ? pario_pgas_store_##NAME##_at(ctx, &a, i, TYPED_VALUE(T, i))          \
                            : pario_pgas_store_##NAME(ctx, p, TYPED_VALUE(T, i)),                  \
                      PARIO_OK);                                                                   \
        PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);                                  \
        uint64_t bad = 0;                                                                          \
        p = pario_pgas_elem(&a, 0);                                                                \
        for (uint64_t i = 0; i < COUNT; i++, p = pario_pgas_ptr_inc(p)) {                          \
            T v = (T)1, w = (T)1;                                                                  \
            unsigned char g[16] = {0}; /* get copies elem_size bytes: a buffer of any size */      \
            bad += pario_pgas_load_##NAME(ctx, p, &v) != PARIO_OK;                                 \
            bad += pario_pgas_load_##NAME##_at(ctx, &a, i, &w) != PARIO_OK || w != v;              \
            bad += pario_pgas_get(ctx, pario_pgas_elem(&a, i), g) != PARIO_OK;                     \
            bad += v != TYPED_VALUE(T, i) || memcmp(&v, g, sizeof v) != 0;                         \
        }                                                                                          \
        PT_EQ(bad, 0);                                                                             \
        PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);                                  \
        PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);                                             \
    }

CHECK_TYPED(double, double)
CHECK_TYPED(float, float)
CHECK_TYPED(i8, int8_t)
CHECK_TYPED(i16, int16_t)
CHECK_TYPED(i32, int32_t)
CHECK_TYPED(i64, int64_t)
CHECK_TYPED(u8, uint8_t)
CHECK_TYPED(u16, uint16_t)
CHECK_TYPED(u32, uint32_t)
CHECK_TYPED(u64, uint64_t)

static void check_typed(pario_pgas *ctx) {
    const uint64_t bs[] = {0, 1, 3, 64, PARIO_PGAS_BLOCK_FIT};
    for (size_t b = 0; b < sizeof bs / sizeof *bs; b++) {
        check_typed_double(ctx, bs[b]);
        check_typed_float(ctx, bs[b]);
        check_typed_i8(ctx, bs[b]);
        check_typed_i16(ctx, bs[b]);
        check_typed_i32(ctx, bs[b]);
        check_typed_i64(ctx, bs[b]);
        check_typed_u8(ctx, bs[b]);
        check_typed_u16(ctx, bs[b]);
        check_typed_u32(ctx, bs[b]);
        check_typed_u64(ctx, bs[b]);
    }
}

static void check_layout(pario_pgas *ctx, uint64_t block, uint32_t es, int salt) {
    int n = pario_pgas_threads(ctx);
    pario_pgas_array a, src;
    PT_EQ(pario_pgas_all_alloc(ctx, COUNT, es, block, &a), PARIO_OK);
    /* the copy's source has another layout: B = 5, or 0 when a is blocked */
    PT_EQ(pario_pgas_all_alloc(ctx, COUNT, es, block == 0 ? 5 : 0, &src), PARIO_OK);
    uint64_t b = block == PARIO_PGAS_BLOCK_FIT ? (COUNT + (uint64_t)n - 1) / (uint64_t)n : block;
    PT_EQ(a.base.block, b);
    PT_EQ(a.count, COUNT);
    uint64_t total = 0;
    for (int r = 0; r < n; r++)
        total += pario_pgas_local_count(&a, r);
    PT_EQ(total, COUNT);
    check_elements(ctx, &a, salt);
    check_bulk(ctx, &a, salt + 2);
    check_copy_set(ctx, &a, &src, salt + 2);
    PT_EQ(pario_pgas_all_free(ctx, &src), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
}

/* Strict accesses and index-checked access on a B = 2 array of int64. */
static void check_strict_and_at(pario_pgas *ctx) {
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    pario_pgas_array a;
    PT_EQ(pario_pgas_all_alloc(ctx, (uint64_t)n * 4, sizeof(int64_t), 2, &a), PARIO_OK);
    for (uint64_t i = 0; i < 4; i++) {
        int64_t v = rank * 100 + (int64_t)i;
        PT_EQ(pario_pgas_put_at(ctx, &a, (uint64_t)rank * 4 + i, &v), PARIO_OK);
    }
    /* A strict put of a flag after relaxed puts: who sees the flag sees the data. */
    int64_t one = 1;
    pario_pgas_array flags;
    PT_EQ(pario_pgas_all_alloc(ctx, (uint64_t)n, sizeof(int64_t), 1, &flags), PARIO_OK);
    PT_EQ(pario_pgas_put_strict(ctx, pario_pgas_elem(&flags, (uint64_t)rank), &one), PARIO_OK);
    PT_EQ(pario_pgas_barrier(ctx, 7), PARIO_OK);
    int bad = 0;
    for (int r = 0; r < n; r++) {
        int64_t f = 0, v = -1;
        PT_EQ(pario_pgas_get_strict(ctx, pario_pgas_elem(&flags, (uint64_t)r), &f), PARIO_OK);
        bad += f != 1;
        for (uint64_t i = 0; i < 4; i++) {
            PT_EQ(pario_pgas_get_at(ctx, &a, (uint64_t)r * 4 + i, &v), PARIO_OK);
            bad += v != r * 100 + (int64_t)i;
        }
    }
    PT_EQ(bad, 0);
    PT_EQ(pario_pgas_all_free(ctx, &flags), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
}

/* global_alloc by the last rank and alloc (affinity to the caller) by rank
 * 0, handed to the others as values; written by all, freed by another rank. */
static void check_global_and_local(pario_pgas *ctx) {
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    pario_pgas_array g, l;
    memset(&g, 0, sizeof g);
    memset(&l, 0, sizeof l);
    if (rank == n - 1)
        PT_EQ(pario_pgas_global_alloc(ctx, 50, 4, 3, &g), PARIO_OK);
    if (rank == 0)
        PT_EQ(pario_pgas_alloc(ctx, 40, 8, &l), PARIO_OK);
    /* A gas broadcast serves the allocation requests while it waits (a plain
     * MPI_Bcast would leave rank 0 deaf to the last rank's global_alloc). */
    pario_gas_team *team = pario_pgas_team(ctx);
    PT_EQ(pario_gas_broadcast(team, &g, sizeof g, n - 1, PARIO_GAS_BCAST_AUTO), PARIO_OK);
    PT_EQ(pario_gas_broadcast(team, &l, sizeof l, 0, PARIO_GAS_BCAST_AUTO), PARIO_OK);
    PT_EQ(g.base.rank, 0);
    PT_EQ(pario_pgas_local_count(&l, 0), 40);
    PT_EQ(pario_pgas_threadof(pario_pgas_elem(&l, 39)), 0);
    check_elements(ctx, &g, 11);
    check_elements(ctx, &l, 13);
    check_bulk(ctx, &g, 17);
    check_bulk(ctx, &l, 19);
    /* freed by a rank that did not allocate (the last frees rank 0's) */
    if (rank == (n > 1 ? 1 : 0))
        PT_EQ(pario_pgas_free(ctx, &g), PARIO_OK);
    if (rank == n - 1)
        PT_EQ(pario_pgas_free(ctx, &l), PARIO_OK);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    pario_pgas *ctx = test_pgas_init();
    int salt = 0;
    for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
            check_layout(ctx, blocks[b], sizes[s], salt += 5);
    check_strict_and_at(ctx);
    check_global_and_local(ctx);
    check_unchecked_sizes(ctx);
    check_typed(ctx);
    PT_EQ(pario_pgas_finalize(&ctx), PARIO_OK);
    PT_CHECK(ctx == NULL);
    return ptest_finish();
}
