/* pgas: the relocalization collectives (broadcast, scatter, gather,
 * gather_all, exchange, permute) with every root, destinations starting on
 * every rank, several block sizes and every synchronisation mode; every
 * byte of the destination array (also outside the blocks written) checked
 * against a serially computed image; bad input fails on every rank alike. */
#include <stdint.h>
#include <stdlib.h>

#include "pgas_test.h"

static const size_t sizes[] = {1, 8, 13};
static const int modes[] = {
    0, PARIO_PGAS_IN_NOSYNC | PARIO_PGAS_OUT_NOSYNC, PARIO_PGAS_IN_MYSYNC | PARIO_PGAS_OUT_MYSYNC,
    PARIO_PGAS_IN_ALLSYNC | PARIO_PGAS_OUT_ALLSYNC, PARIO_PGAS_IN_NOSYNC | PARIO_PGAS_OUT_ALLSYNC};

/* The byte k of the piece `piece` sent by rank `from`. */
static unsigned char pattern(int from, int piece, size_t k, int salt) {
    return (unsigned char)(from * 37 + piece * 11 + (int)k * 3 + salt * 5 + 1);
}

/* An array of nblocks blocks of `bytes` (block j on rank j % n), zeroed. */
static pario_pgas_array zeroed_blocks(pario_pgas *ctx, uint64_t nblocks, uint64_t bytes) {
    pario_pgas_array a;
    PT_EQ(pario_pgas_all_alloc(ctx, nblocks * bytes, 1, bytes, &a), PARIO_OK);
    if (pario_pgas_mythread(ctx) == 0)
        PT_EQ(pario_pgas_memset(ctx, &a, 0, 0, a.count), PARIO_OK);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    return a;
}

/* After a collective: a barrier when the mode lets ranks return early,
 * then every rank compares the whole array with the expected image. */
static void expect_image(pario_pgas *ctx, const pario_pgas_array *a, const unsigned char *want,
                         int mode) {
    if (mode & (PARIO_PGAS_OUT_NOSYNC | PARIO_PGAS_OUT_MYSYNC))
        PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    unsigned char *got = malloc(a->count);
    PT_EQ(pario_pgas_memget(ctx, got, a, 0, a->count), PARIO_OK);
    uint64_t bad = 0;
    for (uint64_t i = 0; i < a->count; i++)
        bad += got[i] != want[i];
    PT_EQ(bad, 0);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    free(got);
}

/* Index of the block of dst (starting at block t) with affinity to r. */
static uint64_t block_of(int t, int r, int n) {
    return (uint64_t)t + (uint64_t)((r - t + n) % n);
}

/* Fills block j of a (blocks of `bytes`) with rank/piece patterns. */
static void put_block(pario_pgas *ctx, const pario_pgas_array *a, uint64_t j, uint64_t bytes,
                      int from, int piece, int salt) {
    unsigned char *buf = malloc(bytes);
    for (size_t k = 0; k < bytes; k++)
        buf[k] = pattern(from, piece, k, salt);
    PT_EQ(pario_pgas_memput(ctx, a, j * bytes, buf, bytes), PARIO_OK);
    free(buf);
}

static void check_broadcast(pario_pgas *ctx, size_t nb, int root, int t, int mode, int salt) {
    int n = pario_pgas_threads(ctx), me = pario_pgas_mythread(ctx);
    pario_pgas_array src = zeroed_blocks(ctx, (uint64_t)n, nb);
    pario_pgas_array dst = zeroed_blocks(ctx, 2 * (uint64_t)n, nb);
    if (me == root)
        put_block(ctx, &src, (uint64_t)root, nb, root, 0, salt);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    PT_EQ(pario_pgas_all_broadcast(ctx, pario_pgas_elem(&dst, (uint64_t)t * nb),
                                   pario_pgas_elem(&src, (uint64_t)root * nb), nb, mode),
          PARIO_OK);
    unsigned char *want = calloc(dst.count, 1);
    for (int r = 0; r < n; r++)
        for (size_t k = 0; k < nb; k++)
            want[block_of(t, r, n) * nb + k] = pattern(root, 0, k, salt);
    expect_image(ctx, &dst, want, mode);
    free(want);
    PT_EQ(pario_pgas_all_free(ctx, &dst), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &src), PARIO_OK);
}

