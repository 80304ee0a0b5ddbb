/* pario gas: the communication layer.
 *
 * Teams, registered segments, one-sided put/get and 64-bit atomics, active
 * messages (Short, Medium, Long; request and reply) and collectives (barrier,
 * broadcast with selectable algorithms, reduce/allreduce).
 *
 * ---- Teams ------------------------------------------------------------------
 * A team wraps a private duplicate of an MPI communicator. Ranks are the
 * communicator's ranks. The team knows its node-local sub-team: the ranks that
 * share memory with the caller (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)).
 * When the environment variable PARIO_NODE_SIZE=k (k >= 1) is set, every k
 * consecutive team ranks form one "node" instead (intersected with the real
 * shared-memory node), so the between-node paths run on one machine.
 * There is no global state: everything hangs off a pario_gas_team handle.
 * A team is used by one thread at a time.
 *
 * ---- Segments ---------------------------------------------------------------
 * Each rank attaches one segment (collective; sizes may differ per rank).
 * Remote memory is always named by (rank, byte offset into that rank's
 * segment). Segments of node-local peers are mapped into the caller's address
 * space (pario_gas_segment_ptr), so node-local put/get are memcpy; segments on
 * other nodes are reached through MPI RMA (passive target, one lock_all epoch
 * for the team's lifetime, MPI_Win_flush for completion). Any access whose
 * [offset, offset + bytes) does not lie inside the target's segment fails with
 * PARIO_ERR_ARG before anything is transferred.
 *
 * ---- Completion and ordering of one-sided operations ------------------------
 * - Blocking put returns once the data is visible at the target (remote
 *   completion): a later AM, put, get or atomic by the caller to any rank, or a
 *   barrier, observes it. Blocking get returns with the data in the buffer.
 * - Non-blocking put/get return a pario_gas_event. The source buffer of a put
 *   and the destination buffer of a get must not be touched until the event is
 *   complete (pario_gas_wait or pario_gas_test returning 1). A completed put
 *   event means remote completion, as for the blocking put. Node-local
 *   operations complete before the call returns (their event is already done).
 * - pario_gas_quiet: every put/get the caller has issued on the team is
 *   complete (remotely, for puts). Events already issued stay valid and still
 *   must be waited on or tested (they then complete at once).
 * - pario_gas_fence: orders the caller's earlier puts before its later puts,
 *   gets and AMs to any target; implemented as quiet (no weaker ordering is
 *   offered by MPI RMA).
 * - pario_gas_barrier: quiet on every rank, then a barrier; after it, every
 *   rank sees every put completed before any rank entered the barrier,
 *   including through direct loads of its own segment or of mapped peers.
 * - Concurrent conflicting accesses (two puts, or a put and a get, to
 *   overlapping bytes without synchronisation between them) leave the bytes
 *   undefined, as in MPI.
 *
 * ---- Atomics ----------------------------------------------------------------
 * fetch_add, compare_and_swap, swap and load on int64_t at an 8-byte aligned
 * segment offset (else PARIO_ERR_ARG). Every atomic on a location is executed
 * as a hardware atomic instruction (C11 seq_cst) on that location by a process
 * that maps it: for a node-local target (the caller included) the caller does
 * it through the mapped segment; for an off-node target the layer sends an
 * internal Short request and the owner does it in the handler, replying with
 * the old value. Atomics from all ranks and both paths on one location are
 * therefore atomic with respect to each other. MPI_Fetch_and_op was not
 * chosen: MPI promises atomicity only among its own accumulate calls (not
 * against a C11 atomic on the mapped address), and Open MPI 4.1's RMA
 * component over shared memory emulates atomics by messages and crashes for
 * a target equal to the origin. Consequences: an off-node atomic completes
 * only once the owner polls (pario_gas_poll or any blocking gas call), and
 * each atomic returns after it has been performed (the old value is final).
 * Do not mix atomics and put/get on the same location without a barrier
 * between them.
 *
 * ---- Active messages --------------------------------------------------------
 * Handlers are registered collectively (pario_gas_register_handlers); each
 * call returns the same base index on every rank. A message names a handler
 * by index; an index that is not registered fails at the sender with
 * PARIO_ERR_ARG. Kinds:
 *   Short  : up to PARIO_GAS_MAX_ARGS 64-bit arguments, no payload.
 *   Medium : arguments plus a payload of at most pario_gas_medium_max() bytes
 *            (>= 64 KiB), delivered in a buffer valid only during the handler.
 *   Long   : arguments plus a payload of any size, written at the given offset
 *            of the target's segment before the handler runs; the handler gets
 *            a pointer to it (pario_gas_token_offset gives the offset).
 * A payload larger than allowed fails with PARIO_ERR_COUNT_ARG, more than
 * PARIO_GAS_MAX_ARGS arguments likewise.
 *
 * Handlers run only inside pario_gas_poll, pario_gas_test, or a gas call while
 * it waits: pario_gas_wait/wait_all, blocking put/get and atomics to off-node
 * targets, a request waiting for ring space or credits, barrier, broadcast,
 * reduce, team free. Requests from one sender run at the target in
 * the order they were sent; so do replies. A request handler may send at most
 * one reply, to the requester, through its token: a second reply fails with
 * PARIO_ERR_REQUEST. Reply handlers cannot reply. Inside any handler, calls
 * that could block or run other handlers (requests, poll, wait, test,
 * blocking put/get, atomics, quiet, fence, barrier, broadcast, reduce,
 * segment attach, team free) fail with PARIO_ERR_REQUEST; starting a
 * non-blocking put or get is allowed (its event is waited on later, outside).
 * Sending a request returns once the payload buffer may be reused; it does not
 * wait for the handler to run.
 *
 * ---- Errors -----------------------------------------------------------------
 * Every function returns PARIO_OK or a pario_err code; the message of the last
 * failure is kept in the team (pario_gas_last_error). Rank outside the team:
 * PARIO_ERR_RANK. Bad handler index, segment range, alignment or algorithm:
 * PARIO_ERR_ARG. Payload or argument count too large: PARIO_ERR_COUNT_ARG.
 * NULL payload with bytes > 0: PARIO_ERR_ARG. Misuse from a handler, a second
 * reply, a second attach or an access before attach: PARIO_ERR_REQUEST. MPI failure:
 * PARIO_ERR_COMM. Collective calls whose arguments differ across ranks where
 * this is detected (handler count): PARIO_ERR_NOT_SAME.
 */
