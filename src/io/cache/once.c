/* Reading once per node: a read-only file that many processes of a node
 * read whole is read from storage once, by those of them reading, into a
 * shared-memory window of the node (MPI_Win_allocate_shared over the node's
 * processes, common/node.h); every read on the node is then a copy from it.
 * The copy is loaded piece by piece as reads ask for it, not at open, so a
 * file opened and not read costs no read. Reads make no MPI call, so
 * background threads (nonblocking access, pipelined two-phase reads) use it
 * too. */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "common/error.h"
#include "common/node.h"
#include "io/cache/cache.h"

/* The file is loaded in pieces of this many bytes, on demand: a read loads
 * the pieces it covers that nobody of its node has claimed, so a file read
 * in calls is loaded call by call, and a part never asked for is never
 * read. When the processes of a node read the same range at once, they
 * claim its pieces one at a time: each byte is still read once per node,
 * in as many parallel streams as the node has readers. On the GlusterFS
 * test bed one stream read about 8 MiB/s (every request a round trip), so
 * a node's copy loaded by one process alone took longer than every process
 * reading the whole file itself. */
#define ONCE_PIECE ((int64_t)1 << 20)
/* A process that waits for a piece another one of its node is loading reads
 * ahead meanwhile, at most this many pieces past its own range: where the
 * node's processes all read the file in calls of a piece or less (a
 * program reading its input in 1 MiB records), one of them loads the piece
 * of the call and the others the next ones, instead of one stream per node
 * and call (hpcx readsame-calls on the test bed, 2 x 4 ranks: 637-772 MiB/s
 * against 358-476 without). */
#define ONCE_AHEAD 8
/* Where the pieces' states start in the node's window: past the head. */
#define ONCE_STATES_AT 1024
/* The file's bytes start page-aligned past the states. */
#define ONCE_ALIGN 4096

enum { ONCE_OK, ONCE_FAILING, ONCE_FAILED };
enum { PIECE_FREE, PIECE_LOADING, PIECE_LOADED, PIECE_FAILED };

/* The start of the node's window. */
typedef struct once_head {
    _Atomic int failed;  /* ONCE_FAILING while the first failure is being recorded */
    pario_error failure; /* why a piece could not be loaded (ONCE_FAILED) */
} once_head;
_Static_assert(sizeof(once_head) <= ONCE_STATES_AT, "the head fits before the states");

typedef struct once_layer {
    MPI_Comm node;
    MPI_Win win;
    once_head *head;               /* in the node leader's memory */
    _Atomic unsigned char *states; /* one per piece, PIECE_* */
    char *data;
    int64_t size;   /* the file's size at open */
    int64_t pieces; /* ONCE_PIECE pieces of it */
} once_layer;

static once_layer *layer_of(io_handle *h) {
    return (once_layer *)h->layer;
}

/* Where the file's bytes start in a window for this many pieces. */
static int64_t data_at(int64_t pieces) {
    return (ONCE_STATES_AT + pieces + ONCE_ALIGN - 1) / ONCE_ALIGN * ONCE_ALIGN;
}

/* The first failure goes to the head, for every reader of the node. */
static void failure_record(once_layer *o, const pario_error *e) {
    int ok = ONCE_OK;
    if (atomic_compare_exchange_strong(&o->head->failed, &ok, ONCE_FAILING)) {
        o->head->failure = *e;
        atomic_store_explicit(&o->head->failed, ONCE_FAILED, memory_order_release);
    }
}

/* Read one piece into the node's window. */
static void piece_load(io_handle *h, once_layer *o, int64_t piece) {
    int64_t at = piece * ONCE_PIECE, end = at + ONCE_PIECE < o->size ? at + ONCE_PIECE : o->size;
    pario_error e;
    int rc = PARIO_OK;
    while (at < end && rc == PARIO_OK) {
        int64_t got = 0;
        rc = h->below->pread(h, o->data + at, end - at, at, &got, &e);
        if (rc == PARIO_OK && got == 0) /* shorter now than at open: the rest reads as zeros */
            memset(o->data + at, 0, (size_t)(end - at));
        at = got == 0 ? end : at + got;
    }
    if (rc != PARIO_OK)
        failure_record(o, &e);
    atomic_store_explicit(&o->states[piece], rc == PARIO_OK ? PIECE_LOADED : PIECE_FAILED,
                          memory_order_release);
}

