/* Between-node active messages over MPI point-to-point.
 *
 * Two channels per ordered pair, each a tag on a private communicator:
 * requests and replies. For every off-node peer a rank keeps
 * GAS_MPI_CREDITS receives pre-posted on each channel, each with a buffer for
 * the largest message, and consumes them strictly in posting order, so
 * messages of one channel run in the order sent.
 *
 * Credit-based flow control: a sender starts with GAS_MPI_CREDITS request
 * credits per peer and spends one per request, waiting (polling) at zero. The
 * receiver owes a credit for every request it has run and returns owed
 * credits in the header of its next message to that peer (typically the
 * reply), or in a CREDIT message on the reply channel as soon as half of the
 * peer's credits are owed, and at the end of every poll.
 * Every reply-channel message carries at least one credit, so at most
 * GAS_MPI_CREDITS of them are unconsumed at any time: replies never need
 * credits of their own and two ranks flooding each other never deadlock,
 * while memory stays bounded by the pre-posted buffers.
 *
 * Long payloads up to GAS_MEDIUM_MAX travel inside the message and are copied
 * into the segment before the handler runs; larger ones are written with
 * MPI_Put + MPI_Win_flush before the header is sent. */
#include "gas/gas_internal.h"

#include <stdlib.h>
#include <string.h>

enum { TAG_REQUEST = 1, TAG_REPLY = 2 };

static int post_receive(pario_gas_team *team, int rank, int tag, unsigned char *buf,
                        MPI_Request *req) {
    int rc = MPI_Irecv(buf, (int)GAS_MPI_MSG_MAX, MPI_BYTE, rank, tag, team->mpi.comm, req);
    return gas_mpi_check(team, rc, "MPI_Irecv (AM)");
}

static int setup_peer(pario_gas_team *team, int rank) {
    gas_mpi_peer *peer = &team->mpi.peers[rank];
    peer->credits = GAS_MPI_CREDITS;
    for (int i = 0; i < GAS_MPI_CREDITS; i++) {
        peer->req_recv[i] = peer->rep_recv[i] = MPI_REQUEST_NULL;
        peer->req_buf[i] = malloc(GAS_MPI_MSG_MAX);
        peer->rep_buf[i] = malloc(GAS_MPI_MSG_MAX);
        if (!peer->req_buf[i] || !peer->rep_buf[i])
            return gas_fail(team, PARIO_ERR_NO_MEM, "gas: out of memory for AM buffers");
    }
    for (int i = 0; i < GAS_MPI_CREDITS; i++) {
        int rc = post_receive(team, rank, TAG_REQUEST, peer->req_buf[i], &peer->req_recv[i]);
        if (rc == PARIO_OK)
            rc = post_receive(team, rank, TAG_REPLY, peer->rep_buf[i], &peer->rep_recv[i]);
        if (rc != PARIO_OK)
            return rc;
    }
    return PARIO_OK;
}

int gas_mpi_setup(pario_gas_team *team) {
    gas_mpi *mpi = &team->mpi;
    if (team->nnodes <= 1)
        return PARIO_OK;
    int rc = MPI_Comm_dup(team->comm, &mpi->comm);
    if (rc != MPI_SUCCESS)
        return gas_mpi_check(team, rc, "MPI_Comm_dup (AM)");
    mpi->active = 1;
    mpi->peers = calloc((size_t)team->size, sizeof *mpi->peers);
    mpi->req_stage = malloc(GAS_MPI_MSG_MAX);
    mpi->rep_stage = malloc(GAS_MPI_MSG_MAX);
    if (!mpi->peers || !mpi->req_stage || !mpi->rep_stage)
        return gas_fail(team, PARIO_ERR_NO_MEM, "gas: out of memory for AM state");
    for (int r = 0; r < team->size; r++) {
        if (team->node_index[r] >= 0)
            continue;
        rc = setup_peer(team, r);
        if (rc != PARIO_OK)
            return rc;
    }
    return PARIO_OK;
}

static void cancel_receive(MPI_Request *req) {
    if (*req == MPI_REQUEST_NULL)
        return;
    MPI_Cancel(req);
    MPI_Wait(req, MPI_STATUS_IGNORE);
}

void gas_mpi_teardown(pario_gas_team *team) {
    gas_mpi *mpi = &team->mpi;
    if (mpi->peers) {
        for (int r = 0; r < team->size; r++) {
            gas_mpi_peer *peer = &mpi->peers[r];
            for (int i = 0; i < GAS_MPI_CREDITS && team->node_index[r] < 0; i++) {
                cancel_receive(&peer->req_recv[i]);
                cancel_receive(&peer->rep_recv[i]);
                free(peer->req_buf[i]);
                free(peer->rep_buf[i]);
            }
        }
    }
    free(mpi->peers);
    free(mpi->req_stage);
    free(mpi->rep_stage);
    mpi->peers = NULL;
    mpi->req_stage = mpi->rep_stage = NULL;
    if (mpi->comm != MPI_COMM_NULL)
        MPI_Comm_free(&mpi->comm);
    mpi->active = 0;
}

/* Writes a Long payload too large to embed straight into the target segment. */
static int put_long_payload(pario_gas_team *team, int dest, const gas_am_hdr *hdr,
                            const void *payload) {
    pario_gas_event ev;
    int rc = pario_gas_put_nb(team, dest, (size_t)hdr->offset, payload, (size_t)hdr->bytes, &ev);
    if (rc != PARIO_OK)
        return rc;
    rc = gas_wait_requests(team, 1, &ev.req);
    if (rc != PARIO_OK)
        return rc;
    return gas_mpi_check(team, MPI_Win_flush(dest, team->seg_rma_win), "MPI_Win_flush");
}

