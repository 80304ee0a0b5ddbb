/* The relocalization collectives of UPC 1.3 (broadcast, scatter, gather,
 * gather_all, exchange, permute) and what every collective shares: the
 * synchronisation flags, the entry (fence, argument agreement) and the exit
 * (OUT_ALLSYNC: agreement on the outcome).
 *
 * Data moves with MPI's non-blocking collectives straight between the ranks'
 * segments (every rank's own segment is mapped), completed by
 * pgas_wait_requests, which keeps serving gas requests meanwhile. */
#include "pgas/pgas_internal.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static int check_flags(pario_pgas *ctx, const char *what, int flags) {
    if (pgas_sync_flags_valid(flags))
        return PARIO_OK;
    return pgas_fail(ctx, PARIO_ERR_ARG,
                     "pgas: %s: flags %#x: unknown bits, or more than one IN or OUT mode", what,
                     (unsigned)flags);
}

int pgas_coll_begin(pario_pgas *ctx, const char *what, int flags, int local_bad,
                    const uint64_t *args, int nargs) {
    if (!local_bad && ctx->notified)
        local_bad = pgas_fail(ctx, PARIO_ERR_REQUEST,
                              "pgas: %s: a collective between notify and wait", what) != PARIO_OK;
    if (!local_bad)
        local_bad = check_flags(ctx, what, flags) != PARIO_OK;
    if (!local_bad) /* the caller's earlier accesses, implicit transfers too */
        local_bad = pario_pgas_fence(ctx) != PARIO_OK;
    return pgas_agree(ctx, args, nargs, local_bad, what);
}

static int out_allsync(int flags) {
    return (flags & (PARIO_PGAS_OUT_NOSYNC | PARIO_PGAS_OUT_MYSYNC)) == 0;
}

int pgas_coll_end(pario_pgas *ctx, const char *what, int flags, int rc) {
    if (!out_allsync(flags))
        return rc;
    int64_t failed = rc != PARIO_OK, any = 0;
    int grc = pario_gas_allreduce_i64(ctx->team, &failed, &any, 1, PARIO_GAS_MAX);
    atomic_thread_fence(memory_order_seq_cst);
    if (rc != PARIO_OK)
        return rc;
    if (grc != PARIO_OK)
        return pgas_gas_failed(ctx, grc, what);
    if (any)
        return pgas_fail(ctx, PARIO_ERR_COMM, "pgas: %s: failed on another rank", what);
    return PARIO_OK;
}

int pgas_coll_mpi(pario_pgas *ctx, const char *what, int mrc, MPI_Request *req) {
    if (mrc != MPI_SUCCESS)
        return pgas_fail(ctx, PARIO_ERR_COMM, "pgas: %s: starting the MPI collective failed", what);
    return pgas_wait_requests(ctx, 1, req, what);
}

/* ---- views of the arguments ---- */

static int in_heaps(const pario_pgas *ctx, uint64_t addr, uint64_t bytes) {
    return addr >= ctx->sym_lo && addr <= ctx->local_hi && bytes <= ctx->local_hi - addr;
}

/* The caller's block of p viewed as shared [bytes] char: its address in the
 * caller's segment. */
static int my_block(pario_pgas *ctx, const char *what, const char *name, pario_pgas_ptr p,
                    uint64_t bytes, unsigned char **mem) {
    int rc = pgas_check_ptr(ctx, p, what);
    if (rc != PARIO_OK || bytes == 0)
        return rc;
    pario_pgas_ptr q = pario_pgas_ptr_retype(p, 1, bytes);
    if (q.phase != 0)
        return pgas_fail(ctx, PARIO_ERR_ARG,
                         "pgas: %s: %s does not start a block of %llu bytes (phase %llu)", what,
                         name, (unsigned long long)bytes, (unsigned long long)q.phase);
    int64_t k = ((int64_t)ctx->rank - (int64_t)q.rank + ctx->nranks) % ctx->nranks;
    q = pario_pgas_ptr_add(q, k * (int64_t)bytes);
    if (!in_heaps(ctx, q.addr, bytes))
        return pgas_fail(ctx, PARIO_ERR_ARG,
                         "pgas: %s: %s: the block of %llu bytes on rank %d runs past the shared "
                         "heaps",
                         what, name, (unsigned long long)bytes, ctx->rank);
    *mem = ctx->base[ctx->rank] + q.addr;
    return PARIO_OK;
}

