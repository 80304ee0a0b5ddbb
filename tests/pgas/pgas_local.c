/* pgas: cast to local (plain pointers for own and same-node ranks, NULL
 * elsewhere), its checked range and part forms and their errors, the inverse cast, and
 * affinity iteration writing through cast pointers. */
#include <stdint.h>
#include <stdlib.h>

#include "pgas_test.h"

#define BLOCK 4
#define COUNT 37

/* cast gives a pointer exactly for the ranks gas maps; it aliases the data. */
static void check_cast(pario_pgas *ctx, const pario_pgas_array *a) {
    pario_gas_team *team = pario_pgas_team(ctx);
    int bad = 0;
    for (uint64_t i = 0; i < a->count; i++) {
        pario_pgas_ptr p = pario_pgas_elem(a, i);
        int64_t *local = pario_pgas_cast(ctx, p);
        bad += (local != NULL) != pario_gas_is_local(team, (int)p.rank);
        int64_t v = -1;
        PT_EQ(pario_pgas_get(ctx, p, &v), PARIO_OK);
        bad += v != (int64_t)i * 3;
        bad += local && *local != v;
    }
    PT_EQ(bad, 0);
}

/* Every rank writes its own elements through cast pointers, block by block,
 * found by affinity iteration. */
static void fill_owned(pario_pgas *ctx, const pario_pgas_array *a) {
    int rank = pario_pgas_mythread(ctx);
    uint64_t cursor = 0, seen = 0;
    pario_pgas_range r;
    while (pario_pgas_owned_next(a, rank, &cursor, &r)) {
        int64_t *local = NULL;
        PT_EQ(pario_pgas_cast_range(ctx, a, r.first, r.count, (void **)&local), PARIO_OK);
        for (uint64_t k = 0; local && k < r.count; k++)
            local[k] = (int64_t)(r.first + k) * 3;
        seen += r.count;
    }
    PT_EQ(seen, pario_pgas_local_count(a, rank));
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
}

static void check_cast_range_errors(pario_pgas *ctx, const pario_pgas_array *a) {
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    pario_gas_team *team = pario_pgas_team(ctx);
    void *local = (void *)1;
    /* outside the array */
    PT_EQ(pario_pgas_cast_range(ctx, a, COUNT, 1, &local), PARIO_ERR_ARG);
    PT_CHECK(local == NULL && test_msg_has(ctx, "index 37"));
    PT_EQ(pario_pgas_cast_range(ctx, a, COUNT - 2, 3, &local), PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "index 37"));
    PT_EQ(pario_pgas_cast_range(ctx, a, 0, 0, &local), PARIO_ERR_ARG);
    /* my block 1 .. 3 is fine; 1 .. 4 runs past it into the next rank's */
    uint64_t mine = (uint64_t)rank * BLOCK; /* my first block */
    PT_EQ(pario_pgas_cast_range(ctx, a, mine + 1, BLOCK - 1, &local), PARIO_OK);
    PT_CHECK(local == pario_pgas_cast(ctx, pario_pgas_elem(a, mine + 1)));
    int rc = pario_pgas_cast_range(ctx, a, mine + 1, BLOCK, &local);
    if (n == 1) { /* one rank: its blocks follow each other in memory */
        PT_EQ(rc, PARIO_OK);
    } else {
        char want[64];
        snprintf(want, sizeof want, "index %llu is past the local block",
                 (unsigned long long)(mine + BLOCK));
        PT_EQ(rc, PARIO_ERR_ARG);
        PT_CHECK(test_msg_has(ctx, want));
    }
    /* an element of every other rank: fine on my node, an error elsewhere */
    for (int r = 0; r < n; r++) {
        uint64_t i = (uint64_t)r * BLOCK + 2;
        rc = pario_pgas_cast_range(ctx, a, i, 1, &local);
        if (pario_gas_is_local(team, r)) {
            PT_EQ(rc, PARIO_OK);
        } else {
            char want[64];
            snprintf(want, sizeof want, "index %llu lives on rank %d", (unsigned long long)i, r);
            PT_EQ(rc, PARIO_ERR_ARG);
            PT_CHECK(local == NULL && test_msg_has(ctx, want));
        }
    }
}

/* Every rank's part through cast_part: on this node its elements in index
 * order at local positions j (index ((j / B) * nranks + r) * B + j % B), as
 * many as local_count; another node's rank and a rank outside the team are
 * errors naming the rank; a rank without elements gets NULL and 0. */
