/* pgas: every bad input gets an error code and a message, never a crash or
 * a hang: indices out of bounds, pointers not to shared memory, double
 * frees, collective allocations that differ between ranks (every rank gets
 * the error), memget past the end, full heaps, mismatched init; the
 * unchecked accesses in a debug build and their off-node halves; arrays whose
 * precomputed divisors are not those of their layout. */
#include <stdint.h>
#include <stdlib.h>

/* The unchecked load/store check their pointers as in a debug build. */
#define PARIO_PGAS_DEBUG_CHECKS 1
#include "pgas_test.h"

static void check_bounds(pario_pgas *ctx) {
    pario_pgas_array a;
    PT_EQ(pario_pgas_all_alloc(ctx, 10, 4, 2, &a), PARIO_OK);
    int32_t v = 0;
    unsigned char buf[64];
    pario_pgas_ptr p;
    PT_EQ(pario_pgas_index(ctx, &a, 10, &p), PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "index 10 outside the array of 10 elements"));
    PT_EQ(pario_pgas_get_at(ctx, &a, 11, &v), PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "index 11"));
    PT_EQ(pario_pgas_put_at(ctx, &a, UINT64_MAX, &v), PARIO_ERR_ARG);
    /* memget past the end: nothing is written */
    memset(buf, 0x77, sizeof buf);
    PT_EQ(pario_pgas_memget(ctx, buf, &a, 8, 3), PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "index 10 outside"));
    PT_EQ(buf[0], 0x77);
    PT_EQ(pario_pgas_memget(ctx, buf, &a, 3, UINT64_MAX), PARIO_ERR_ARG); /* wraps */
    PT_EQ(pario_pgas_memput(ctx, &a, 11, buf, 0), PARIO_ERR_ARG);
    PT_EQ(pario_pgas_memset(ctx, &a, 5, 0, 6), PARIO_ERR_ARG);
    pario_pgas_array b;
    PT_EQ(pario_pgas_all_alloc(ctx, 10, 8, 2, &b), PARIO_OK);
    PT_EQ(pario_pgas_memcpy(ctx, &a, 0, &a, 5, 6), PARIO_ERR_ARG);
    PT_EQ(pario_pgas_memcpy(ctx, &a, 0, &b, 0, 2), PARIO_ERR_ARG); /* sizes differ */
    PT_CHECK(test_msg_has(ctx, "element sizes differ"));
    PT_EQ(pario_pgas_memget(ctx, buf, &a, 10, 0), PARIO_OK); /* empty, at the end */
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &b), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
}

static void check_pointers(pario_pgas *ctx) {
    int n = pario_pgas_threads(ctx);
    pario_pgas_array a;
    PT_EQ(pario_pgas_all_alloc(ctx, 8, 8, 1, &a), PARIO_OK);
    int64_t v = 0;
    pario_pgas_ptr null = {0, 0, 0, 0, 0, 0, 0};
    PT_EQ(pario_pgas_get(ctx, null, &v), PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "null pointer-to-shared"));
    PT_EQ(pario_pgas_put(ctx, null, &v), PARIO_ERR_ARG);
    pario_pgas_ptr p = pario_pgas_elem(&a, 1);
    pario_pgas_ptr bad = p;
    bad.addr = 3; /* below the heaps */
    PT_EQ(pario_pgas_get(ctx, bad, &v), PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "outside the shared heaps"));
    bad.addr = (uint64_t)1 << 50; /* far past them */
    PT_EQ(pario_pgas_put_strict(ctx, bad, &v), PARIO_ERR_ARG);
    bad = p;
    bad.rank = (uint32_t)n; /* no such rank */
    PT_EQ(pario_pgas_get(ctx, bad, &v), PARIO_ERR_ARG);
    bad = p;
    bad.nranks = (uint32_t)n + 1; /* another team size */
    PT_EQ(pario_pgas_get(ctx, bad, &v), PARIO_ERR_ARG);
    bad = p;
    bad.phase = 5; /* phase beyond the block */
    PT_EQ(pario_pgas_get_strict(ctx, bad, &v), PARIO_ERR_ARG);
    bad = p;
    bad.elem_size = 0;
    PT_EQ(pario_pgas_put(ctx, bad, &v), PARIO_ERR_ARG);
    /* an array value that is not one */
    pario_pgas_array junk = a;
    junk.id = 0;
    PT_EQ(pario_pgas_memget(ctx, &v, &junk, 0, 1), PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "not a shared array"));
    junk = a;
    junk.count = (uint64_t)1 << 40; /* more than the heap holds */
    PT_EQ(pario_pgas_get_at(ctx, &junk, 0, &v), PARIO_ERR_ARG);
    PT_EQ(pario_pgas_memget(ctx, &v, NULL, 0, 1), PARIO_ERR_ARG);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
}