/* p viewed as shared [] char[bytes], all on one rank (the root): *root is
 * that rank, *mem its address when it is the caller. */
static int root_area(pario_pgas *ctx, const char *what, const char *name, pario_pgas_ptr p,
                     uint64_t bytes, int *root, unsigned char **mem) {
    int rc = pgas_check_ptr(ctx, p, what);
    if (rc != PARIO_OK)
        return rc;
    *root = (int)p.rank;
    if (!in_heaps(ctx, p.addr, bytes))
        return pgas_fail(ctx, PARIO_ERR_ARG,
                         "pgas: %s: %s: %llu bytes on rank %u run past the shared heaps", what,
                         name, (unsigned long long)bytes, p.rank);
    *mem = *root == ctx->rank ? ctx->base[ctx->rank] + p.addr : NULL;
    return PARIO_OK;
}

/* MPI counts are ints: every transfer stays under 2 GiB. */
static int check_size(pario_pgas *ctx, const char *what, uint64_t nbytes, uint64_t pieces) {
    if (nbytes <= INT_MAX / (pieces ? pieces : 1))
        return PARIO_OK;
    return pgas_fail(ctx, PARIO_ERR_ARG, "pgas: %s: %llu x %llu bytes are more than 2 GiB", what,
                     (unsigned long long)pieces, (unsigned long long)nbytes);
}

/* What every rank must agree on: sizes, both pointers, flags. */
static int agree_two(pario_pgas *ctx, const char *what, int flags, int bad, uint64_t nbytes,
                     pario_pgas_ptr dst, pario_pgas_ptr src, uint64_t extra) {
    uint64_t args[8] = {nbytes,   dst.addr,  dst.phase,       ((uint64_t)dst.rank << 32) | src.rank,
                        src.addr, src.phase, (uint64_t)flags, extra};
    return pgas_coll_begin(ctx, what, flags, bad, args, 8);
}

/* ---- relocalization ---- */

/* The MPI collective behind each relocalization call. */
typedef enum move_kind {
    MOVE_BCAST,
    MOVE_SCATTER,
    MOVE_GATHER,
    MOVE_ALLGATHER,
    MOVE_ALLTOALL
} move_kind;

/* Starts the collective: in and out are the caller's areas (NULL where it
 * has none), c the bytes of one piece. */
static int start_move(pario_pgas *ctx, move_kind kind, unsigned char *in, unsigned char *out, int c,
                      int root, MPI_Request *req) {
    MPI_Comm comm = ctx->comm;
    switch (kind) {
    case MOVE_BCAST:
        return MPI_Ibcast(root == ctx->rank ? in : out, c, MPI_BYTE, root, comm, req);
    case MOVE_SCATTER:
        return MPI_Iscatter(in, c, MPI_BYTE, out, c, MPI_BYTE, root, comm, req);
    case MOVE_GATHER:
        return MPI_Igather(in, c, MPI_BYTE, out, c, MPI_BYTE, root, comm, req);
    case MOVE_ALLGATHER:
        return MPI_Iallgather(in, c, MPI_BYTE, out, c, MPI_BYTE, comm, req);
    default:
        return MPI_Ialltoall(in, c, MPI_BYTE, out, c, MPI_BYTE, comm, req);
    }
}

/* Agreement, the collective, the exit: the body of every call but permute. */
static int relocalize(pario_pgas *ctx, const char *what, int flags, int bad, size_t nbytes,
                      pario_pgas_ptr dst, pario_pgas_ptr src, move_kind kind, unsigned char *in,
                      unsigned char *out, int root) {
    int rc = agree_two(ctx, what, flags, bad, nbytes, dst, src, 0);
    if (rc != PARIO_OK)
        return rc;
    if (nbytes > 0) {
        MPI_Request req;
        rc =
            pgas_coll_mpi(ctx, what, start_move(ctx, kind, in, out, (int)nbytes, root, &req), &req);
        if (rc == PARIO_OK && kind == MOVE_BCAST && root == ctx->rank)
            memmove(out, in, nbytes); /* the root's own block */
    }
    return pgas_coll_end(ctx, what, flags, rc);
}

