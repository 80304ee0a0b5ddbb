/* Element and bulk access: the checked slow paths behind the inline
 * functions, strict accesses, and memget/memput/memcpy/memset split into one
 * gas transfer per contiguous run on one rank. */
#include "pgas/pgas_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

int pario_pgas_fence(pario_pgas *ctx) {
    int nrc = pgas_nb_sync_implicit(ctx);
    int rc = pario_gas_quiet(ctx->team);
    atomic_thread_fence(memory_order_seq_cst);
    if (nrc != PARIO_OK)
        return nrc;
    return rc == PARIO_OK ? rc : pgas_gas_failed(ctx, rc, "fence");
}

/* ---- one element ---- */

int pario_pgas_get_slow(pario_pgas *ctx, pario_pgas_ptr p, void *dst) {
    int rc = pgas_check_ptr(ctx, p, "pario_pgas_get");
    if (rc != PARIO_OK)
        return rc;
    void *local = pario_pgas_cast(ctx, p);
    if (local) {
        memcpy(dst, local, p.elem_size);
        return PARIO_OK;
    }
    rc = pario_gas_get(ctx->team, dst, (int)p.rank, p.addr, p.elem_size);
    return rc == PARIO_OK ? rc : pgas_gas_failed(ctx, rc, "get");
}

int pario_pgas_put_slow(pario_pgas *ctx, pario_pgas_ptr p, const void *src) {
    int rc = pgas_check_ptr(ctx, p, "pario_pgas_put");
    if (rc != PARIO_OK)
        return rc;
    void *local = pario_pgas_cast(ctx, p);
    if (local) {
        memcpy(local, src, p.elem_size);
        return PARIO_OK;
    }
    rc = pario_gas_put(ctx->team, (int)p.rank, p.addr, src, p.elem_size);
    return rc == PARIO_OK ? rc : pgas_gas_failed(ctx, rc, "put");
}

int pario_pgas_access_check(pario_pgas *ctx, pario_pgas_ptr p, uint32_t bytes, const char *what) {
    int rc = pgas_check_ptr(ctx, p, what);
    if (rc == PARIO_OK && bytes != p.elem_size)
        rc = pgas_fail(ctx, PARIO_ERR_ARG,
                       "pgas: %s: pointer to elements of %u bytes used for %u bytes", what,
                       p.elem_size, bytes);
    return rc;
}

int pario_pgas_index_check(pario_pgas *ctx, const pario_pgas_array *a, uint64_t i, uint32_t bytes,
                           const char *what) {
    int rc = pgas_check_range(ctx, a, i, 1, what);
    if (rc == PARIO_OK && bytes != a->base.elem_size)
        rc = pgas_fail(ctx, PARIO_ERR_ARG,
                       "pgas: %s: index %llu of an array of %u-byte elements used for %u bytes",
                       what, (unsigned long long)i, a->base.elem_size, bytes);
    return rc;
}

/* The off-node halves of the unchecked accesses check what gas needs: a
 * rank of the team and bytes inside the heaps. */
static int check_far(pario_pgas *ctx, uint32_t rank, uint64_t addr, uint32_t bytes,
                     const char *what) {
    if (rank < (uint32_t)ctx->nranks && bytes > 0 && addr >= ctx->sym_lo && addr < ctx->local_hi &&
        bytes <= ctx->local_hi - addr)
        return PARIO_OK;
    return pgas_fail(ctx, PARIO_ERR_ARG,
                     "pgas: %s: %u bytes at rank %u, addr %llu: not in the shared heaps of %d "
                     "ranks",
                     what, bytes, rank, (unsigned long long)addr, ctx->nranks);
}

int pario_pgas_get_far(pario_pgas *ctx, uint32_t rank, uint64_t addr, void *dst, uint32_t bytes) {
    int rc = check_far(ctx, rank, addr, bytes, "pario_pgas_load");
    if (rc != PARIO_OK)
        return rc;
    if (ctx->base[rank]) { /* on this node after all: a debug build's checked call */
        memcpy(dst, ctx->base[rank] + addr, bytes);
        return PARIO_OK;
    }
    rc = pario_gas_get(ctx->team, dst, (int)rank, addr, bytes);
    return rc == PARIO_OK ? rc : pgas_gas_failed(ctx, rc, "get");
}

