/* pgas: layout and pointer-to-shared arithmetic against a brute-force model,
 * for many (nranks, block factor, element size, count) combinations. Pure
 * computation on array values: no communication. */
#include <stdint.h>
#include <stdlib.h>

#include "ptest.h"
#include "pario/pgas.h"

#define BASE_ADDR 4096 /* any heap offset: the arithmetic is relative to it */
#define MAX_COUNT 61   /* counts up to here cover partial last blocks and rows */

/* The model: element i's owner, phase and address, written from UPC 6.4 the
 * slow way (walking the blocks one by one), not from the formulas. */
typedef struct model_elem {
    uint32_t rank;
    uint64_t phase, addr;
} model_elem;

static void model_layout(uint64_t count, uint64_t block, uint32_t es, uint32_t nranks,
                         uint32_t home, model_elem *m) {
    uint64_t *filled = calloc(nranks, sizeof *filled); /* elements placed per rank */
    for (uint64_t i = 0; i < count; i++) {
        if (block == 0) {
            m[i] = (model_elem){home, 0, BASE_ADDR + i * es};
            continue;
        }
        uint32_t r = (uint32_t)((i / block) % nranks);
        m[i] = (model_elem){r, i % block, BASE_ADDR + filled[r] * es};
        filled[r]++;
    }
    free(filled);
}

static pario_pgas_array make(uint64_t count, uint64_t block, uint32_t es, uint32_t nranks,
                             uint32_t home) {
    pario_pgas_array a = {
        {BASE_ADDR, 0, block, es, home, nranks, 0}, count, 1, PARIO_PGAS_ALL, 0, 0, 0};
    return a;
}

static int same(pario_pgas_ptr p, model_elem e) {
    return p.rank == e.rank && p.phase == e.phase && p.addr == e.addr;
}

/* Element pointers, add (both signs, across ranks and rows), diff, cmp. */
static int check_pointers(const pario_pgas_array *a, const model_elem *m) {
    int bad = 0;
    for (uint64_t i = 0; i < a->count; i++) {
        pario_pgas_ptr p = pario_pgas_elem(a, i);
        bad += !same(p, m[i]);
        bad += pario_pgas_threadof(p) != (int)m[i].rank || pario_pgas_phaseof(p) != m[i].phase ||
               pario_pgas_addrfield(p) != m[i].addr;
        pario_pgas_ptr r = pario_pgas_resetphase(p);
        bad += r.phase != 0 || r.rank != p.rank || r.addr != p.addr;
        for (uint64_t j = 0; j < a->count; j++) {
            int64_t d = (int64_t)j - (int64_t)i;
            pario_pgas_ptr q = pario_pgas_ptr_add(p, d);
            bad += !same(q, m[j]);
            bad += pario_pgas_ptr_diff(q, p) != d;
            bad += pario_pgas_ptr_cmp(q, p) != (d > 0) - (d < 0);
            bad += pario_pgas_ptr_eq(q, p) != (d == 0);
        }
    }
    return bad;
}

/* local_count and owned_next against counting the model's owners. */
static int check_affinity(const pario_pgas_array *a, const model_elem *m, uint32_t nranks) {
    int bad = 0;
    for (uint32_t r = 0; r < nranks; r++) {
        uint64_t want = 0, seen = 0, cursor = 0, next = 0;
        for (uint64_t i = 0; i < a->count; i++)
            want += m[i].rank == r;
        bad += pario_pgas_local_count(a, (int)r) != want;
        pario_pgas_range rg;
        while (pario_pgas_owned_next(a, (int)r, &cursor, &rg)) {
            bad += rg.count == 0;
            for (uint64_t i = rg.first; i < rg.first + rg.count; i++) {
                /* every owned index after the last one seen is visited, in order */
                for (; next < i; next++)
                    bad += m[next].rank == r;
                bad += i >= a->count || m[i].rank != r;
                /* a range stays inside one block: consecutive addresses */
                bad += i > rg.first && m[i].addr != m[i - 1].addr + a->base.elem_size;
                seen++;
                next = i + 1;
            }
        }
        for (; next < a->count; next++)
            bad += m[next].rank == r;
        bad += seen != want;
    }
    bad += pario_pgas_local_count(a, -1) != 0 || pario_pgas_local_count(a, (int)nranks) != 0;
    return bad;
}

/* Pointers that start in the middle of an array (phase != 0) walk alike:
 * p + a + b == (p + a) + b for every split. */
static int check_associative(const pario_pgas_array *a) {
    int bad = 0;
    int64_t n = (int64_t)a->count;
    for (int64_t i = 0; i < n; i += 3)
        for (int64_t x = -i; x < n - i; x += 2)
            for (int64_t y = -(i + x); y < n - (i + x); y += 5) {
                pario_pgas_ptr p = pario_pgas_elem(a, (uint64_t)i);
                pario_pgas_ptr q = pario_pgas_ptr_add(pario_pgas_ptr_add(p, x), y);
                bad += !pario_pgas_ptr_eq(q, pario_pgas_ptr_add(p, x + y));
            }
    return bad;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    const uint64_t blocks[] = {0, 1, 2, 3, 4, 7, 16, 64};
    const uint32_t sizes[] = {1, 3, 8, 24};
    model_elem *m = malloc(sizeof *m * MAX_COUNT);
    int combos = 0, bad = 0;
    for (uint32_t n = 1; n <= 9; n++)
        for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++)
            for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
                for (uint64_t count = 0; count <= MAX_COUNT; count += count < 10 ? 1 : 17) {
                    uint32_t home = blocks[b] == 0 ? n - 1 : 0;
                    pario_pgas_array a = make(count, blocks[b], sizes[s], n, home);
                    model_layout(count, blocks[b], sizes[s], n, home, m);
                    int c =
                        check_pointers(&a, m) + check_affinity(&a, m, n) + check_associative(&a);
                    if (c)
                        fprintf(stderr, "layout n=%u B=%llu es=%u count=%llu: %d wrong\n", n,
                                (unsigned long long)blocks[b], sizes[s], (unsigned long long)count,
                                c);
                    bad += c;
                    combos++;
                }
    PT_EQ(bad, 0);
    PT_CHECK(combos > 1000);
    /* Null pointer-to-shared. */
    pario_pgas_ptr null = {0, 0, 0, 0, 0, 0, 0};
    PT_CHECK(pario_pgas_ptr_is_null(null));
    /* Retyping keeps rank and address; phase 0 when the type changes. */
    pario_pgas_array a = make(40, 4, 8, 3, 0);
    pario_pgas_ptr p = pario_pgas_elem(&a, 6);
    pario_pgas_ptr q = pario_pgas_ptr_retype(p, 8, 4);
    PT_CHECK(q.phase == 2 && q.rank == 1);
    q = pario_pgas_ptr_retype(p, 4, 8);
    PT_CHECK(q.phase == 0 && q.rank == p.rank && q.addr == p.addr);
    free(m);
    return ptest_finish();
}
