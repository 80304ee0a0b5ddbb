/* Barrier and the split-phase barrier (notify / wait) with UPC's value
 * matching.
 *
 * notify completes the caller's accesses (fence) and starts a non-blocking
 * allreduce of (value, -value) under MAX on a private communicator: the
 * result is the largest and the smallest value any rank gave, so every rank
 * sees the same mismatch, or none. A rank without a value contributes
 * INT64_MIN twice, which loses every MAX. wait completes the allreduce while
 * serving other ranks' requests (atomics of locks, the allocation service). */
#include "pgas/pgas_internal.h"

#include <stdatomic.h>

int pario_pgas_notify(pario_pgas *ctx, int64_t value) {
    if (ctx->notified)
        return pgas_fail(ctx, PARIO_ERR_REQUEST, "pgas: notify: a notify is already pending");
    int rc = pario_pgas_fence(ctx);
    if (rc != PARIO_OK)
        return rc;
    int any = value == PARIO_PGAS_ANY;
    ctx->barrier_send[0] = any ? INT64_MIN : value;
    ctx->barrier_send[1] = any ? INT64_MIN : -value;
    int mrc = MPI_Iallreduce(ctx->barrier_send, ctx->barrier_recv, 2, MPI_INT64_T, MPI_MAX,
                             ctx->comm, &ctx->barrier_req);
    if (mrc != MPI_SUCCESS)
        return pgas_fail(ctx, PARIO_ERR_COMM, "pgas: notify: MPI_Iallreduce failed");
    ctx->notified = 1;
    return PARIO_OK;
}

/* Mismatch among the notify values, or between them and wait's value. */
static int check_values(pario_pgas *ctx, int64_t value) {
    int64_t max = ctx->barrier_recv[0];
    if (max == INT64_MIN) /* nobody gave a value */
        return PARIO_OK;
    int64_t min = -ctx->barrier_recv[1]; /* some rank gave one: not INT64_MIN */
    if (max != min)
        return pgas_fail(ctx, PARIO_ERR_NOT_SAME,
                         "pgas: barrier: ranks notified different values (%lld .. %lld)",
                         (long long)min, (long long)max);
    if (value != PARIO_PGAS_ANY && value != max)
        return pgas_fail(ctx, PARIO_ERR_NOT_SAME,
                         "pgas: barrier: wait value %lld differs from the notified %lld",
                         (long long)value, (long long)max);
    return PARIO_OK;
}

int pario_pgas_wait(pario_pgas *ctx, int64_t value) {
    if (!ctx->notified)
        return pgas_fail(ctx, PARIO_ERR_REQUEST, "pgas: wait without a notify before it");
    int rc = pgas_wait_requests(ctx, 1, &ctx->barrier_req, "wait");
    if (rc != PARIO_OK)
        return rc;
    ctx->notified = 0;
    atomic_thread_fence(memory_order_seq_cst);
    return check_values(ctx, value);
}

int pario_pgas_barrier(pario_pgas *ctx, int64_t value) {
    int rc = pario_pgas_notify(ctx, value);
    return rc == PARIO_OK ? pario_pgas_wait(ctx, value) : rc;
}
