/* Node-local active messages through per-pair rings in shared memory.
 *
 * Every rank owns an inbox in a node-shared window: for every node-local
 * sender, one request ring and one reply ring.
 * Each ring has a single producer (the sender) and a single consumer (the
 * owner). A message is one contiguous record: header, then the Medium
 * payload. The producer writes the record, then publishes it by a release
 * store of the ring's tail; the consumer reads the tail with acquire, runs
 * the handler on the record in place (so a Medium payload is read straight
 * from the ring) and releases the space by a release store of the head. A
 * record that does not fit before the end of the ring is preceded by a WRAP
 * marker and placed at the start.
 *
 * The seed's conduit also had a "message exists" flag per receiver so that
 * polling did not scan every pair's flag over the network. Here an idle scan
 * of the tails reads lines that stay in the local cache, while the flag cost
 * two more cache-line transfers per message: measured, dropping it took the
 * Short round trip from about 1.05x to about 0.65x of MPI's ping-pong.
 *
 * Flow control: a request waits (polling) while its ring is full. A reply
 * never waits, because a handler may not block: if the reply ring is full the
 * reply is copied aside and the owner stops taking requests from that peer
 * until the copy has been sent, so at most one reply per peer is held. */
#include "gas/gas_internal.h"

#include <stdlib.h>
#include <string.h>

enum { CHAN_REQUEST = 0, CHAN_REPLY = 1 };

static gas_ring *ring_of(gas_ring *inbox, int sender, int chan) {
    return &inbox[sender * 2 + chan];
}

static size_t header_bytes(const gas_am_hdr *hdr) {
    return offsetof(gas_am_hdr, args) + sizeof(uint64_t) * (size_t)hdr->nargs;
}

static void init_inbox(gas_ring *inbox, int senders) {
    for (int i = 0; i < senders * 2; i++) {
        atomic_init(&inbox[i].tail, 0);
        atomic_init(&inbox[i].head, 0);
    }
}

int gas_shm_setup(pario_gas_team *team) {
    gas_shm *shm = &team->shm;
    if (team->node_size < 1)
        return gas_fail(team, PARIO_ERR_INTERN, "gas: empty node (%d ranks)", team->node_size);
    size_t peers = (size_t)team->node_size;
    size_t bytes = sizeof(gas_ring) * 2 * peers;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    gas_ring *mine = NULL;
    int rc = MPI_Win_allocate_shared((MPI_Aint)bytes, 1, info, team->node_comm, &mine, &shm->win);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS)
        return gas_mpi_check(team, rc, "MPI_Win_allocate_shared (AM rings)");
    init_inbox(mine, team->node_size);
    shm->inbox = calloc(peers, sizeof *shm->inbox);
    shm->pending = calloc(peers, sizeof *shm->pending);
    shm->head_seen = calloc(peers * 2, sizeof *shm->head_seen);
    if (!shm->inbox || !shm->pending || !shm->head_seen)
        return gas_fail(team, PARIO_ERR_NO_MEM, "gas: out of memory for AM rings");
    for (int i = 0; i < team->node_size; i++) {
        MPI_Aint size = 0;
        int disp = 1;
        rc = MPI_Win_shared_query(shm->win, i, &size, &disp, &shm->inbox[i]);
        if (rc != MPI_SUCCESS)
            return gas_mpi_check(team, rc, "MPI_Win_shared_query (AM rings)");
    }
    /* No peer may write into an inbox before its owner has initialised it. */
    return gas_mpi_check(team, MPI_Barrier(team->node_comm), "MPI_Barrier (AM rings)");
}

void gas_shm_teardown(pario_gas_team *team) {
    gas_shm *shm = &team->shm;
    if (shm->pending) {
        for (int i = 0; i < team->node_size; i++) {
            if (shm->pending[i])
                free(shm->pending[i]->payload);
            free(shm->pending[i]);
        }
    }
    free(shm->pending);
    free(shm->inbox);
    free(shm->head_seen);
    shm->head_seen = NULL;
    shm->pending = NULL;
    shm->inbox = NULL;
    if (shm->win != MPI_WIN_NULL)
        MPI_Win_free(&shm->win);
}

/* Appends one record; 0 when the ring has no room for it now. *head_seen is
 * the producer's private copy of the consumer's head: the shared head (a
 * cache line the consumer writes) is read only when the copy says "full". */