int pario_pgas_put_far(pario_pgas *ctx, uint32_t rank, uint64_t addr, const void *src,
                       uint32_t bytes) {
    int rc = check_far(ctx, rank, addr, bytes, "pario_pgas_store");
    if (rc != PARIO_OK)
        return rc;
    if (ctx->base[rank]) {
        memcpy(ctx->base[rank] + addr, src, bytes);
        return PARIO_OK;
    }
    rc = pario_gas_put(ctx->team, (int)rank, addr, src, bytes);
    return rc == PARIO_OK ? rc : pgas_gas_failed(ctx, rc, "put");
}

pario_pgas_word pario_pgas_load_far(pario_pgas *ctx, uint32_t rank, uint64_t addr, uint32_t bytes) {
    pario_pgas_word w = {PARIO_OK, 0};
    if (bytes > sizeof w.bits)
        w.rc =
            pgas_fail(ctx, PARIO_ERR_ARG, "pgas: pario_pgas_load_far: %u bytes in a word", bytes);
    else
        w.rc = pario_pgas_get_far(ctx, rank, addr, &w.bits, bytes);
    return w;
}

int pario_pgas_store_far(pario_pgas *ctx, uint32_t rank, uint64_t addr, uint64_t bits,
                         uint32_t bytes) {
    if (bytes > sizeof bits)
        return pgas_fail(ctx, PARIO_ERR_ARG, "pgas: pario_pgas_store_far: %u bytes in a word",
                         bytes);
    return pario_pgas_put_far(ctx, rank, addr, &bits, bytes);
}

int pario_pgas_get_strict(pario_pgas *ctx, pario_pgas_ptr p, void *dst) {
    int rc = pario_pgas_fence(ctx);
    if (rc == PARIO_OK)
        rc = pario_pgas_get(ctx, p, dst);
    if (rc == PARIO_OK)
        rc = pario_pgas_fence(ctx);
    return rc;
}

int pario_pgas_put_strict(pario_pgas *ctx, pario_pgas_ptr p, const void *src) {
    int rc = pario_pgas_fence(ctx);
    if (rc == PARIO_OK)
        rc = pario_pgas_put(ctx, p, src);
    if (rc == PARIO_OK)
        rc = pario_pgas_fence(ctx);
    return rc;
}

int pario_pgas_get_at(pario_pgas *ctx, const pario_pgas_array *a, uint64_t i, void *dst) {
    int rc = pgas_check_range(ctx, a, i, 1, "pario_pgas_get_at");
    return rc == PARIO_OK ? pario_pgas_get(ctx, pario_pgas_elem(a, i), dst) : rc;
}

int pario_pgas_put_at(pario_pgas *ctx, const pario_pgas_array *a, uint64_t i, const void *src) {
    int rc = pgas_check_range(ctx, a, i, 1, "pario_pgas_put_at");
    return rc == PARIO_OK ? pario_pgas_put(ctx, pario_pgas_elem(a, i), src) : rc;
}

/* ---- batches of non-blocking transfers ---- */

int pgas_batch_finish(pario_pgas *ctx, pgas_batch *b) {
    int rc = pario_gas_wait_all(ctx->team, b->ev, b->n);
    b->n = 0;
    return rc == PARIO_OK ? rc : pgas_gas_failed(ctx, rc, "wait for transfers");
}

/* Room for one more event: a bounded batch waits for what it holds, a
 * growing one (a non-blocking call's) doubles its list. */
static int batch_make_room(pario_pgas *ctx, pgas_batch *b) {
    if (b->n < b->cap)
        return PARIO_OK;
    if (!b->grow)
        return pgas_batch_finish(ctx, b);
    size_t cap = b->cap ? 2 * b->cap : 16;
    pario_gas_event *ev = realloc(b->ev, cap * sizeof *ev);
    if (!ev)
        return pgas_fail(ctx, PARIO_ERR_NO_MEM, "pgas: out of memory for transfer events");
    b->ev = ev;
    b->cap = cap;
    return PARIO_OK;
}

static int batch_slot(pario_pgas *ctx, pgas_batch *b, pario_gas_event **ev) {
    int rc = batch_make_room(ctx, b);
    if (rc != PARIO_OK)
        return rc;
    *ev = &b->ev[b->n++];
    **ev = (pario_gas_event)PARIO_GAS_EVENT_INIT;
    return PARIO_OK;
}

static int batch_get(pario_pgas *ctx, pgas_batch *b, void *dst, int rank, uint64_t addr,
                     uint64_t bytes) {
    pario_gas_event *ev = NULL;
    int rc = batch_slot(ctx, b, &ev);
    if (rc != PARIO_OK)
        return rc;
    rc = pario_gas_get_nb(ctx->team, dst, rank, addr, bytes, ev);
    return rc == PARIO_OK ? rc : pgas_gas_failed(ctx, rc, "get");
}

