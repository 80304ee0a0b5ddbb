/* Internal structures of the gas layer, shared by its source files. */
#ifndef PARIO_GAS_INTERNAL_H
#define PARIO_GAS_INTERNAL_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include "common/error.h"
#include "pario/gas.h"

/* Largest Medium payload: GASNet's minimum guarantee is 512 B, the brief asks
 * for at least 64 KiB so that one page-cache page travels in one message. */
#define GAS_MEDIUM_MAX ((size_t)64 * 1024)

/* Bytes of one node-local ring (one per ordered pair and channel). Must hold
 * a few largest Medium messages so a flood keeps the receiver busy while the
 * sender refills: 4 x (64 KiB + header). */
#define GAS_RING_BYTES ((size_t)4 * (GAS_MEDIUM_MAX + 256))

/* Requests one rank may have in flight to one off-node peer before it must
 * wait for credits. Each costs one pre-posted receive buffer of
 * GAS_MPI_MSG_MAX bytes per channel at the target (about 1 MiB per off-node
 * peer in total). 4 stalled a 32 KiB Medium flood on credit round trips; 16
 * was not measurably faster than 8. */
#define GAS_MPI_CREDITS 8

/* Polling iterations without progress before a waiting rank yields the CPU:
 * tests run more ranks than cores, and a spinning rank would starve the peer
 * it waits for. */
#define GAS_SPIN_BEFORE_YIELD 4096

/* Handler slots the layer keeps for itself at the start of every table. */
enum gas_internal_handler {
    GAS_HANDLER_ATOMIC_REQUEST = 0,
    GAS_HANDLER_ATOMIC_REPLY = 1,
    GAS_INTERNAL_HANDLERS = 2, /* user handlers start here */
};

/* Largest single MPI message the layer sends (keeps counts inside int). */
#define GAS_MAX_MPI_MSG ((size_t)1 << 30)

enum gas_am_kind {
    GAS_AM_SHORT = 1,
    GAS_AM_MEDIUM = 2,
    GAS_AM_LONG = 3,
    GAS_AM_WRAP = 4,   /* ring: skip to the start of the ring */
    GAS_AM_CREDIT = 5, /* MPI path: returns credits only */
};

/* Flags in gas_am_hdr.flags. */
enum gas_am_flag {
    GAS_AM_FLAG_REPLY = 1,    /* reply channel */
    GAS_AM_FLAG_EMBEDDED = 2, /* Long payload travels in the message */
};

/* Header of every active message, in a ring record or an MPI message. The
 * payload (Medium, embedded Long) follows it directly. */
typedef struct gas_am_hdr {
    uint32_t record;  /* ring: bytes of the whole record, 8-aligned */
    uint16_t kind;    /* enum gas_am_kind */
    uint16_t flags;   /* enum gas_am_flag */
    int32_t handler;  /* index into the team's table */
    int32_t nargs;    /* number of valid args */
    int32_t source;   /* team rank of the sender */
    uint32_t credits; /* MPI path: request credits returned to the receiver */
    uint64_t bytes;   /* payload bytes */
    uint64_t offset;  /* Long: target segment offset */
    uint64_t args[PARIO_GAS_MAX_ARGS];
} gas_am_hdr;

/* Bytes of a buffer that holds any one MPI-path message. */
#define GAS_MPI_MSG_MAX (sizeof(gas_am_hdr) + GAS_MEDIUM_MAX)

/* One single-producer single-consumer byte ring in shared memory. head and
 * tail count bytes ever consumed / produced; they live on separate cache
 * lines so producer and consumer do not share one. */
typedef struct gas_ring {
    _Atomic uint64_t tail;
    char pad0[64 - sizeof(uint64_t)];
    _Atomic uint64_t head;
    char pad1[64 - sizeof(uint64_t)];
    unsigned char data[GAS_RING_BYTES];
} gas_ring;

/* A reply that found its ring full; sent from the next poll. */
typedef struct gas_pending_reply {
    gas_am_hdr hdr;
    unsigned char *payload; /* malloc'd copy or NULL */
} gas_pending_reply;

typedef struct gas_shm {
    MPI_Win win;                 /* node-local window holding the inboxes */
    gas_ring **inbox;            /* [node rank] the peer's incoming rings:
                                    [sender node rank * 2 + channel] (the seed's
                                    command regions; tails are its per-pair
                                    message-ready flags) */
    gas_pending_reply **pending; /* [node rank] reply waiting for ring space */
    int held;                    /* number of non-NULL entries in pending */
    uint64_t *head_seen;         /* [node rank * 2 + channel] last head read of
                                    the rings this rank writes into */
} gas_shm;

