/* The pgas context: its gas team and segment, the heaps' places in it, the
 * map the inline functions read, errors, and the agreement helpers of the
 * collective calls. */
#include "pgas/pgas_internal.h"
#include "common/error.h"

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pgas_fail(pario_pgas *ctx, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pario_vfail(&ctx->last, code, fmt, ap);
    va_end(ap);
    return code;
}

int pgas_gas_failed(pario_pgas *ctx, int rc, const char *what) {
    return pgas_fail(ctx, rc, "pgas: %s: %s", what, pario_gas_last_error(ctx->team)->msg);
}

int pgas_idle_step(pario_pgas *ctx, int *idle) {
    int rc = pario_gas_poll(ctx->team);
    if (rc != PARIO_OK)
        return pgas_gas_failed(ctx, rc, "poll");
    if (++*idle >= PGAS_SPIN_BEFORE_YIELD) {
        *idle = 0;
        sched_yield();
    }
    return PARIO_OK;
}

int pgas_wait_requests(pario_pgas *ctx, int count, MPI_Request *reqs, const char *what) {
    int done = 0, idle = 0, rc = PARIO_OK;
    while (rc == PARIO_OK) {
        if (MPI_Testall(count, reqs, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            return pgas_fail(ctx, PARIO_ERR_COMM, "pgas: %s: MPI_Testall failed", what);
        if (done)
            break;
        rc = pgas_idle_step(ctx, &idle);
    }
    return rc;
}

/* Order-preserving map of unsigned to signed 64-bit values (for MAX). */
static int64_t as_signed(uint64_t v) {
    return (int64_t)(v ^ ((uint64_t)1 << 63));
}

/* The agreement step of every collective pgas call: one allreduce (which
 * serves other ranks' requests while it waits) of the values and their
 * complements gives the maximum and minimum of each. */
int pgas_agree(pario_pgas *ctx, const uint64_t *values, int n, int local_bad, const char *what) {
    enum { MAX_VALUES = 8 }; /* the most any collective compares */
    int64_t in[2 * MAX_VALUES + 1], out[2 * MAX_VALUES + 1];
    if (n > MAX_VALUES)
        return pgas_fail(ctx, PARIO_ERR_INTERN, "pgas: %s: %d values to agree on", what, n);
    for (int i = 0; i < n; i++) {
        in[i] = as_signed(values[i]);
        in[n + i] = as_signed(~values[i]);
    }
    in[2 * n] = local_bad != 0;
    int rc = pario_gas_allreduce_i64(ctx->team, in, out, (size_t)(2 * n + 1), PARIO_GAS_MAX);
    if (rc != PARIO_OK)
        return pgas_gas_failed(ctx, rc, what);
    if (out[2 * n])
        return local_bad ? ctx->last.code
                         : pgas_fail(ctx, PARIO_ERR_ARG,
                                     "pgas: %s: invalid arguments on another rank", what);
    for (int i = 0; i < n; i++) {
        uint64_t max = (uint64_t)out[i] ^ ((uint64_t)1 << 63);
        uint64_t min = ~((uint64_t)out[n + i] ^ ((uint64_t)1 << 63));
        if (max != min)
            return pgas_fail(ctx, PARIO_ERR_NOT_SAME,
                             "pgas: %s: argument %d differs between ranks (%llu .. %llu)", what,
                             i + 1, (unsigned long long)min, (unsigned long long)max);
    }
    return PARIO_OK;
}

/* What root broadcasts after deciding alone: its code, n values, and on
 * failure its message. */
enum { SHARED_VALUES = 4 }; /* the most a collective call hands out (offset, id) */
typedef struct shared_result {
    int64_t rc;
    uint64_t values[SHARED_VALUES];
    char msg[PARIO_ERROR_MSG_MAX];
} shared_result;

int pgas_share_result(pario_pgas *ctx, int rc, int root, uint64_t *values, int n) {
    shared_result r;
    if (n > SHARED_VALUES)
        return pgas_fail(ctx, PARIO_ERR_INTERN, "pgas: %d values to share", n);
    memset(&r, 0, sizeof r);
    r.rc = rc;
    if (ctx->rank == root) {
        memcpy(r.values, values, sizeof(uint64_t) * (size_t)n);
        if (rc != PARIO_OK)
            memcpy(r.msg, ctx->last.msg, sizeof r.msg);
    }
    int brc = pario_gas_broadcast(ctx->team, &r, sizeof r, root, PARIO_GAS_BCAST_AUTO);
    if (brc != PARIO_OK)
        return pgas_gas_failed(ctx, brc, "broadcast of a result");
    memcpy(values, r.values, sizeof(uint64_t) * (size_t)n);
    if (r.rc != PARIO_OK && ctx->rank != root) {
        ctx->last.code = (int)r.rc;
        memcpy(ctx->last.msg, r.msg, sizeof r.msg);
    }
    return (int)r.rc;
}

/* ---- init and finalize ---- */

static int resolve_config(const pario_pgas_config *cfg, pario_pgas_config *out, pario_error *err) {
    out->shared_heap_bytes =
        cfg && cfg->shared_heap_bytes ? cfg->shared_heap_bytes : PARIO_PGAS_DEFAULT_SHARED_HEAP;
    out->local_heap_bytes =
        cfg && cfg->local_heap_bytes ? cfg->local_heap_bytes : PARIO_PGAS_DEFAULT_LOCAL_HEAP;
    /* Heaps end on PGAS_ALIGN boundaries; keep every offset far inside int64. */
    const uint64_t limit = (uint64_t)1 << 46;
    if (out->shared_heap_bytes > limit || out->local_heap_bytes > limit)
        return pario_fail(err, PARIO_ERR_ARG, "pgas: heap sizes %zu + %zu over the limit of %llu",
                          out->shared_heap_bytes, out->local_heap_bytes, (unsigned long long)limit);
    out->shared_heap_bytes = pgas_align(out->shared_heap_bytes);
    out->local_heap_bytes = pgas_align(out->local_heap_bytes);
    return PARIO_OK;
}

/* Segment: [0, HEAP_START) unused | symmetric heap | local heap. */
static int attach_heaps(pario_pgas *ctx, const pario_pgas_config *cfg) {
    ctx->sym_lo = PGAS_HEAP_START;
    ctx->sym_hi = ctx->sym_lo + cfg->shared_heap_bytes;
    ctx->local_lo = ctx->sym_hi;
    ctx->local_hi = ctx->local_lo + cfg->local_heap_bytes;
    int rc = pario_gas_segment_attach(ctx->team, (size_t)ctx->local_hi);
    if (rc != PARIO_OK)
        return pgas_gas_failed(ctx, rc, "segment attach");
    pgas_heap_init(&ctx->sym, ctx->sym_lo, ctx->sym_hi);
    pgas_heap_init(&ctx->local, ctx->local_lo, ctx->local_hi);
    return PARIO_OK;
}

/* The inline functions' map: every node-local peer's mapped segment. */
static int map_segments(pario_pgas *ctx) {
    ctx->base = calloc((size_t)ctx->nranks, sizeof *ctx->base);
    ctx->peer = calloc((size_t)ctx->nranks, sizeof *ctx->peer);
    if (!ctx->base || !ctx->peer)
        return pgas_fail(ctx, PARIO_ERR_NO_MEM, "pgas: out of memory for the segment map");
    for (int r = 0; r < ctx->nranks; r++) {
        void *p = NULL;
        if (pario_gas_is_local(ctx->team, r) && pario_gas_segment_ptr(ctx->team, r, &p) == PARIO_OK)
            ctx->base[r] = p;
    }
    ctx->map.base = ctx->base;
    ctx->map.heap_lo = ctx->sym_lo;
    ctx->map.heap_hi = ctx->local_hi;
    ctx->map.nranks = (uint32_t)ctx->nranks;
    ctx->map.rank = (uint32_t)ctx->rank;
    uint64_t mine = (uint64_t)(uintptr_t)ctx;
    int rc = MPI_Allgather(&mine, 1, MPI_UINT64_T, ctx->peer, 1, MPI_UINT64_T,
                           pario_gas_comm(ctx->team));
    if (rc != MPI_SUCCESS)
        return pgas_fail(ctx, PARIO_ERR_COMM, "pgas: MPI_Allgather of the context addresses");
    return PARIO_OK;
}

static int setup(pario_pgas *ctx, MPI_Comm comm, const pario_pgas_config *cfg) {
    ctx->comm = MPI_COMM_NULL;
    ctx->barrier_req = MPI_REQUEST_NULL;
    ctx->nbi.grow = 1;
    int rc = pario_gas_team_create(comm, &ctx->team, &ctx->last);
    if (rc != PARIO_OK)
        return rc;
    ctx->rank = pario_gas_rank(ctx->team);
    ctx->nranks = pario_gas_size(ctx->team);
    if (MPI_Comm_dup(pario_gas_comm(ctx->team), &ctx->comm) != MPI_SUCCESS)
        return pgas_fail(ctx, PARIO_ERR_COMM, "pgas: MPI_Comm_dup");
    MPI_Comm_set_errhandler(ctx->comm, MPI_ERRORS_RETURN);
    uint64_t sizes[2] = {cfg->shared_heap_bytes, cfg->local_heap_bytes};
    rc = pgas_agree(ctx, sizes, 2, 0, "pario_pgas_init (heap sizes)");
    if (rc == PARIO_OK)
        rc = attach_heaps(ctx, cfg);
    if (rc == PARIO_OK)
        rc = map_segments(ctx);
    if (rc == PARIO_OK)
        rc = pgas_book_register(ctx);
    return rc;
}

static void release(pario_pgas *ctx) {
    if (ctx->comm != MPI_COMM_NULL)
        MPI_Comm_free(&ctx->comm);
    if (ctx->team)
        pario_gas_team_free(&ctx->team);
    pgas_heap_release(&ctx->sym);
    pgas_heap_release(&ctx->local);
    free(ctx->base);
    free(ctx->peer);
    free(ctx);
}

int pario_pgas_init(MPI_Comm comm, const pario_pgas_config *cfg, pario_pgas **out,
                    pario_error *err) {
    pario_error_clear(err);
    *out = NULL;
    pario_pgas_config c;
    int rc = resolve_config(cfg, &c, err);
    if (rc != PARIO_OK)
        return rc;
    pario_pgas *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return pario_fail(err, PARIO_ERR_NO_MEM, "pgas: out of memory for the context");
    rc = setup(ctx, comm, &c);
    if (rc != PARIO_OK) {
        if (err)
            *err = ctx->last;
        release(ctx);
        return rc;
    }
    *out = ctx;
    return PARIO_OK;
}

int pario_pgas_finalize(pario_pgas **pctx) {
    pario_pgas *ctx = pctx ? *pctx : NULL;
    if (!ctx)
        return PARIO_ERR_ARG;
    /* A notify without its wait: complete it (MPI forbids freeing the
     * request of a pending non-blocking collective). */
    int rc = ctx->notified ? pario_pgas_wait(ctx, PARIO_PGAS_ANY) : PARIO_OK;
    /* Transfers never synced end here, before their memory goes. */
    int nrc = pgas_nb_release(ctx);
    rc = rc != PARIO_OK ? rc : nrc;
    /* Nobody may still be waiting for this rank's book or atomics. */
    int brc = pario_gas_barrier(ctx->team);
    release(ctx);
    *pctx = NULL;
    return rc != PARIO_OK ? rc : brc;
}

const pario_error *pario_pgas_last_error(const pario_pgas *ctx) {
    return &ctx->last;
}

pario_gas_team *pario_pgas_team(pario_pgas *ctx) {
    return ctx->team;
}

int pario_pgas_poll(pario_pgas *ctx) {
    int rc = pario_gas_poll(ctx->team);
    return rc == PARIO_OK ? rc : pgas_gas_failed(ctx, rc, "poll");
}
