/* pgas: non-blocking memget/memput/memcpy/memset with explicit handles
 * (sync, sync_attempt) and implicit ones (synci, sync_attempti, and fence /
 * barrier completing them), byte exact on several layouts; transfers to
 * another node stay in flight (a handle, not the complete one); handle
 * misuse and bad ranges give error codes and move nothing. */
#include <stdint.h>
#include <stdlib.h>

#include "pgas_test.h"

#define COUNT 157

static const uint64_t blocks[] = {0, 1, 3, 16, PARIO_PGAS_BLOCK_FIT};
static const uint32_t sizes[] = {1, 8};

/* 1 when some element of a lives on a rank this process cannot map. */
static int has_unmapped(pario_pgas *ctx, const pario_pgas_array *a) {
    for (uint64_t i = 0; i < a->count; i++)
        if (!pario_pgas_cast(ctx, pario_pgas_elem(a, i)))
            return 1;
    return 0;
}

/* Completes h by polling sync_attempt (returns the number of attempts). */
static int sync_by_attempts(pario_pgas *ctx, pario_pgas_handle h) {
    int done = 0, tries = 0;
    while (!done) {
        PT_EQ(pario_pgas_sync_attempt(ctx, h, &done), PARIO_OK);
        tries++;
    }
    return tries;
}

/* Rank r puts its slice with memput_nb into a and memput_nbi into b, works,
 * syncs; everyone then reads both arrays whole with memget_nb / memget_nbi. */
static void check_put_get(pario_pgas *ctx, const pario_pgas_array *a, const pario_pgas_array *b,
                          int salt) {
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    uint32_t es = a->base.elem_size;
    uint64_t per = a->count / (uint64_t)n, first = per * (uint64_t)rank;
    uint64_t count = rank == n - 1 ? a->count - first : per;
    unsigned char *in = malloc(a->count * es), *in2 = malloc(a->count * es);
    test_fill(in, first, count, es, salt);
    test_fill(in2, first, count, es, salt + 1);
    pario_pgas_handle h = 7;
    PT_EQ(pario_pgas_memput_nb(ctx, a, first, in, count, &h), PARIO_OK);
    PT_EQ(pario_pgas_memput_nbi(ctx, b, first, in2, count), PARIO_OK);
    volatile uint64_t work = 0;
    for (int k = 0; k < 10000; k++)
        work += (uint64_t)k;
    PT_EQ(pario_pgas_sync(ctx, h), PARIO_OK);
    PT_EQ(pario_pgas_synci(ctx), PARIO_OK);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);

    unsigned char *out = calloc(a->count * es + 1, 1), *out2 = calloc(a->count * es + 1, 1);
    PT_EQ(pario_pgas_memget_nb(ctx, out, a, 0, a->count, &h), PARIO_OK);
    /* a transfer from another node is in flight: a real handle */
    if (has_unmapped(ctx, a))
        PT_CHECK(h != PARIO_PGAS_COMPLETE_HANDLE);
    PT_EQ(pario_pgas_memget_nbi(ctx, out2, b, 0, b->count), PARIO_OK);
    sync_by_attempts(ctx, h);
    int done = 0;
    while (!done)
        PT_EQ(pario_pgas_sync_attempti(ctx, &done), PARIO_OK);
    PT_EQ(test_mismatch(out, 0, a->count, es, salt), 0);
    PT_EQ(test_mismatch(out2, 0, b->count, es, salt + 1), 0);
    PT_EQ(out[a->count * es], 0);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    free(in);
    free(in2);
    free(out);
    free(out2);
}

/* The last rank memsets a middle range (explicit) and a tail (implicit,
 * completed by the barrier's fence); rank 0 memcpys b into a shifted
 * (explicit) and a's head into b (implicit, completed by a fence). */
static void check_set_copy(pario_pgas *ctx, const pario_pgas_array *a, const pario_pgas_array *b,
                           int salt) {
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    uint32_t es = a->base.elem_size;
    uint64_t c = a->count, set_first = c / 5, set_count = c / 3, tail = c - 10;
    if (rank == n - 1) {
        pario_pgas_handle h = PARIO_PGAS_COMPLETE_HANDLE;
        PT_EQ(pario_pgas_memset_nb(ctx, a, set_first, 0x5A, set_count, &h), PARIO_OK);
        PT_EQ(pario_pgas_memset_nbi(ctx, a, tail, 0x3C, 10), PARIO_OK);
        PT_EQ(pario_pgas_sync(ctx, h), PARIO_OK);
    }
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    unsigned char *buf = malloc(c * es);
    PT_EQ(pario_pgas_memget(ctx, buf, a, 0, c), PARIO_OK);
    uint64_t bad = 0;
    for (uint64_t i = 0; i < c; i++) {
        int in_set = i >= set_first && i < set_first + set_count;
        for (uint32_t k = 0; k < es; k++) {
            unsigned want = in_set ? 0x5A : i >= tail ? 0x3C : test_byte(i, k, salt);
            bad += buf[i * es + k] != want;
        }
    }
    PT_EQ(bad, 0);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    /* b holds salt + 1 everywhere; a[c/2 ..] <- b[3 ..], b[0 .. 9] <- a[0 .. 9] */
    uint64_t to = c / 2, from = 3, len = c - c / 2;
    if (rank == 0) {
        pario_pgas_handle h = PARIO_PGAS_COMPLETE_HANDLE;
        PT_EQ(pario_pgas_memcpy_nb(ctx, a, to, b, from, len, &h), PARIO_OK);
        PT_EQ(pario_pgas_memcpy_nbi(ctx, b, 0, a, 0, 10), PARIO_OK);
        PT_EQ(pario_pgas_fence(ctx), PARIO_OK);
        int done = 0;
        PT_EQ(pario_pgas_sync_attempti(ctx, &done), PARIO_OK);
        PT_EQ(done, 1); /* the fence completed the implicit copy */
        PT_EQ(pario_pgas_sync(ctx, h), PARIO_OK);
    }
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    PT_EQ(pario_pgas_memget(ctx, buf, a, to, len), PARIO_OK);
    PT_EQ(test_mismatch(buf, from, len, es, salt + 1), 0);
    PT_EQ(pario_pgas_memget(ctx, buf, b, 0, 10), PARIO_OK);
    PT_EQ(test_mismatch(buf, 0, 10, es, salt), 0);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    free(buf);
}