static int batch_put(pario_pgas *ctx, pgas_batch *b, int rank, uint64_t addr, const void *src,
                     uint64_t bytes) {
    pario_gas_event *ev = NULL;
    int rc = batch_slot(ctx, b, &ev);
    if (rc != PARIO_OK)
        return rc;
    rc = pario_gas_put_nb(ctx->team, rank, addr, src, bytes, ev);
    return rc == PARIO_OK ? rc : pgas_gas_failed(ctx, rc, "put");
}

/* Ends a bulk call: waits for what is in flight even after a failure (the
 * buffers must not be released under a transfer), keeping the first error. */
static int batch_end(pario_pgas *ctx, pgas_batch *b, int rc) {
    int wrc = pgas_batch_finish(ctx, b);
    return rc != PARIO_OK ? rc : wrc;
}

/* Mapped address of a run, or NULL. */
static unsigned char *run_local(pario_pgas *ctx, pgas_run r) {
    return ctx->base[r.rank] ? ctx->base[r.rank] + r.addr : NULL;
}

/* ---- memget / memput ---- */

int pgas_memget_start(pario_pgas *ctx, pgas_batch *b, void *dst, const pario_pgas_array *a,
                      uint64_t first, uint64_t count, const char *what) {
    int rc = pgas_check_range(ctx, a, first, count, what);
    if (rc != PARIO_OK)
        return rc;
    unsigned char *out = dst;
    uint64_t es = a->base.elem_size, end = first + count;
    for (uint64_t i = first; i < end && rc == PARIO_OK;) {
        pgas_run r = pgas_run_at(a, i, end);
        unsigned char *local = run_local(ctx, r);
        if (local)
            memcpy(out, local, r.count * es);
        else
            rc = batch_get(ctx, b, out, (int)r.rank, r.addr, r.count * es);
        out += r.count * es;
        i += r.count;
    }
    return rc;
}

int pgas_memput_runs(pario_pgas *ctx, pgas_batch *b, const pario_pgas_array *a, uint64_t first,
                     const void *src, uint64_t count) {
    int rc = PARIO_OK;
    const unsigned char *in = src;
    uint64_t es = a->base.elem_size, end = first + count;
    for (uint64_t i = first; i < end && rc == PARIO_OK;) {
        pgas_run r = pgas_run_at(a, i, end);
        unsigned char *local = run_local(ctx, r);
        if (local)
            memcpy(local, in, r.count * es);
        else
            rc = batch_put(ctx, b, (int)r.rank, r.addr, in, r.count * es);
        in += r.count * es;
        i += r.count;
    }
    return rc;
}

int pgas_memput_start(pario_pgas *ctx, pgas_batch *b, const pario_pgas_array *a, uint64_t first,
                      const void *src, uint64_t count, const char *what) {
    int rc = pgas_check_range(ctx, a, first, count, what);
    return rc == PARIO_OK ? pgas_memput_runs(ctx, b, a, first, src, count) : rc;
}

int pario_pgas_memget(pario_pgas *ctx, void *dst, const pario_pgas_array *a, uint64_t first,
                      uint64_t count) {
    PGAS_STACK_BATCH(b);
    int rc = pgas_memget_start(ctx, &b, dst, a, first, count, "pario_pgas_memget");
    return batch_end(ctx, &b, rc);
}

int pario_pgas_memput(pario_pgas *ctx, const pario_pgas_array *a, uint64_t first, const void *src,
                      uint64_t count) {
    PGAS_STACK_BATCH(b);
    int rc = pgas_memput_start(ctx, &b, a, first, src, count, "pario_pgas_memput");
    return batch_end(ctx, &b, rc);
}

/* ---- memset ---- */

/* Puts bytes of value to an unmapped run, from a fill buffer the batch keeps
 * until its transfers are complete (one value per batch). */
static int fill_remote(pario_pgas *ctx, pgas_batch *b, pgas_run r, uint64_t bytes, int value) {
    if (!b->fill) {
        if (!(b->fill = malloc(PGAS_BOUNCE_BYTES)))
            return pgas_fail(ctx, PARIO_ERR_NO_MEM, "pgas: memset fill buffer");
        memset(b->fill, value, PGAS_BOUNCE_BYTES);
    }
    int rc = PARIO_OK;
    for (uint64_t done = 0; done < bytes && rc == PARIO_OK;) {
        uint64_t n = bytes - done < PGAS_BOUNCE_BYTES ? bytes - done : PGAS_BOUNCE_BYTES;
        rc = batch_put(ctx, b, (int)r.rank, r.addr + done, b->fill, n);
        done += n;
    }
    return rc;
}

