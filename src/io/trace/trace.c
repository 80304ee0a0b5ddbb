/* Recording a file's trace on one rank (see trace.h).
 *
 * Registry (process-wide, the folder's own): io_trace_open_files counts the
 * traced files open in this process, so a storage call of an untraced
 * program tests one counter; by_fd maps a descriptor of a traced file to its
 * trace, since the storage calls know only the descriptor. A slot is set
 * at open before the file is used and cleared at close after its last
 * call (background threads have been joined by then). Each trace has its
 * own lock (trace_internal.h): the program's thread, the nonblocking
 * thread, the pipelined two-phase thread and the kept-write flusher may
 * record at once.
 * in_call (one per thread) is the traced blocking call the thread is in, set
 * by io_trace_begin and put back by io_trace_call: the storage call it makes
 * hands its first plain request to it rather than taking the lock, and the
 * call records both under the lock once. */
#include "io/trace/trace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "io/cache/cache.h"
#include "io/coll/coll.h"
#include "io/file/file.h"
#include "io/indep/rw.h"
#include "io/trace/trace_internal.h"

atomic_int io_trace_open_files;
static _Atomic(io_trace *) by_fd[IO_TRACE_FDS];
static _Thread_local io_trace_inflight *in_call;

/* The trace of a rank that could not allocate its own: it still waits and
 * takes part in the merge (the ranks' collective calls must match), with
 * an empty record. Nothing records into it (no event buffer). */
static io_trace lost = {.lock = ATOMIC_FLAG_INIT};

/* A request is well-formed at this size when it starts and ends on it. */
#define IO_TRACE_PAGE 4096

/* The trace's document path asked for on this rank, or NULL. */
static const char *wanted_path(MPI_Info info, char *buf, int len) {
    const char *env = getenv("PARIO_TRACE");
    if (env && *env)
        return env;
    env = getenv("PARIO_HINT_pario_trace");
    if (env && *env)
        return env;
    int flag = 0;
    if (info != MPI_INFO_NULL &&
        MPI_Info_get(info, "pario_trace", len - 1, buf, &flag) == MPI_SUCCESS && flag && *buf)
        return buf;
    return NULL;
}

static void stat_reset(io_trace_stat *s) {
    memset(s, 0, sizeof *s);
    s->first = -1;
}

static io_trace *trace_new(const pario_file *fh, const char *path) {
    io_trace *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->cap = IO_TRACE_EVENTS_FIRST; /* a small file's log stays small */
    t->events = malloc((size_t)t->cap * sizeof *t->events);
    t->doc_path = strdup(path);
    t->facts.path = strdup(fh->path);
    if (!t->events || !t->doc_path || !t->facts.path) {
        free(t->events);
        free(t->doc_path);
        free(t->facts.path);
        free(t);
        return NULL;
    }
    atomic_flag_clear(&t->lock);
    for (int d = 0; d < 2; d++)
        stat_reset(&t->rec.logical[d]);
    for (int o = 0; o < IO_TRACE_PHYS_OPS; o++)
        stat_reset(&t->rec.phys[o]);
    t->unit = fh->hints.striping_unit > 0 ? fh->hints.striping_unit : IO_TRACE_PAGE;
    t->unit_mask = (t->unit & (t->unit - 1)) == 0 ? t->unit - 1 : -1;
    t->rec.t_open = io_trace_now();
    return t;
}

static void trace_free(io_trace *t) {
    if (t == &lost)
        return;
    free(t->events);
    free(t->doc_path);
    free(t->facts.path);
    free(t);
}

/* What fh's entry says of the file besides the records, into t. */
static void facts_take(io_trace *t, const pario_file *fh) {
    io_trace_facts *f = &t->facts;
    const io_hints *h = &fh->hints;
    f->nnodes = fh->nnodes;
    f->read_only = (fh->amode & MPI_MODE_RDONLY) != 0;
    f->request_bound_reads = fh->request_bound_reads;
    f->read_once = io_cache_once_on(&fh->io);
    if (io_coll_routes_text(fh, f->routes, sizeof f->routes) != PARIO_OK)
        f->routes[0] = '\0';
    f->cb_buffer_size = h->cb_buffer_size;
    f->cb_nodes = h->cb_nodes;
    f->cb_cycle_size = io_coll_cycle_size(fh);
    f->ind_wr_buffer_size = h->ind_wr_buffer_size;
    f->ind_rd_buffer_size = h->ind_rd_buffer_size;
    f->striping_unit = h->striping_unit;
}