static void check_layout(pario_pgas *ctx, uint64_t block, uint32_t es, int salt) {
    pario_pgas_array a, b;
    PT_EQ(pario_pgas_all_alloc(ctx, COUNT, es, block, &a), PARIO_OK);
    PT_EQ(pario_pgas_all_alloc(ctx, COUNT, es, block == 1 ? 4 : 1, &b), PARIO_OK);
    check_put_get(ctx, &a, &b, salt);
    check_set_copy(ctx, &a, &b, salt);
    PT_EQ(pario_pgas_all_free(ctx, &b), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
}

/* Many explicit handles in flight at once, synced in reverse order. */
static void check_many_handles(pario_pgas *ctx) {
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    enum { PIECES = 40 };
    pario_pgas_array a;
    PT_EQ(pario_pgas_all_alloc(ctx, (uint64_t)n * PIECES, 8, 1, &a), PARIO_OK);
    uint64_t vals[PIECES];
    pario_pgas_handle h[PIECES];
    for (int k = 0; k < PIECES; k++) {
        vals[k] = (uint64_t)rank * 1000 + (uint64_t)k;
        uint64_t at = (uint64_t)k * (uint64_t)n + (uint64_t)((rank + 1) % n);
        PT_EQ(pario_pgas_memput_nb(ctx, &a, at, &vals[k], 1, &h[k]), PARIO_OK);
    }
    for (int k = PIECES - 1; k >= 0; k--)
        PT_EQ(pario_pgas_sync(ctx, h[k]), PARIO_OK);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    int left = (rank + n - 1) % n, bad = 0;
    for (int k = 0; k < PIECES; k++) {
        uint64_t v = 0;
        PT_EQ(pario_pgas_get_at(ctx, &a, (uint64_t)k * (uint64_t)n + (uint64_t)rank, &v), PARIO_OK);
        bad += v != (uint64_t)left * 1000 + (uint64_t)k;
    }
    PT_EQ(bad, 0);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
}

/* Handle misuse and bad ranges: error codes with messages, nothing moves. */
static void check_errors(pario_pgas *ctx) {
    int n = pario_pgas_threads(ctx);
    pario_pgas_array a;
    PT_EQ(pario_pgas_all_alloc(ctx, (uint64_t)n * 8, 4, 2, &a), PARIO_OK);
    unsigned char buf[64];
    memset(buf, 0xEE, sizeof buf);
    pario_pgas_handle h = 99;
    /* past the end: no handle, buffer untouched */
    PT_EQ(pario_pgas_memget_nb(ctx, buf, &a, a.count - 2, 3, &h), PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "pario_pgas_memget_nb"));
    PT_CHECK(test_msg_has(ctx, "outside the array"));
    PT_EQ(h, PARIO_PGAS_COMPLETE_HANDLE);
    PT_EQ(buf[0], 0xEE);
    PT_EQ(pario_pgas_memput_nbi(ctx, &a, a.count, buf, 1), PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "pario_pgas_memput_nbi"));
    PT_EQ(pario_pgas_memset_nb(ctx, &a, 0, 0, a.count + 1, &h), PARIO_ERR_ARG);
    pario_pgas_array other;
    PT_EQ(pario_pgas_all_alloc(ctx, (uint64_t)n * 8, 8, 2, &other), PARIO_OK);
    PT_EQ(pario_pgas_memcpy_nb(ctx, &a, 0, &other, 0, 1, &h), PARIO_ERR_ARG);
    PT_CHECK(test_msg_has(ctx, "element sizes differ"));
    /* sync twice, a made-up handle, attempt on a spent handle */
    uint64_t last = a.count - 1;
    PT_EQ(pario_pgas_memget_nb(ctx, buf, &a, last, 1, &h), PARIO_OK);
    PT_EQ(pario_pgas_sync(ctx, h), PARIO_OK);
    if (h != PARIO_PGAS_COMPLETE_HANDLE) {
        PT_EQ(pario_pgas_sync(ctx, h), PARIO_ERR_REQUEST);
        PT_CHECK(test_msg_has(ctx, "already synced"));
        int done = 5;
        PT_EQ(pario_pgas_sync_attempt(ctx, h, &done), PARIO_ERR_REQUEST);
        PT_EQ(done, 0);
    }
    PT_EQ(pario_pgas_sync(ctx, (pario_pgas_handle)0x1234567), PARIO_ERR_REQUEST);
    PT_CHECK(test_msg_has(ctx, "0x1234567"));
    PT_EQ(pario_pgas_sync(ctx, PARIO_PGAS_COMPLETE_HANDLE), PARIO_OK);
    PT_EQ(pario_pgas_synci(ctx), PARIO_OK); /* nothing in flight: fine */
    /* a transfer left unsynced is completed by finalize (into memory that
     * outlives this function) */
    static unsigned char left_open[16];
    PT_EQ(pario_pgas_memget_nb(ctx, left_open, &a, 0, 2, &h), PARIO_OK);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &other), PARIO_OK);
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
    check_many_handles(ctx);
    check_errors(ctx);
    PT_EQ(pario_pgas_finalize(&ctx), PARIO_OK);
    return ptest_finish();
}
