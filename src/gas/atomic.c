/* 64-bit atomics.
 *
 * Every atomic on a location ends up as a hardware atomic instruction on that
 * location, executed by a process that maps it:
 * - a node-local target (including the caller) is updated directly through
 *   the mapped segment with a C11 atomic;
 * - an off-node target gets an internal Short request; its owner performs the
 *   same C11 atomic in the handler and replies with the old value.
 * Both paths therefore serialise in the memory system of the owner's node and
 * are atomic with respect to each other. MPI_Fetch_and_op was not used: with
 * Open MPI's RMA component over shared memory it emulates atomics by messages
 * and crashes for a target equal to the origin, and MPI gives no promise of
 * atomicity against C11 atomics on the same address. The cost: an off-node
 * atomic completes only when the owner polls (any blocking gas call). */
#include "gas/gas_internal.h"

#include <string.h>

enum atomic_op { OP_FETCH_ADD, OP_SWAP, OP_CAS, OP_LOAD };

/* What the requester waits on; its address travels as the request cookie. */
typedef struct atomic_result {
    int64_t value;
    int done;
} atomic_result;

static int64_t apply_atomic(unsigned char *base, size_t offset, int op, int64_t a, int64_t b) {
    _Atomic int64_t *p = (_Atomic int64_t *)(void *)(base + offset);
    switch (op) {
    case OP_FETCH_ADD:
        return atomic_fetch_add_explicit(p, a, memory_order_seq_cst);
    case OP_SWAP:
        return atomic_exchange_explicit(p, a, memory_order_seq_cst);
    case OP_CAS: {
        int64_t expected = a;
        atomic_compare_exchange_strong_explicit(p, &expected, b, memory_order_seq_cst,
                                                memory_order_seq_cst);
        return expected;
    }
    default:
        return atomic_load_explicit(p, memory_order_seq_cst);
    }
}

/* args: op, offset, a, b, cookie */
static void atomic_request_handler(pario_gas_token *tok, void *payload, size_t bytes,
                                   const uint64_t *args, int nargs) {
    (void)payload;
    (void)bytes;
    (void)nargs;
    pario_gas_team *team = tok->team;
    int64_t old = apply_atomic(team->seg_ptr[team->rank], (size_t)args[1], (int)args[0],
                               (int64_t)args[2], (int64_t)args[3]);
    uint64_t reply[2] = {(uint64_t)old, args[4]};
    pario_gas_reply_short(tok, GAS_HANDLER_ATOMIC_REPLY, reply, 2);
}

static void atomic_reply_handler(pario_gas_token *tok, void *payload, size_t bytes,
                                 const uint64_t *args, int nargs) {
    (void)tok;
    (void)payload;
    (void)bytes;
    (void)nargs;
    atomic_result *res = (atomic_result *)(uintptr_t)args[1];
    res->value = (int64_t)args[0];
    res->done = 1;
}

void gas_atomic_register(pario_gas_team *team) {
    team->handlers[GAS_HANDLER_ATOMIC_REQUEST] = atomic_request_handler;
    team->handlers[GAS_HANDLER_ATOMIC_REPLY] = atomic_reply_handler;
}

static int check_atomic(pario_gas_team *team, int rank, size_t offset, const char *what) {
    int rc = gas_check_not_in_handler(team, what);
    if (rc == PARIO_OK)
        rc = gas_check_range(team, rank, offset, sizeof(int64_t));
    if (rc == PARIO_OK && offset % sizeof(int64_t) != 0)
        rc = gas_fail(team, PARIO_ERR_ARG, "gas: %s at offset %zu: not 8-byte aligned", what,
                      offset);
    return rc;
}

static int remote_atomic(pario_gas_team *team, int rank, size_t offset, int op, int64_t a,
                         int64_t b, int64_t *old) {
    atomic_result res = {0, 0};
    uint64_t args[5] = {(uint64_t)op, (uint64_t)offset, (uint64_t)a, (uint64_t)b,
                        (uint64_t)(uintptr_t)&res};
    int rc = gas_send_internal(team, rank, GAS_HANDLER_ATOMIC_REQUEST, args, 5);
    int idle = 0;
    while (rc == PARIO_OK && !res.done)
        gas_idle_step(team, &idle);
    if (rc == PARIO_OK && old)
        *old = res.value;
    return rc;
}

static int run_atomic(pario_gas_team *team, int rank, size_t offset, int op, int64_t a, int64_t b,
                      int64_t *old, const char *what) {
    int rc = check_atomic(team, rank, offset, what);
    if (rc != PARIO_OK)
        return rc;
    if (team->node_index[rank] < 0)
        return remote_atomic(team, rank, offset, op, a, b, old);
    int64_t v = apply_atomic(team->seg_ptr[rank], offset, op, a, b);
    if (old)
        *old = v;
    return PARIO_OK;
}

int pario_gas_fetch_add(pario_gas_team *team, int rank, size_t offset, int64_t add, int64_t *old) {
    return run_atomic(team, rank, offset, OP_FETCH_ADD, add, 0, old, "pario_gas_fetch_add");
}

int pario_gas_swap(pario_gas_team *team, int rank, size_t offset, int64_t value, int64_t *old) {
    return run_atomic(team, rank, offset, OP_SWAP, value, 0, old, "pario_gas_swap");
}

int pario_gas_atomic_load(pario_gas_team *team, int rank, size_t offset, int64_t *value) {
    return run_atomic(team, rank, offset, OP_LOAD, 0, 0, value, "pario_gas_atomic_load");
}

int pario_gas_compare_swap(pario_gas_team *team, int rank, size_t offset, int64_t expected,
                           int64_t desired, int64_t *old) {
    return run_atomic(team, rank, offset, OP_CAS, expected, desired, old, "pario_gas_compare_swap");
}
