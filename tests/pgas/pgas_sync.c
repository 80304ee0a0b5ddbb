/* pgas: barrier values, split-phase notify/wait and its misuse, visibility
 * after wait, locks under contention (a shared counter updated with plain
 * get/put under the lock reaches exactly the expected total, on a lock held
 * on rank 0 and one on the last rank), trylock, lock errors. */
#include <stdint.h>
#include <stdlib.h>

#include "pgas_test.h"

#define ROUNDS 40 /* lock-protected increments per rank and lock */

static void check_barrier_values(pario_pgas *ctx) {
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    PT_EQ(pario_pgas_barrier(ctx, 42), PARIO_OK);
    /* some ranks give a value, others none: no mismatch */
    PT_EQ(pario_pgas_barrier(ctx, rank % 2 ? 9 : PARIO_PGAS_ANY), PARIO_OK);
    /* every rank sees a mismatch, also those that gave no value */
    int rc = pario_pgas_barrier(ctx, rank == n - 1 ? PARIO_PGAS_ANY : rank);
    PT_EQ(rc, n > 2 ? PARIO_ERR_NOT_SAME : PARIO_OK);
    if (n > 2)
        PT_CHECK(test_msg_has(ctx, "notified different values"));
    /* wait's value against the notified ones */
    PT_EQ(pario_pgas_notify(ctx, 5), PARIO_OK);
    PT_EQ(pario_pgas_wait(ctx, rank == 0 ? 6 : 5), rank == 0 ? PARIO_ERR_NOT_SAME : PARIO_OK);
    /* misuse */
    PT_EQ(pario_pgas_wait(ctx, PARIO_PGAS_ANY), PARIO_ERR_REQUEST);
    PT_EQ(pario_pgas_notify(ctx, PARIO_PGAS_ANY), PARIO_OK);
    PT_EQ(pario_pgas_notify(ctx, PARIO_PGAS_ANY), PARIO_ERR_REQUEST);
    PT_EQ(pario_pgas_wait(ctx, PARIO_PGAS_ANY), PARIO_OK);
}

/* Puts before notify are seen after wait; local work in between. */
static void check_split_phase(pario_pgas *ctx) {
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    pario_pgas_array a;
    PT_EQ(pario_pgas_all_alloc(ctx, (uint64_t)n * 64, 1, 64, &a), PARIO_OK);
    for (int round = 0; round < 5; round++) {
        unsigned char buf[64];
        int right = (rank + 1) % n;
        memset(buf, round * 16 + rank + 1, sizeof buf);
        PT_EQ(pario_pgas_memput(ctx, &a, (uint64_t)right * 64, buf, 64), PARIO_OK);
        PT_EQ(pario_pgas_notify(ctx, round), PARIO_OK);
        volatile uint64_t work = 0;
        for (int k = 0; k < 1000; k++)
            work += (uint64_t)k;
        PT_EQ(pario_pgas_wait(ctx, round), PARIO_OK);
        unsigned char *mine = pario_pgas_cast(ctx, pario_pgas_elem(&a, (uint64_t)rank * 64));
        int left = (rank + n - 1) % n, bad = 0;
        for (int k = 0; k < 64; k++)
            bad += mine[k] != (unsigned char)(round * 16 + left + 1);
        PT_EQ(bad, 0);
        PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    }
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
}

/* ROUNDS read-modify-write increments per rank of a counter on `home`,
 * each under the lock, the counter read and written with plain get/put. */
static void count_under_lock(pario_pgas *ctx, const pario_pgas_lock *lock,
                             const pario_pgas_array *counter, int use_attempt) {
    for (int k = 0; k < ROUNDS; k++) {
        if (use_attempt && k % 2) {
            int got = 0;
            while (!got) {
                PT_EQ(pario_pgas_lock_attempt(ctx, lock, &got), PARIO_OK);
                if (!got)
                    PT_EQ(pario_pgas_poll(ctx), PARIO_OK);
            }
        } else {
            PT_EQ(pario_pgas_lock_acquire(ctx, lock), PARIO_OK);
        }
        int64_t v = 0;
        pario_pgas_ptr p = pario_pgas_elem(counter, 0);
        PT_EQ(pario_pgas_get(ctx, p, &v), PARIO_OK);
        v++;
        PT_EQ(pario_pgas_put(ctx, p, &v), PARIO_OK);
        PT_EQ(pario_pgas_lock_release(ctx, lock), PARIO_OK);
    }
}

