/* One-sided put/get, events and 64-bit atomics.
 *
 * Node-local targets: memcpy through the mapped segment, complete at return.
 * Off-node targets: MPI_Rput/MPI_Rget in the lock_all epoch; a put completes
 * remotely with MPI_Win_flush of its target. */
#include "gas/gas_internal.h"

#include <limits.h>
#include <string.h>

static int is_mapped(const pario_gas_team *team, int rank) {
    return team->node_index[rank] >= 0;
}

/* How an event completes after its MPI request has. */
enum event_sync {
    SYNC_NONE = 0,  /* single get: the request completion is enough */
    SYNC_FLUSH = 1, /* put: remote completion needs MPI_Win_flush */
    SYNC_LOCAL = 2, /* get split in several requests: MPI_Win_flush_local */
};

/* Starts MPI transfers of at most GAS_MAX_MPI_MSG bytes each; the request of
 * the last one goes to *req, earlier ones are completed by the flush that
 * ev->sync asks for. */
static int rma_start(pario_gas_team *team, int is_put, void *local, int rank, size_t offset,
                     size_t bytes, pario_gas_event *ev) {
    MPI_Request *req = &ev->req;
    *req = MPI_REQUEST_NULL;
    ev->sync = is_put ? SYNC_FLUSH : SYNC_NONE;
    unsigned char *p = local;
    while (bytes > 0) {
        size_t n = bytes < GAS_MAX_MPI_MSG ? bytes : GAS_MAX_MPI_MSG;
        if (*req != MPI_REQUEST_NULL) {
            MPI_Request_free(req);
            if (!is_put)
                ev->sync = SYNC_LOCAL;
        }
        int rc = is_put ? MPI_Rput(p, (int)n, MPI_BYTE, rank, (MPI_Aint)offset, (int)n, MPI_BYTE,
                                   team->seg_rma_win, req)
                        : MPI_Rget(p, (int)n, MPI_BYTE, rank, (MPI_Aint)offset, (int)n, MPI_BYTE,
                                   team->seg_rma_win, req);
        if (rc != MPI_SUCCESS)
            return gas_mpi_check(team, rc, is_put ? "MPI_Rput" : "MPI_Rget");
        p += n;
        offset += n;
        bytes -= n;
    }
    return PARIO_OK;
}

static int start_transfer(pario_gas_team *team, int is_put, void *local, int rank, size_t offset,
                          size_t bytes, pario_gas_event *ev) {
    ev->pending = 0;
    ev->target = rank;
    ev->sync = SYNC_NONE;
    ev->req = MPI_REQUEST_NULL;
    int rc = gas_check_range(team, rank, offset, bytes);
    if (rc != PARIO_OK || bytes == 0)
        return rc;
    if (is_mapped(team, rank)) {
        unsigned char *remote = team->seg_ptr[rank] + offset;
        if (is_put)
            memcpy(remote, local, bytes);
        else
            memcpy(local, remote, bytes);
        return PARIO_OK;
    }
    rc = rma_start(team, is_put, local, rank, offset, bytes, ev);
    if (rc == PARIO_OK)
        ev->pending = 1;
    return rc;
}

int pario_gas_put_nb(pario_gas_team *team, int rank, size_t offset, const void *src, size_t bytes,
                     pario_gas_event *ev) {
    return start_transfer(team, 1, (void *)src, rank, offset, bytes, ev);
}

int pario_gas_get_nb(pario_gas_team *team, void *dst, int rank, size_t offset, size_t bytes,
                     pario_gas_event *ev) {
    return start_transfer(team, 0, dst, rank, offset, bytes, ev);
}

static int finish_event(pario_gas_team *team, pario_gas_event *ev) {
    ev->pending = 0;
    if (ev->sync == SYNC_FLUSH)
        return gas_mpi_check(team, MPI_Win_flush(ev->target, team->seg_rma_win), "MPI_Win_flush");
    if (ev->sync == SYNC_LOCAL)
        return gas_mpi_check(team, MPI_Win_flush_local(ev->target, team->seg_rma_win),
                             "MPI_Win_flush_local");
    return PARIO_OK;
}