#ifndef PARIO_GAS_H
#define PARIO_GAS_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include "pario/pario.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most 64-bit arguments an active message carries (GASNet's limit). */
#define PARIO_GAS_MAX_ARGS 16
/* Size of a team's handler table; the layer keeps the first 2 entries for
 * itself (off-node atomics), so users can register 254. */
#define PARIO_GAS_MAX_HANDLERS 256

typedef struct pario_gas_team pario_gas_team;
typedef struct pario_gas_token pario_gas_token;

/* ---- teams --------------------------------------------------------------- */

/* Collective over comm: duplicates it and splits off the node-local sub-team. */
int pario_gas_team_create(MPI_Comm comm, pario_gas_team **team, pario_error *err);
/* Collective. Detaches the segment, frees everything and sets *team = NULL. */
int pario_gas_team_free(pario_gas_team **team);

int pario_gas_rank(const pario_gas_team *team);
int pario_gas_size(const pario_gas_team *team);
/* The team's private communicator (do not free). */
MPI_Comm pario_gas_comm(const pario_gas_team *team);
/* Node-local sub-team: its size, the caller's index in it, and whether a
 * team rank is on the caller's node. */
int pario_gas_node_size(const pario_gas_team *team);
int pario_gas_node_rank(const pario_gas_team *team);
int pario_gas_is_local(const pario_gas_team *team, int rank);
/* Number of nodes in the team. */
int pario_gas_node_count(const pario_gas_team *team);
/* The last failure recorded on the team (code PARIO_OK if none). */
const pario_error *pario_gas_last_error(const pario_gas_team *team);