/* Loads the piece if nobody of the node has claimed it. */
static void piece_claim_load(io_handle *h, once_layer *o, int64_t piece) {
    unsigned char free_state = PIECE_FREE;
    if (atomic_load_explicit(&o->states[piece], memory_order_relaxed) == PIECE_FREE &&
        atomic_compare_exchange_strong(&o->states[piece], &free_state, PIECE_LOADING))
        piece_load(h, o, piece);
}

/* Waits for a piece another process is loading, reading ahead from *ahead
 * (up to ahead_end) meanwhile; whether it loaded. */
static int piece_wait(io_handle *h, once_layer *o, int64_t piece, int64_t *ahead,
                      int64_t ahead_end) {
    unsigned char state;
    while ((state = atomic_load_explicit(&o->states[piece], memory_order_acquire)) ==
           PIECE_LOADING) {
        if (*ahead < ahead_end)
            piece_claim_load(h, o, (*ahead)++);
        else
            sched_yield();
    }
    return state == PIECE_LOADED;
}

/* The node's copy holds [first, last] pieces when this returns PARIO_OK:
 * this process loads those nobody has claimed yet, then waits for the
 * others'. */
static int pieces_ready(io_handle *h, int64_t first, int64_t last, pario_error *err) {
    once_layer *o = layer_of(h);
    for (int64_t p = first; p <= last; p++)
        piece_claim_load(h, o, p);
    int64_t ahead = last + 1, ahead_end = last + 1 + ONCE_AHEAD;
    if (ahead_end > o->pieces)
        ahead_end = o->pieces;
    int loaded = 1;
    for (int64_t p = first; p <= last && loaded; p++)
        loaded = piece_wait(h, o, p, &ahead, ahead_end);
    if (loaded)
        return PARIO_OK;
    while (atomic_load_explicit(&o->head->failed, memory_order_acquire) == ONCE_FAILING)
        sched_yield();
    return pario_fail(err, o->head->failure.code,
                      "read %s: the node's one read of the file failed: %.400s", h->path,
                      o->head->failure.msg);
}

static int once_pread(io_handle *h, void *buf, int64_t len, int64_t off, int64_t *done,
                      pario_error *err) {
    once_layer *o = layer_of(h);
    *done = 0;
    if (off >= o->size || len <= 0)
        return PARIO_OK;
    if (len > o->size - off)
        len = o->size - off;
    int rc = pieces_ready(h, off / ONCE_PIECE, (off + len - 1) / ONCE_PIECE, err);
    if (rc != PARIO_OK)
        return rc;
    memcpy(buf, o->data + off, (size_t)len);
    *done = len;
    return PARIO_OK;
}

static int refused(io_handle *h, pario_error *err) {
    return pario_fail(err, PARIO_ERR_READ_ONLY, "%s: the file is open read-only", h->path);
}

static int once_pwrite(io_handle *h, const void *buf, int64_t len, int64_t off, pario_error *err) {
    (void)buf;
    (void)len;
    (void)off;
    return refused(h, err);
}

static int once_pwritev(io_handle *h, const struct iovec *iov, int iovcnt, int64_t off,
                        pario_error *err) {
    (void)iov;
    (void)iovcnt;
    (void)off;
    return refused(h, err);
}

static int once_resize(io_handle *h, int64_t size, pario_error *err) {
    (void)size;
    return refused(h, err);
}

static int once_sync(io_handle *h, pario_error *err) {
    return h->below->sync(h, err);
}

static int once_get_size(io_handle *h, int64_t *size, pario_error *err) {
    (void)err;
    *size = layer_of(h)->size;
    return PARIO_OK;
}

static void layer_free(once_layer *o) {
    if (o->win != MPI_WIN_NULL)
        MPI_Win_free(&o->win);
    if (o->node != MPI_COMM_NULL)
        MPI_Comm_free(&o->node);
    free(o);
}

/* Collective (close is). */
static int once_close(io_handle *h, pario_error *err) {
    layer_free(layer_of(h));
    h->layer = NULL;
    h->drv = h->below;
    h->below = NULL;
    return h->drv->close(h, err);
}

