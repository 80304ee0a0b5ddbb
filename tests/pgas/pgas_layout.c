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
    pario_pgas_array a = {.base = {BASE_ADDR, 0, block, es, home, nranks, 0},
                          .count = count,
                          .id = 1,
                          .origin = PARIO_PGAS_ALL};
    return a;
}

/* The same array with the divisors the alloc calls store (elem then
 * multiplies instead of dividing); 0 when they are not exact. */
static int with_divisors(pario_pgas_array *a) {
    uint64_t b = a->base.block, n = a->base.nranks, xmax = a->count + b * n;
    uint64_t bm = 0, rm = 0;
    if (b == 0 || !pario_pgas_div_mul_exact(b, xmax, &bm) ||
        !pario_pgas_div_mul_exact(n, xmax / b, &rm))
        return 0;
    a->index_mul = 1;
    a->block_mul = bm;
    a->ranks_mul = rm;
    return 1;
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

/* p + 1 from every element to the end, by ptr_inc, ptr_add(p, 1) and the
 * general ptr_add_any, against the model; elem with the divisors, from the
 * array and from a view whose base is moved to each element, agrees. */
static int check_steps(const pario_pgas_array *a, const model_elem *m) {
    int bad = 0;
    pario_pgas_array fast = *a;
    int has = with_divisors(&fast);
    bad += a->base.block != 0 && !has; /* every layout here fits */
    for (uint64_t i = 0; i < a->count; i++) {
        pario_pgas_ptr p = pario_pgas_elem(a, i);
        bad += !same(pario_pgas_elem(&fast, i), m[i]) || !same(pario_pgas_elem_any(a, i), m[i]);
        for (uint64_t j = i + 1; j < a->count; j++) {
            pario_pgas_ptr q = pario_pgas_ptr_inc(p);
            bad += !same(q, m[j]);
            bad += !pario_pgas_ptr_eq(q, pario_pgas_ptr_add(p, 1)) ||
                   q.phase != pario_pgas_ptr_add(p, 1).phase;
            bad += !pario_pgas_ptr_eq(q, pario_pgas_ptr_add_any(p, 1)) ||
                   q.phase != pario_pgas_ptr_add_any(p, 1).phase;
            p = q;
        }
        pario_pgas_array view = fast; /* a view: base moved to element i */
        view.base = pario_pgas_elem(&fast, i);
        view.count = a->count - i;
        for (uint64_t j = 0; j < view.count; j++)
            bad += !same(pario_pgas_elem(&view, j), m[i + j]);
    }
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

/* B = 0, 1, 3 and [*] (ceil(count / n), as the alloc calls resolve it) with
 * every element size from 1 to 16 bytes. */
static int check_sizes(model_elem *m) {
    const uint64_t counts[] = {0, 1, 5, 17, MAX_COUNT};
    const uint32_t ranks[] = {1, 2, 3, 4, 5, 8};
    int bad = 0;
    for (size_t r = 0; r < sizeof ranks / sizeof *ranks; r++)
        for (int kind = 0; kind < 4; kind++)
            for (uint32_t es = 1; es <= 16; es++)
                for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
                    uint32_t n = ranks[r];
                    uint64_t count = counts[c], fit = (count + n - 1) / n;
                    uint64_t block = kind == 0 ? 0 : kind == 1 ? 1 : kind == 2 ? 3 : fit ? fit : 1;
                    uint32_t home = block == 0 ? n / 2 : 0;
                    pario_pgas_array a = make(count, block, es, n, home);
                    model_layout(count, block, es, n, home, m);
                    int e = check_pointers(&a, m) + check_steps(&a, m);
                    if (e)
                        fprintf(stderr, "sizes n=%u B=%llu es=%u count=%llu: %d wrong\n", n,
                                (unsigned long long)block, es, (unsigned long long)count, e);
                    bad += e;
                }
    return bad;
}

/* x / d by pario_pgas_div_mul where pario_pgas_div_mul_exact says it is
 * exact, and a wrong quotient just past a limit it reports. */
static int check_div_mul(void) {
    const uint64_t ds[] = {1,
                           2,
                           3,
                           5,
                           7,
                           128,
                           3145728,
                           1000003,
                           4294967291u,
                           (uint64_t)1 << 40,
                           6291456,
                           786432 * 3,
                           4294967296u + 1};
    int bad = 0;
    for (size_t k = 0; k < sizeof ds / sizeof *ds; k++) {
        /* mul * d - 2^63 < d: the range shrinks as d grows (2^63 / d at worst) */
        uint64_t d = ds[k], mul = 0, xmax = ((uint64_t)1 << (d >> 24 ? 30 : 40)) - 1;
        if (!pario_pgas_div_mul_exact(d, xmax, &mul)) {
            fprintf(stderr, "div_mul: %llu not exact up to %llu\n", (unsigned long long)d,
                    (unsigned long long)xmax);
            bad++;
            continue;
        }
        /* small x, multiples of d and their neighbours, and the top of the range */
        for (uint64_t x = 0; x < 5000; x++)
            bad += pario_pgas_div_mul(x, mul) != x / d;
        for (uint64_t q = 1; q < 5000 && q <= xmax / d; q = q * 3 + 1)
            for (uint64_t x = q * d - 1; x <= q * d + 1 && x <= xmax; x++)
                bad += pario_pgas_div_mul(x, mul) != x / d;
        for (uint64_t x = xmax - 3000; x <= xmax; x++)
            bad += pario_pgas_div_mul(x, mul) != x / d;
    }
    /* d = 7: mul * 7 = 2^63 + 6, exact while 6 x < 2^63; x = 7 q + 6 just
     * past that limit divides wrongly, and the limit says so. */
    uint64_t mul = 0, limit = ((uint64_t)1 << 63) / 6 + 1;
    uint64_t x = limit + (6 + 7 - limit % 7) % 7; /* x % 7 == 6 */
    bad += x % 7 != 6;
    bad += pario_pgas_div_mul_exact(7, x, &mul) != 0;
    bad += pario_pgas_div_mul(x, mul) == x / 7;
    bad += pario_pgas_div_mul_exact(7, limit - 1, &mul) != 1;
    bad += pario_pgas_div_mul_exact(0, 10, &mul) != 0;
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
                    pario_pgas_array fast = a; /* as the alloc calls make it */
                    with_divisors(&fast);
                    int c = check_pointers(&a, m) + check_affinity(&a, m, n) +
                            check_affinity(&fast, m, n) + check_associative(&a) +
                            check_steps(&a, m);
                    if (c)
                        fprintf(stderr, "layout n=%u B=%llu es=%u count=%llu: %d wrong\n", n,
                                (unsigned long long)blocks[b], sizes[s], (unsigned long long)count,
                                c);
                    bad += c;
                    combos++;
                }
    PT_EQ(bad, 0);
    PT_CHECK(combos > 1000);
    PT_EQ(check_sizes(m), 0);
    PT_EQ(check_div_mul(), 0);
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