/* ---- segments ------------------------------------------------------------ */

/* Collective: every rank attaches a segment of `bytes` (may be 0, may differ
 * per rank), zero-filled. One segment per team; a second attach fails with
 * PARIO_ERR_REQUEST. */
int pario_gas_segment_attach(pario_gas_team *team, size_t bytes);
/* Size of rank's segment. */
int pario_gas_segment_size(pario_gas_team *team, int rank, size_t *bytes);
/* Address of rank's segment in the caller's address space: the caller's own
 * segment and node-local peers' segments; PARIO_ERR_RANK for other ranks. */
int pario_gas_segment_ptr(pario_gas_team *team, int rank, void **ptr);

/* ---- one-sided ----------------------------------------------------------- */

/* Non-blocking operation handle. The fields are private. A zero-initialised
 * event (or one set to PARIO_GAS_EVENT_INIT) counts as complete. */
typedef struct pario_gas_event {
    int pending; /* 1 while the operation is in flight */
    int target;  /* team rank of the target */
    int sync;    /* completion step: 0 none, 1 flush target, 2 local flush */
    MPI_Request req;
} pario_gas_event;
#define PARIO_GAS_EVENT_INIT                                                                       \
    { 0, 0, 0, MPI_REQUEST_NULL }

int pario_gas_put(pario_gas_team *team, int rank, size_t offset, const void *src, size_t bytes);
int pario_gas_get(pario_gas_team *team, void *dst, int rank, size_t offset, size_t bytes);
int pario_gas_put_nb(pario_gas_team *team, int rank, size_t offset, const void *src, size_t bytes,
                     pario_gas_event *ev);
int pario_gas_get_nb(pario_gas_team *team, void *dst, int rank, size_t offset, size_t bytes,
                     pario_gas_event *ev);
/* Blocks (running handlers) until ev is complete. */
int pario_gas_wait(pario_gas_team *team, pario_gas_event *ev);
int pario_gas_wait_all(pario_gas_team *team, pario_gas_event *evs, size_t count);
/* *done = 1 when ev is complete (then it is finished and needs no wait). */
int pario_gas_test(pario_gas_team *team, pario_gas_event *ev, int *done);
int pario_gas_quiet(pario_gas_team *team);
int pario_gas_fence(pario_gas_team *team);

/* 64-bit atomics at an 8-byte aligned offset of rank's segment. */
int pario_gas_fetch_add(pario_gas_team *team, int rank, size_t offset, int64_t add, int64_t *old);
/* Stores desired when the value equals expected; *old gets the prior value. */
int pario_gas_compare_swap(pario_gas_team *team, int rank, size_t offset, int64_t expected,
                           int64_t desired, int64_t *old);
int pario_gas_swap(pario_gas_team *team, int rank, size_t offset, int64_t value, int64_t *old);
int pario_gas_atomic_load(pario_gas_team *team, int rank, size_t offset, int64_t *value);

/* ---- active messages ----------------------------------------------------- */

/* A handler. token identifies the message (sender, reply channel); args has
 * nargs entries; payload/bytes is the Medium buffer or the Long destination
 * (NULL/0 for Short). */
typedef void (*pario_gas_handler)(pario_gas_token *token, void *payload, size_t bytes,
                                  const uint64_t *args, int nargs);

/* Collective: registers count handlers (same count on every rank, else
 * PARIO_ERR_NOT_SAME); *base is the index of fns[0] (same on every rank). */
int pario_gas_register_handlers(pario_gas_team *team, const pario_gas_handler *fns, int count,
                                int *base);
/* Largest Medium payload in bytes. */
size_t pario_gas_medium_max(const pario_gas_team *team);