/* scatter from root's n pieces, then gather them back to another root. */
static void check_scatter_gather(pario_pgas *ctx, size_t nb, int root, int t, int mode, int salt) {
    int n = pario_pgas_threads(ctx), me = pario_pgas_mythread(ctx);
    uint64_t row = (uint64_t)n * nb;
    pario_pgas_array whole = zeroed_blocks(ctx, (uint64_t)n, row); /* [n*nb] blocks */
    pario_pgas_array parts = zeroed_blocks(ctx, 2 * (uint64_t)n, nb);
    if (me == root) {
        unsigned char *buf = malloc(row);
        for (int i = 0; i < n; i++)
            for (size_t k = 0; k < nb; k++)
                buf[(size_t)i * nb + k] = pattern(root, i, k, salt);
        PT_EQ(pario_pgas_memput(ctx, &whole, (uint64_t)root * row, buf, row), PARIO_OK);
        free(buf);
    }
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    pario_pgas_ptr at_t = pario_pgas_elem(&parts, (uint64_t)t * nb);
    PT_EQ(
        pario_pgas_all_scatter(ctx, at_t, pario_pgas_elem(&whole, (uint64_t)root * row), nb, mode),
        PARIO_OK);
    unsigned char *want = calloc(parts.count, 1);
    for (int r = 0; r < n; r++)
        for (size_t k = 0; k < nb; k++)
            want[block_of(t, r, n) * nb + k] = pattern(root, r, k, salt);
    expect_image(ctx, &parts, want, mode);
    free(want);
    /* gather to root2's block of `whole`, after clearing it */
    int root2 = (root + 1) % n;
    if (me == root2)
        PT_EQ(pario_pgas_memset(ctx, &whole, (uint64_t)root2 * row, 0, row), PARIO_OK);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    PT_EQ(
        pario_pgas_all_gather(ctx, pario_pgas_elem(&whole, (uint64_t)root2 * row), at_t, nb, mode),
        PARIO_OK);
    unsigned char *back = malloc(row);
    if (mode & (PARIO_PGAS_OUT_NOSYNC | PARIO_PGAS_OUT_MYSYNC))
        PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    PT_EQ(pario_pgas_memget(ctx, back, &whole, (uint64_t)root2 * row, row), PARIO_OK);
    uint64_t bad = 0;
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < nb; k++)
            bad += back[(size_t)i * nb + k] != pattern(root, i, k, salt);
    PT_EQ(bad, 0);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    free(back);
    PT_EQ(pario_pgas_all_free(ctx, &parts), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &whole), PARIO_OK);
}

static void check_gather_all_exchange(pario_pgas *ctx, size_t nb, int t, int mode, int salt) {
    int n = pario_pgas_threads(ctx), me = pario_pgas_mythread(ctx);
    uint64_t row = (uint64_t)n * nb;
    pario_pgas_array src = zeroed_blocks(ctx, (uint64_t)n, nb);
    pario_pgas_array rows = zeroed_blocks(ctx, 2 * (uint64_t)n, row);
    pario_pgas_array xsrc = zeroed_blocks(ctx, (uint64_t)n, row);
    put_block(ctx, &src, (uint64_t)me, nb, me, 0, salt);
    for (int i = 0; i < n; i++) /* piece i of my row: for rank i */
        put_block(ctx, &xsrc, (uint64_t)me * (uint64_t)n + (uint64_t)i, nb, me, i, salt);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    pario_pgas_ptr rows_t = pario_pgas_elem(&rows, (uint64_t)t * row);
    PT_EQ(pario_pgas_all_gather_all(ctx, rows_t, pario_pgas_elem(&src, 0), nb, mode), PARIO_OK);
    unsigned char *want = calloc(rows.count, 1);
    for (int r = 0; r < n; r++)
        for (int i = 0; i < n; i++)
            for (size_t k = 0; k < nb; k++)
                want[block_of(t, r, n) * row + (size_t)i * nb + k] = pattern(i, 0, k, salt);
    expect_image(ctx, &rows, want, mode);
    /* exchange: piece i of rank j's row -> piece j of rank i's row */
    PT_EQ(pario_pgas_all_exchange(ctx, rows_t, pario_pgas_elem(&xsrc, 0), nb, mode), PARIO_OK);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            for (size_t k = 0; k < nb; k++)
                want[block_of(t, i, n) * row + (size_t)j * nb + k] = pattern(j, i, k, salt);
    expect_image(ctx, &rows, want, mode);
    free(want);
    PT_EQ(pario_pgas_all_free(ctx, &xsrc), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &rows), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &src), PARIO_OK);
}

/* perm in an int array of block factor perm_block; rotation by shift. */
static void check_permute(pario_pgas *ctx, size_t nb, int shift, uint64_t perm_block, int mode,
                          int salt) {
    int n = pario_pgas_threads(ctx), me = pario_pgas_mythread(ctx);
    pario_pgas_array perm, src = zeroed_blocks(ctx, (uint64_t)n, nb);
    pario_pgas_array dst = zeroed_blocks(ctx, (uint64_t)n, nb);
    PT_EQ(pario_pgas_all_alloc(ctx, (uint64_t)n, sizeof(int), perm_block, &perm), PARIO_OK);
    int p = shift >= 0 ? (me + shift) % n : n - 1 - me;
    PT_EQ(pario_pgas_put_at(ctx, &perm, (uint64_t)me, &p), PARIO_OK);
    put_block(ctx, &src, (uint64_t)me, nb, me, 0, salt);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    PT_EQ(pario_pgas_all_permute(ctx, pario_pgas_elem(&dst, 0), pario_pgas_elem(&src, 0),
                                 pario_pgas_elem(&perm, 0), nb, mode),
          PARIO_OK);
    unsigned char *want = calloc(dst.count, 1);
    for (int i = 0; i < n; i++) {
        int to = shift >= 0 ? (i + shift) % n : n - 1 - i;
        for (size_t k = 0; k < nb; k++)
            want[(size_t)to * nb + k] = pattern(i, 0, k, salt);
    }
    expect_image(ctx, &dst, want, mode);
    free(want);
    PT_EQ(pario_pgas_all_free(ctx, &perm), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &dst), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &src), PARIO_OK);
}