int pario_pgas_all_broadcast(pario_pgas *ctx, pario_pgas_ptr dst, pario_pgas_ptr src, size_t nbytes,
                             int flags) {
    const char *what = "pario_pgas_all_broadcast";
    unsigned char *mine = NULL, *from = NULL;
    int root = 0;
    int bad = check_size(ctx, what, nbytes, 1) || my_block(ctx, what, "dst", dst, nbytes, &mine) ||
              root_area(ctx, what, "src", src, nbytes, &root, &from);
    return relocalize(ctx, what, flags, bad, nbytes, dst, src, MOVE_BCAST, from, mine, root);
}

int pario_pgas_all_scatter(pario_pgas *ctx, pario_pgas_ptr dst, pario_pgas_ptr src, size_t nbytes,
                           int flags) {
    const char *what = "pario_pgas_all_scatter";
    unsigned char *mine = NULL, *from = NULL;
    int root = 0, n = ctx->nranks;
    int bad = check_size(ctx, what, nbytes, (uint64_t)n) ||
              my_block(ctx, what, "dst", dst, nbytes, &mine) ||
              root_area(ctx, what, "src", src, nbytes * (uint64_t)n, &root, &from);
    return relocalize(ctx, what, flags, bad, nbytes, dst, src, MOVE_SCATTER, from, mine, root);
}

int pario_pgas_all_gather(pario_pgas *ctx, pario_pgas_ptr dst, pario_pgas_ptr src, size_t nbytes,
                          int flags) {
    const char *what = "pario_pgas_all_gather";
    unsigned char *mine = NULL, *to = NULL;
    int root = 0, n = ctx->nranks;
    int bad = check_size(ctx, what, nbytes, (uint64_t)n) ||
              my_block(ctx, what, "src", src, nbytes, &mine) ||
              root_area(ctx, what, "dst", dst, nbytes * (uint64_t)n, &root, &to);
    return relocalize(ctx, what, flags, bad, nbytes, dst, src, MOVE_GATHER, mine, to, root);
}

int pario_pgas_all_gather_all(pario_pgas *ctx, pario_pgas_ptr dst, pario_pgas_ptr src,
                              size_t nbytes, int flags) {
    const char *what = "pario_pgas_all_gather_all";
    unsigned char *in = NULL, *out = NULL;
    uint64_t n = (uint64_t)ctx->nranks;
    int bad = check_size(ctx, what, nbytes, n) || my_block(ctx, what, "src", src, nbytes, &in) ||
              my_block(ctx, what, "dst", dst, nbytes * n, &out);
    return relocalize(ctx, what, flags, bad, nbytes, dst, src, MOVE_ALLGATHER, in, out, 0);
}

int pario_pgas_all_exchange(pario_pgas *ctx, pario_pgas_ptr dst, pario_pgas_ptr src, size_t nbytes,
                            int flags) {
    const char *what = "pario_pgas_all_exchange";
    unsigned char *in = NULL, *out = NULL;
    uint64_t n = (uint64_t)ctx->nranks;
    int bad = check_size(ctx, what, nbytes, n) ||
              my_block(ctx, what, "src", src, nbytes * n, &in) ||
              my_block(ctx, what, "dst", dst, nbytes * n, &out);
    return relocalize(ctx, what, flags, bad, nbytes, dst, src, MOVE_ALLTOALL, in, out, 0);
}

/* ---- permute ---- */

/* The perm entries this rank owns must lie in the heaps and be ints. */
static int check_perm(pario_pgas *ctx, const char *what, pario_pgas_ptr perm) {
    int rc = pgas_check_ptr(ctx, perm, what);
    if (rc != PARIO_OK)
        return rc;
    if (perm.elem_size != sizeof(int))
        return pgas_fail(ctx, PARIO_ERR_ARG, "pgas: %s: perm has elements of %u bytes, not int",
                         what, perm.elem_size);
    for (int i = 0; i < ctx->nranks; i++) {
        pario_pgas_ptr q = pario_pgas_ptr_add(perm, i);
        if (q.rank == (uint32_t)ctx->rank && !in_heaps(ctx, q.addr, sizeof(int)))
            return pgas_fail(ctx, PARIO_ERR_ARG, "pgas: %s: perm[%d] lies past the shared heaps",
                             what, i);
    }
    return PARIO_OK;
}