int pario_gas_request_short(pario_gas_team *team, int rank, int handler, const uint64_t *args,
                            int nargs);
int pario_gas_request_medium(pario_gas_team *team, int rank, int handler, const void *payload,
                             size_t bytes, const uint64_t *args, int nargs);
int pario_gas_request_long(pario_gas_team *team, int rank, int handler, const void *payload,
                           size_t bytes, size_t offset, const uint64_t *args, int nargs);

/* Replies: only from inside a request handler, at most one per request. */
int pario_gas_reply_short(pario_gas_token *token, int handler, const uint64_t *args, int nargs);
int pario_gas_reply_medium(pario_gas_token *token, int handler, const void *payload, size_t bytes,
                           const uint64_t *args, int nargs);
int pario_gas_reply_long(pario_gas_token *token, int handler, const void *payload, size_t bytes,
                         size_t offset, const uint64_t *args, int nargs);

/* Information about the message being handled. */
int pario_gas_token_source(const pario_gas_token *token);
pario_gas_team *pario_gas_token_team(const pario_gas_token *token);
/* Segment offset of a Long payload (0 for other kinds). */
size_t pario_gas_token_offset(const pario_gas_token *token);
int pario_gas_token_is_request(const pario_gas_token *token);

/* Runs every handler whose message has arrived; never blocks. */
int pario_gas_poll(pario_gas_team *team);

/* ---- collectives --------------------------------------------------------- */

/* Quiet, then a barrier over the team; runs handlers while waiting. */
int pario_gas_barrier(pario_gas_team *team);

typedef enum pario_gas_bcast_alg {
    PARIO_GAS_BCAST_AUTO = 0,          /* chosen by size and team shape */
    PARIO_GAS_BCAST_FLAT,              /* root sends to every rank (separate addressing) */
    PARIO_GAS_BCAST_CHAIN,             /* serial forwarding rank to rank, pipelined */
    PARIO_GAS_BCAST_BINARY,            /* binary tree, pipelined */
    PARIO_GAS_BCAST_BINOMIAL,          /* binomial tree */
    PARIO_GAS_BCAST_SCATTER_ALLGATHER, /* scatter, then ring allgather */
    PARIO_GAS_BCAST_COUNT              /* number of algorithms; not one */
} pario_gas_bcast_alg;

/* Name of an algorithm ("auto", "flat", ...), or NULL if out of range. */
const char *pario_gas_bcast_alg_name(pario_gas_bcast_alg alg);
/* The algorithm AUTO picks for this size on this team. */
pario_gas_bcast_alg pario_gas_bcast_auto_choice(const pario_gas_team *team, size_t bytes);
/* Collective: bytes from root's buf into every rank's buf. All ranks pass the
 * same bytes, root and alg. Runs handlers while waiting. */
int pario_gas_broadcast(pario_gas_team *team, void *buf, size_t bytes, int root,
                        pario_gas_bcast_alg alg);

typedef enum pario_gas_op { PARIO_GAS_SUM, PARIO_GAS_MIN, PARIO_GAS_MAX } pario_gas_op;

/* Element-wise reduction of count values to root (reduce) or to all ranks
 * (allreduce). in and out may be the same buffer. out is ignored on non-roots
 * for reduce. Runs handlers while waiting. */
int pario_gas_reduce_i64(pario_gas_team *team, const int64_t *in, int64_t *out, size_t count,
                         pario_gas_op op, int root);
int pario_gas_allreduce_i64(pario_gas_team *team, const int64_t *in, int64_t *out, size_t count,
                            pario_gas_op op);
int pario_gas_reduce_double(pario_gas_team *team, const double *in, double *out, size_t count,
                            pario_gas_op op, int root);
int pario_gas_allreduce_double(pario_gas_team *team, const double *in, double *out, size_t count,
                               pario_gas_op op);

#ifdef __cplusplus
}
#endif

#endif