/* Bytes of payload that travel inside the message. */
static size_t inline_payload_bytes(gas_am_hdr *hdr) {
    if (hdr->kind == GAS_AM_MEDIUM)
        return (size_t)hdr->bytes;
    if (hdr->kind == GAS_AM_LONG && hdr->bytes <= GAS_MEDIUM_MAX) {
        hdr->flags |= GAS_AM_FLAG_EMBEDDED;
        return (size_t)hdr->bytes;
    }
    return 0;
}

static int wait_for_credit(pario_gas_team *team, gas_mpi_peer *peer) {
    int idle = 0;
    while (peer->credits == 0)
        gas_idle_step(team, &idle);
    peer->credits--;
    return PARIO_OK;
}

int gas_mpi_send(pario_gas_team *team, int dest, gas_am_hdr *hdr, const void *payload) {
    gas_mpi_peer *peer = &team->mpi.peers[dest];
    int is_reply = (hdr->flags & GAS_AM_FLAG_REPLY) != 0;
    size_t plen = inline_payload_bytes(hdr);
    int rc = PARIO_OK;
    if (hdr->kind == GAS_AM_LONG && !(hdr->flags & GAS_AM_FLAG_EMBEDDED) && hdr->bytes)
        rc = put_long_payload(team, dest, hdr, payload);
    if (rc == PARIO_OK && !is_reply)
        rc = wait_for_credit(team, peer);
    if (rc != PARIO_OK)
        return rc;
    hdr->credits = (uint32_t)peer->owed;
    peer->owed = 0;
    unsigned char *stage = is_reply ? team->mpi.rep_stage : team->mpi.req_stage;
    memcpy(stage, hdr, sizeof *hdr);
    if (plen)
        memcpy(stage + sizeof *hdr, payload, plen);
    MPI_Request req;
    rc = MPI_Isend(stage, (int)(sizeof *hdr + plen), MPI_BYTE, dest,
                   is_reply ? TAG_REPLY : TAG_REQUEST, team->mpi.comm, &req);
    if (rc != MPI_SUCCESS)
        return gas_mpi_check(team, rc, "MPI_Isend (AM)");
    return gas_wait_requests(team, 1, &req);
}

static void deliver(pario_gas_team *team, gas_am_hdr *hdr, unsigned char *payload) {
    if (hdr->kind == GAS_AM_LONG && (hdr->flags & GAS_AM_FLAG_EMBEDDED) && hdr->bytes)
        memcpy(team->seg_ptr[team->rank] + hdr->offset, payload, (size_t)hdr->bytes);
    gas_dispatch(team, hdr, payload);
}

static int return_credits(pario_gas_team *team, int rank) {
    gas_mpi_peer *peer = &team->mpi.peers[rank];
    gas_am_hdr hdr;
    memset(&hdr, 0, sizeof hdr);
    hdr.kind = GAS_AM_CREDIT;
    hdr.flags = GAS_AM_FLAG_REPLY;
    hdr.source = team->rank;
    hdr.credits = (uint32_t)peer->owed;
    peer->owed = 0;
    int rc = MPI_Send(&hdr, (int)sizeof hdr, MPI_BYTE, rank, TAG_REPLY, team->mpi.comm);
    return gas_mpi_check(team, rc, "MPI_Send (AM credits)");
}

/* Runs the arrived messages of one channel from one peer, in order. */
static int drain_channel(pario_gas_team *team, int rank, int tag, int *progressed) {
    gas_mpi_peer *peer = &team->mpi.peers[rank];
    unsigned *next = tag == TAG_REQUEST ? &peer->req_next : &peer->rep_next;
    MPI_Request *reqs = tag == TAG_REQUEST ? peer->req_recv : peer->rep_recv;
    unsigned char **bufs = tag == TAG_REQUEST ? peer->req_buf : peer->rep_buf;
    for (int n = 0; n < GAS_MPI_CREDITS; n++) {
        unsigned slot = *next % GAS_MPI_CREDITS;
        int flag = 0;
        int rc = MPI_Test(&reqs[slot], &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return gas_mpi_check(team, rc, "MPI_Test (AM)");
        if (!flag)
            return PARIO_OK;
        gas_am_hdr *hdr = (gas_am_hdr *)bufs[slot];
        peer->credits += (int)hdr->credits;
        if (tag == TAG_REQUEST)
            peer->owed++;
        if (hdr->kind != GAS_AM_CREDIT)
            deliver(team, hdr, bufs[slot] + sizeof *hdr);
        *progressed = 1;
        (*next)++;
        rc = post_receive(team, rank, tag, bufs[slot], &reqs[slot]);
        /* A flooding sender should not stall until the end of this poll. */
        if (rc == PARIO_OK && peer->owed >= GAS_MPI_CREDITS / 2)
            rc = return_credits(team, rank);
        if (rc != PARIO_OK)
            return rc;
    }
    return PARIO_OK;
}

int gas_mpi_poll(pario_gas_team *team, int *progressed) {
    for (int r = 0; r < team->size; r++) {
        if (team->node_index[r] >= 0)
            continue;
        int rc = drain_channel(team, r, TAG_REPLY, progressed);
        if (rc == PARIO_OK)
            rc = drain_channel(team, r, TAG_REQUEST, progressed);
        if (rc == PARIO_OK && team->mpi.peers[r].owed > 0)
            rc = return_credits(team, r);
        if (rc != PARIO_OK)
            return rc;
    }
    return PARIO_OK;
}
