/* Non-blocking bulk transfers (UPC 1.3 upc_nb.h): explicit handles, each a
 * slot holding the gas events of one call, and implicit handles, whose
 * events gather in one list that synci, fence, strict accesses and barriers
 * complete.
 *
 * A handle is (generation << 32) | (slot + 1). Syncing a handle frees its
 * slot and advances the slot's generation, so the same handle synced again,
 * or a value that was never a handle, matches no live slot: PARIO_ERR_REQUEST
 * naming the handle. Handle 0 is PARIO_PGAS_COMPLETE_HANDLE: a call whose
 * every run was node-local (done in the call) returns it, and syncing it
 * succeeds at once, as UPC's UPC_COMPLETE_HANDLE. */
#include "pgas/pgas_internal.h"

#include <stdlib.h>
#include <string.h>

enum { FIRST_SLOTS = 8 };

static pario_pgas_handle handle_of(const pario_pgas *ctx, size_t slot) {
    return ((uint64_t)ctx->nb[slot].generation << 32) | (uint64_t)(slot + 1);
}

/* The live slot a handle names, or NULL after recording why not. */
static pgas_nb_slot *slot_of(pario_pgas *ctx, pario_pgas_handle h, const char *what) {
    uint64_t index = (h & 0xffffffffu) - 1;
    uint32_t generation = (uint32_t)(h >> 32);
    if (index < ctx->nb_count && ctx->nb[index].in_use && ctx->nb[index].generation == generation)
        return &ctx->nb[index];
    pgas_fail(ctx, PARIO_ERR_REQUEST,
              "pgas: %s: handle %#llx is not a transfer in flight (already synced, or never "
              "returned by a non-blocking call)",
              what, (unsigned long long)h);
    return NULL;
}

/* A free slot, growing the table when every slot is in use. */
static int free_slot(pario_pgas *ctx, size_t *slot) {
    for (size_t i = 0; i < ctx->nb_count; i++)
        if (!ctx->nb[i].in_use) {
            *slot = i;
            return PARIO_OK;
        }
    size_t count = ctx->nb_count ? 2 * ctx->nb_count : FIRST_SLOTS;
    pgas_nb_slot *nb = realloc(ctx->nb, count * sizeof *nb);
    if (!nb)
        return pgas_fail(ctx, PARIO_ERR_NO_MEM, "pgas: out of memory for transfer handles");
    memset(nb + ctx->nb_count, 0, (count - ctx->nb_count) * sizeof *nb);
    for (size_t i = ctx->nb_count; i < count; i++)
        nb[i].batch.grow = 1;
    *slot = ctx->nb_count;
    ctx->nb = nb;
    ctx->nb_count = count;
    return PARIO_OK;
}

/* Waits for every transfer of b, then drops its fill pattern. */
static int drain(pario_pgas *ctx, pgas_batch *b) {
    int rc = pgas_batch_finish(ctx, b);
    free(b->fill);
    b->fill = NULL;
    return rc;
}

static void retire(pgas_nb_slot *s) {
    s->in_use = 0;
    s->generation++;
}

/* The end of an explicit-handle call: a handle when transfers are in flight,
 * the complete handle when none are, none after a failure (what was started
 * is waited for first, so the caller's buffer is free again). */
static int finish_start(pario_pgas *ctx, size_t slot, int rc, pario_pgas_handle *h) {
    pgas_nb_slot *s = &ctx->nb[slot];
    *h = PARIO_PGAS_COMPLETE_HANDLE;
    if (rc != PARIO_OK || s->batch.n == 0) {
        int drc = drain(ctx, &s->batch);
        return rc != PARIO_OK ? rc : drc;
    }
    s->in_use = 1;
    *h = handle_of(ctx, slot);
    return PARIO_OK;
}

/* The end of an implicit-handle call: after a failure, every implicit
 * transfer is completed (the failed call's too) before it is reported. */
static int finish_start_implicit(pario_pgas *ctx, int rc) {
    if (rc == PARIO_OK)
        return rc;
    drain(ctx, &ctx->nbi);
    return rc;
}

/* One transfer's arguments, whichever kind it is. */
typedef enum xfer_kind { XFER_GET, XFER_PUT, XFER_COPY, XFER_SET } xfer_kind;
typedef struct xfer {
    xfer_kind kind;
    const char *what;
    const pario_pgas_array *a, *from; /* the array; the source array of a copy */
    uint64_t first, from_first, count;
    void *local; /* get: the destination; put: the source */
    int value;   /* set */
} xfer;

static int start(pario_pgas *ctx, pgas_batch *b, const xfer *x) {
    switch (x->kind) {
    case XFER_GET:
        return pgas_memget_start(ctx, b, x->local, x->a, x->first, x->count, x->what);
    case XFER_PUT:
        return pgas_memput_start(ctx, b, x->a, x->first, x->local, x->count, x->what);
    case XFER_COPY:
        return pgas_memcpy_start(ctx, b, x->a, x->first, x->from, x->from_first, x->count, x->what);
    default:
        return pgas_memset_start(ctx, b, x->a, x->first, x->value, x->count, x->what);
    }
}

/* An explicit-handle transfer in a free slot. */
static int start_explicit(pario_pgas *ctx, const xfer *x, pario_pgas_handle *h) {
    size_t slot = 0;
    int rc = free_slot(ctx, &slot);
    if (rc != PARIO_OK)
        return rc;
    return finish_start(ctx, slot, start(ctx, &ctx->nb[slot].batch, x), h);
}

/* An implicit-handle transfer in the implicit list. */
static int start_implicit(pario_pgas *ctx, const xfer *x) {
    return finish_start_implicit(ctx, start(ctx, &ctx->nbi, x));
}

/* ---- explicit handles ---- */