void io_trace_wish(pario_file *fh, MPI_Info info) {
    char buf[1024];
    fh->hints.trace = wanted_path(info, buf, (int)sizeof buf) != NULL;
}

void io_trace_open(pario_file *fh, MPI_Info info) {
    if (!fh->hints.trace)
        return;
    char buf[1024];
    const char *path = wanted_path(info, buf, (int)sizeof buf);
    io_trace_clock_start(); /* once per process, before any request is timed */
    io_trace *t = trace_new(fh, path ? path : ""); /* only rank 0's path is written */
    if (!t) {
        fh->trace = &lost;
        return;
    }
    fh->trace = t;
    if (fh->io.fd >= 0 && fh->io.fd < IO_TRACE_FDS)
        atomic_store(&by_fd[fh->io.fd], t);
    atomic_fetch_add(&io_trace_open_files, 1);
}

/* The log2 class of a request of `bytes` (see IO_TRACE_HIST). */
static int size_class(int64_t bytes) {
    if (bytes <= 0)
        return 0;
    int b = 64 - __builtin_clzll((unsigned long long)bytes);
    return b < IO_TRACE_HIST - 1 ? b : IO_TRACE_HIST - 1;
}

/* Whether off and bytes are both multiples of the trace's stripe unit (a
 * mask when the unit is a power of two: no division on every request). */
static int unit_aligned(const io_trace *t, int64_t off, int64_t bytes) {
    if (t->unit_mask >= 0)
        return ((off | bytes) & t->unit_mask) == 0;
    return off % t->unit == 0 && bytes % t->unit == 0;
}

/* What a request's counters take from its place and size. */
typedef struct request_shape {
    int size_class, aligned_unit, aligned_page;
} request_shape;

static request_shape shape_of(const io_trace *t, int64_t off, int64_t bytes) {
    return (request_shape){.size_class = size_class(bytes),
                           .aligned_unit = unit_aligned(t, off, bytes),
                           .aligned_page = ((off | bytes) & (IO_TRACE_PAGE - 1)) == 0};
}

/* Adds a request of shape sh (unused when it failed: bytes < 0). */
static void stat_add(io_trace_stat *s, int64_t off, int64_t bytes, double dur,
                     const request_shape *sh) {
    s->calls++;
    s->time += dur;
    if (bytes < 0) {
        s->failed++;
        return;
    }
    s->bytes += bytes;
    s->hist[sh->size_class]++;
    s->aligned_unit += sh->aligned_unit;
    s->aligned_page += sh->aligned_page;
    if (s->first < 0 || off < s->first)
        s->first = off;
    if (off + bytes > s->end)
        s->end = off + bytes;
}

/* Room for one more event (t->lock held): the log doubles up to
 * IO_TRACE_EVENTS; 0 when it is full or cannot grow. */
static int event_room(io_trace *t) {
    if (t->rec.nevents < t->cap)
        return 1;
    int64_t cap = t->cap * 2 < IO_TRACE_EVENTS ? t->cap * 2 : IO_TRACE_EVENTS;
    io_trace_event *grown = cap > t->cap ? realloc(t->events, (size_t)cap * sizeof *grown) : NULL;
    if (!grown)
        return 0;
    t->events = grown;
    t->cap = cap;
    return 1;
}

static void event_add(io_trace *t, const io_trace_event *e) {
    if (event_room(t))
        t->events[t->rec.nevents++] = *e;
    else
        t->rec.dropped++;
}

/* Contiguous blocks of one instance of f, and the smallest and largest. */
static int64_t count_blocks(const flat_type *f, int64_t *min, int64_t *max) {
    int64_t n = 0;
    for (int i = 0; i < f->nnodes; i++) {
        const flat_node *d = &f->nodes[i];
        if (d->child) {
            n += d->count * count_blocks(d->child, min, max);
            continue;
        }
        int joined = d->stride == d->len; /* repetitions touching: one block */
        int64_t len = joined ? d->len * d->count : d->len;
        n += joined ? 1 : d->count;
        *min = *min < 0 || len < *min ? len : *min;
        *max = len > *max ? len : *max;
    }
    return n;
}