static int ring_try_push(gas_ring *ring, uint64_t *head_seen, const gas_am_hdr *hdr,
                         const void *payload, size_t plen) {
    size_t hlen = header_bytes(hdr);
    size_t rec = gas_align8(sizeof(gas_am_hdr) + plen);
    uint64_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    size_t pos = (size_t)(tail % GAS_RING_BYTES);
    size_t skip = pos + rec > GAS_RING_BYTES ? GAS_RING_BYTES - pos : 0;
    if ((size_t)(tail - *head_seen) + skip + rec > GAS_RING_BYTES) {
        *head_seen = atomic_load_explicit(&ring->head, memory_order_acquire);
        if ((size_t)(tail - *head_seen) + skip + rec > GAS_RING_BYTES)
            return 0;
    }
    if (skip) {
        gas_am_hdr *wrap = (gas_am_hdr *)(ring->data + pos);
        wrap->record = (uint32_t)skip;
        wrap->kind = GAS_AM_WRAP;
        pos = 0;
    }
    gas_am_hdr *slot = (gas_am_hdr *)(ring->data + pos);
    memcpy(slot, hdr, hlen);
    slot->record = (uint32_t)rec;
    if (plen)
        memcpy(ring->data + pos + sizeof(gas_am_hdr), payload, plen);
    atomic_store_explicit(&ring->tail, tail + skip + rec, memory_order_release);
    return 1;
}

/* Keeps a reply that found its ring full until the next poll. */
static int hold_reply(pario_gas_team *team, int peer, const gas_am_hdr *hdr, const void *payload,
                      size_t plen) {
    gas_pending_reply *p = calloc(1, sizeof *p);
    if (!p)
        return gas_fail(team, PARIO_ERR_NO_MEM, "gas: out of memory for a held reply");
    p->hdr = *hdr;
    if (plen) {
        p->payload = malloc(plen);
        if (!p->payload) {
            free(p);
            return gas_fail(team, PARIO_ERR_NO_MEM, "gas: out of memory for a held reply");
        }
        memcpy(p->payload, payload, plen);
    }
    team->shm.pending[peer] = p;
    team->shm.held++;
    return PARIO_OK;
}

int gas_shm_send(pario_gas_team *team, int dest, gas_am_hdr *hdr, const void *payload) {
    int peer = team->node_index[dest];
    int is_reply = (hdr->flags & GAS_AM_FLAG_REPLY) != 0;
    gas_ring *inbox = team->shm.inbox[peer];
    int chan = is_reply ? CHAN_REPLY : CHAN_REQUEST;
    gas_ring *ring = ring_of(inbox, team->node_rank, chan);
    uint64_t *head_seen = &team->shm.head_seen[peer * 2 + chan];
    size_t plen = payload ? (size_t)hdr->bytes : 0;
    if (is_reply) {
        if (ring_try_push(ring, head_seen, hdr, payload, plen))
            return PARIO_OK;
        return hold_reply(team, peer, hdr, payload, plen);
    }
    int idle = 0;
    while (!ring_try_push(ring, head_seen, hdr, payload, plen))
        gas_idle_step(team, &idle);
    return PARIO_OK;
}

/* Sends held replies whose rings have room now. */
static void flush_held_replies(pario_gas_team *team, int *progressed) {
    gas_shm *shm = &team->shm;
    for (int peer = 0; peer < team->node_size; peer++) {
        gas_pending_reply *p = shm->pending[peer];
        if (!p)
            continue;
        gas_ring *inbox = shm->inbox[peer];
        gas_ring *ring = ring_of(inbox, team->node_rank, CHAN_REPLY);
        size_t plen = p->payload ? (size_t)p->hdr.bytes : 0;
        if (!ring_try_push(ring, &shm->head_seen[peer * 2 + CHAN_REPLY], &p->hdr, p->payload,
                           plen)) {
            continue; /* requests from this peer wait in their ring */
        }
        free(p->payload);
        free(p);
        shm->pending[peer] = NULL;
        shm->held--;
        *progressed = 1;
    }
}

/* Runs the messages present in one ring. Requests stop early when the peer's
 * reply channel is blocked (they stay in the ring for a later poll). */
static void drain_ring(pario_gas_team *team, gas_ring *ring, int peer, int chan, int *progressed) {
    uint64_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
    while (head != tail) {
        if (chan == CHAN_REQUEST && team->shm.pending[peer])
            return;
        size_t pos = (size_t)(head % GAS_RING_BYTES);
        gas_am_hdr *hdr = (gas_am_hdr *)(ring->data + pos);
        if (hdr->kind != GAS_AM_WRAP) {
            gas_dispatch(team, hdr, ring->data + pos + sizeof(gas_am_hdr));
            *progressed = 1;
        }
        head += hdr->record;
        atomic_store_explicit(&ring->head, head, memory_order_release);
    }
}

int gas_shm_poll(pario_gas_team *team, int *progressed) {
    gas_shm *shm = &team->shm;
    if (shm->held)
        flush_held_replies(team, progressed);
    gas_ring *mine = shm->inbox[team->node_rank];
    for (int peer = 0; peer < team->node_size; peer++) {
        drain_ring(team, ring_of(mine, peer, CHAN_REPLY), peer, CHAN_REPLY, progressed);
        drain_ring(team, ring_of(mine, peer, CHAN_REQUEST), peer, CHAN_REQUEST, progressed);
    }
    return PARIO_OK;
}
