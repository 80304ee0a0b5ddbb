/* What the opens on one communicator make once and reuse.
 *
 * A file needs a private communicator (its collective calls must not match
 * the program's) and a window for its shared file pointer; making them is
 * collective and costs more than the rest of an open (MPI_Comm_dup,
 * MPI_Win_allocate). The first open on a communicator makes them and learns
 * the node layout; a close parks them on the program's communicator (an
 * attribute), and the next open there takes them without an MPI call. Opens
 * and closes on a communicator are collective and synchronizing, so every
 * rank finds the same set parked. What waits with the communicator goes
 * with it: the kept-write window made on it (io/coll/kept.c) and the traces
 * of closed files to merge on it (io/trace). When the program frees its
 * communicator the idle kit becomes an orphan, taken by the first open on a
 * communicator of the same ranks in the same order (one per such group);
 * the rest is freed then. Orphans and parked kits still held at the start
 * of MPI_Finalize are freed there; a set deleted after that is forgotten
 * (its windows may be gone by then). The aggregator placement under a
 * cb_config_list is kept here too: it depends only on the ranks' hosts and
 * node layout.
 *
 * The keyval and the list of every set are process-wide, made once on
 * first use. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/error.h"
#include "common/node.h"
#include "io/coll/coll.h"
#include "io/file/file.h"

struct io_parked {
    struct io_parked *next; /* every set of this process, in the order made (all_parked) */
    int refs;               /* the attribute's and every open file's */
    int attached;           /* still an attribute of the communicator, and on every rank */
    int has_layout;
    int nnodes, node_rank, one_host;
    int has_idle; /* a communicator and window no file uses */
    int orphan;   /* the program freed the communicator; the kit waits for a congruent one */
    MPI_Comm idle_comm;
    MPI_Win idle_win;
    void *idle_mem;
    MPI_Comm idle_host; /* the machine's ranks of idle_comm (io/file/sync.c), if made */
    int idle_host_state;
    io_trace_pending idle_traces;     /* closed files' traces to merge on idle_comm */
    struct kept_window *idle_kept;    /* a kept-write window made on idle_comm (io/coll) */
    char place_list[IO_HINT_STR_MAX]; /* cb_config_list of the kept placement */
    int *place_ranks;
    int place_n;
};

static pthread_once_t parked_once = PTHREAD_ONCE_INIT;
static int parked_keyval = MPI_KEYVAL_INVALID;

/* Every set of this process, newest first, so that MPI_Finalize can free
 * the parked windows while MPI still works (io_parked_finalize); guarded by
 * its lock. Process-wide like the keyval. */
static struct {
    pthread_mutex_t lock;
    io_parked *head;
} all_parked = {PTHREAD_MUTEX_INITIALIZER, NULL};

static void list_add(io_parked *p) {
    pthread_mutex_lock(&all_parked.lock);
    p->next = all_parked.head;
    all_parked.head = p;
    pthread_mutex_unlock(&all_parked.lock);
}

static void list_remove(io_parked *p) {
    pthread_mutex_lock(&all_parked.lock);
    io_parked **at = &all_parked.head;
    while (*at && *at != p)
        at = &(*at)->next;
    if (*at)
        *at = p->next;
    pthread_mutex_unlock(&all_parked.lock);
}

/* Frees a file's communicator, shared-pointer window and machine
 * communicator (collective). */
static void kit_free(MPI_Comm *comm, MPI_Win *win, void **mem, MPI_Comm *host, int *host_state) {
    pario_file tmp = {.shared_win = *win, .shared_mem = *mem, .shared_fd = -1};
    io_shared_free(&tmp);
    *win = MPI_WIN_NULL;
    *mem = NULL;
    if (*host_state == 1)
        MPI_Comm_free(host);
    *host_state = 0;
    if (*comm != MPI_COMM_NULL)
        MPI_Comm_free(comm);
}

static void idle_free(io_parked *p) {
    io_trace_flush(&p->idle_traces, p->idle_comm);
    io_coll_kept_window_free(p->idle_kept);
    p->idle_kept = NULL;
    kit_free(&p->idle_comm, &p->idle_win, &p->idle_mem, &p->idle_host, &p->idle_host_state);
}

static void parked_release(io_parked *p) {
    if (p && --p->refs == 0) {
        list_remove(p);
        free(p->place_ranks);
        free(p);
    }
}

static io_parked *orphan_congruent(MPI_Comm comm);

/* The program frees the communicator (collective over its group). Its idle
 * kit is kept as an orphan for the next communicator of the same ranks in
 * the same order, unless one is kept already: HDF5 duplicates the
 * program's communicator at every file open and frees it at close, so a
 * kit kept per communicator alone would be made and freed for every file. */
static int parked_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
    (void)comm;
    (void)keyval;
    (void)extra;
    io_parked *p = value;
    p->attached = 0;
    if (p->has_idle && !io_files_finalizing()) {
        if (!orphan_congruent(p->idle_comm)) {
            p->orphan = 1; /* keeps the attribute's reference */
            return MPI_SUCCESS;
        }
        idle_free(p);
    }
    p->has_idle = 0;
    parked_release(p);
    return MPI_SUCCESS;
}