/* MPI-path state for one off-node peer. */
typedef struct gas_mpi_peer {
    int credits; /* requests we may still send to it */
    int owed;    /* credits we owe it (its requests processed) */
    unsigned req_next, rep_next;
    MPI_Request req_recv[GAS_MPI_CREDITS], rep_recv[GAS_MPI_CREDITS];
    unsigned char *req_buf[GAS_MPI_CREDITS], *rep_buf[GAS_MPI_CREDITS];
} gas_mpi_peer;

typedef struct gas_mpi {
    MPI_Comm comm;            /* private communicator for AMs */
    gas_mpi_peer *peers;      /* [team rank], used for off-node ranks only */
    unsigned char *req_stage; /* staging for outgoing requests */
    unsigned char *rep_stage; /* staging for outgoing replies (in handlers) */
    int active;               /* 1 once set up */
} gas_mpi;

struct pario_gas_token {
    pario_gas_team *team;
    int source;
    int is_request;
    int replied;
    size_t offset;
    int internal; /* message for one of the layer's own handlers */
};

struct pario_gas_team {
    MPI_Comm comm;      /* duplicate of the user's communicator (public) */
    MPI_Comm coll_comm; /* collectives' traffic */
    MPI_Comm node_comm; /* node-local sub-team */
    int rank, size;
    int node_rank, node_size, nnodes;
    int *node_index;   /* [team rank] index in node_comm, or -1 off-node */
    int *node_members; /* [node rank] team rank */
    pario_error last;

    /* segments */
    int attached;
    int seg_locked;          /* lock_all epochs open on both windows */
    size_t *seg_size;        /* [team rank] */
    unsigned char **seg_ptr; /* [team rank] mapped address or NULL */
    MPI_Win seg_shm_win;     /* node-local shared allocation */
    MPI_Win seg_rma_win;     /* team-wide RMA window over the same memory */

    /* active messages */
    pario_gas_handler handlers[PARIO_GAS_MAX_HANDLERS];
    int nhandlers;
    int in_handler;    /* >0 while a handler runs */
    int internal_send; /* 1 while the layer sends to its own handlers */
    gas_shm shm;
    gas_mpi mpi;
};

/* ---- errors (team.c) ---- */
int gas_fail(pario_gas_team *team, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* PARIO_OK, or PARIO_ERR_COMM with the MPI error string naming what failed. */
int gas_mpi_check(pario_gas_team *team, int mpi_rc, const char *what);
int gas_check_rank(pario_gas_team *team, int rank);
/* PARIO_ERR_REQUEST when called from a handler. */
int gas_check_not_in_handler(pario_gas_team *team, const char *what);

/* ---- segments (segment.c) ---- */
int gas_check_range(pario_gas_team *team, int rank, size_t offset, size_t bytes);
void gas_segment_detach(pario_gas_team *team);

/* ---- progress (am.c) ---- */
/* Polls once; returns PARIO_OK or an error. *progressed set if any message ran. */
int gas_poll_once(pario_gas_team *team, int *progressed);
/* Waits for MPI requests, running handlers while waiting (plain MPI_Wait
 * inside a handler). */
int gas_wait_requests(pario_gas_team *team, int count, MPI_Request *reqs);
/* One step of a waiting loop: poll, and yield the CPU after idle spins. */
void gas_idle_step(pario_gas_team *team, int *idle);
/* Runs the handler named by hdr with the given payload pointer. */
void gas_dispatch(pario_gas_team *team, const gas_am_hdr *hdr, void *payload);
int gas_check_handler(pario_gas_team *team, int handler);

/* Short request to one of the layer's own handlers (no handler-context check). */
int gas_send_internal(pario_gas_team *team, int dest, int handler, const uint64_t *args, int nargs);

/* ---- atomics (atomic.c) ---- */
void gas_atomic_register(pario_gas_team *team);

/* ---- node-local AMs (am_shm.c) ---- */
int gas_shm_setup(pario_gas_team *team);
void gas_shm_teardown(pario_gas_team *team);
/* Sends hdr + payload to node-local rank dest. Replies that do not fit are
 * queued (bounded: one per peer, and that peer's requests wait). */
int gas_shm_send(pario_gas_team *team, int dest, gas_am_hdr *hdr, const void *payload);
int gas_shm_poll(pario_gas_team *team, int *progressed);

/* ---- between-node AMs (am_mpi.c) ---- */
int gas_mpi_setup(pario_gas_team *team);
void gas_mpi_teardown(pario_gas_team *team);
int gas_mpi_send(pario_gas_team *team, int dest, gas_am_hdr *hdr, const void *payload);
int gas_mpi_poll(pario_gas_team *team, int *progressed);

static inline size_t gas_align8(size_t n) {
    return (n + 7) & ~(size_t)7;
}

#endif
