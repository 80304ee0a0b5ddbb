/* Broadcast with the seed's multicast algorithms.
 *
 * Every algorithm works in relative ranks (vr = (rank - root) mod n, the root
 * is 0). Flat, chain, binary and binomial are trees run by one engine: a rank
 * receives the message from its parent in chunks and forwards each chunk to
 * its children as soon as it has arrived, so chain and binary trees pipeline
 * large messages. scatter_allgather splits the message in n pieces, the root
 * sends piece i to rank i, then n - 1 ring steps circulate the pieces. */
#include "gas/gas_internal.h"

#include <stdlib.h>

/* Chunk of the pipelined algorithms (chain, binary): small enough that the
 * pipeline fills quickly, large enough that per-message cost stays small. */
#define GAS_BCAST_PIPE_CHUNK ((size_t)64 * 1024)

/* auto: teams up to this size use the flat tree (the seed's "separate
 * addressing"). Measured here (docs/gas.md) at 2, 4 and 8 ranks, flat was the
 * best or within the noise at 2 B, 64 KiB and 1 MiB: the root's few extra
 * sends cost less than the forwarding hops of a tree, whose inner ranks must
 * be scheduled to pass the message on. */
#define GAS_BCAST_FLAT_MAX_RANKS 8

/* auto, larger teams: from this size bandwidth dominates. On one node flat
 * stays best (every receiver copies from the root's buffer in parallel with
 * shared-memory single-copy transport); between nodes the root's link would
 * be the bottleneck, so the binomial tree is kept. */
#define GAS_BCAST_LARGE ((size_t)64 * 1024)

enum { TAG_TREE = 10, TAG_SCATTER = 11, TAG_RING = 12 };

static const char *const alg_names[PARIO_GAS_BCAST_COUNT] = {
    [PARIO_GAS_BCAST_AUTO] = "auto",
    [PARIO_GAS_BCAST_FLAT] = "flat",
    [PARIO_GAS_BCAST_CHAIN] = "chain",
    [PARIO_GAS_BCAST_BINARY] = "binary",
    [PARIO_GAS_BCAST_BINOMIAL] = "binomial",
    [PARIO_GAS_BCAST_SCATTER_ALLGATHER] = "scatter_allgather",
};

const char *pario_gas_bcast_alg_name(pario_gas_bcast_alg alg) {
    if ((int)alg < 0 || alg >= PARIO_GAS_BCAST_COUNT)
        return NULL;
    return alg_names[alg];
}

pario_gas_bcast_alg pario_gas_bcast_auto_choice(const pario_gas_team *team, size_t bytes) {
    if (team->size <= GAS_BCAST_FLAT_MAX_RANKS)
        return PARIO_GAS_BCAST_FLAT;
    if (bytes >= GAS_BCAST_LARGE && team->nnodes == 1)
        return PARIO_GAS_BCAST_FLAT;
    return PARIO_GAS_BCAST_BINOMIAL;
}

/* A rank's place in a tree, in relative ranks. */
typedef struct bcast_tree {
    int parent; /* -1 at the root */
    int nchild;
    int *child; /* up to n - 1 entries */
} bcast_tree;

static void tree_flat(bcast_tree *t, int vr, int n) {
    t->parent = vr == 0 ? -1 : 0;
    if (vr == 0)
        for (int i = 1; i < n; i++)
            t->child[t->nchild++] = i;
}

static void tree_chain(bcast_tree *t, int vr, int n) {
    t->parent = vr - 1;
    if (vr + 1 < n)
        t->child[t->nchild++] = vr + 1;
}

static void tree_binary(bcast_tree *t, int vr, int n) {
    t->parent = vr == 0 ? -1 : (vr - 1) / 2;
    for (int c = 2 * vr + 1; c <= 2 * vr + 2 && c < n; c++)
        t->child[t->nchild++] = c;
}

/* Parent: vr without its lowest set bit; children: vr + 2^k for every 2^k
 * below that bit, largest subtree first. */