static void parked_keyval_create(void) {
    if (!io_files_watch_finalize())
        return; /* MPI_Finalize would not tell: park nothing */
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, parked_delete, &parked_keyval, NULL);
}

/* The set of comm, made (empty) on first use; NULL when it cannot be. */
static io_parked *parked_of(MPI_Comm comm) {
    pthread_once(&parked_once, parked_keyval_create);
    if (parked_keyval == MPI_KEYVAL_INVALID)
        return NULL;
    io_parked *p = NULL;
    int found = 0;
    if (MPI_Comm_get_attr(comm, parked_keyval, &p, &found) != MPI_SUCCESS)
        return NULL;
    if (found)
        return p;
    p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->refs = p->attached = 1;
    p->idle_comm = MPI_COMM_NULL;
    p->idle_win = MPI_WIN_NULL;
    p->idle_host = MPI_COMM_NULL;
    if (MPI_Comm_set_attr(comm, parked_keyval, p) != MPI_SUCCESS) {
        free(p);
        return NULL;
    }
    list_add(p);
    return p;
}

/* The oldest set still holding a parked communicator and window. */
static io_parked *oldest_idle(void) {
    io_parked *found = NULL;
    pthread_mutex_lock(&all_parked.lock);
    for (io_parked *p = all_parked.head; p; p = p->next)
        if (p->has_idle)
            found = p;
    pthread_mutex_unlock(&all_parked.lock);
    return found;
}

/* The oldest orphaned kit whose communicator has comm's ranks in comm's
 * order (MPI_Comm_compare is local). Orphans of one group are made and
 * taken only inside collective calls over that group (its communicators'
 * frees and opens), so every rank of it finds the same one. */
static io_parked *orphan_congruent(MPI_Comm comm) {
    io_parked *found = NULL;
    pthread_mutex_lock(&all_parked.lock);
    for (io_parked *p = all_parked.head; p; p = p->next) {
        int same = MPI_UNEQUAL;
        if (p->orphan && p->has_idle &&
            MPI_Comm_compare(comm, p->idle_comm, &same) == MPI_SUCCESS && same == MPI_CONGRUENT)
            found = p; /* the list is newest first: the last found is the oldest */
    }
    pthread_mutex_unlock(&all_parked.lock);
    return found;
}

void io_parked_finalize(void) {
    /* Collective, like MPI_Finalize itself, which every rank is in: the
     * sets were made in the same order on every rank of a communicator,
     * so the oldest first is the same order everywhere. A window MPI still
     * holds at MPI_Finalize makes MPICH's UCX abort. */
    for (io_parked *p = oldest_idle(); p; p = oldest_idle()) {
        idle_free(p);
        p->has_idle = 0;
        p->attached = 0;
    }
}

/* The shared-memory nodes comm spans, and this rank's index on its node
 * (PARIO_NODE_SIZE may cut a machine into several: common/node.h). */
static void node_layout(pario_file *fh) {
    MPI_Comm node;
    int leader = 0;
    int host_ranks = 0;
    fh->nnodes = 1;
    fh->node_rank = fh->rank;
    fh->one_host = 0;
    if (pario_node_comm_host(fh->comm, &node, &host_ranks) != MPI_SUCCESS)
        return;
    fh->one_host = host_ranks == fh->nranks;
    MPI_Comm_rank(node, &fh->node_rank);
    leader = fh->node_rank == 0;
    MPI_Allreduce(&leader, &fh->nnodes, 1, MPI_INT, MPI_SUM, fh->comm);
    MPI_Comm_free(&node);
}

static void kit_take(pario_file *fh, io_parked *from);

/* fh's node layout, kept in p for the next opens on its communicator. */
static void keep_layout(io_parked *p, const pario_file *fh) {
    p->has_layout = 1;
    p->nnodes = fh->nnodes;
    p->node_rank = fh->node_rank;
    p->one_host = fh->one_host;
}

/* Collective: whether every rank has an orphaned kit for comm's ranks (one
 * allreduce, which also marks every rank's set unattached when some rank
 * has none); the orphan into fh when so. */
static int orphan_adopt(pario_file *fh, MPI_Comm comm, io_parked *p, int *rc, pario_error *err) {
    io_parked *o = orphan_congruent(comm);
    io_vote v = {.nany = 2, .any = {!p || !p->attached, o == NULL}};
    *rc = io_agree_vote(comm, *rc, &v, err);
    if (p && v.any[0])
        p->attached = 0;
    if (*rc != PARIO_OK || v.any[1])
        return 0;
    kit_take(fh, o);
    if (p && p->attached) { /* the layout and placement hold for the same ranks */
        keep_layout(p, fh);
        free(p->place_ranks);
        p->place_ranks = o->place_ranks;
        p->place_n = o->place_n;
        memcpy(p->place_list, o->place_list, sizeof p->place_list);
        o->place_ranks = NULL;
    }
    o->orphan = 0;
    parked_release(o);
    return 1;
}

