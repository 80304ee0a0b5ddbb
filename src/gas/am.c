/* Active messages: the handler table, argument checks, dispatch, polling and
 * the waiting loop that keeps handlers running while a rank is blocked. */
#include "gas/gas_internal.h"

#include <limits.h>
#include <sched.h>
#include <string.h>

int pario_gas_register_handlers(pario_gas_team *team, const pario_gas_handler *fns, int count,
                                int *base) {
    int rc = gas_check_not_in_handler(team, "pario_gas_register_handlers");
    if (rc != PARIO_OK)
        return rc;
    int range[2] = {count, -count}, agreed[2];
    rc = gas_mpi_check(team, MPI_Allreduce(range, agreed, 2, MPI_INT, MPI_MIN, team->comm),
                       "MPI_Allreduce (handler count)");
    if (rc != PARIO_OK)
        return rc;
    if (agreed[0] != -agreed[1])
        return gas_fail(team, PARIO_ERR_NOT_SAME,
                        "gas: ranks register different numbers of handlers (%d here)", count);
    if (count < 0 || count > PARIO_GAS_MAX_HANDLERS - team->nhandlers)
        return gas_fail(team, PARIO_ERR_ARG, "gas: cannot register %d handlers (%d of %d in use)",
                        count, team->nhandlers, PARIO_GAS_MAX_HANDLERS);
    for (int i = 0; i < count; i++)
        team->handlers[team->nhandlers + i] = fns[i];
    *base = team->nhandlers;
    team->nhandlers += count;
    return PARIO_OK;
}

size_t pario_gas_medium_max(const pario_gas_team *team) {
    (void)team;
    return GAS_MEDIUM_MAX;
}

int gas_check_handler(pario_gas_team *team, int handler) {
    if (handler < (team->internal_send ? 0 : GAS_INTERNAL_HANDLERS) || handler >= team->nhandlers ||
        !team->handlers[handler])
        return gas_fail(team, PARIO_ERR_ARG, "gas: handler %d is not registered (%d registered)",
                        handler, team->nhandlers - GAS_INTERNAL_HANDLERS);
    return PARIO_OK;
}

void gas_dispatch(pario_gas_team *team, const gas_am_hdr *hdr, void *payload) {
    if (hdr->handler < 0 || hdr->handler >= team->nhandlers) {
        gas_fail(team, PARIO_ERR_INTERN, "gas: message for unknown handler %d dropped",
                 hdr->handler);
        return;
    }
    pario_gas_token tok = {team, hdr->source, !(hdr->flags & GAS_AM_FLAG_REPLY),
                           0,    0,           hdr->handler < GAS_INTERNAL_HANDLERS};
    void *data = NULL;
    size_t bytes = 0;
    if (hdr->kind == GAS_AM_MEDIUM) {
        data = payload;
        bytes = hdr->bytes;
    } else if (hdr->kind == GAS_AM_LONG) {
        tok.offset = hdr->offset;
        data = team->seg_ptr[team->rank] + hdr->offset;
        bytes = hdr->bytes;
    }
    team->in_handler++;
    team->handlers[hdr->handler](&tok, data, bytes, hdr->args, hdr->nargs);
    team->in_handler--;
}

/* Validates a message and fills its header. */
static int build_message(pario_gas_team *team, int dest, int kind, int handler, const void *payload,
                         size_t bytes, size_t offset, const uint64_t *args, int nargs,
                         gas_am_hdr *hdr) {
    int rc = gas_check_rank(team, dest);
    if (rc == PARIO_OK)
        rc = gas_check_handler(team, handler);
    if (rc != PARIO_OK)
        return rc;
    if (nargs < 0 || nargs > PARIO_GAS_MAX_ARGS || (nargs > 0 && !args))
        return gas_fail(team, PARIO_ERR_COUNT_ARG, "gas: %d arguments (at most %d)", nargs,
                        PARIO_GAS_MAX_ARGS);
    if (bytes > 0 && !payload)
        return gas_fail(team, PARIO_ERR_ARG, "gas: %zu payload bytes from a NULL buffer", bytes);
    if (kind == GAS_AM_MEDIUM && bytes > GAS_MEDIUM_MAX)
        return gas_fail(team, PARIO_ERR_COUNT_ARG,
                        "gas: Medium payload of %zu bytes exceeds the maximum %zu", bytes,
                        GAS_MEDIUM_MAX);
    if (kind == GAS_AM_LONG && (rc = gas_check_range(team, dest, offset, bytes)) != PARIO_OK)
        return rc;
    memset(hdr, 0, offsetof(gas_am_hdr, args));
    hdr->kind = (uint16_t)kind;
    hdr->handler = handler;
    hdr->nargs = nargs;
    hdr->source = team->rank;
    hdr->bytes = bytes;
    hdr->offset = offset;
    if (nargs > 0)
        memcpy(hdr->args, args, sizeof(uint64_t) * (size_t)nargs);
    return PARIO_OK;
}

static int route_message(pario_gas_team *team, int dest, gas_am_hdr *hdr, const void *payload) {
    if (team->node_index[dest] < 0)
        return gas_mpi_send(team, dest, hdr, payload);
    if (hdr->kind == GAS_AM_LONG) {
        if (hdr->bytes && payload)
            memcpy(team->seg_ptr[dest] + hdr->offset, payload, hdr->bytes);
        payload = NULL; /* the ring carries only the header */
    }
    return gas_shm_send(team, dest, hdr, payload);
}