static void check_contention(pario_pgas *ctx) {
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    pario_pgas_lock all, global;
    memset(&global, 0, sizeof global);
    PT_EQ(pario_pgas_all_lock_alloc(ctx, &all), PARIO_OK);
    PT_EQ(all.rank, 0);
    if (rank == n - 1)
        PT_EQ(pario_pgas_global_lock_alloc(ctx, &global), PARIO_OK);
    PT_EQ(pario_gas_broadcast(pario_pgas_team(ctx), &global, sizeof global, n - 1,
                              PARIO_GAS_BCAST_AUTO),
          PARIO_OK);
    PT_EQ(global.rank, n - 1);
    /* counters: one on rank 0 (indefinite block), one on the last rank */
    pario_pgas_array c0, c1;
    PT_EQ(pario_pgas_all_alloc(ctx, 1, sizeof(int64_t), 0, &c0), PARIO_OK);
    PT_EQ(pario_pgas_all_alloc(ctx, (uint64_t)n, sizeof(int64_t), 1, &c1), PARIO_OK);
    pario_pgas_array last = c1; /* element n-1 of c1 lives on the last rank */
    last.base = pario_pgas_elem(&c1, (uint64_t)n - 1);
    last.count = 1;
    int64_t zero = 0;
    if (rank == 0) {
        PT_EQ(pario_pgas_put(ctx, pario_pgas_elem(&c0, 0), &zero), PARIO_OK);
        PT_EQ(pario_pgas_put(ctx, last.base, &zero), PARIO_OK);
    }
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    count_under_lock(ctx, &all, &c0, 0);
    count_under_lock(ctx, &global, &last, 1);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    int64_t v0 = -1, v1 = -1;
    PT_EQ(pario_pgas_get(ctx, pario_pgas_elem(&c0, 0), &v0), PARIO_OK);
    PT_EQ(pario_pgas_get(ctx, last.base, &v1), PARIO_OK);
    PT_EQ(v0, (int64_t)n * ROUNDS);
    PT_EQ(v1, (int64_t)n * ROUNDS);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &c1), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &c0), PARIO_OK);
    PT_EQ(pario_pgas_all_lock_free(ctx, &all), PARIO_OK);
    if (rank == 0) /* freed by a rank that did not allocate it */
        PT_EQ(pario_pgas_lock_free(ctx, &global), PARIO_OK);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
}

/* attempt fails while another rank holds the lock, then succeeds; errors. */
static void check_attempt_and_errors(pario_pgas *ctx) {
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    pario_pgas_lock l;
    PT_EQ(pario_pgas_all_lock_alloc(ctx, &l), PARIO_OK);
    int holder = n - 1, got = -1;
    if (rank == holder)
        PT_EQ(pario_pgas_lock_acquire(ctx, &l), PARIO_OK);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    if (rank != holder) {
        PT_EQ(pario_pgas_lock_attempt(ctx, &l, &got), PARIO_OK);
        PT_EQ(got, 0);
        PT_EQ(pario_pgas_lock_release(ctx, &l), PARIO_ERR_REQUEST); /* not held by me */
        PT_CHECK(test_msg_has(ctx, "does not hold the lock"));
    } else {
        PT_EQ(pario_pgas_lock_acquire(ctx, &l), PARIO_ERR_REQUEST); /* would wait for itself */
        PT_EQ(pario_pgas_lock_attempt(ctx, &l, &got), PARIO_ERR_REQUEST);
        PT_EQ(pario_pgas_lock_free(ctx, &l), PARIO_ERR_REQUEST); /* held */
        PT_CHECK(test_msg_has(ctx, "held or awaited"));
    }
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    if (rank == holder)
        PT_EQ(pario_pgas_lock_release(ctx, &l), PARIO_OK);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    if (rank == 0) {
        PT_EQ(pario_pgas_lock_attempt(ctx, &l, &got), PARIO_OK);
        PT_EQ(got, 1);
        PT_EQ(pario_pgas_lock_release(ctx, &l), PARIO_OK);
        PT_EQ(pario_pgas_lock_release(ctx, &l), PARIO_ERR_REQUEST); /* released twice */
    }
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    PT_EQ(pario_pgas_all_lock_free(ctx, &l), PARIO_OK);
    PT_EQ(pario_pgas_all_lock_free(ctx, &l), PARIO_ERR_REQUEST); /* every rank: freed twice */
    PT_CHECK(test_msg_has(ctx, "not allocated"));
    pario_pgas_lock bogus = l;
    bogus.addr = 8;
    PT_EQ(pario_pgas_lock_acquire(ctx, &bogus), PARIO_ERR_ARG);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    pario_pgas *ctx = test_pgas_init();
    check_barrier_values(ctx);
    check_split_phase(ctx);
    check_contention(ctx);
    check_attempt_and_errors(ctx);
    PT_EQ(pario_pgas_fence(ctx), PARIO_OK);
    PT_EQ(pario_pgas_finalize(&ctx), PARIO_OK);
    return ptest_finish();
}