/* Bad input: the same code on every rank, nothing hangs. */
static void check_errors(pario_pgas *ctx) {
    int n = pario_pgas_threads(ctx), me = pario_pgas_mythread(ctx);
    pario_pgas_array a = zeroed_blocks(ctx, 2 * (uint64_t)n, 8 * (uint64_t)n);
    pario_pgas_ptr p = pario_pgas_elem(&a, 0);
    /* sizes differing between ranks */
    int rc = pario_pgas_all_broadcast(ctx, p, p, me == n - 1 ? 4 : 8, 0);
    PT_EQ(rc, n > 1 ? PARIO_ERR_NOT_SAME : PARIO_OK);
    if (n > 1)
        PT_CHECK(test_msg_has(ctx, "differs between ranks"));
    /* two IN modes */
    PT_EQ(pario_pgas_all_gather_all(ctx, p, p, 8, PARIO_PGAS_IN_NOSYNC | PARIO_PGAS_IN_MYSYNC),
          PARIO_ERR_ARG);
    /* unknown flag bits on one rank only: that rank names them, all fail */
    rc = pario_pgas_all_exchange(ctx, p, p, 8, me == 0 ? 0x4000 : 0);
    PT_EQ(rc, PARIO_ERR_ARG);
    if (me == 0)
        PT_CHECK(test_msg_has(ctx, "flags"));
    /* the null pointer-to-shared */
    pario_pgas_ptr null = {0};
    PT_EQ(pario_pgas_all_scatter(ctx, p, null, 8, 0), PARIO_ERR_ARG);
    /* a block running past the shared heaps */
    pario_pgas_ptr end = p;
    end.addr = pario_pgas_map(ctx)->heap_hi - 4;
    PT_EQ(pario_pgas_all_gather(ctx, p, end, 8, 0), PARIO_ERR_ARG);
    /* a destination that does not start a block of nbytes */
    pario_pgas_ptr mid = pario_pgas_elem(&a, 3);
    PT_EQ(pario_pgas_all_broadcast(ctx, mid, p, 8 * (uint64_t)n, 0), PARIO_ERR_ARG);
    /* perm that is not a permutation (two ranks send to 0) */
    pario_pgas_array perm;
    PT_EQ(pario_pgas_all_alloc(ctx, (uint64_t)n, sizeof(int), 1, &perm), PARIO_OK);
    int zero = 0;
    PT_EQ(pario_pgas_put_at(ctx, &perm, (uint64_t)me, &zero), PARIO_OK);
    PT_EQ(pario_pgas_barrier(ctx, PARIO_PGAS_ANY), PARIO_OK);
    rc = pario_pgas_all_permute(ctx, p, p, pario_pgas_elem(&perm, 0), 8, 0);
    PT_EQ(rc, n > 1 ? PARIO_ERR_ARG : PARIO_OK);
    if (n > 1)
        PT_CHECK(test_msg_has(ctx, "not a permutation"));
    /* perm of the wrong element type */
    PT_EQ(pario_pgas_all_permute(ctx, p, p, p, 8, 0), PARIO_ERR_ARG);
    /* a collective between notify and wait */
    PT_EQ(pario_pgas_notify(ctx, PARIO_PGAS_ANY), PARIO_OK);
    PT_EQ(pario_pgas_all_broadcast(ctx, p, p, 8, 0), PARIO_ERR_REQUEST);
    PT_EQ(pario_pgas_wait(ctx, PARIO_PGAS_ANY), PARIO_OK);
    /* nbytes 0 moves nothing and succeeds */
    PT_EQ(pario_pgas_all_exchange(ctx, p, p, 0, 0), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &perm), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    pario_pgas *ctx = test_pgas_init();
    int n = pario_pgas_threads(ctx), salt = 0;
    size_t nmodes = sizeof modes / sizeof *modes;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (int r = 0; r < n; r++) {
            int mode = modes[(s + (size_t)r) % nmodes], t = (r + 1) % n;
            check_broadcast(ctx, sizes[s], r, t, mode, ++salt);
            check_scatter_gather(ctx, sizes[s], r, t, mode, ++salt);
            check_gather_all_exchange(ctx, sizes[s], r, mode, ++salt);
            check_permute(ctx, sizes[s], r, r % 2 ? (uint64_t)n : 1, mode, ++salt);
        }
    check_permute(ctx, 8, -1, 1, 0, ++salt);
    check_errors(ctx);
    PT_EQ(pario_pgas_finalize(&ctx), PARIO_OK);
    return ptest_finish();
}
