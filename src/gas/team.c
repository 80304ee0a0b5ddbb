/* Teams: a duplicated communicator, its node-local split, error recording. */
#include "gas/gas_internal.h"
#include "common/node.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gas_fail(pario_gas_team *team, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pario_vfail(&team->last, code, fmt, ap);
    va_end(ap);
    return code;
}

int gas_mpi_check(pario_gas_team *team, int mpi_rc, const char *what) {
    if (mpi_rc == MPI_SUCCESS)
        return PARIO_OK;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(mpi_rc, msg, &len);
    return gas_fail(team, PARIO_ERR_COMM, "gas: %s failed: %s", what, msg);
}

int gas_check_rank(pario_gas_team *team, int rank) {
    if (rank < 0 || rank >= team->size)
        return gas_fail(team, PARIO_ERR_RANK, "gas: rank %d outside the team (size %d)", rank,
                        team->size);
    return PARIO_OK;
}

int gas_check_not_in_handler(pario_gas_team *team, const char *what) {
    if (team->in_handler)
        return gas_fail(team, PARIO_ERR_REQUEST, "gas: %s called from inside a handler", what);
    return PARIO_OK;
}

/* The shared-memory node of the caller (see common/node.h). */
static int split_node_comm(pario_gas_team *team) {
    int rc = pario_node_comm(team->comm, &team->node_comm);
    return rc == MPI_SUCCESS ? PARIO_OK : gas_mpi_check(team, rc, "MPI_Comm_split_type");
}

/* Fills node_index / node_members and counts the nodes. */
static int map_node_ranks(pario_gas_team *team) {
    MPI_Comm_rank(team->node_comm, &team->node_rank);
    MPI_Comm_size(team->node_comm, &team->node_size);
    team->node_index = malloc(sizeof(int) * (size_t)team->size);
    team->node_members = malloc(sizeof(int) * (size_t)team->node_size);
    int *leader = malloc(sizeof(int) * (size_t)team->size);
    if (!team->node_index || !team->node_members || !leader) {
        free(leader);
        return gas_fail(team, PARIO_ERR_NO_MEM, "gas: out of memory for the node map");
    }
    int rc =
        MPI_Allgather(&team->rank, 1, MPI_INT, team->node_members, 1, MPI_INT, team->node_comm);
    int mine = team->node_rank == 0 ? team->rank : -1;
    if (rc == MPI_SUCCESS)
        rc = MPI_Allgather(&mine, 1, MPI_INT, leader, 1, MPI_INT, team->comm);
    if (rc != MPI_SUCCESS) {
        free(leader);
        return gas_mpi_check(team, rc, "MPI_Allgather (node map)");
    }
    for (int r = 0; r < team->size; r++)
        team->node_index[r] = -1;
    for (int i = 0; i < team->node_size; i++)
        team->node_index[team->node_members[i]] = i;
    team->nnodes = 0;
    for (int r = 0; r < team->size; r++)
        team->nnodes += leader[r] >= 0;
    free(leader);
    return PARIO_OK;
}

static void team_release(pario_gas_team *team) {
    gas_segment_detach(team);
    gas_mpi_teardown(team);
    gas_shm_teardown(team);
    if (team->node_comm != MPI_COMM_NULL)
        MPI_Comm_free(&team->node_comm);
    if (team->coll_comm != MPI_COMM_NULL)
        MPI_Comm_free(&team->coll_comm);
    if (team->comm != MPI_COMM_NULL)
        MPI_Comm_free(&team->comm);
    free(team->node_index);
    free(team->node_members);
    free(team);
}

static int team_init(pario_gas_team *team, MPI_Comm comm) {
    int rc = MPI_Comm_dup(comm, &team->comm);
    if (rc != MPI_SUCCESS)
        return gas_mpi_check(team, rc, "MPI_Comm_dup");
    /* MPI failures become pario codes instead of aborting the job. */
    MPI_Comm_set_errhandler(team->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(team->comm, &team->rank);
    MPI_Comm_size(team->comm, &team->size);
    rc = MPI_Comm_dup(team->comm, &team->coll_comm);
    if (rc != MPI_SUCCESS)
        return gas_mpi_check(team, rc, "MPI_Comm_dup");
    gas_atomic_register(team);
    team->nhandlers = GAS_INTERNAL_HANDLERS;
    int prc = split_node_comm(team);
    if (prc == PARIO_OK)
        prc = map_node_ranks(team);
    if (prc == PARIO_OK)
        prc = gas_shm_setup(team);
    if (prc == PARIO_OK)
        prc = gas_mpi_setup(team);
    return prc;
}

int pario_gas_team_create(MPI_Comm comm, pario_gas_team **out, pario_error *err) {
    pario_error_clear(err);
    *out = NULL;
    pario_gas_team *team = calloc(1, sizeof *team);
    if (!team)
        return pario_fail(err, PARIO_ERR_NO_MEM, "gas: out of memory for a team");
    team->comm = team->coll_comm = team->node_comm = MPI_COMM_NULL;
    team->seg_shm_win = team->seg_rma_win = team->shm.win = MPI_WIN_NULL;
    team->mpi.comm = MPI_COMM_NULL;
    int rc = team_init(team, comm);
    /* Agree on the outcome so that every rank returns the same code. */
    int worst = rc;
    if (team->comm != MPI_COMM_NULL)
        MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, comm);
    if (worst != PARIO_OK) {
        if (rc != PARIO_OK)
            pario_fail(err, rc, "%s", team->last.msg);
        else
            pario_fail(err, worst, "gas: team creation failed on another rank");
        team_release(team);
        return worst;
    }
    *out = team;
    return PARIO_OK;
}

int pario_gas_team_free(pario_gas_team **teamp) {
    if (!teamp || !*teamp)
        return PARIO_OK;
    pario_gas_team *team = *teamp;
    int rc = gas_check_not_in_handler(team, "pario_gas_team_free");
    if (rc != PARIO_OK)
        return rc;
    rc = pario_gas_barrier(team);
    team_release(team);
    *teamp = NULL;
    return rc;
}

int pario_gas_rank(const pario_gas_team *team) {
    return team->rank;
}
int pario_gas_size(const pario_gas_team *team) {
    return team->size;
}
MPI_Comm pario_gas_comm(const pario_gas_team *team) {
    return team->comm;
}
int pario_gas_node_size(const pario_gas_team *team) {
    return team->node_size;
}
int pario_gas_node_rank(const pario_gas_team *team) {
    return team->node_rank;
}
int pario_gas_node_count(const pario_gas_team *team) {
    return team->nnodes;
}
const pario_error *pario_gas_last_error(const pario_gas_team *team) {
    return &team->last;
}

int pario_gas_is_local(const pario_gas_team *team, int rank) {
    if (rank < 0 || rank >= team->size)
        return 0;
    return team->node_index[rank] >= 0;
}
