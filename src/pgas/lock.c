/* Locks: ticket locks on gas atomics.
 *
 * Three 64-bit words in the local heap of one rank: the next ticket, the
 * ticket now served, and the holder (rank + 1, 0 when free). lock takes a
 * ticket with fetch_add and waits until it is served: ranks get the lock in
 * the order they asked, so no rank starves. Every word is touched only by
 * gas atomics, which are atomic with respect to each other on both paths
 * (node-local: a C11 atomic through the mapping; off node: the owner runs it
 * when it polls). */
#include "pgas/pgas_internal.h"

#include <stdatomic.h>

enum lock_word { WORD_NEXT = 0, WORD_SERVING = 1, WORD_HOLDER = 2 };

static uint64_t word_at(const pario_pgas_lock *l, int w) {
    return l->addr + (uint64_t)w * sizeof(int64_t);
}

static int check_lock(pario_pgas *ctx, const pario_pgas_lock *l, const char *what) {
    if (l && l->nranks == (uint32_t)ctx->nranks && l->rank < l->nranks && l->id != 0 &&
        l->addr >= ctx->local_lo && l->addr % PGAS_ALIGN == 0 &&
        l->addr + PGAS_LOCK_WORDS * sizeof(int64_t) <= ctx->local_hi)
        return PARIO_OK;
    return pgas_fail(ctx, PARIO_ERR_ARG, "pgas: %s: not a lock of this context", what);
}

static int lock_atomic_failed(pario_pgas *ctx, int rc, const char *what) {
    return rc == PARIO_OK ? rc : pgas_gas_failed(ctx, rc, what);
}

static int load_word(pario_pgas *ctx, const pario_pgas_lock *l, int w, int64_t *v) {
    return lock_atomic_failed(ctx, pario_gas_atomic_load(ctx->team, (int)l->rank, word_at(l, w), v),
                              "lock word load");
}

static int swap_word(pario_pgas *ctx, const pario_pgas_lock *l, int w, int64_t v) {
    int64_t old = 0;
    return lock_atomic_failed(ctx, pario_gas_swap(ctx->team, (int)l->rank, word_at(l, w), v, &old),
                              "lock word swap");
}

/* The lock words are in the caller's own heap: plain atomic stores. */
static void init_words(pario_pgas *ctx, uint64_t addr) {
    _Atomic int64_t *w = (_Atomic int64_t *)(void *)(ctx->base[ctx->rank] + addr);
    for (int i = 0; i < PGAS_LOCK_WORDS; i++)
        atomic_store_explicit(&w[i], 0, memory_order_seq_cst);
}

static int new_lock(pario_pgas *ctx, pario_pgas_lock *l) {
    uint64_t addr = 0, id = 0;
    int rc =
        pgas_book_alloc(ctx, PGAS_LOCAL, ctx->rank, PGAS_LOCK_WORDS * sizeof(int64_t), &addr, &id);
    if (rc != PARIO_OK)
        return rc;
    init_words(ctx, addr);
    *l = (pario_pgas_lock){addr, id, (uint32_t)ctx->rank, (uint32_t)ctx->nranks};
    return PARIO_OK;
}

int pario_pgas_global_lock_alloc(pario_pgas *ctx, pario_pgas_lock *lock) {
    return new_lock(ctx, lock);
}

int pario_pgas_all_lock_alloc(pario_pgas *ctx, pario_pgas_lock *lock) {
    int rc = pgas_agree(ctx, NULL, 0, 0, "pario_pgas_all_lock_alloc");
    if (rc != PARIO_OK)
        return rc;
    pario_pgas_lock l = {0, 0, 0, (uint32_t)ctx->nranks};
    if (ctx->rank == 0)
        rc = new_lock(ctx, &l);
    uint64_t got[2] = {l.addr, l.id};
    rc = pgas_share_result(ctx, rc, 0, got, 2);
    if (rc == PARIO_OK)
        *lock = (pario_pgas_lock){got[0], got[1], 0, (uint32_t)ctx->nranks};
    return rc;
}

/* PARIO_ERR_REQUEST when the caller already holds it. */
static int check_not_mine(pario_pgas *ctx, const pario_pgas_lock *l, const char *what) {
    int64_t holder = 0;
    int rc = load_word(ctx, l, WORD_HOLDER, &holder);
    if (rc == PARIO_OK && holder == ctx->rank + 1)
        rc = pgas_fail(ctx, PARIO_ERR_REQUEST, "pgas: %s: rank %d already holds the lock", what,
                       ctx->rank);
    return rc;
}

/* The lock is ours: record it, then order later accesses after it. */
static int take(pario_pgas *ctx, const pario_pgas_lock *l) {
    int rc = swap_word(ctx, l, WORD_HOLDER, ctx->rank + 1);
    atomic_thread_fence(memory_order_seq_cst);
    return rc;
}