static void check_frees(pario_pgas *ctx) {
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    pario_pgas_array a, b, l;
    PT_EQ(pario_pgas_all_alloc(ctx, 100, 1, 4, &a), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_ERR_REQUEST); /* on every rank */
    PT_CHECK(test_msg_has(ctx, "not allocated (freed twice?)"));
    /* the same range given to a new array: the old value still cannot free it */
    PT_EQ(pario_pgas_all_alloc(ctx, 100, 1, 4, &b), PARIO_OK);
    PT_EQ(pario_pgas_free(ctx, &a), PARIO_ERR_REQUEST);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    if (rank == n - 1) {
        PT_EQ(pario_pgas_free(ctx, &b), PARIO_OK);
        PT_EQ(pario_pgas_free(ctx, &b), PARIO_ERR_REQUEST);
    }
    PT_EQ(pario_pgas_alloc(ctx, 3, 8, &l), PARIO_OK);
    PT_EQ(pario_pgas_free(ctx, &l), PARIO_OK);
    PT_EQ(pario_pgas_free(ctx, &l), PARIO_ERR_REQUEST);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
}

static void check_collective_mismatch(pario_pgas *ctx) {
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    pario_pgas_array a;
    memset(&a, 0, sizeof a);
    int want = n > 1 ? PARIO_ERR_NOT_SAME : PARIO_OK;
    /* the last rank asks for one element more */
    int rc = pario_pgas_all_alloc(ctx, rank == n - 1 ? 65 : 64, 8, 4, &a);
    PT_EQ(rc, want);
    if (n > 1)
        PT_CHECK(test_msg_has(ctx, "differs between ranks"));
    else
        PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
    /* other element size / block factor on rank 0 */
    PT_EQ(pario_pgas_all_alloc(ctx, 64, rank == 0 ? 4 : 8, 4, &a), want);
    PT_EQ(pario_pgas_all_alloc(ctx, 64, 8, rank == 0 ? 2 : 4, &a),
          n > 1 ? PARIO_ERR_NOT_SAME : PARIO_OK);
    if (n == 1)
        PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
    /* an invalid argument on one rank: all ranks fail */
    PT_EQ(pario_pgas_all_alloc(ctx, 64, rank == n - 1 ? 0 : 8, 4, &a), PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, rank == n - 1 ? "element size 0" : "on another rank"));
    /* too large for the heap: every rank gets rank 0's message */
    PT_EQ(pario_pgas_all_alloc(ctx, (uint64_t)n * (TEST_SHARED_HEAP + 1), 1, 1, &a),
          PARIO_ERR_NO_MEM);
    PT_CHECK(test_msg_has(ctx, "no room"));
    PT_EQ(pario_pgas_alloc(ctx, TEST_LOCAL_HEAP + 1, 1, &a), PARIO_ERR_NO_MEM);
    PT_EQ(pario_pgas_global_alloc(ctx, UINT64_MAX / 2, 8, 1, &a), PARIO_ERR_NO_MEM);
    /* the heaps still work */
    PT_EQ(pario_pgas_all_alloc(ctx, 64, 8, 4, &a), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
}

/* Heap sizes that differ between ranks: every rank's init fails. */
static void check_init_mismatch(void) {
    int rank = 0, n = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    pario_pgas_config cfg = {TEST_SHARED_HEAP, TEST_LOCAL_HEAP + (rank == n - 1 ? 4096 : 0)};
    pario_pgas *ctx = NULL;
    pario_error err;
    int rc = pario_pgas_init(MPI_COMM_WORLD, &cfg, &ctx, &err);
    PT_EQ(rc, n > 1 ? PARIO_ERR_NOT_SAME : PARIO_OK);
    PT_CHECK((ctx == NULL) == (n > 1));
    if (n > 1)
        PT_CHECK(strstr(err.msg, "heap sizes") != NULL);
    if (ctx)
        PT_EQ(pario_pgas_finalize(&ctx), PARIO_OK);
    PT_EQ(pario_pgas_finalize(NULL), PARIO_ERR_ARG);
}

/* Debug-build checks of load/store, and the checks of the off-node halves,
 * which every build makes. Nothing is read or written on failure. */
