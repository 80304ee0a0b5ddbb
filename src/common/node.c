#include "common/node.h"

#include <stdlib.h>

/* PARIO_NODE_SIZE=k as a positive integer, or 0 when unset or invalid. */
static int node_size_from_env(void) {
    const char *s = getenv("PARIO_NODE_SIZE");
    if (!s || !*s)
        return 0;
    char *end = NULL;
    long k = strtol(s, &end, 10);
    if (*end != '\0' || k < 1 || k > (1L << 30))
        return 0;
    return (int)k;
}

int pario_node_comm(MPI_Comm comm, MPI_Comm *node) {
    int host_ranks = 0;
    return pario_node_comm_host(comm, node, &host_ranks);
}

int pario_node_comm_host(MPI_Comm comm, MPI_Comm *node, int *host_ranks) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm shared;
    int rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
    *host_ranks = 0;
    if (rc == MPI_SUCCESS)
        MPI_Comm_size(shared, host_ranks);
    int k = node_size_from_env();
    if (rc != MPI_SUCCESS || k == 0) {
        *node = rc == MPI_SUCCESS ? shared : MPI_COMM_NULL;
        return rc;
    }
    rc = MPI_Comm_split(shared, rank / k, rank, node);
    MPI_Comm_free(&shared);
    return rc;
}