static void tree_binomial(bcast_tree *t, int vr, int n) {
    int mask = 1;
    while (mask < n && !(vr & mask))
        mask <<= 1;
    t->parent = vr == 0 ? -1 : vr - mask;
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < n)
            t->child[t->nchild++] = vr + mask;
}

static int real_rank(int vr, int root, int n) {
    return (vr + root) % n;
}

/* Receives chunks from the parent and forwards each to the children. */
static int tree_run(pario_gas_team *team, unsigned char *buf, size_t bytes, int root,
                    const bcast_tree *t, size_t chunk) {
    int n = team->size;
    size_t nchunks = (bytes + chunk - 1) / chunk;
    MPI_Request *recv = calloc(nchunks, sizeof *recv);
    MPI_Request *send = calloc(nchunks * (size_t)(t->nchild ? t->nchild : 1), sizeof *send);
    if (!recv || !send) {
        free(recv);
        free(send);
        return gas_fail(team, PARIO_ERR_NO_MEM, "gas: out of memory for a broadcast");
    }
    int rc = PARIO_OK, nsend = 0;
    for (size_t c = 0; c < nchunks && t->parent >= 0 && rc == PARIO_OK; c++) {
        size_t len = bytes - c * chunk < chunk ? bytes - c * chunk : chunk;
        rc = gas_mpi_check(team,
                           MPI_Irecv(buf + c * chunk, (int)len, MPI_BYTE,
                                     real_rank(t->parent, root, n), TAG_TREE, team->coll_comm,
                                     &recv[c]),
                           "MPI_Irecv (broadcast)");
    }
    for (size_t c = 0; c < nchunks && rc == PARIO_OK; c++) {
        size_t len = bytes - c * chunk < chunk ? bytes - c * chunk : chunk;
        if (t->parent >= 0)
            rc = gas_wait_requests(team, 1, &recv[c]);
        for (int k = 0; k < t->nchild && rc == PARIO_OK; k++)
            rc = gas_mpi_check(team,
                               MPI_Isend(buf + c * chunk, (int)len, MPI_BYTE,
                                         real_rank(t->child[k], root, n), TAG_TREE, team->coll_comm,
                                         &send[nsend++]),
                               "MPI_Isend (broadcast)");
    }
    if (rc == PARIO_OK)
        rc = gas_wait_requests(team, nsend, send);
    free(recv);
    free(send);
    return rc;
}

static int bcast_tree_alg(pario_gas_team *team, unsigned char *buf, size_t bytes, int root,
                          pario_gas_bcast_alg alg) {
    int n = team->size, vr = (team->rank - root + n) % n;
    bcast_tree t = {-1, 0, malloc(sizeof(int) * (size_t)n)};
    if (!t.child)
        return gas_fail(team, PARIO_ERR_NO_MEM, "gas: out of memory for a broadcast");
    size_t chunk = GAS_MAX_MPI_MSG;
    switch (alg) {
    case PARIO_GAS_BCAST_FLAT:
        tree_flat(&t, vr, n);
        break;
    case PARIO_GAS_BCAST_CHAIN:
        tree_chain(&t, vr, n);
        chunk = GAS_BCAST_PIPE_CHUNK;
        break;
    case PARIO_GAS_BCAST_BINARY:
        tree_binary(&t, vr, n);
        chunk = GAS_BCAST_PIPE_CHUNK;
        break;
    default:
        tree_binomial(&t, vr, n);
        break;
    }
    int rc = tree_run(team, buf, bytes, root, &t, chunk);
    free(t.child);
    return rc;
}

/* Bytes [*off, *off + *len) of piece i when bytes are cut in n pieces. */
static void piece_of(size_t bytes, int n, int i, size_t *off, size_t *len) {
    size_t blk = (bytes + (size_t)n - 1) / (size_t)n;
    size_t o = (size_t)i * blk;
    *off = o < bytes ? o : bytes;
    *len = bytes - *off < blk ? bytes - *off : blk;
}