/* Every rank reads the perm entries it owns; a MAX reduction gives all. */
static int read_perm(pario_pgas *ctx, const char *what, pario_pgas_ptr perm, int *all) {
    for (int i = 0; i < ctx->nranks; i++) {
        pario_pgas_ptr q = pario_pgas_ptr_add(perm, i);
        all[i] = INT_MIN;
        if (q.rank == (uint32_t)ctx->rank)
            memcpy(&all[i], ctx->base[ctx->rank] + q.addr, sizeof(int));
    }
    MPI_Request req;
    int mrc = MPI_Iallreduce(MPI_IN_PLACE, all, ctx->nranks, MPI_INT, MPI_MAX, ctx->comm, &req);
    return pgas_coll_mpi(ctx, what, mrc, &req);
}

/* The same verdict on every rank (they hold the same perm). *from is the
 * rank whose block comes to the caller. */
static int check_permutation(pario_pgas *ctx, const char *what, const int *perm, int *from) {
    int n = ctx->nranks;
    char *seen = calloc((size_t)n, 1);
    if (!seen)
        return pgas_fail(ctx, PARIO_ERR_NO_MEM, "pgas: %s: out of memory", what);
    int rc = PARIO_OK;
    for (int i = 0; i < n && rc == PARIO_OK; i++) {
        if (perm[i] < 0 || perm[i] >= n || seen[perm[i]]++)
            rc = pgas_fail(ctx, PARIO_ERR_ARG,
                           "pgas: %s: perm[%d] = %d: perm is not a permutation of 0..%d", what, i,
                           perm[i], n - 1);
        else if (perm[i] == ctx->rank)
            *from = i;
    }
    free(seen);
    return rc;
}

static int move_permuted(pario_pgas *ctx, const char *what, const unsigned char *in,
                         unsigned char *out, int to, int from, size_t nbytes) {
    if (to == ctx->rank) {
        memmove(out, in, nbytes);
        return PARIO_OK;
    }
    MPI_Request req[2];
    int c = (int)nbytes;
    if (MPI_Irecv(out, c, MPI_BYTE, from, 0, ctx->comm, &req[0]) != MPI_SUCCESS ||
        MPI_Isend(in, c, MPI_BYTE, to, 0, ctx->comm, &req[1]) != MPI_SUCCESS)
        return pgas_fail(ctx, PARIO_ERR_COMM, "pgas: %s: MPI_Isend/MPI_Irecv failed", what);
    return pgas_wait_requests(ctx, 2, req, what);
}

int pario_pgas_all_permute(pario_pgas *ctx, pario_pgas_ptr dst, pario_pgas_ptr src,
                           pario_pgas_ptr perm, size_t nbytes, int flags) {
    const char *what = "pario_pgas_all_permute";
    unsigned char *in = NULL, *out = NULL;
    int *all = malloc(sizeof(int) * (size_t)ctx->nranks), from = 0;
    int bad = check_size(ctx, what, nbytes, 1) || my_block(ctx, what, "src", src, nbytes, &in) ||
              my_block(ctx, what, "dst", dst, nbytes, &out) || check_perm(ctx, what, perm);
    if (!bad && !all)
        bad = pgas_fail(ctx, PARIO_ERR_NO_MEM, "pgas: %s: out of memory", what) != PARIO_OK;
    uint64_t perm_id = perm.addr ^ ((uint64_t)perm.rank << 48) ^ ((uint64_t)perm.phase << 40);
    int rc = agree_two(ctx, what, flags, bad, nbytes, dst, src, perm_id);
    if (rc != PARIO_OK) {
        free(all);
        return rc;
    }
    rc = read_perm(ctx, what, perm, all);
    if (rc == PARIO_OK)
        rc = check_permutation(ctx, what, all, &from);
    if (rc == PARIO_OK && nbytes > 0)
        rc = move_permuted(ctx, what, in, out, all[ctx->rank], from, nbytes);
    free(all);
    return pgas_coll_end(ctx, what, flags, rc);
}