static void check_cast_part(pario_pgas *ctx, const pario_pgas_array *a) {
    int n = pario_pgas_threads(ctx);
    pario_gas_team *team = pario_pgas_team(ctx);
    for (int r = 0; r < n; r++) {
        int64_t *part = (int64_t *)1;
        uint64_t count = 99;
        int rc = pario_pgas_cast_part(ctx, a, r, (void **)&part, &count);
        if (!pario_gas_is_local(team, r)) {
            char want[64];
            snprintf(want, sizeof want, "rank %d is on another node", r);
            PT_EQ(rc, PARIO_ERR_ARG);
            PT_CHECK(part == NULL && count == 0 && test_msg_has(ctx, want));
            continue;
        }
        PT_EQ(rc, PARIO_OK);
        PT_EQ(count, pario_pgas_local_count(a, r));
        int bad = 0;
        for (uint64_t j = 0; j < count; j++) {
            uint64_t i = ((j / BLOCK) * (uint64_t)n + (uint64_t)r) * BLOCK + j % BLOCK;
            bad += i >= COUNT || part[j] != (int64_t)i * 3;
        }
        PT_EQ(bad, 0);
    }
    void *part = NULL;
    uint64_t count = 0;
    PT_EQ(pario_pgas_cast_part(ctx, a, n, &part, &count), PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "outside the team"));
    /* 3 elements in blocks of 4: only rank 0 has any */
    pario_pgas_array small;
    PT_EQ(pario_pgas_all_alloc(ctx, 3, sizeof(int64_t), BLOCK, &small), PARIO_OK);
    int last = n - 1;
    PT_EQ(pario_pgas_cast_part(ctx, &small, pario_pgas_mythread(ctx), &part, &count), PARIO_OK);
    PT_EQ(count, pario_pgas_mythread(ctx) == 0 ? 3 : 0);
    PT_CHECK((part != NULL) == (count != 0));
    if (last > 0 && pario_gas_is_local(team, last)) {
        PT_EQ(pario_pgas_cast_part(ctx, &small, last, &part, &count), PARIO_OK);
        PT_CHECK(part == NULL && count == 0);
    }
    PT_EQ(pario_pgas_all_free(ctx, &small), PARIO_OK);
}

static void check_inverse(pario_pgas *ctx, const pario_pgas_array *a) {
    int rank = pario_pgas_mythread(ctx);
    pario_pgas_ptr p = pario_pgas_elem(a, (uint64_t)rank * BLOCK + 1), q;
    void *local = pario_pgas_cast(ctx, p);
    PT_EQ(pario_pgas_inverse_cast(ctx, local, 8, &q), PARIO_OK);
    PT_CHECK(q.rank == p.rank && q.addr == p.addr && q.block == 0);
    int64_t v = 0;
    PT_EQ(pario_pgas_get(ctx, q, &v), PARIO_OK);
    PT_EQ(v, ((int64_t)rank * BLOCK + 1) * 3);
    int on_stack = 0;
    PT_EQ(pario_pgas_inverse_cast(ctx, &on_stack, 4, &q), PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "not in shared memory"));
    /* a null or made-up pointer casts to NULL */
    pario_pgas_ptr null = {0, 0, 0, 0, 0, 0, 0};
    PT_CHECK(pario_pgas_cast(ctx, null) == NULL);
    pario_pgas_ptr wild = p;
    wild.addr = 1;
    PT_CHECK(pario_pgas_cast(ctx, wild) == NULL);
    wild.addr = UINT64_MAX - 3;
    PT_CHECK(pario_pgas_cast(ctx, wild) == NULL);
}

/* upc_forall with an integer affinity expression: iterations split evenly. */
static void check_int_affinity(pario_pgas *ctx) {
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    int64_t mine = 0, all = 0;
    for (int64_t i = -20; i < 100; i++)
        if (pario_pgas_has_affinity_int(ctx, i)) {
            mine++;
            PT_EQ(((i % n) + n) % n, rank);
        }
    MPI_Allreduce(&mine, &all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    PT_EQ(all, 120);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    pario_pgas *ctx = test_pgas_init();
    pario_pgas_array a;
    PT_EQ(pario_pgas_all_alloc(ctx, COUNT, sizeof(int64_t), BLOCK, &a), PARIO_OK);
    fill_owned(ctx, &a);
    check_cast(ctx, &a);
    check_cast_range_errors(ctx, &a);
    check_cast_part(ctx, &a);
    check_inverse(ctx, &a);
    check_int_affinity(ctx);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
    PT_EQ(pario_pgas_finalize(&ctx), PARIO_OK);
    return ptest_finish();
}