static int send_request(pario_gas_team *team, int dest, int kind, int handler, const void *payload,
                        size_t bytes, size_t offset, const uint64_t *args, int nargs) {
    int rc = gas_check_not_in_handler(team, "an active message request");
    gas_am_hdr hdr;
    if (rc == PARIO_OK)
        rc = build_message(team, dest, kind, handler, payload, bytes, offset, args, nargs, &hdr);
    if (rc != PARIO_OK)
        return rc;
    return route_message(team, dest, &hdr, payload);
}

static int send_reply(pario_gas_token *tok, int kind, int handler, const void *payload,
                      size_t bytes, size_t offset, const uint64_t *args, int nargs) {
    pario_gas_team *team = tok->team;
    if (!tok->is_request)
        return gas_fail(team, PARIO_ERR_REQUEST, "gas: a reply handler cannot reply");
    if (tok->replied)
        return gas_fail(team, PARIO_ERR_REQUEST, "gas: a request handler may send only one reply");
    gas_am_hdr hdr;
    team->internal_send = tok->internal;
    int rc =
        build_message(team, tok->source, kind, handler, payload, bytes, offset, args, nargs, &hdr);
    team->internal_send = 0;
    if (rc != PARIO_OK)
        return rc;
    hdr.flags |= GAS_AM_FLAG_REPLY;
    tok->replied = 1;
    return route_message(team, tok->source, &hdr, payload);
}

int gas_send_internal(pario_gas_team *team, int dest, int handler, const uint64_t *args,
                      int nargs) {
    gas_am_hdr hdr;
    team->internal_send = 1;
    int rc = build_message(team, dest, GAS_AM_SHORT, handler, NULL, 0, 0, args, nargs, &hdr);
    team->internal_send = 0;
    if (rc != PARIO_OK)
        return rc;
    return route_message(team, dest, &hdr, NULL);
}

int pario_gas_request_short(pario_gas_team *team, int rank, int handler, const uint64_t *args,
                            int nargs) {
    return send_request(team, rank, GAS_AM_SHORT, handler, NULL, 0, 0, args, nargs);
}

int pario_gas_request_medium(pario_gas_team *team, int rank, int handler, const void *payload,
                             size_t bytes, const uint64_t *args, int nargs) {
    return send_request(team, rank, GAS_AM_MEDIUM, handler, payload, bytes, 0, args, nargs);
}

int pario_gas_request_long(pario_gas_team *team, int rank, int handler, const void *payload,
                           size_t bytes, size_t offset, const uint64_t *args, int nargs) {
    return send_request(team, rank, GAS_AM_LONG, handler, payload, bytes, offset, args, nargs);
}

int pario_gas_reply_short(pario_gas_token *token, int handler, const uint64_t *args, int nargs) {
    return send_reply(token, GAS_AM_SHORT, handler, NULL, 0, 0, args, nargs);
}

int pario_gas_reply_medium(pario_gas_token *token, int handler, const void *payload, size_t bytes,
                           const uint64_t *args, int nargs) {
    return send_reply(token, GAS_AM_MEDIUM, handler, payload, bytes, 0, args, nargs);
}

int pario_gas_reply_long(pario_gas_token *token, int handler, const void *payload, size_t bytes,
                         size_t offset, const uint64_t *args, int nargs) {
    return send_reply(token, GAS_AM_LONG, handler, payload, bytes, offset, args, nargs);
}

int pario_gas_token_source(const pario_gas_token *token) {
    return token->source;
}
pario_gas_team *pario_gas_token_team(const pario_gas_token *token) {
    return token->team;
}
size_t pario_gas_token_offset(const pario_gas_token *token) {
    return token->offset;
}
int pario_gas_token_is_request(const pario_gas_token *token) {
    return token->is_request;
}

/* ---- progress ---- */

int gas_poll_once(pario_gas_team *team, int *progressed) {
    *progressed = 0;
    int rc = gas_shm_poll(team, progressed);
    if (rc == PARIO_OK && team->mpi.active)
        rc = gas_mpi_poll(team, progressed);
    return rc;
}

int pario_gas_poll(pario_gas_team *team) {
    int rc = gas_check_not_in_handler(team, "pario_gas_poll");
    int progressed = 0;
    if (rc == PARIO_OK)
        rc = gas_poll_once(team, &progressed);
    return rc;
}

void gas_idle_step(pario_gas_team *team, int *idle) {
    int progressed = 0;
    gas_poll_once(team, &progressed);
    if (progressed) {
        *idle = 0;
    } else if (++*idle >= GAS_SPIN_BEFORE_YIELD) {
        sched_yield();
        *idle = 0;
    }
}

/* Tests requests [*first, count) in order; advances *first past completed
 * ones. Per-request calls: MPICH's MPI_STATUSES_IGNORE trips GCC's array
 * bounds checking with the *all variants. */
static int test_in_order(pario_gas_team *team, int count, MPI_Request *reqs, int *first) {
    while (*first < count) {
        int flag = 0;
        int rc = MPI_Test(&reqs[*first], &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return gas_mpi_check(team, rc, "MPI_Test");
        if (!flag)
            return PARIO_OK;
        (*first)++;
    }
    return PARIO_OK;
}

int gas_wait_requests(pario_gas_team *team, int count, MPI_Request *reqs) {
    if (team->in_handler) {
        for (int i = 0; i < count; i++) {
            int rc = MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                return gas_mpi_check(team, rc, "MPI_Wait");
        }
        return PARIO_OK;
    }
    int first = 0, idle = 0;
    for (;;) {
        int rc = test_in_order(team, count, reqs, &first);
        if (rc != PARIO_OK || first == count)
            return rc;
        gas_idle_step(team, &idle);
    }
}