/* The index of the file's current view in the rank's list (added on first
 * use; -1 when the list is full). */
static int view_index(io_trace *t, const io_view *v) {
    io_trace_rec *r = &t->rec;
    for (int i = 0; i < r->nviews; i++)
        if (t->view_flat[i] == v->flat && r->views[i].disp == v->disp)
            return i;
    if (r->nviews == IO_TRACE_VIEWS || !v->flat)
        return -1;
    io_trace_view *s = &r->views[r->nviews];
    *s = (io_trace_view){.disp = v->disp,
                         .size = v->flat->size,
                         .extent = v->flat->extent,
                         .block_min = -1,
                         .contiguous = v->linear};
    s->blocks = count_blocks(v->flat, &s->block_min, &s->block_max);
    t->view_flat[r->nviews] = v->flat;
    return (int)r->nviews++;
}

/* The thread's kept request whose end was left open ends at `now`, the
 * thread's next clock reading (see io_trace_inflight). */
static void end_kept_request(io_trace_inflight *in, double now) {
    if (in && in->end_open) {
        in->dur = now - in->start;
        in->end_open = 0;
    }
}

double io_trace_enter(io_trace *t, io_trace_inflight *in, int independent) {
    if (!t->events)
        return 0.0;
    double now = io_trace_now();
    end_kept_request(in_call, now);
    *in = (io_trace_inflight){.t = t, .outer = in_call, .lazy_end = independent};
    in_call = in;
    return now;
}

/* Counts one storage request (t->lock held); known: its shape when the
 * caller has it, else NULL. */
static void count_request(io_trace *t, int op, int flags, int64_t off, int64_t bytes, double dur,
                          const request_shape *known) {
    request_shape sh = known ? *known : shape_of(t, off, bytes);
    stat_add(&t->rec.phys[op], off, bytes, dur, &sh);
    t->rec.vectored += (flags & IO_TRACE_VECTORED) != 0;
    t->rec.storage_time_in_calls += dur;
}

/* Logs one storage request as an event of its own (t->lock held). */
static void log_request(io_trace *t, int op, int flags, int64_t off, int64_t bytes, double t0,
                        double dur) {
    io_trace_event e = {.t = t0,
                        .off = off,
                        .bytes = bytes < 0 ? 0 : bytes,
                        .dur = (float)dur,
                        .flags = (int16_t)(flags | (bytes < 0 ? IO_TRACE_FAILED : 0)),
                        .layer = 1,
                        .op = (int8_t)op,
                        .view = -1};
    event_add(t, &e);
}

/* Records the request a call kept (t->lock held): counted as every storage
 * call is (with the call's shape when it is the call's own); 1 when it is
 * the call's own, one for one (its direction, offset and bytes), so the
 * call's event carries it. */
static int record_kept_request(io_trace *t, const io_trace_inflight *in, int d, int64_t off,
                               int64_t bytes, const request_shape *call_shape) {
    int own = in->op == (d ? IO_TRACE_PWRITE : IO_TRACE_PREAD) && in->off == off &&
              in->bytes == bytes && bytes > 0;
    count_request(t, in->op, 0, in->off, in->bytes, in->dur, own ? call_shape : NULL);
    if (own)
        return 1;
    log_request(t, in->op, 0, in->off, in->bytes, in->start, in->dur);
    return 0;
}