static int scatter_pieces(pario_gas_team *team, unsigned char *buf, size_t bytes, int root,
                          int vr) {
    int n = team->size;
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)n);
    if (!reqs)
        return gas_fail(team, PARIO_ERR_NO_MEM, "gas: out of memory for a broadcast");
    int nreq = 0, rc = PARIO_OK;
    size_t off, len;
    for (int i = 1; i < n && vr == 0 && rc == PARIO_OK; i++) {
        piece_of(bytes, n, i, &off, &len);
        rc = gas_mpi_check(team,
                           MPI_Isend(buf + off, (int)len, MPI_BYTE, real_rank(i, root, n),
                                     TAG_SCATTER, team->coll_comm, &reqs[nreq++]),
                           "MPI_Isend (scatter)");
    }
    if (vr != 0) {
        piece_of(bytes, n, vr, &off, &len);
        rc = gas_mpi_check(team,
                           MPI_Irecv(buf + off, (int)len, MPI_BYTE, root, TAG_SCATTER,
                                     team->coll_comm, &reqs[nreq++]),
                           "MPI_Irecv (scatter)");
    }
    if (rc == PARIO_OK)
        rc = gas_wait_requests(team, nreq, reqs);
    free(reqs);
    return rc;
}

/* n - 1 steps: pass piece (vr - s) right, receive piece (vr - s - 1) from the
 * left. The root already holds every piece: it receives nothing, and its left
 * neighbour sends it nothing. */
static int ring_allgather(pario_gas_team *team, unsigned char *buf, size_t bytes, int root,
                          int vr) {
    int n = team->size, rc = PARIO_OK;
    int left = real_rank((vr + n - 1) % n, root, n), right = real_rank((vr + 1) % n, root, n);
    for (int s = 0; s < n - 1 && rc == PARIO_OK; s++) {
        size_t soff, slen, roff, rlen;
        piece_of(bytes, n, (vr - s + n) % n, &soff, &slen);
        piece_of(bytes, n, (vr - s - 1 + 2 * n) % n, &roff, &rlen);
        MPI_Request reqs[2];
        int nreq = 0;
        if (vr != 0)
            rc = gas_mpi_check(team,
                               MPI_Irecv(buf + roff, (int)rlen, MPI_BYTE, left, TAG_RING,
                                         team->coll_comm, &reqs[nreq++]),
                               "MPI_Irecv (ring)");
        if (rc == PARIO_OK && right != root)
            rc = gas_mpi_check(team,
                               MPI_Isend(buf + soff, (int)slen, MPI_BYTE, right, TAG_RING,
                                         team->coll_comm, &reqs[nreq++]),
                               "MPI_Isend (ring)");
        if (rc == PARIO_OK)
            rc = gas_wait_requests(team, nreq, reqs);
    }
    return rc;
}

static int bcast_scatter_allgather(pario_gas_team *team, unsigned char *buf, size_t bytes,
                                   int root) {
    int n = team->size, vr = (team->rank - root + n) % n;
    if ((bytes + (size_t)n - 1) / (size_t)n > GAS_MAX_MPI_MSG)
        return bcast_tree_alg(team, buf, bytes, root, PARIO_GAS_BCAST_BINARY);
    int rc = scatter_pieces(team, buf, bytes, root, vr);
    if (rc == PARIO_OK)
        rc = ring_allgather(team, buf, bytes, root, vr);
    return rc;
}

int pario_gas_broadcast(pario_gas_team *team, void *buf, size_t bytes, int root,
                        pario_gas_bcast_alg alg) {
    int rc = gas_check_not_in_handler(team, "pario_gas_broadcast");
    if (rc == PARIO_OK)
        rc = gas_check_rank(team, root);
    if (rc != PARIO_OK)
        return rc;
    if ((int)alg < 0 || alg >= PARIO_GAS_BCAST_COUNT)
        return gas_fail(team, PARIO_ERR_ARG, "gas: unknown broadcast algorithm %d", (int)alg);
    if (bytes == 0 || team->size == 1)
        return PARIO_OK;
    if (alg == PARIO_GAS_BCAST_AUTO)
        alg = pario_gas_bcast_auto_choice(team, bytes);
    if (alg == PARIO_GAS_BCAST_SCATTER_ALLGATHER)
        return bcast_scatter_allgather(team, buf, bytes, root);
    return bcast_tree_alg(team, buf, bytes, root, alg);
}