int pario_pgas_memget_nb(pario_pgas *ctx, void *dst, const pario_pgas_array *a, uint64_t first,
                         uint64_t count, pario_pgas_handle *h) {
    xfer x = {XFER_GET, "pario_pgas_memget_nb", a, NULL, first, 0, count, dst, 0};
    return start_explicit(ctx, &x, h);
}

int pario_pgas_memput_nb(pario_pgas *ctx, const pario_pgas_array *a, uint64_t first,
                         const void *src, uint64_t count, pario_pgas_handle *h) {
    xfer x = {XFER_PUT, "pario_pgas_memput_nb", a, NULL, first, 0, count, (void *)src, 0};
    return start_explicit(ctx, &x, h);
}

int pario_pgas_memcpy_nb(pario_pgas *ctx, const pario_pgas_array *dst, uint64_t dst_first,
                         const pario_pgas_array *src, uint64_t src_first, uint64_t count,
                         pario_pgas_handle *h) {
    xfer x = {XFER_COPY, "pario_pgas_memcpy_nb", dst, src, dst_first, src_first, count, NULL, 0};
    return start_explicit(ctx, &x, h);
}

int pario_pgas_memset_nb(pario_pgas *ctx, const pario_pgas_array *a, uint64_t first, int value,
                         uint64_t count, pario_pgas_handle *h) {
    xfer x = {XFER_SET, "pario_pgas_memset_nb", a, NULL, first, 0, count, NULL, value};
    return start_explicit(ctx, &x, h);
}

int pario_pgas_sync(pario_pgas *ctx, pario_pgas_handle h) {
    if (h == PARIO_PGAS_COMPLETE_HANDLE)
        return PARIO_OK;
    pgas_nb_slot *s = slot_of(ctx, h, "pario_pgas_sync");
    if (!s)
        return ctx->last.code;
    int rc = drain(ctx, &s->batch);
    retire(s);
    return rc;
}

/* *done = 1 when every transfer of b has completed (b is then empty). */
static int test_batch(pario_pgas *ctx, pgas_batch *b, int *done) {
    *done = 1;
    for (size_t i = 0; i < b->n; i++) {
        int one = 0;
        int rc = pario_gas_test(ctx->team, &b->ev[i], &one);
        if (rc != PARIO_OK)
            return pgas_gas_failed(ctx, rc, "test of a transfer");
        if (!one) {
            *done = 0;
            return PARIO_OK;
        }
    }
    int rc = drain(ctx, b); /* every event is complete: returns at once */
    return rc;
}

int pario_pgas_sync_attempt(pario_pgas *ctx, pario_pgas_handle h, int *done) {
    *done = 1;
    if (h == PARIO_PGAS_COMPLETE_HANDLE)
        return PARIO_OK;
    pgas_nb_slot *s = slot_of(ctx, h, "pario_pgas_sync_attempt");
    if (!s) {
        *done = 0;
        return ctx->last.code;
    }
    int rc = test_batch(ctx, &s->batch, done);
    if (rc != PARIO_OK || *done)
        retire(s);
    return rc;
}

/* ---- implicit handles ---- */

int pario_pgas_memget_nbi(pario_pgas *ctx, void *dst, const pario_pgas_array *a, uint64_t first,
                          uint64_t count) {
    xfer x = {XFER_GET, "pario_pgas_memget_nbi", a, NULL, first, 0, count, dst, 0};
    return start_implicit(ctx, &x);
}

int pario_pgas_memput_nbi(pario_pgas *ctx, const pario_pgas_array *a, uint64_t first,
                          const void *src, uint64_t count) {
    xfer x = {XFER_PUT, "pario_pgas_memput_nbi", a, NULL, first, 0, count, (void *)src, 0};
    return start_implicit(ctx, &x);
}

int pario_pgas_memcpy_nbi(pario_pgas *ctx, const pario_pgas_array *dst, uint64_t dst_first,
                          const pario_pgas_array *src, uint64_t src_first, uint64_t count) {
    xfer x = {XFER_COPY, "pario_pgas_memcpy_nbi", dst, src, dst_first, src_first, count, NULL, 0};
    return start_implicit(ctx, &x);
}

int pario_pgas_memset_nbi(pario_pgas *ctx, const pario_pgas_array *a, uint64_t first, int value,
                          uint64_t count) {
    /* The implicit list has one fill pattern: a memset with another value
     * first completes those in flight. */
    int other = ctx->nbi.fill && ctx->nbi.fill[0] != (unsigned char)value;
    int rc = other ? drain(ctx, &ctx->nbi) : PARIO_OK;
    if (rc != PARIO_OK)
        return rc;
    xfer x = {XFER_SET, "pario_pgas_memset_nbi", a, NULL, first, 0, count, NULL, value};
    return start_implicit(ctx, &x);
}

int pario_pgas_synci(pario_pgas *ctx) {
    return drain(ctx, &ctx->nbi);
}

int pario_pgas_sync_attempti(pario_pgas *ctx, int *done) {
    return test_batch(ctx, &ctx->nbi, done);
}

int pgas_nb_sync_implicit(pario_pgas *ctx) {
    return ctx->nbi.n || ctx->nbi.fill ? drain(ctx, &ctx->nbi) : PARIO_OK;
}

int pgas_nb_release(pario_pgas *ctx) {
    int rc = drain(ctx, &ctx->nbi);
    for (size_t i = 0; i < ctx->nb_count; i++) {
        int src = drain(ctx, &ctx->nb[i].batch);
        rc = rc != PARIO_OK ? rc : src;
        free(ctx->nb[i].batch.ev);
    }
    free(ctx->nbi.ev);
    free(ctx->nb);
    ctx->nb = NULL;
    ctx->nbi.ev = NULL;
    ctx->nb_count = 0;
    return rc;
}