void io_trace_call(pario_file *fh, const rw_call *c, int coll, int nonblocking, int64_t pos,
                   int64_t bytes, int rc, double t0, io_trace_inflight *in) {
    if (in)
        in_call = in->outer;
    io_trace *t = fh->trace;
    if (!t || !t->events)
        return;
    double now = io_trace_now();
    end_kept_request(in, now);
    int64_t off = 0;
    if (view_byte_of_pos(&fh->view, pos, &off) != PARIO_OK)
        off = pos;
    int d = c->write != 0, noncontig = !fh->view.linear;
    int flags = (c->write ? IO_TRACE_WRITE : 0) | (coll ? IO_TRACE_COLL : 0) |
                (nonblocking ? IO_TRACE_NONBLOCKING : 0) | (noncontig ? IO_TRACE_NONCONTIG : 0) |
                (rc != PARIO_OK ? IO_TRACE_FAILED : 0);
    request_shape sh = shape_of(t, off, bytes); /* also its request's, when folded */
    trace_lock(t);
    stat_add(&t->rec.logical[d], off, bytes, now - t0, &sh);
    t->rec.kinds[d][(coll ? 1 : 0) + (nonblocking ? 2 : 0)]++;
    t->rec.noncontig[d] += noncontig;
    int vi = view_index(t, &fh->view);
    if (vi >= 0)
        t->rec.views[vi].calls++;
    io_trace_event e = {.t = now - t0 > 0 ? t0 : now,
                        .off = off,
                        .bytes = bytes,
                        .dur = (float)(now - t0),
                        .flags = (int16_t)flags,
                        .layer = 0,
                        .op = (int8_t)d,
                        .view = (int8_t)vi};
    if (in && in->has && record_kept_request(t, in, d, off, bytes, &sh)) {
        e.flags |= IO_TRACE_FOLDED;
        e.phys_lag = (float)(in->start - e.t);
        e.phys_dur = (float)in->dur;
    }
    event_add(t, &e);
    trace_unlock(t);
}

/* Keeps a plain request in the traced call this thread is in, when it is
 * the call's first and of its file; 0 when it is to be recorded apart. */
static int keep_in_call(io_trace_inflight *in, const io_trace *t, int op, int flags, int64_t off,
                        int64_t bytes, double t0) {
    if (!in || in->t != t || in->has || flags != 0 || bytes < 0 ||
        (op != IO_TRACE_PREAD && op != IO_TRACE_PWRITE))
        return 0;
    in->has = 1;
    in->op = op;
    in->off = off;
    in->bytes = bytes;
    in->start = t0;
    in->end_open = in->lazy_end;
    if (!in->lazy_end)
        in->dur = io_trace_now() - t0;
    return 1;
}

void io_trace_sys(int fd, int op, int flags, int64_t off, int64_t bytes, double t0) {
    io_trace_inflight *in = in_call;
    end_kept_request(in, t0); /* this call's start was the thread's next reading */
    io_trace *t = fd >= 0 && fd < IO_TRACE_FDS ? atomic_load(&by_fd[fd]) : NULL;
    if (!t)
        return;
    if (keep_in_call(in, t, op, flags, off, bytes, t0))
        return;
    double now = io_trace_now();
    trace_lock(t);
    count_request(t, op, flags, off, bytes, now - t0, NULL);
    log_request(t, op, flags, off, bytes, t0, now - t0);
    trace_unlock(t);
}

void io_trace_sieve(io_trace *t, int write, int64_t span, int64_t data) {
    if (!t || !t->events)
        return;
    trace_lock(t);
    t->rec.sieve_windows[write != 0]++;
    t->rec.sieve_span[write != 0] += span;
    t->rec.sieve_data[write != 0] += data;
    trace_unlock(t);
}

void io_trace_plan(io_trace *t, int naggr, int64_t first, int64_t end, int64_t cycle_bytes,
                   int64_t cycles) {
    if (!t || !t->events)
        return;
    trace_lock(t);
    io_trace_rec *r = &t->rec;
    r->tp_calls++;
    r->tp_cycle_bytes = cycle_bytes;
    r->tp_cycles += cycles;
    (void)naggr;
    if (first < end) {
        r->tp_domains++;
        r->tp_domain_bytes += end - first;
        r->tp_domain_max = end - first > r->tp_domain_max ? end - first : r->tp_domain_max;
    }
    trace_unlock(t);
}

void io_trace_exchange(io_trace *t, int64_t bytes, double t0) {
    if (!t || !t->events)
        return;
    double now = io_trace_now();
    trace_lock(t);
    t->rec.exchange_bytes += bytes;
    t->rec.exchange_time += now - t0;
    trace_unlock(t);
}

/* The earliest open of the file's ranks, and whether rank 0 can take the
 * ranks' records (one allreduce; a rank without a trace counts as opening
 * last). 0 when the trace cannot be merged. */
static int agree_start(MPI_Comm comm, int rank, const io_trace *t, int root_ready, double *t0) {
    double v[2] = {t->events ? t->rec.t_open : HUGE_VAL, rank == 0 ? root_ready : 1};
    if (MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MIN, comm) != MPI_SUCCESS)
        return 0;
    *t0 = v[0];
    return v[1] > 0;
}