/* Collective: fh's kit, an orphan's when every rank has one for comm's
 * ranks, else a new communicator, node layout and window. A rank without a
 * set (no memory for it) makes every rank's set unattached (orphan_adopt's
 * vote), so no rank parks what another would free. */
static int kit_make(pario_file *fh, MPI_Comm comm, io_parked *p, int rc, pario_error *err) {
    if (orphan_adopt(fh, comm, p, &rc, err) || rc != PARIO_OK)
        return rc;
    if (MPI_Comm_dup(comm, &fh->comm) != MPI_SUCCESS) {
        fh->comm = MPI_COMM_NULL;
        if (rc == PARIO_OK)
            rc = pario_fail(err, PARIO_ERR_NO_MEM, "open %s: cannot set up the file", fh->path);
    }
    rc = io_agree(comm, rc, err);
    if (rc != PARIO_OK)
        return rc;
    MPI_Comm_set_errhandler(fh->comm, MPI_ERRORS_RETURN);
    if (p && p->has_layout) {
        fh->nnodes = p->nnodes;
        fh->node_rank = p->node_rank;
        fh->one_host = p->one_host;
    } else {
        node_layout(fh);
    }
    if (p)
        keep_layout(p, fh);
    return io_shared_create(fh, err);
}

int io_parked_take(pario_file *fh, MPI_Comm comm, int rc, pario_error *err) {
    io_parked *p = parked_of(comm);
    fh->parked = p;
    if (p)
        p->refs++;
    if (!p || !p->attached || !p->has_idle)
        return kit_make(fh, comm, p, rc, err);
    kit_take(fh, p);
    return PARIO_OK;
}

/* The idle kit of `from` into fh (no MPI call). */
static void kit_take(pario_file *fh, io_parked *from) {
    fh->comm = from->idle_comm;
    fh->shared_win = from->idle_win;
    fh->shared_mem = from->idle_mem;
    fh->sync_host = from->idle_host;
    fh->sync_host_state = from->idle_host_state;
    fh->trace_pending = from->idle_traces;
    from->idle_traces.n = 0;
    fh->kept_idle = from->idle_kept;
    from->idle_kept = NULL;
    fh->nnodes = from->nnodes;
    fh->node_rank = from->node_rank;
    fh->one_host = from->one_host;
    from->has_idle = 0;
    from->idle_comm = MPI_COMM_NULL;
    from->idle_win = MPI_WIN_NULL;
    from->idle_mem = NULL;
    from->idle_host = MPI_COMM_NULL;
    from->idle_host_state = 0;
}

void io_parked_give(pario_file *fh) {
    io_parked *p = fh->parked;
    if (p && p->attached && !p->has_idle && fh->comm != MPI_COMM_NULL &&
        fh->shared_win != MPI_WIN_NULL) {
        p->idle_comm = fh->comm;
        p->idle_win = fh->shared_win;
        p->idle_mem = fh->shared_mem;
        p->idle_host = fh->sync_host;
        p->idle_host_state = fh->sync_host_state;
        p->idle_traces = fh->trace_pending;
        fh->trace_pending.n = 0;
        p->idle_kept = fh->kept_idle;
        fh->kept_idle = NULL;
        p->has_idle = 1;
        fh->comm = MPI_COMM_NULL;
        fh->shared_win = MPI_WIN_NULL;
        fh->shared_mem = NULL;
        fh->sync_host = MPI_COMM_NULL;
        fh->sync_host_state = 0;
    } else {
        if (fh->comm != MPI_COMM_NULL)
            io_trace_flush(&fh->trace_pending, fh->comm);
        io_coll_kept_window_free(fh->kept_idle);
        fh->kept_idle = NULL;
        io_shared_free(fh); /* a side file too, which no kit keeps */
        kit_free(&fh->comm, &fh->shared_win, &fh->shared_mem, &fh->sync_host, &fh->sync_host_state);
    }
    parked_release(p);
    fh->parked = NULL;
}

const int *io_parked_placement(const pario_file *fh, const char *list, int *n) {
    const io_parked *p = fh->parked;
    if (!p || !p->attached || !p->place_ranks || strcmp(p->place_list, list) != 0)
        return NULL;
    *n = p->place_n;
    return p->place_ranks;
}

void io_parked_keep_placement(pario_file *fh, const char *list, const int *ranks, int n) {
    io_parked *p = fh->parked;
    if (!p || !p->attached)
        return;
    int *copy = malloc((size_t)(n > 0 ? n : 1) * sizeof *copy);
    if (!copy)
        return;
    memcpy(copy, ranks, (size_t)n * sizeof *copy);
    free(p->place_ranks);
    p->place_ranks = copy;
    p->place_n = n;
    snprintf(p->place_list, sizeof p->place_list, "%s", list);
}
