/* Segments: one shared-memory allocation per rank, mapped by node-local peers
 * and exposed to the whole team through an RMA window. */
#include "gas/gas_internal.h"

#include <stdlib.h>
#include <string.h>

int gas_check_range(pario_gas_team *team, int rank, size_t offset, size_t bytes) {
    int rc = gas_check_rank(team, rank);
    if (rc != PARIO_OK)
        return rc;
    if (!team->attached)
        return gas_fail(team, PARIO_ERR_REQUEST, "gas: no segment attached");
    size_t size = team->seg_size[rank];
    if (offset > size || bytes > size - offset)
        return gas_fail(team, PARIO_ERR_ARG,
                        "gas: [%zu, %zu + %zu) lies outside the segment of rank %d (%zu bytes)",
                        offset, offset, bytes, rank, size);
    return PARIO_OK;
}

/* Allocates the caller's segment in node-shared memory and maps the peers'. */
static int allocate_shared_segment(pario_gas_team *team, size_t bytes) {
    MPI_Info info;
    MPI_Info_create(&info);
    /* Each rank's segment on its own pages: no false sharing at boundaries. */
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    void *base = NULL;
    int rc = MPI_Win_allocate_shared((MPI_Aint)bytes, 1, info, team->node_comm, &base,
                                     &team->seg_shm_win);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS)
        return gas_mpi_check(team, rc, "MPI_Win_allocate_shared (segment)");
    MPI_Win_set_errhandler(team->seg_shm_win, MPI_ERRORS_RETURN);
    if (bytes)
        memset(base, 0, bytes);
    for (int i = 0; i < team->node_size; i++) {
        MPI_Aint size = 0;
        int disp = 1;
        void *ptr = NULL;
        rc = MPI_Win_shared_query(team->seg_shm_win, i, &size, &disp, &ptr);
        if (rc != MPI_SUCCESS)
            return gas_mpi_check(team, rc, "MPI_Win_shared_query (segment)");
        team->seg_ptr[team->node_members[i]] = ptr;
    }
    team->seg_ptr[team->rank] = base;
    return PARIO_OK;
}

static int share_segment_sizes(pario_gas_team *team, size_t bytes) {
    uint64_t mine = bytes;
    uint64_t *all = malloc(sizeof(uint64_t) * (size_t)team->size);
    if (!all)
        return gas_fail(team, PARIO_ERR_NO_MEM, "gas: out of memory for segment sizes");
    int rc = MPI_Allgather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, team->comm);
    for (int r = 0; r < team->size && rc == MPI_SUCCESS; r++)
        team->seg_size[r] = (size_t)all[r];
    free(all);
    return gas_mpi_check(team, rc, "MPI_Allgather (segment sizes)");
}

/* The team-wide window for RMA and atomics. On a single node the shared
 * window serves (Open MPI's RMA component for MPI_Win_create needs a network
 * transport and refuses a one-rank job); otherwise a second window is created
 * over the same memory. */
static int create_rma_window(pario_gas_team *team, size_t bytes) {
    int rc = MPI_SUCCESS;
    if (team->nnodes == 1) {
        team->seg_rma_win = team->seg_shm_win;
    } else {
        rc = MPI_Win_create(team->seg_ptr[team->rank], (MPI_Aint)bytes, 1, MPI_INFO_NULL,
                            team->comm, &team->seg_rma_win);
        if (rc != MPI_SUCCESS)
            return gas_mpi_check(team, rc, "MPI_Win_create (segment)");
        MPI_Win_set_errhandler(team->seg_rma_win, MPI_ERRORS_RETURN);
        rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, team->seg_rma_win);
        if (rc != MPI_SUCCESS)
            return gas_mpi_check(team, rc, "MPI_Win_lock_all (segment)");
    }
    /* An epoch on the shared window too, so that MPI_Win_sync is allowed. */
    rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, team->seg_shm_win);
    if (rc != MPI_SUCCESS) {
        if (team->seg_rma_win != team->seg_shm_win)
            MPI_Win_unlock_all(team->seg_rma_win);
        return gas_mpi_check(team, rc, "MPI_Win_lock_all (shared segment)");
    }
    team->seg_locked = 1;
    return PARIO_OK;
}

static int attach_segment(pario_gas_team *team, size_t bytes) {
    team->seg_size = calloc((size_t)team->size, sizeof(size_t));
    team->seg_ptr = calloc((size_t)team->size, sizeof(unsigned char *));
    if (!team->seg_size || !team->seg_ptr)
        return gas_fail(team, PARIO_ERR_NO_MEM, "gas: out of memory for segment tables");
    int rc = allocate_shared_segment(team, bytes);
    if (rc == PARIO_OK)
        rc = share_segment_sizes(team, bytes);
    if (rc == PARIO_OK)
        rc = create_rma_window(team, bytes);
    return rc;
}

int pario_gas_segment_attach(pario_gas_team *team, size_t bytes) {
    int rc = gas_check_not_in_handler(team, "pario_gas_segment_attach");
    if (rc != PARIO_OK)
        return rc;
    if (team->attached)
        return gas_fail(team, PARIO_ERR_REQUEST, "gas: a segment is already attached");
    team->attached = 1;
    rc = attach_segment(team, bytes);
    int worst = rc;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, team->comm);
    if (worst != PARIO_OK) {
        gas_segment_detach(team);
        if (rc == PARIO_OK)
            return gas_fail(team, worst, "gas: segment attach failed on another rank");
        return rc;
    }
    return PARIO_OK;
}

void gas_segment_detach(pario_gas_team *team) {
    int separate = team->seg_rma_win != team->seg_shm_win;
    if (team->seg_locked) {
        if (separate)
            MPI_Win_unlock_all(team->seg_rma_win);
        MPI_Win_unlock_all(team->seg_shm_win);
        team->seg_locked = 0;
    }
    if (separate && team->seg_rma_win != MPI_WIN_NULL)
        MPI_Win_free(&team->seg_rma_win);
    team->seg_rma_win = MPI_WIN_NULL;
    if (team->seg_shm_win != MPI_WIN_NULL)
        MPI_Win_free(&team->seg_shm_win);
    free(team->seg_size);
    free(team->seg_ptr);
    team->seg_size = NULL;
    team->seg_ptr = NULL;
    team->attached = 0;
}

int pario_gas_segment_size(pario_gas_team *team, int rank, size_t *bytes) {
    int rc = gas_check_range(team, rank, 0, 0);
    if (rc != PARIO_OK)
        return rc;
    *bytes = team->seg_size[rank];
    return PARIO_OK;
}

int pario_gas_segment_ptr(pario_gas_team *team, int rank, void **ptr) {
    int rc = gas_check_range(team, rank, 0, 0);
    if (rc != PARIO_OK)
        return rc;
    if (team->node_index[rank] < 0)
        return gas_fail(team, PARIO_ERR_RANK, "gas: segment of rank %d is not mapped here", rank);
    *ptr = team->seg_ptr[rank];
    return PARIO_OK;
}