/* Rank 0's room for every rank's formatted events after its own (which
 * mine holds: the gather leaves them in place), with the counts and
 * displacements of the gather; NULL when memory runs out. */
static char *events_room(io_trace_text *mine, const io_trace_part *parts, int n, int *counts,
                         int *displs) {
    int64_t total = 0;
    for (int r = 0; r < n; r++) {
        counts[r] = (int)parts[r].events_len;
        displs[r] = (int)total;
        total += parts[r].events_len;
    }
    if (total >= INT32_MAX || !io_trace_text_reserve(mine, (size_t)(total - parts[0].events_len)))
        return NULL;
    return mine->s;
}

/* Gathers every rank's record and formatted events of one closed file on
 * its rank 0 of comm, which writes the file's entry. Each rank formats its
 * own events (in parallel, not all on rank 0), so the merge is: an
 * allreduce (the common time origin), a gather of the records, rank 0's
 * word that it has room, and a gather of the texts. Nothing is written
 * when memory runs out somewhere: the trace is lost, the file is not. */
static void merge_and_write(MPI_Comm comm, io_trace *t) {
    int n = 1, rank = 0;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &rank);
    int root = rank == 0;
    io_trace_part *parts = root ? malloc((size_t)n * sizeof *parts) : NULL;
    int *counts = root ? malloc((size_t)n * sizeof *counts) : NULL;
    int *displs = root ? malloc((size_t)n * sizeof *displs) : NULL;
    double t0 = 0;
    io_trace_text mine = {0};
    if (agree_start(comm, rank, t, parts && counts && displs && t->events, &t0)) {
        io_trace_part part = {.rec = t->rec};
        if (t->events)
            io_trace_format_events(t, rank, t0, &mine);
        part.events_len = mine.failed || mine.len >= INT32_MAX ? 0 : (int64_t)mine.len;
        int ok = MPI_Gather(&part, (int)sizeof part, MPI_BYTE, parts, (int)sizeof part, MPI_BYTE, 0,
                            comm) == MPI_SUCCESS;
        char *events = root && ok ? events_room(&mine, parts, n, counts, displs) : NULL;
        int have = root ? events != NULL : ok;
        if (MPI_Bcast(&have, 1, MPI_INT, 0, comm) == MPI_SUCCESS && have &&
            MPI_Gatherv(root ? MPI_IN_PLACE : mine.s, (int)part.events_len, MPI_BYTE, events,
                        counts, displs, MPI_BYTE, 0, comm) == MPI_SUCCESS &&
            root)
            io_trace_write_file(t, parts, events, n);
    }
    io_trace_text_free(&mine);
    free(parts);
    free(counts);
    free(displs);
}

void io_trace_flush(io_trace_pending *q, MPI_Comm comm) {
    for (int i = 0; i < q->n; i++) {
        merge_and_write(comm, q->items[i]);
        trace_free(q->items[i]);
    }
    q->n = 0;
}

void io_trace_finalize(pario_file *fh) {
    io_trace_pending *q = &fh->trace_pending;
    for (int i = 0; i < q->n; i++) { /* files closed before fh, on its communicator */
        if (q->items[i]->events && q->items[i]->doc_path[0])
            io_trace_write_unclosed(q->items[i], fh->rank);
        trace_free(q->items[i]);
    }
    q->n = 0;
    io_trace *t = fh->trace;
    if (!t || !t->events || !t->doc_path[0])
        return;
    trace_lock(t);
    t->rec.t_close = io_trace_now();
    facts_take(t, fh);
    io_trace_write_unclosed(t, fh->rank);
    trace_unlock(t);
}

void io_trace_close(pario_file *fh) {
    io_trace *t = fh->trace;
    if (!t)
        return;
    fh->trace = NULL;
    if (t != &lost) {
        if (fh->io.fd >= 0 && fh->io.fd < IO_TRACE_FDS)
            atomic_store(&by_fd[fh->io.fd], NULL);
        atomic_fetch_sub(&io_trace_open_files, 1);
        t->rec.t_close = io_trace_now();
        facts_take(t, fh);
    }
    io_trace_pending *q = &fh->trace_pending;
    q->items[q->n++] = t;
    if (q->n == IO_TRACE_PENDING)
        io_trace_flush(q, fh->comm);
}