int pario_pgas_lock_acquire(pario_pgas *ctx, const pario_pgas_lock *lock) {
    const char *what = "pario_pgas_lock_acquire";
    int rc = check_lock(ctx, lock, what);
    if (rc == PARIO_OK)
        rc = check_not_mine(ctx, lock, what);
    int64_t ticket = 0, serving = -1;
    if (rc == PARIO_OK)
        rc = lock_atomic_failed(
            ctx,
            pario_gas_fetch_add(ctx->team, (int)lock->rank, word_at(lock, WORD_NEXT), 1, &ticket),
            "lock ticket");
    int idle = 0;
    while (rc == PARIO_OK) {
        rc = load_word(ctx, lock, WORD_SERVING, &serving);
        if (rc != PARIO_OK || serving == ticket)
            break;
        rc = pgas_idle_step(ctx, &idle);
    }
    return rc == PARIO_OK ? take(ctx, lock) : rc;
}

int pario_pgas_lock_attempt(pario_pgas *ctx, const pario_pgas_lock *lock, int *acquired) {
    const char *what = "pario_pgas_lock_attempt";
    *acquired = 0;
    int rc = check_lock(ctx, lock, what);
    if (rc == PARIO_OK)
        rc = check_not_mine(ctx, lock, what);
    int64_t serving = 0, old = 0;
    if (rc == PARIO_OK)
        rc = load_word(ctx, lock, WORD_SERVING, &serving);
    /* Free and nobody waiting exactly when next == serving: take that ticket. */
    if (rc == PARIO_OK)
        rc = lock_atomic_failed(ctx,
                                pario_gas_compare_swap(ctx->team, (int)lock->rank,
                                                       word_at(lock, WORD_NEXT), serving,
                                                       serving + 1, &old),
                                "lock attempt");
    if (rc != PARIO_OK || old != serving)
        return rc;
    *acquired = 1;
    return take(ctx, lock);
}

int pario_pgas_lock_release(pario_pgas *ctx, const pario_pgas_lock *lock) {
    const char *what = "pario_pgas_lock_release";
    int rc = check_lock(ctx, lock, what);
    int64_t holder = 0, old = 0;
    if (rc == PARIO_OK)
        rc = load_word(ctx, lock, WORD_HOLDER, &holder);
    if (rc == PARIO_OK && holder != ctx->rank + 1)
        rc = pgas_fail(ctx, PARIO_ERR_REQUEST,
                       "pgas: %s: rank %d does not hold the lock (rank %u, offset %llu)", what,
                       ctx->rank, lock->rank, (unsigned long long)lock->addr);
    if (rc == PARIO_OK) /* what was done under the lock is complete first */
        rc = pario_pgas_fence(ctx);
    if (rc == PARIO_OK)
        rc = swap_word(ctx, lock, WORD_HOLDER, 0);
    if (rc == PARIO_OK)
        rc = lock_atomic_failed(
            ctx,
            pario_gas_fetch_add(ctx->team, (int)lock->rank, word_at(lock, WORD_SERVING), 1, &old),
            "lock release");
    return rc;
}

/* Frees the words once nobody holds or awaits the lock. */
static int free_lock(pario_pgas *ctx, const pario_pgas_lock *l) {
    int64_t next = 0, serving = 0, holder = 0;
    int rc = load_word(ctx, l, WORD_NEXT, &next);
    if (rc == PARIO_OK)
        rc = load_word(ctx, l, WORD_SERVING, &serving);
    if (rc == PARIO_OK)
        rc = load_word(ctx, l, WORD_HOLDER, &holder);
    if (rc == PARIO_OK && (holder != 0 || next != serving))
        return pgas_fail(ctx, PARIO_ERR_REQUEST,
                         "pgas: lock free: the lock (rank %u, offset %llu) is held or awaited",
                         l->rank, (unsigned long long)l->addr);
    if (rc == PARIO_OK)
        rc = pgas_book_free(ctx, PGAS_LOCAL, (int)l->rank, l->addr, l->id);
    return rc;
}

int pario_pgas_lock_free(pario_pgas *ctx, const pario_pgas_lock *lock) {
    int rc = check_lock(ctx, lock, "pario_pgas_lock_free");
    return rc == PARIO_OK ? free_lock(ctx, lock) : rc;
}

int pario_pgas_all_lock_free(pario_pgas *ctx, const pario_pgas_lock *lock) {
    const char *what = "pario_pgas_all_lock_free";
    int bad = check_lock(ctx, lock, what) != PARIO_OK;
    uint64_t args[3] = {bad ? 0 : lock->addr, bad ? 0 : lock->id, bad ? 0 : lock->rank};
    int rc = pgas_agree(ctx, args, 3, bad, what);
    if (rc != PARIO_OK)
        return rc;
    int keeper = (int)lock->rank;
    if (ctx->rank == keeper)
        rc = free_lock(ctx, lock);
    return pgas_share_result(ctx, rc, keeper, args, 0);
}