int pario_gas_wait(pario_gas_team *team, pario_gas_event *ev) {
    if (!ev->pending)
        return PARIO_OK;
    int rc = gas_check_not_in_handler(team, "pario_gas_wait");
    if (rc == PARIO_OK)
        rc = gas_wait_requests(team, 1, &ev->req);
    if (rc != PARIO_OK)
        return rc;
    return finish_event(team, ev);
}

int pario_gas_wait_all(pario_gas_team *team, pario_gas_event *evs, size_t count) {
    for (size_t i = 0; i < count; i++) {
        int rc = pario_gas_wait(team, &evs[i]);
        if (rc != PARIO_OK)
            return rc;
    }
    return PARIO_OK;
}

int pario_gas_test(pario_gas_team *team, pario_gas_event *ev, int *done) {
    *done = 1;
    if (!ev->pending)
        return PARIO_OK;
    int rc = gas_check_not_in_handler(team, "pario_gas_test");
    if (rc != PARIO_OK)
        return rc;
    int flag = 0;
    rc = gas_mpi_check(team, MPI_Test(&ev->req, &flag, MPI_STATUS_IGNORE), "MPI_Test");
    if (rc == PARIO_OK && !flag) {
        *done = 0;
        return pario_gas_poll(team);
    }
    if (rc != PARIO_OK)
        return rc;
    return finish_event(team, ev);
}

/* The address of [offset, offset + bytes) in a mapped segment, or NULL when
 * the target is not mapped, the range is invalid, or we are in a handler (the
 * caller then takes the checked path, which reports why). */
static inline unsigned char *mapped_range(pario_gas_team *team, int rank, size_t offset,
                                          size_t bytes) {
    if (team->in_handler || !team->attached || rank < 0 || rank >= team->size ||
        team->node_index[rank] < 0)
        return NULL;
    size_t size = team->seg_size[rank];
    if (offset > size || bytes > size - offset)
        return NULL;
    return team->seg_ptr[rank] + offset;
}

int pario_gas_put(pario_gas_team *team, int rank, size_t offset, const void *src, size_t bytes) {
    unsigned char *dst = mapped_range(team, rank, offset, bytes);
    if (dst) {
        memcpy(dst, src, bytes);
        return PARIO_OK;
    }
    pario_gas_event ev;
    int rc = gas_check_not_in_handler(team, "pario_gas_put");
    if (rc == PARIO_OK)
        rc = pario_gas_put_nb(team, rank, offset, src, bytes, &ev);
    if (rc != PARIO_OK)
        return rc;
    return pario_gas_wait(team, &ev);
}

int pario_gas_get(pario_gas_team *team, void *dst, int rank, size_t offset, size_t bytes) {
    unsigned char *src = mapped_range(team, rank, offset, bytes);
    if (src) {
        memcpy(dst, src, bytes);
        return PARIO_OK;
    }
    pario_gas_event ev;
    int rc = gas_check_not_in_handler(team, "pario_gas_get");
    if (rc == PARIO_OK)
        rc = pario_gas_get_nb(team, dst, rank, offset, bytes, &ev);
    if (rc != PARIO_OK)
        return rc;
    return pario_gas_wait(team, &ev);
}

int pario_gas_quiet(pario_gas_team *team) {
    int rc = gas_check_not_in_handler(team, "pario_gas_quiet");
    if (rc != PARIO_OK || !team->attached)
        return rc;
    atomic_thread_fence(memory_order_seq_cst);
    return gas_mpi_check(team, MPI_Win_flush_all(team->seg_rma_win), "MPI_Win_flush_all");
}

int pario_gas_fence(pario_gas_team *team) {
    return pario_gas_quiet(team);
}
