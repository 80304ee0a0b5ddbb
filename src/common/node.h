/* The shared-memory node of a rank, as pario sees it. */
#ifndef PARIO_COMMON_NODE_H
#define PARIO_COMMON_NODE_H

#include <mpi.h>

/* Collective over comm: the ranks of comm that share the caller's node, in
 * comm's order. With PARIO_NODE_SIZE=k (a positive integer) a real node is
 * further cut into blocks of k consecutive ranks, so one machine can stand
 * for several nodes (PARIO_NODE_SIZE=1: every rank its own node); the
 * multi-node paths of gas and io are tested that way. Returns an MPI code. */
int pario_node_comm(MPI_Comm comm, MPI_Comm *node);
/* pario_node_comm, and *host_ranks: how many ranks of comm share the
 * caller's machine as MPI sees it (PARIO_NODE_SIZE aside). */
int pario_node_comm_host(MPI_Comm comm, MPI_Comm *node, int *host_ranks);

#endif