int pgas_memset_start(pario_pgas *ctx, pgas_batch *b, const pario_pgas_array *a, uint64_t first,
                      int value, uint64_t count, const char *what) {
    int rc = pgas_check_range(ctx, a, first, count, what);
    if (rc != PARIO_OK)
        return rc;
    uint64_t es = a->base.elem_size, end = first + count;
    for (uint64_t i = first; i < end && rc == PARIO_OK;) {
        pgas_run r = pgas_run_at(a, i, end);
        unsigned char *local = run_local(ctx, r);
        if (local)
            memset(local, value, r.count * es);
        else
            rc = fill_remote(ctx, b, r, r.count * es, value);
        i += r.count;
    }
    return rc;
}

int pario_pgas_memset(pario_pgas *ctx, const pario_pgas_array *a, uint64_t first, int value,
                      uint64_t count) {
    PGAS_STACK_BATCH(b);
    int rc = pgas_memset_start(ctx, &b, a, first, value, count, "pario_pgas_memset");
    rc = batch_end(ctx, &b, rc);
    free(b.fill);
    return rc;
}

/* ---- memcpy ---- */

/* Copies bytes between two ranks neither of which this process maps:
 * through a staging buffer, get then put, one chunk at a time. */
static int copy_through(pario_pgas *ctx, pgas_run d, pgas_run s, uint64_t bytes,
                        unsigned char **stage) {
    if (!*stage && !(*stage = malloc(PGAS_BOUNCE_BYTES)))
        return pgas_fail(ctx, PARIO_ERR_NO_MEM, "pgas: memcpy staging buffer");
    for (uint64_t done = 0; done < bytes;) {
        uint64_t n = bytes - done < PGAS_BOUNCE_BYTES ? bytes - done : PGAS_BOUNCE_BYTES;
        int rc = pario_gas_get(ctx->team, *stage, (int)s.rank, s.addr + done, n);
        if (rc == PARIO_OK)
            rc = pario_gas_put(ctx->team, (int)d.rank, d.addr + done, *stage, n);
        if (rc != PARIO_OK)
            return pgas_gas_failed(ctx, rc, "memcpy");
        done += n;
    }
    return PARIO_OK;
}

/* One piece that is a single run in both arrays. */
static int copy_piece(pario_pgas *ctx, pgas_batch *b, pgas_run d, pgas_run s, uint64_t bytes,
                      unsigned char **stage) {
    unsigned char *dl = run_local(ctx, d), *sl = run_local(ctx, s);
    if (dl && sl) {
        memmove(dl, sl, bytes);
        return PARIO_OK;
    }
    if (sl)
        return batch_put(ctx, b, (int)d.rank, d.addr, sl, bytes);
    if (dl)
        return batch_get(ctx, b, dl, (int)s.rank, s.addr, bytes);
    return copy_through(ctx, d, s, bytes, stage);
}

int pgas_memcpy_start(pario_pgas *ctx, pgas_batch *b, const pario_pgas_array *dst,
                      uint64_t dst_first, const pario_pgas_array *src, uint64_t src_first,
                      uint64_t count, const char *what) {
    int rc = pgas_check_range(ctx, dst, dst_first, count, what);
    if (rc == PARIO_OK)
        rc = pgas_check_range(ctx, src, src_first, count, what);
    if (rc == PARIO_OK && dst->base.elem_size != src->base.elem_size)
        rc = pgas_fail(ctx, PARIO_ERR_ARG, "pgas: %s: element sizes differ (%u and %u)", what,
                       dst->base.elem_size, src->base.elem_size);
    if (rc != PARIO_OK)
        return rc;
    unsigned char *stage = NULL;
    uint64_t es = src->base.elem_size;
    for (uint64_t k = 0; k < count && rc == PARIO_OK;) {
        pgas_run d = pgas_run_at(dst, dst_first + k, dst_first + count);
        pgas_run s = pgas_run_at(src, src_first + k, src_first + count);
        uint64_t n = d.count < s.count ? d.count : s.count;
        rc = copy_piece(ctx, b, d, s, n * es, &stage);
        k += n;
    }
    free(stage);
    return rc;
}

int pario_pgas_memcpy(pario_pgas *ctx, const pario_pgas_array *dst, uint64_t dst_first,
                      const pario_pgas_array *src, uint64_t src_first, uint64_t count) {
    PGAS_STACK_BATCH(b);
    int rc = pgas_memcpy_start(ctx, &b, dst, dst_first, src, src_first, count, "pario_pgas_memcpy");
    return batch_end(ctx, &b, rc);
}