static void check_unchecked(pario_pgas *ctx) {
    int n = pario_pgas_threads(ctx);
    pario_pgas_array a;
    PT_EQ(pario_pgas_all_alloc(ctx, 8, 4, 1, &a), PARIO_OK);
    pario_pgas_ptr p = pario_pgas_elem(&a, 0), null = {0, 0, 0, 0, 0, 0, 0};
    double d = 1.5;
    int32_t v = 7;
    PT_EQ(pario_pgas_load_double(ctx, p, &d), PARIO_ERR_ARG); /* 4-byte elements */
    PT_CHECK(test_msg_has(ctx, "pario_pgas_load_double"));
    PT_CHECK(test_msg_has(ctx, "elements of 4 bytes used for 8 bytes"));
    PT_CHECK(d == 1.5);
    PT_EQ(pario_pgas_store_i64(ctx, p, 3), PARIO_ERR_ARG);
    PT_EQ(pario_pgas_load(ctx, null, &v), PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "null pointer-to-shared"));
    pario_pgas_ptr bad = p;
    bad.rank = (uint32_t)n;
    PT_EQ(pario_pgas_store_i32(ctx, bad, 1), PARIO_ERR_ARG);
    bad = p;
    bad.addr = 3;
    PT_EQ(pario_pgas_store(ctx, bad, &v), PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "outside the shared heaps"));
    PT_EQ(pario_pgas_store_i32(ctx, p, 42), PARIO_OK);
    PT_EQ(pario_pgas_load_i32(ctx, p, &v), PARIO_OK);
    PT_EQ(v, 42);
    /* the off-node halves: a rank of the team and bytes inside the heaps */
    uint64_t end = pario_pgas_map(ctx)->heap_hi;
    pario_pgas_word w = pario_pgas_load_far(ctx, (uint32_t)n, p.addr, 4);
    PT_EQ(w.rc, PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "not in the shared heaps"));
    PT_EQ(pario_pgas_load_far(ctx, 0, 0, 4).rc, PARIO_ERR_ARG);
    PT_EQ(pario_pgas_load_far(ctx, 0, p.addr, 9).rc, PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "9 bytes in a word"));
    PT_EQ(pario_pgas_store_far(ctx, 0, end - 4, 0, 8), PARIO_ERR_ARG);
    PT_EQ(pario_pgas_store_far(ctx, 0, p.addr, 0, 0), PARIO_ERR_ARG);
    PT_EQ(pario_pgas_get_far(ctx, 0, end, &v, 1), PARIO_ERR_ARG);
    PT_EQ(pario_pgas_put_far(ctx, 0, UINT64_MAX, &v, 1), PARIO_ERR_ARG);
    PT_EQ(pario_pgas_access_check(ctx, p, 4, "x"), PARIO_OK);
    PT_EQ(pario_pgas_access_check(ctx, p, 2, "x"), PARIO_ERR_ARG);
    PT_EQ(v, 42);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
}

/* An array whose divisors do not fit its layout is not an array (the
 * checked calls refuse it); one without divisors (all zero) is, and elem
 * then divides, with the same result. */
static void check_divisors(pario_pgas *ctx) {
    int rank = pario_pgas_mythread(ctx);
    pario_pgas_array a;
    PT_EQ(pario_pgas_all_alloc(ctx, 60, 8, 7, &a), PARIO_OK);
    PT_EQ(a.index_mul, 1);
    int64_t v = rank, got = -1;
    PT_EQ(pario_pgas_put_at(ctx, &a, (uint64_t)rank, &v), PARIO_OK);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    pario_pgas_array junk = a;
    junk.block_mul++;
    PT_EQ(pario_pgas_memget(ctx, &got, &junk, 0, 1), PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "not a shared array"));
    junk = a;
    junk.ranks_mul--;
    PT_EQ(pario_pgas_get_at(ctx, &junk, 0, &got), PARIO_ERR_ARG);
    junk = a;
    junk.index_mul = 2;
    PT_EQ(pario_pgas_get_at(ctx, &junk, 0, &got), PARIO_ERR_ARG);
    junk = a;
    junk.index_mul = 0; /* muls left behind */
    PT_EQ(pario_pgas_get_at(ctx, &junk, 0, &got), PARIO_ERR_ARG);
    pario_pgas_array plain = a;
    plain.index_mul = 0;
    plain.block_mul = plain.ranks_mul = 0;
    plain.index_kind = PARIO_PGAS_INDEX_ANY;
    plain.block_shift = plain.ranks_shift = 0;
    int bad = 0;
    for (uint64_t i = 0; i <= 60; i++) {
        pario_pgas_ptr p = pario_pgas_elem(&a, i), q = pario_pgas_elem(&plain, i);
        bad += !pario_pgas_ptr_eq(p, q) || p.phase != q.phase;
    }
    PT_EQ(bad, 0);
    PT_EQ(pario_pgas_get_at(ctx, &plain, (uint64_t)rank, &got), PARIO_OK);
    PT_EQ(got, rank);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    pario_pgas *ctx = test_pgas_init();
    check_bounds(ctx);
    check_pointers(ctx);
    check_frees(ctx);
    check_collective_mismatch(ctx);
    check_unchecked(ctx);
    check_divisors(ctx);
    PT_EQ(pario_pgas_finalize(&ctx), PARIO_OK);
    check_init_mismatch();
    return ptest_finish();
}
