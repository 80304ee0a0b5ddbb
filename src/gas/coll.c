/* Barrier and reductions. They use MPI's non-blocking collectives on the
 * team's collective communicator and run handlers while they wait, so a rank
 * blocked here still answers the requests of ranks that have not arrived. */
#include "gas/gas_internal.h"

#include <limits.h>

/* Makes puts by any path visible to direct loads of the mapped segments. */
static int sync_segment_views(pario_gas_team *team) {
    atomic_thread_fence(memory_order_seq_cst);
    if (!team->attached)
        return PARIO_OK;
    int rc = MPI_Win_sync(team->seg_shm_win);
    if (rc == MPI_SUCCESS && team->seg_rma_win != team->seg_shm_win)
        rc = MPI_Win_sync(team->seg_rma_win);
    return gas_mpi_check(team, rc, "MPI_Win_sync");
}

int pario_gas_barrier(pario_gas_team *team) {
    int rc = gas_check_not_in_handler(team, "pario_gas_barrier");
    if (rc == PARIO_OK)
        rc = pario_gas_quiet(team);
    if (rc == PARIO_OK)
        rc = sync_segment_views(team);
    if (rc != PARIO_OK)
        return rc;
    MPI_Request req;
    rc = gas_mpi_check(team, MPI_Ibarrier(team->coll_comm, &req), "MPI_Ibarrier");
    if (rc == PARIO_OK)
        rc = gas_wait_requests(team, 1, &req);
    if (rc == PARIO_OK)
        rc = sync_segment_views(team);
    return rc;
}

static MPI_Op mpi_op_of(pario_gas_op op) {
    switch (op) {
    case PARIO_GAS_MIN:
        return MPI_MIN;
    case PARIO_GAS_MAX:
        return MPI_MAX;
    default:
        return MPI_SUM;
    }
}

/* One reduction over any count, in pieces of at most INT_MAX elements. */
static int reduce_any(pario_gas_team *team, const void *in, void *out, size_t count,
                      MPI_Datatype type, size_t elem, pario_gas_op op, int root) {
    int rc = gas_check_not_in_handler(team, "a gas reduction");
    if (rc == PARIO_OK && root >= 0)
        rc = gas_check_rank(team, root);
    if (rc == PARIO_OK && (op < PARIO_GAS_SUM || op > PARIO_GAS_MAX))
        rc = gas_fail(team, PARIO_ERR_ARG, "gas: unknown reduction operator %d", (int)op);
    if (rc != PARIO_OK)
        return rc;
    const char *src = in;
    char *dst = out;
    int is_root = root < 0 || root == team->rank;
    while (count > 0 && rc == PARIO_OK) {
        int n = count > INT_MAX ? INT_MAX : (int)count;
        const void *sbuf = (is_root && src == dst) ? MPI_IN_PLACE : (const void *)src;
        MPI_Request req;
        int mrc = root < 0
                      ? MPI_Iallreduce(sbuf, dst, n, type, mpi_op_of(op), team->coll_comm, &req)
                      : MPI_Ireduce(sbuf, dst, n, type, mpi_op_of(op), root, team->coll_comm, &req);
        rc = gas_mpi_check(team, mrc, "MPI_Ireduce/MPI_Iallreduce");
        if (rc == PARIO_OK)
            rc = gas_wait_requests(team, 1, &req);
        src += (size_t)n * elem;
        if (dst)
            dst += (size_t)n * elem;
        count -= (size_t)n;
    }
    return rc;
}

int pario_gas_reduce_i64(pario_gas_team *team, const int64_t *in, int64_t *out, size_t count,
                         pario_gas_op op, int root) {
    if (root < 0)
        return gas_check_rank(team, root);
    return reduce_any(team, in, out, count, MPI_INT64_T, sizeof(int64_t), op, root);
}

int pario_gas_allreduce_i64(pario_gas_team *team, const int64_t *in, int64_t *out, size_t count,
                            pario_gas_op op) {
    return reduce_any(team, in, out, count, MPI_INT64_T, sizeof(int64_t), op, -1);
}

int pario_gas_reduce_double(pario_gas_team *team, const double *in, double *out, size_t count,
                            pario_gas_op op, int root) {
    if (root < 0)
        return gas_check_rank(team, root);
    return reduce_any(team, in, out, count, MPI_DOUBLE, sizeof(double), op, root);
}

int pario_gas_allreduce_double(pario_gas_team *team, const double *in, double *out, size_t count,
                               pario_gas_op op) {
    return reduce_any(team, in, out, count, MPI_DOUBLE, sizeof(double), op, -1);
}