const io_driver io_driver_once = {
    .name = "once",
    .open = io_below_open,
    .close = once_close,
    .pread = once_pread,
    .pwrite = once_pwrite,
    .pwritev = once_pwritev,
    .sync = once_sync,
    .get_size = once_get_size,
    .set_size = once_resize,
    .preallocate = once_resize,
    .lock = io_below_lock,
    .unlock = io_below_unlock,
    .drop_cached = io_below_drop_cached,
    .flush = io_below_flush,
    .remove = io_below_remove,
    .block_size = io_below_block_size,
};

/* The node's leader learns the file's size; every process of the node gets
 * it (-1: the size is unknown, read as usual). */
static int64_t node_file_size(io_handle *h, MPI_Comm node) {
    int rank = 0;
    int64_t size = -1;
    pario_error e;
    MPI_Comm_rank(node, &rank);
    if (rank == 0 && h->drv->get_size(h, &size, &e) != PARIO_OK)
        size = -1;
    MPI_Bcast(&size, 1, MPI_INT64_T, 0, node);
    return size;
}

/* The node's window: head, pieces' states and file on the leader, nothing
 * elsewhere. */
static int window_make(once_layer *o) {
    int rank = 0, unit = 0;
    MPI_Aint bytes = 0;
    MPI_Comm_rank(o->node, &rank);
    int64_t at = data_at(o->pieces);
    MPI_Aint mine = rank == 0 ? (MPI_Aint)(at + o->size) : 0;
    char *base = NULL;
    if (MPI_Win_allocate_shared(mine, 1, MPI_INFO_NULL, o->node, &base, &o->win) != MPI_SUCCESS) {
        o->win = MPI_WIN_NULL;
        return 0;
    }
    MPI_Win_shared_query(o->win, 0, &bytes, &unit, &base);
    o->head = (once_head *)base;
    o->states = (_Atomic unsigned char *)(base + ONCE_STATES_AT);
    o->data = base + at;
    if (rank == 0) {
        atomic_init(&o->head->failed, ONCE_OK);
        pario_error_clear(&o->head->failure);
        for (int64_t p = 0; p < o->pieces; p++)
            atomic_init(&o->states[p], PIECE_FREE);
    }
    return 1;
}

/* Whether ranks asking for `span` bytes in common (< 0: the hint asks) make
 * a node's copy worth its window: a piece or more, or half of a smaller
 * file. A few bytes all ranks read (a header) are no sign that the rest of
 * the file is read by every rank too. */
static int span_worth_it(int64_t span, int64_t size) {
    return span < 0 || span >= ONCE_PIECE || span >= size / 2;
}

int io_cache_attach_once(io_handle *h, MPI_Comm comm, const io_hints *hints, int64_t span) {
    once_layer *o = calloc(1, sizeof *o);
    int ok = o != NULL;
    if (o) {
        o->win = MPI_WIN_NULL;
        ok = pario_node_comm(comm, &o->node) == MPI_SUCCESS;
        if (!ok)
            o->node = MPI_COMM_NULL;
    }
    if (ok) {
        o->size = node_file_size(h, o->node);
        o->pieces = (o->size + ONCE_PIECE - 1) / ONCE_PIECE;
        ok = o->size >= 0 && o->size <= hints->read_once_max && span_worth_it(span, o->size) &&
             window_make(o);
    }
    int all = 0; /* the same on every process: a file read once everywhere or nowhere */
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, comm);
    if (o && o->win != MPI_WIN_NULL)
        MPI_Barrier(o->node); /* the head is set before anyone looks */
    if (!all) {
        if (o)
            layer_free(o);
        return PARIO_OK; /* read as usual: the hint is advice */
    }
    h->below = h->drv;
    h->drv = &io_driver_once;
    h->layer = o;
    return PARIO_OK;
}

int io_cache_once_on(const io_handle *h) {
    return h->drv == &io_driver_once;
}

int io_cache_wanted(const io_hints *hints, int amode) {
    return ((amode & MPI_MODE_RDONLY) && hints->read_once == IO_ENABLE) ||
           hints->cache == IO_ENABLE;
}

int io_cache_attach(io_handle *h, MPI_Comm comm, const io_hints *hints, int amode,
                    pario_error *err) {
    if ((amode & MPI_MODE_RDONLY) && hints->read_once == IO_ENABLE)
        return io_cache_attach_once(h, comm, hints, -1);
    if (hints->cache == IO_ENABLE)
        return io_cache_attach_global(h, comm, hints, err);
    return PARIO_OK;
}
