/* Two-phase collective I/O.
 *
 * The file range all ranks touch is split into one domain per aggregator.
 * Each cycle every aggregator owns a window of at most cb_buffer_size bytes
 * of its domain; every rank sends it the (offset, length) pieces of its own
 * data falling in that window, then the data itself, which lands directly in
 * place in the aggregator's window buffer (an hindexed receive type), so an
 * aggregator never holds more than one window. The aggregator then writes
 * the covered runs (no read at all), or for reads fills the window from the
 * file and sends each rank its pieces back the same way.
 *
 * Accesses over several cycles are pipelined: the window is split into two
 * halves and a background thread (plain pread/pwrite calls, never MPI, so
 * any MPI thread level works) accesses the file through one half while the
 * other half is exchanged. Writes: cycle k is stored while cycle k+1 is
 * exchanged. Reads: the piece lists of cycle k+1 are exchanged first, then
 * its runs are read while cycle k's data is sent. The aggregator still
 * holds at most cb_buffer_size bytes.
 *
 * No agreement follows the set-up: cycle 0's counts carry each rank's
 * verdict on it (open_cycles). A settled read (whole ranges, one cycle)
 * reads before its counts move, so they carry the read's outcome too, and
 * no agreement follows the call either (settle_read); where every rank's
 * call is plain it exchanges no counts at all: its aggregators send their
 * outcome beside the data (read_quick). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "common/error.h"
#include "io/coll/coll_internal.h"
#include "io/indep/cursor.h"
#include "io/trace/trace.h"
#include "io/view/view.h"

/* Message tags of the exchange, distinct from anything else on the file's
 * private communicator. */
enum { TAG_META = 0x7a01, TAG_DATA = 0x7a02, TAG_OUTCOME = 0x7a03 };

/* This rank's data bound for one aggregator's domain. */
typedef struct coll_stream {
    io_file_cursor file;
    io_mem_cursor mem;
    int64_t left;   /* data bytes of this rank not yet sent anywhere past here */
    int64_t at;     /* the file cursor's stream position */
    int64_t mem_at; /* the memory cursor's (noncontiguous memory: it is moved on demand) */
    int open;
} coll_stream;

typedef struct growbuf {
    char *p;
    int64_t cap;
} growbuf;

typedef struct run {
    int64_t off, end;
} run;

/* Everything one cycle needs from its piece lists to its data exchange. A
 * pipelined read prepares cycle k+1 before cycle k's data moves, so there
 * are two of these, one per half window. */
typedef struct cycle {
    int64_t *send_cnt; /* per rank: pieces, bytes I send it this cycle */
    int64_t *recv_cnt; /* per rank: pieces, bytes it sends me */
    int64_t *send_at;  /* per aggregator: first piece index and first data byte */
    char **user_at;    /* per aggregator: this cycle's data in place in user memory
                          (contiguous memory: sent or received with no copy), or NULL */
    int64_t out_bytes; /* data bytes this rank moves this cycle */
    int64_t *seg_at;   /* per aggregator (and one past): its first segment */
    int64_t nsegs;     /* segments: runs of consecutive stream bytes (position, bytes)
                          bound for one aggregator, in `segs` */
    int64_t ws, we;    /* an aggregator's window this cycle */
    int64_t nin;       /* pieces an aggregator received this cycle */
    int blind;         /* an aggregator without room for the lists (a failure recorded):
                          its data messages are taken or sent whole, as scratch */
    run *runs;         /* their sorted, merged runs (in `pieces`) */
    int64_t nruns;
    growbuf meta_out, data_out, meta_in, pieces, segs;
} cycle;

/* One cycle's file access (store the runs, or fill them from the file),
 * run by a background thread when pipelined. */
typedef struct file_job {
    pthread_t thread;
    io_handle *io;
    const coll_plan *p;
    int64_t read_call_bytes; /* the file's read call cost (pario_file) */
    io_prefetch *prefetch;   /* reads go through the file's prefetch (io/file/prefetch.c) */
    char *window;
    const run *runs;
    int64_t nruns, ws;
    int write;
    int rc;
    pario_error err; /* the thread's own record: fh->last belongs to the caller */
} file_job;

typedef struct twophase {
    pario_file *fh;
    const coll_plan *p;
    int write;
    coll_stream *streams; /* one per aggregator */
    int packs;            /* user memory is noncontiguous: data goes through data_out */
    int64_t pos;          /* the call's first stream position */
    void *buf;            /* the call's memory, count instances of mt */
    MPI_Count count;
    const flat_type *mt;
    char *base;        /* contiguous memory: the address of stream position pos */
    cycle cyc[2];      /* cycle k uses slot k % 2 when pipelined, else slot 0 */
    growbuf window[2]; /* the half windows (one whole window when not pipelined) */
    int pipelined;
    file_job job; /* the background access, when job_running */
    int job_running;
    MPI_Request *reqs; /* the file's (4 per rank: io/coll/place.c) */
    MPI_Datatype *types;
    growbuf type_args; /* the arguments of the piece types being made (pairs_type) */
    int rc;            /* first local failure; the cycles go on so nobody waits */
    int settled;       /* a read of whole ranges in one cycle: the read happens before the
                          counts move, which carry its outcome (read_settled) */
    int quick;         /* settled, and every rank's call plain: no counts move, the
                          aggregators' outcomes go with the data (read_quick) */
    int aborted;       /* some rank failed before cycle 0's counts: no cycle runs */
} twophase;

static int grow(growbuf *g, int64_t bytes) {
    return io_scratch_reserve(&g->p, &g->cap, bytes > 0 ? bytes : 1);
}

static void fail(twophase *t, int rc, const char *what) {
    if (t->rc == PARIO_OK)
        t->rc = pario_fail(&t->fh->last, rc, "%s %s: %s", t->write ? "write_all" : "read_all",
                           t->fh->path, what);
}

static int slot_of(const twophase *t, int64_t k) {
    return t->pipelined ? (int)(k % 2) : 0;
}

/* ---- streams --------------------------------------------------------------------- */

static int streams_open(twophase *t, int64_t pos, void *buf, MPI_Count count, const flat_type *mt,
                        int64_t total) {
    const coll_plan *p = t->p;
    for (int a = 0; a < p->naggr; a++) {
        coll_stream *s = &t->streams[a];
        int64_t start = 0;
        int rc = view_pos_of_byte(&t->fh->view, p->dom_start[a], &start);
        if (rc != PARIO_OK)
            return rc;
        start = start < pos ? pos : start;
        s->left = pos + total - start;
        if (s->left <= 0 || p->dom_end[a] <= p->dom_start[a]) {
            s->left = 0;
            continue;
        }
        if ((rc = io_file_open(&s->file, &t->fh->view, start)) != PARIO_OK)
            return rc;
        if ((rc = io_mem_open(&s->mem, mt, buf, count, start - pos)) != PARIO_OK) {
            io_file_close(&s->file);
            return rc;
        }
        s->open = 1;
        s->at = s->mem_at = start;
        t->packs |= s->mem.contig == NULL;
        if (s->mem.contig)
            t->base = s->mem.contig - (start - pos);
    }
    return PARIO_OK;
}

static void streams_close(twophase *t) {
    if (!t->streams)
        return;
    for (int a = 0; a < t->p->naggr; a++)
        if (t->streams[a].open) {
            io_file_close(&t->streams[a].file);
            io_mem_close(&t->streams[a].mem);
            t->streams[a].open = 0;
        }
}

/* ---- phase 1: what goes where ------------------------------------------------------ */

/* Move stream s on to the first data byte at or after file byte x (per
 * target: the data between belongs to other aggregators). */
static int stream_seek(twophase *t, coll_stream *s, int64_t x) {
    int64_t at = 0;
    int rc = view_pos_of_byte(&t->fh->view, x, &at);
    if (rc != PARIO_OK)
        return rc;
    if (at <= s->at)
        return PARIO_ERR_INTERN; /* no progress: a planning bug */
    io_file_close(&s->file);
    s->left -= at - s->at;
    s->at = at;
    return io_file_open(&s->file, &t->fh->view, at);
}

/* Noncontiguous memory: stream s's memory cursor at stream position at. */
static int stream_mem_to(twophase *t, coll_stream *s, int64_t at) {
    if (s->mem_at == at)
        return PARIO_OK;
    io_mem_close(&s->mem);
    s->mem_at = at;
    return io_mem_open(&s->mem, t->mt, t->buf, t->count, at - t->pos);
}

/* Record len stream bytes from position at, bound for the aggregator whose
 * segments started at index first: joined to the last segment when they follow it. */
static int add_segment(cycle *c, int64_t first, int64_t at, int64_t len) {
    int64_t *g = (int64_t *)c->segs.p;
    if (c->nsegs > first && g[2 * (c->nsegs - 1)] + g[2 * (c->nsegs - 1) + 1] == at) {
        g[2 * (c->nsegs - 1) + 1] += len;
        return PARIO_OK;
    }
    if (grow(&c->segs, (c->nsegs + 1) * 2 * (int64_t)sizeof(int64_t)) != PARIO_OK)
        return PARIO_ERR_NO_MEM;
    g = (int64_t *)c->segs.p;
    g[2 * c->nsegs] = at;
    g[2 * c->nsegs + 1] = len;
    c->nsegs++;
    return PARIO_OK;
}

/* Append this rank's pieces inside [ps, pe), part of aggregator a's window. */
static int collect_part(twophase *t, cycle *c, int a, int64_t ps, int64_t pe, int64_t *npieces,
                        int64_t *nbytes) {
    coll_stream *s = &t->streams[a];
    int64_t off, len;
    while (s->left > 0 && io_file_peek(&s->file, s->left, &off, &len) && off < pe) {
        if (off < ps) { /* per target: other aggregators' bytes first */
            int rc = t->p->per_target ? stream_seek(t, s, ps) : PARIO_ERR_INTERN;
            if (rc != PARIO_OK)
                return rc; /* contiguous domains: the stream skipped a window, a planning bug */
            continue;
        }
        len = off + len > pe ? pe - off : len;
        int64_t n = *npieces;
        if (grow(&c->meta_out, (n + 1) * 2 * (int64_t)sizeof(int64_t)) != PARIO_OK ||
            add_segment(c, c->seg_at[a], s->at, len) != PARIO_OK)
            return PARIO_ERR_NO_MEM;
        int64_t *m = (int64_t *)c->meta_out.p;
        m[2 * n] = off;
        m[2 * n + 1] = len;
        if (t->write && t->packs) {
            if (grow(&c->data_out, *nbytes + len) != PARIO_OK)
                return PARIO_ERR_NO_MEM;
            int rc = stream_mem_to(t, s, s->at);
            if (rc != PARIO_OK)
                return rc;
            io_mem_copy(&s->mem, c->data_out.p + *nbytes, len, 1);
            s->mem_at += len;
        }
        io_file_take(&s->file, len);
        s->left -= len;
        s->at += len;
        *npieces = n + 1;
        *nbytes += len;
    }
    return PARIO_OK;
}

/* This rank's data bound for aggregator a in cycle k, part by part. */
static int collect_pieces(twophase *t, cycle *c, int a, int64_t k, int64_t *npieces,
                          int64_t *nbytes) {
    for (int64_t i = 0; i < coll_plan_nparts(t->p); i++) {
        int64_t ps, pe;
        coll_plan_part(t->p, a, k, i, &ps, &pe);
        int rc = ps < pe ? collect_part(t, c, a, ps, pe, npieces, nbytes) : PARIO_OK;
        if (rc != PARIO_OK)
            return rc;
    }
    return PARIO_OK;
}

/* Contiguous memory: where stream position at lies. */
static char *user_byte(const twophase *t, int64_t at) {
    return t->base + (at - t->pos);
}

static int collect_cycle(twophase *t, cycle *c, int64_t k) {
    const coll_plan *p = t->p;
    int64_t npieces = 0, nbytes = 0;
    memset(c->send_cnt, 0, 2 * (size_t)t->fh->nranks * sizeof *c->send_cnt);
    c->nsegs = 0;
    for (int a = 0; a < p->naggr; a++) {
        int64_t n0 = npieces, b0 = nbytes;
        c->send_at[2 * a] = n0;
        c->send_at[2 * a + 1] = b0;
        c->seg_at[a] = c->nsegs;
        c->user_at[a] = NULL;
        if (t->streams[a].open) {
            int rc = collect_pieces(t, c, a, k, &npieces, &nbytes);
            if (rc != PARIO_OK) {
                c->seg_at[p->naggr] = c->nsegs;
                for (int b = a + 1; b < p->naggr; b++) { /* nothing for the aggregators after */
                    c->send_at[2 * b] = npieces;
                    c->send_at[2 * b + 1] = nbytes;
                    c->seg_at[b] = c->nsegs;
                    c->user_at[b] = NULL;
                }
                c->out_bytes = nbytes; /* aggregator a's pieces stay unsent */
                return rc;
            }
        }
        if (!t->packs && c->nsegs == c->seg_at[a] + 1) /* one run of the user's memory */
            c->user_at[a] = user_byte(t, ((int64_t *)c->segs.p)[2 * c->seg_at[a]]);
        c->send_cnt[2 * p->aggr[a]] = npieces - n0;
        c->send_cnt[2 * p->aggr[a] + 1] = nbytes - b0;
    }
    c->seg_at[p->naggr] = c->nsegs;
    c->out_bytes = nbytes;
    return PARIO_OK;
}

static int wait_all(MPI_Request *reqs, int n) {
    if (n == 0)
        return PARIO_OK;
    return MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE) == MPI_SUCCESS ? PARIO_OK : PARIO_ERR_COMM;
}

/* Pieces per piece-list message: a message never outgrows an aggregator's
 * window, so one that cannot keep the lists can still take each message in
 * its window (and drop it). Lists longer than this, pieces averaging under
 * 16 bytes, go in rounds of one message per peer. */
static int64_t list_chunk(const twophase *t) {
    int64_t n = t->p->cycle_bytes / (2 * (int64_t)sizeof(int64_t));
    return n > 0 ? n : 1;
}

/* Elements of the round's message of a list with `left` pieces still to go. */
static int list_part(int64_t left, int64_t chunk) {
    return (int)(2 * (left < chunk ? left : chunk));
}

/* Round j of the piece lists: my chunk j to each aggregator, and, as an
 * aggregator, each rank's chunk j into meta_in, or when blind (no room for
 * the lists) one rank at a time into the window, dropped. */
static int exchange_list_round(twophase *t, cycle *c, int64_t j, int *more) {
    pario_file *fh = t->fh;
    int64_t chunk = list_chunk(t), at = 0;
    int nreq = 0;
    *more = 0;
    for (int r = 0; r < fh->nranks; at += c->recv_cnt[2 * r], r++) {
        int64_t n = c->recv_cnt[2 * r] - j * chunk;
        *more |= n > chunk;
        if (n > 0 && !c->blind)
            MPI_Irecv((int64_t *)c->meta_in.p + 2 * (at + j * chunk), list_part(n, chunk),
                      MPI_INT64_T, r, TAG_META, fh->comm, &t->reqs[nreq++]);
    }
    for (int a = 0; a < t->p->naggr; a++) {
        int dst = t->p->aggr[a];
        int64_t n = c->send_cnt[2 * dst] - j * chunk;
        *more |= n > chunk;
        if (n > 0)
            MPI_Isend((int64_t *)c->meta_out.p + 2 * (c->send_at[2 * a] + j * chunk),
                      list_part(n, chunk), MPI_INT64_T, dst, TAG_META, fh->comm, &t->reqs[nreq++]);
    }
    int rc = MPI_SUCCESS; /* blind: each message in turn, after this rank's own are posted */
    for (int r = 0; c->blind && rc == MPI_SUCCESS && r < fh->nranks; r++) {
        int64_t n = c->recv_cnt[2 * r] - j * chunk;
        if (n > 0)
            rc = MPI_Recv(t->window[c - t->cyc].p, list_part(n, chunk), MPI_INT64_T, r, TAG_META,
                          fh->comm, MPI_STATUS_IGNORE);
    }
    int wrc = wait_all(t->reqs, nreq);
    return rc != MPI_SUCCESS ? PARIO_ERR_COMM : wrc;
}

/* Send my piece lists to the aggregators; aggregators receive everyone's.
 * An aggregator without room for them records the failure and still takes
 * every message (the cycle goes on blind: blind_window_side). */
static int exchange_meta(twophase *t, cycle *c) {
    pario_file *fh = t->fh;
    c->nin = 0;
    for (int r = 0; r < fh->nranks; r++)
        c->nin += c->recv_cnt[2 * r];
    c->blind = grow(&c->meta_in, c->nin * 2 * (int64_t)sizeof(int64_t)) != PARIO_OK;
    if (c->blind) {
        fail(t, PARIO_ERR_NO_MEM, "out of memory for the piece lists");
        c->nin = 0;
    }
    int rc = PARIO_OK, more = 1;
    for (int64_t j = 0; rc == PARIO_OK && more; j++)
        rc = exchange_list_round(t, c, j, &more);
    return rc;
}

/* Whole ranges (plan.c): rank r's piece of aggregator a's window in cycle
 * k is its range cut at the window, [*s, *e) (empty: *e <= *s). */
static void range_piece(const coll_plan *p, int r, int a, int64_t k, int64_t *s, int64_t *e) {
    int64_t ws, we;
    coll_plan_window(p, a, k, &ws, &we);
    *s = p->whole[r].first > ws ? p->whole[r].first : ws;
    *e = p->whole[r].end < we ? p->whole[r].end : we;
}

/* Whole ranges: each rank's piece of this aggregator's window is one piece,
 * its range cut at the window, so the lists need no message. The counts
 * still come from every rank (a rank that could not describe its pieces
 * sends none); a count that disagrees with the range is a planning bug,
 * recorded, with the piece cut to what the rank sends. */
static void pieces_from_ranges(twophase *t, cycle *c, int64_t k) {
    const coll_plan *p = t->p;
    int n = t->fh->nranks;
    c->nin = 0;
    if (p->my_aggr < 0)
        return;
    int64_t ws, we, *m = (int64_t *)c->meta_in.p; /* one piece per rank (twophase_alloc) */
    coll_plan_window(p, p->my_aggr, k, &ws, &we);
    for (int r = 0; r < n; r++) {
        int64_t bytes = c->recv_cnt[2 * r + 1], s, e;
        c->recv_cnt[2 * r] = bytes > 0;
        if (bytes == 0)
            continue;
        range_piece(p, r, p->my_aggr, k, &s, &e);
        if (e - s != bytes) {
            fail(t, PARIO_ERR_INTERN, "a rank's piece does not match its range");
            s = s < we ? s : ws;
            e = s + bytes < we ? s + bytes : we;
        }
        m[2 * c->nin] = s;
        m[2 * c->nin + 1] = e - s;
        c->nin++;
    }
}

/* n (position, length) pairs as one byte datatype: each at its place in
 * the window starting at ws under plan p, or, without a plan, at its
 * position less ws. The type's arguments are laid out in `args`, a scratch
 * buffer reused for every type of the call. */
static int pairs_type(growbuf *args, const coll_plan *p, const int64_t *m, int64_t n, int64_t ws,
                      MPI_Datatype *type) {
    if (grow(args, n * (int64_t)(sizeof(MPI_Aint) + sizeof(int))) != PARIO_OK)
        return PARIO_ERR_NO_MEM;
    MPI_Aint *disps = (MPI_Aint *)args->p;
    int *lens = (int *)(disps + n);
    for (int64_t i = 0; i < n; i++) {
        disps[i] = (MPI_Aint)(p ? coll_plan_place(p, ws, m[2 * i]) : m[2 * i] - ws);
        lens[i] = (int)m[2 * i + 1];
    }
    if (MPI_Type_create_hindexed((int)n, lens, disps, MPI_BYTE, type) != MPI_SUCCESS ||
        MPI_Type_commit(type) != MPI_SUCCESS)
        return PARIO_ERR_COMM;
    return PARIO_OK;
}

/* ---- phase 2: the aggregator's file access ------------------------------------------ */

static int cmp_run(const void *a, const void *b) {
    const run *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Sorted, merged runs of all pieces received this cycle. */
static int window_runs(cycle *c) {
    if (grow(&c->pieces, c->nin * (int64_t)sizeof(run)) != PARIO_OK)
        return PARIO_ERR_NO_MEM;
    run *r = (run *)c->pieces.p;
    const int64_t *m = (const int64_t *)c->meta_in.p;
    for (int64_t i = 0; i < c->nin; i++)
        r[i] = (run){m[2 * i], m[2 * i] + m[2 * i + 1]};
    qsort(r, (size_t)c->nin, sizeof *r, cmp_run);
    int64_t n = 0;
    for (int64_t i = 0; i < c->nin; i++) {
        if (n > 0 && r[i].off <= r[n - 1].end) {
            if (r[i].end > r[n - 1].end)
                r[n - 1].end = r[i].end;
        } else {
            r[n++] = r[i];
        }
    }
    c->runs = r;
    c->nruns = n;
    return PARIO_OK;
}

static int write_runs(io_handle *io, const coll_plan *p, const char *window, const run *r,
                      int64_t n, int64_t ws, pario_error *err) {
    for (int64_t i = 0; i < n; i++) {
        int rc = io->drv->pwrite(io, window + coll_plan_place(p, ws, r[i].off), r[i].end - r[i].off,
                                 r[i].off, err);
        if (rc != PARIO_OK)
            return rc;
    }
    return PARIO_OK;
}

/* Fill runs from the file: one pread over their whole span when the holes
 * cost less than the extra calls, each weighed at the file's read call cost
 * (its file system's calibration record, a hint or the default, io/cost).
 * Bytes past end of file read as zeros. The runs lie in one contiguous
 * stretch of the window. */
static int read_span(io_handle *io, io_prefetch *prefetch, char *window, const run *r, int64_t n,
                     int64_t call_bytes, pario_error *err) {
    int64_t span = r[n - 1].end - r[0].off, data = 0;
    for (int64_t i = 0; i < n; i++)
        data += r[i].end - r[i].off;
    int whole = span - data < io_calls_cost(n - 1, call_bytes);
    for (int64_t i = 0; i < n; i++) {
        int64_t off = r[i].off, len = whole ? span : r[i].end - r[i].off, got = 0;
        char *at = window + (off - r[0].off);
        int rc = io_prefetch_pread(io, prefetch, at, len, off, 1, &got, err);
        if (rc != PARIO_OK)
            return rc;
        memset(at + got, 0, (size_t)(len - got));
        if (whole)
            break;
    }
    return PARIO_OK;
}

/* Fill the window's runs: all in one stretch, or per target stripe by
 * stripe (a span must not reach the other targets' stripes between). */
static int read_runs(io_handle *io, io_prefetch *prefetch, const coll_plan *p, char *window,
                     const run *r, int64_t n, int64_t ws, int64_t call_bytes, pario_error *err) {
    for (int64_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && (!p->per_target || r[j].off / p->unit == r[i].off / p->unit); j++)
            ;
        int rc = read_span(io, prefetch, window + coll_plan_place(p, ws, r[i].off), r + i, j - i,
                           call_bytes, err);
        if (rc != PARIO_OK)
            return rc;
    }
    return PARIO_OK;
}

static void *job_main(void *arg) {
    file_job *j = arg;
    j->rc = j->write ? write_runs(j->io, j->p, j->window, j->runs, j->nruns, j->ws, &j->err)
                     : read_runs(j->io, j->prefetch, j->p, j->window, j->runs, j->nruns, j->ws,
                                 j->read_call_bytes, &j->err);
    return NULL;
}

/* A finished job's failure becomes this rank's: a store reports the
 * driver's message, a read says the aggregator's read failed. */
static void job_result(twophase *t) {
    if (t->job.rc == PARIO_OK || t->rc != PARIO_OK)
        return;
    if (t->job.write) {
        t->fh->last = t->job.err;
        t->rc = t->job.rc;
    } else {
        fail(t, t->job.rc, "aggregator read failed");
    }
}

/* Wait for the background access of another cycle. */
static void job_join(twophase *t) {
    if (!t->job_running)
        return;
    pthread_join(t->job.thread, NULL);
    t->job_running = 0;
    job_result(t);
}

/* The file access of the cycle in `slot`: in the background when pipelined
 * (joined before its half window is exchanged or refilled), else right here.
 * Nothing is accessed after a local failure. */
static void job_start(twophase *t, int slot) {
    const cycle *c = &t->cyc[slot];
    if (t->rc != PARIO_OK || c->nruns == 0)
        return;
    t->job = (file_job){.io = &t->fh->io,
                        .p = t->p,
                        .read_call_bytes = t->fh->read_call_bytes,
                        .prefetch = &t->fh->prefetch,
                        .window = t->window[slot].p,
                        .runs = c->runs,
                        .nruns = c->nruns,
                        .ws = c->ws,
                        .write = t->write};
    if (t->pipelined && pthread_create(&t->job.thread, NULL, job_main, &t->job) == 0) {
        t->job_running = 1;
        return;
    }
    job_main(&t->job);
    job_result(t);
}

/* ---- one cycle ---------------------------------------------------------------------- */

/* This rank's data for aggregator a in cycle c: in place in user memory or
 * in the packed buffer. */
static char *my_data_for(cycle *c, int a) {
    return c->user_at[a] ? c->user_at[a] : c->data_out.p + c->send_at[2 * a + 1];
}

/* An aggregator's own pieces need no message: copy them between its data and
 * the window directly (its data: packed, or its segments of the user's
 * memory, whose runs are made of whole pieces). */
static void exchange_with_self(twophase *t, int slot, const int64_t *m, int64_t n) {
    cycle *c = &t->cyc[slot];
    const int64_t *g = (const int64_t *)c->segs.p + 2 * c->seg_at[t->p->my_aggr];
    char *mine = t->packs ? my_data_for(c, t->p->my_aggr) : user_byte(t, g[0]);
    char *window = t->window[slot].p;
    int64_t left = g[1]; /* bytes left in the current segment (user memory) */
    for (int64_t i = 0; i < n; i++) {
        char *in_window = window + coll_plan_place(t->p, c->ws, m[2 * i]);
        size_t len = (size_t)m[2 * i + 1];
        if (!t->packs && left == 0) {
            g += 2;
            mine = user_byte(t, g[0]);
            left = g[1];
        }
        if (t->write)
            memcpy(in_window, mine, len);
        else
            memcpy(mine, in_window, len);
        mine += len;
        left -= (int64_t)len;
    }
}

/* Contiguous memory spread over several segments for aggregator a: one
 * datatype of them over the user's memory. */
static int segments_type(twophase *t, const cycle *c, int a, MPI_Datatype *type) {
    const int64_t *g = (const int64_t *)c->segs.p + 2 * c->seg_at[a];
    return pairs_type(&t->type_args, NULL, g, c->seg_at[a + 1] - c->seg_at[a], t->pos, type);
}

/* A blind aggregator (a failure recorded, nothing will be accessed) still
 * takes the data of ranks from `from` on, one rank at a time into the window
 * (a rank's pieces of one window do not overlap, so they fit), and sends
 * each reader as many bytes as it waits for. */
static int blind_window_side(twophase *t, int slot, int from) {
    pario_file *fh = t->fh;
    cycle *c = &t->cyc[slot];
    int rc = MPI_SUCCESS;
    for (int r = from; rc == MPI_SUCCESS && r < fh->nranks; r++) {
        int bytes = (int)c->recv_cnt[2 * r + 1];
        if (bytes == 0 || r == fh->rank)
            continue;
        if (t->write)
            rc = MPI_Recv(t->window[slot].p, bytes, MPI_BYTE, r, TAG_DATA, fh->comm,
                          MPI_STATUS_IGNORE);
        else
            rc = MPI_Send(t->window[slot].p, bytes, MPI_BYTE, r, TAG_DATA, fh->comm);
    }
    return rc == MPI_SUCCESS ? PARIO_OK : PARIO_ERR_COMM;
}

/* The aggregator's side of the data: each rank's pieces land in (reads:
 * leave from) their places in the window, through a type made from its
 * list, or, for one piece, its bytes of the window. Returns the first rank
 * left out: where its type cannot be made the failure is recorded and the
 * cycle goes blind from that rank on (exchange_data). */
static int post_window_side(twophase *t, int slot, int *nreq, int *ntypes) {
    pario_file *fh = t->fh;
    cycle *c = &t->cyc[slot];
    const int64_t *m = (const int64_t *)c->meta_in.p;
    for (int r = 0, at = 0; r < fh->nranks; at += (int)c->recv_cnt[2 * r], r++) {
        int64_t n = c->recv_cnt[2 * r];
        if (n == 0)
            continue;
        if (r == fh->rank) {
            exchange_with_self(t, slot, m + 2 * at, n);
            continue;
        }
        char *window = t->window[slot].p;
        int len = 1;
        MPI_Datatype type = MPI_BYTE;
        if (n == 1) { /* one piece: its bytes of the window, no datatype to make */
            window += coll_plan_place(t->p, c->ws, m[2 * at]);
            len = (int)m[2 * at + 1];
        } else if (pairs_type(&t->type_args, t->p, m + 2 * at, n, c->ws, &t->types[*ntypes]) ==
                   PARIO_OK) {
            type = t->types[(*ntypes)++];
        } else {
            fail(t, PARIO_ERR_NO_MEM, "cannot describe the pieces of a rank's data");
            return r;
        }
        if (t->write)
            MPI_Irecv(window, len, type, r, TAG_DATA, fh->comm, &t->reqs[(*nreq)++]);
        else
            MPI_Isend(window, len, type, r, TAG_DATA, fh->comm, &t->reqs[(*nreq)++]);
    }
    return fh->nranks;
}

/* This rank's side: its data to (reads: from) each other aggregator in one
 * message, packed, in place, or through a type over its memory's segments.
 * Where that type cannot be made the failure is recorded and the message
 * still goes, as scratch bytes of the call's memory. */
static int post_own_side(twophase *t, int slot, int nreq, int *ntypes, int64_t *traded) {
    pario_file *fh = t->fh;
    cycle *c = &t->cyc[slot];
    for (int a = 0; a < t->p->naggr; a++) {
        int dst = t->p->aggr[a];
        int64_t bytes = c->send_cnt[2 * dst + 1];
        if (bytes == 0 || dst == fh->rank)
            continue;
        *traded += bytes;
        char *at = t->base;
        int n = (int)bytes;
        MPI_Datatype type = MPI_BYTE;
        if (t->packs || c->user_at[a]) {
            at = my_data_for(c, a);
        } else if (segments_type(t, c, a, &t->types[*ntypes]) == PARIO_OK) {
            n = 1;
            type = t->types[(*ntypes)++];
        } else {
            fail(t, PARIO_ERR_NO_MEM, "cannot describe this rank's memory");
        }
        if (t->write)
            MPI_Isend(at, n, type, dst, TAG_DATA, fh->comm, &t->reqs[nreq++]);
        else
            MPI_Irecv(at, n, type, dst, TAG_DATA, fh->comm, &t->reqs[nreq++]);
    }
    return nreq;
}

/* Move the data of the cycle in `slot`: an aggregator's window side through
 * per-sender piece types, then this rank's own side (its data to or from
 * the other aggregators, one message each). A blind aggregator posts its
 * own side before it blocks on the rest of its window side, and finishes
 * what its window side posted first, whose messages depend only on other
 * ranks' own sides: every message still moves, and no rank waits for one
 * that never comes. */
static int exchange_data(twophase *t, int slot) {
    int64_t traded = 0; /* bytes this rank sends to (reads: receives from) other aggregators */
    double t0 = io_trace_clock(t->fh->trace);
    int ntypes = 0, nreq = 0, done = 0, rc = PARIO_OK;
    int blind_from = t->cyc[slot].blind ? 0 : post_window_side(t, slot, &nreq, &ntypes);
    int posted = nreq;
    nreq = post_own_side(t, slot, nreq, &ntypes, &traded);
    if (blind_from < t->fh->nranks) { /* the window side's posted messages, then the rest */
        rc = wait_all(t->reqs, posted);
        done = posted;
        int brc = blind_window_side(t, slot, blind_from);
        rc = rc != PARIO_OK ? rc : brc;
    }
    int wrc = wait_all(t->reqs + done, nreq - done);
    for (int i = 0; i < ntypes; i++)
        MPI_Type_free(&t->types[i]);
    io_trace_exchange(t->fh->trace, traded, t0);
    return rc != PARIO_OK ? rc : wrc;
}

/* Reads: hand the data received from each aggregator to the user's memory. */
static int unpack_cycle(twophase *t, int slot) {
    cycle *c = &t->cyc[slot];
    if (!t->packs)
        return PARIO_OK; /* received in place */
    for (int a = 0; a < t->p->naggr; a++) {
        const int64_t *g = (const int64_t *)c->segs.p;
        char *data = c->data_out.p + c->send_at[2 * a + 1];
        if (c->send_cnt[2 * t->p->aggr[a] + 1] == 0)
            continue;
        for (int64_t i = c->seg_at[a]; i < c->seg_at[a + 1]; i++) {
            coll_stream *s = &t->streams[a];
            int rc = stream_mem_to(t, s, g[2 * i]);
            if (rc != PARIO_OK)
                return rc;
            io_mem_copy(&s->mem, data, g[2 * i + 1], 0);
            s->mem_at += g[2 * i + 1];
            data += g[2 * i + 1];
        }
    }
    return PARIO_OK;
}

/* This rank's pieces and counts for cycle k (a failure is recorded). A read
 * into noncontiguous memory reserves the buffer its data arrives in here,
 * before the counts move: where that fails, this rank asks for nothing this
 * cycle, so no aggregator sends it data it has no room for. */
static int describe_cycle(twophase *t, cycle *c, int64_t k) {
    c->blind = 0;
    int rc = collect_cycle(t, c, k);
    if (rc != PARIO_OK) {
        fail(t, rc, "cannot describe this rank's pieces");
    } else if (!t->write && t->packs && grow(&c->data_out, c->out_bytes) != PARIO_OK) {
        rc = PARIO_ERR_NO_MEM;
        fail(t, rc, "out of memory for the data read");
        memset(c->send_cnt, 0, 2 * (size_t)t->fh->nranks * sizeof *c->send_cnt);
    }
    return rc;
}

/* Everyone's counts of cycle c. */
static int exchange_counts(twophase *t, cycle *c) {
    return MPI_Alltoall(c->send_cnt, 2, MPI_INT64_T, c->recv_cnt, 2, MPI_INT64_T, t->fh->comm) ==
                   MPI_SUCCESS
               ? PARIO_OK
               : PARIO_ERR_COMM;
}

/* This rank's counts for cycle k, then everyone's. */
static int count_cycle(twophase *t, int64_t k, int slot) {
    describe_cycle(t, &t->cyc[slot], k);
    return exchange_counts(t, &t->cyc[slot]);
}

/* An aggregator's window of cycle k and the sorted, merged runs of the
 * pieces it received (a failure leaves nothing to access; the cycles go on). */
static void runs_of_cycle(twophase *t, cycle *c, int64_t k) {
    c->nruns = 0;
    if (t->p->my_aggr < 0)
        return;
    coll_plan_window(t->p, t->p->my_aggr, k, &c->ws, &c->we);
    if (window_runs(c) != PARIO_OK)
        fail(t, PARIO_ERR_NO_MEM, "out of memory for the window's runs");
}

/* Phase 1 of cycle k into `slot`: everyone's counts (cycle 0's came with
 * open_cycles), then everyone's piece lists reach the aggregators, which
 * merge them into runs. Returns only communication failures (a local
 * failure is recorded and the cycle goes on). */
static int prepare_cycle(twophase *t, int64_t k, int slot) {
    cycle *c = &t->cyc[slot];
    int rc = k > 0 ? count_cycle(t, k, slot) : PARIO_OK;
    if (rc == PARIO_OK && t->p->whole)
        pieces_from_ranges(t, c, k);
    else if (rc == PARIO_OK)
        rc = exchange_meta(t, c);
    if (rc == PARIO_OK)
        runs_of_cycle(t, c, k);
    return rc;
}

/* An aggregator of a read of whole ranges in one cycle: each rank's piece of
 * its window from the ranges (the counts the ranks send, where they do),
 * then the window read. */
static void read_whole_window(twophase *t) {
    cycle *c = &t->cyc[0];
    int64_t s, e;
    for (int r = 0; r < t->fh->nranks; r++) {
        range_piece(t->p, r, t->p->my_aggr, 0, &s, &e);
        c->recv_cnt[2 * r + 1] = e > s ? e - s : 0;
    }
    pieces_from_ranges(t, c, 0);
    runs_of_cycle(t, c, 0);
    job_start(t, 0);
}

/* A settled read (whole ranges, one cycle) before its counts move: this
 * rank checks its counts against its range, since aggregators take each
 * piece from the ranges; packed memory gets its buffer; an aggregator reads
 * its window. Whatever fails here reaches every rank with the counts, and
 * after them nothing is left that can fail on another rank's account. */
static void settle_read(twophase *t) {
    const coll_plan *p = t->p;
    cycle *c = &t->cyc[0];
    int64_t s, e;
    for (int a = 0; a < p->naggr; a++) {
        int64_t bytes = c->send_cnt[2 * p->aggr[a] + 1];
        range_piece(p, t->fh->rank, a, 0, &s, &e);
        if (bytes != (e > s ? e - s : 0) || (bytes > 0 && !t->packs && !c->user_at[a])) {
            fail(t, PARIO_ERR_INTERN, "this rank's piece does not match its range");
            return;
        }
    }
    if (p->my_aggr >= 0)
        read_whole_window(t);
}

/* Cycle 0's counts, exchanged by every rank whatever its set-up did: a rank
 * that failed sends -1 pieces to everyone, so every rank learns of it here
 * (t->aborted) and the call needs no agreement of its own before the
 * cycles. Returns only communication failures. */
static int open_cycles(twophase *t) {
    cycle *c = &t->cyc[0];
    int n = t->fh->nranks;
    if (t->rc == PARIO_OK && t->p->ncycles > 0 && describe_cycle(t, c, 0) == PARIO_OK && t->settled)
        settle_read(t);
    if (t->rc != PARIO_OK || t->p->ncycles == 0)
        for (int r = 0; r < 2 * n; r++)
            c->send_cnt[r] = r % 2 == 0 && t->rc != PARIO_OK ? -1 : 0;
    int rc = exchange_counts(t, c);
    if (rc != PARIO_OK)
        return rc;
    for (int r = 0; r < n; r++)
        t->aborted |= c->recv_cnt[2 * r] < 0;
    return PARIO_OK;
}

/* A settled read after the counts: its data moves, and no agreement
 * follows (settle_read). */
static int read_settled(twophase *t) {
    cycle *c = &t->cyc[0];
    for (int r = 0; r < t->fh->nranks; r++) /* one piece each, however the sender cut it */
        c->recv_cnt[2 * r] = c->recv_cnt[2 * r + 1] > 0;
    int rc = exchange_data(t, 0);
    if (rc == PARIO_OK && (rc = unpack_cycle(t, 0)) != PARIO_OK)
        fail(t, rc, "cannot place the data read");
    return rc;
}

/* ---- a quick read ---------------------------------------------------------------------
 * A settled read whose every rank's call is plain (a linear view, memory in
 * one block): every rank knows from the ranges what each aggregator sends
 * it and where it lands in its memory, and each aggregator what every rank
 * waits for, so no counts move, and a rank that does not aggregate makes
 * nothing that could fail. Each aggregator reserves its window and reads it
 * first, then sends every other rank its outcome beside the data of those
 * with bytes in its window (an empty message where its read failed, which
 * the receive allows): every rank learns of a failed aggregator in the step
 * that brings the data, and then they all agree on it. On the GlusterFS
 * test bed over TCP (2 nodes x 2 ranks), IOR's strided 4 KiB collective
 * reads spent an all-to-all of the counts per 16 KiB call beside the
 * allgather of ranges and the data; without it they ran 1.4-1.8x faster
 * (docs/benchmarks.md, "Quick reads: no counts"). */

/* An aggregator's window of the cycles (both halves when pipelined) and,
 * with whole ranges, the list of one piece per rank. */
static int windows_alloc(twophase *t) {
    int n = t->fh->nranks, nslots = t->pipelined ? 2 : 1;
    int64_t lists = t->p->whole ? (int64_t)n * 2 * (int64_t)sizeof(int64_t) : 0;
    for (int s = 0; t->p->my_aggr >= 0 && s < nslots; s++)
        if (grow(&t->window[s], t->p->cycle_bytes) != PARIO_OK ||
            (lists > 0 && grow(&t->cyc[s].meta_in, lists) != PARIO_OK))
            return PARIO_ERR_NO_MEM;
    return PARIO_OK;
}

/* Where file byte x of this rank's range lands in its memory. */
static char *plain_byte(const twophase *t, int64_t x) {
    const io_view *v = &t->fh->view;
    return (char *)t->buf + t->mt->true_lb + (x - v->disp - v->linear_base - t->pos);
}

/* The aggregator's window: reserved, its piece per rank from the ranges,
 * read. The outcome, as this rank's failure (described in fh->last). */
static int quick_window(twophase *t) {
    if (windows_alloc(t) != PARIO_OK) {
        fail(t, PARIO_ERR_NO_MEM, "out of memory for the aggregator's window");
        return t->rc;
    }
    read_whole_window(t);
    job_join(t);
    return t->rc;
}

/* The aggregators' outcomes: this rank's (out) to every other rank when it
 * aggregates, and each other aggregator's into in[its index]. */
static int post_outcomes(twophase *t, const int64_t *out, int64_t *in, int nreq) {
    pario_file *fh = t->fh;
    const coll_plan *p = t->p;
    for (int a = 0; a < p->naggr; a++)
        if (p->aggr[a] != fh->rank)
            MPI_Irecv(&in[a], 1, MPI_INT64_T, p->aggr[a], TAG_OUTCOME, fh->comm, &t->reqs[nreq++]);
    for (int r = 0; p->my_aggr >= 0 && r < fh->nranks; r++)
        if (r != fh->rank)
            MPI_Isend(out, 1, MPI_INT64_T, r, TAG_OUTCOME, fh->comm, &t->reqs[nreq++]);
    return nreq;
}

/* An aggregator's data: each rank's piece of its window (none where the
 * window failed), its own copied in place. */
static int post_quick_window(twophase *t, int64_t out, int nreq) {
    pario_file *fh = t->fh;
    const coll_plan *p = t->p;
    const cycle *c = &t->cyc[0];
    static char none;
    for (int r = 0; r < fh->nranks; r++) {
        int64_t s, e;
        range_piece(p, r, p->my_aggr, 0, &s, &e);
        if (e <= s)
            continue;
        char *at = out == PARIO_OK ? t->window[0].p + coll_plan_place(p, c->ws, s) : &none;
        int len = out == PARIO_OK ? (int)(e - s) : 0;
        if (r == fh->rank && len > 0)
            memcpy(plain_byte(t, s), at, (size_t)len);
        else if (r != fh->rank)
            MPI_Isend(at, len, MPI_BYTE, r, TAG_DATA, fh->comm, &t->reqs[nreq++]);
    }
    return nreq;
}

/* This rank's data from every other aggregator, in place. */
static int post_quick_receives(twophase *t, int nreq, int64_t *traded) {
    pario_file *fh = t->fh;
    const coll_plan *p = t->p;
    for (int a = 0; a < p->naggr; a++) {
        int64_t s, e;
        range_piece(p, fh->rank, a, 0, &s, &e);
        if (e <= s || p->aggr[a] == fh->rank)
            continue;
        *traded += e - s;
        MPI_Irecv(plain_byte(t, s), (int)(e - s), MPI_BYTE, p->aggr[a], TAG_DATA, fh->comm,
                  &t->reqs[nreq++]);
    }
    return nreq;
}

/* The quick read; *agree: some aggregator failed (every rank knows it
 * alike), so the ranks agree on the outcome. A message that did not move
 * fails the rank that saw it, held for the next sync or close as after a
 * settled read's counts. */
static int read_quick(twophase *t, int *agree) {
    pario_file *fh = t->fh;
    const coll_plan *p = t->p;
    double t0 = io_trace_clock(fh->trace);
    int64_t out = p->my_aggr >= 0 ? quick_window(t) : PARIO_OK;
    int64_t traded = 0, *in = t->cyc[1].send_cnt; /* one cycle: slot 1 is free */
    int nreq = p->my_aggr >= 0 ? post_quick_window(t, out, 0) : 0;
    nreq = post_quick_receives(t, nreq, &traded);
    nreq = post_outcomes(t, &out, in, nreq);
    int rc = wait_all(t->reqs, nreq);
    io_trace_exchange(fh->trace, traded, t0);
    int served = 1;
    for (int a = 0; a < p->naggr; a++)
        served &= (p->aggr[a] == fh->rank ? out : in[a]) == PARIO_OK;
    if (rc != PARIO_OK)
        pario_fail(&fh->last, rc, "read_all %s: exchange failed", fh->path);
    *agree = rc == PARIO_OK && !served;
    return rc != PARIO_OK ? rc : t->rc;
}

/* Writes: exchange cycle k into its half window, then store it in the
 * background while the next cycle is exchanged (one store at a time). */
static int write_cycles(twophase *t) {
    for (int64_t k = 0; k < t->p->ncycles; k++) {
        int slot = slot_of(t, k), rc;
        if ((rc = prepare_cycle(t, k, slot)) != PARIO_OK ||
            (rc = exchange_data(t, slot)) != PARIO_OK)
            return rc;
        job_join(t);
        job_start(t, slot);
    }
    return PARIO_OK;
}

/* Reads: cycle k+1's piece lists are exchanged and its runs read in the
 * background while cycle k's data is sent from the other half window. */
static int read_cycles(twophase *t) {
    int64_t n = t->p->ncycles;
    int rc = PARIO_OK;
    if (n > 0 && (rc = prepare_cycle(t, 0, 0)) != PARIO_OK)
        return rc;
    job_start(t, 0);
    for (int64_t k = 0; k < n; k++) {
        int slot = slot_of(t, k), next = slot_of(t, k + 1);
        int ahead = t->pipelined && k + 1 < n;
        if (ahead && (rc = prepare_cycle(t, k + 1, next)) != PARIO_OK)
            break;
        job_join(t); /* cycle k's window is full */
        if (ahead)
            job_start(t, next);
        if ((rc = exchange_data(t, slot)) != PARIO_OK)
            break;
        if ((rc = unpack_cycle(t, slot)) != PARIO_OK)
            fail(t, rc, "cannot place the data read");
        if (!t->pipelined && k + 1 < n) { /* one window: the next cycle starts after this one */
            if ((rc = prepare_cycle(t, k + 1, next)) != PARIO_OK)
                break;
            job_start(t, next);
        }
    }
    return rc;
}

static int cycle_alloc(cycle *c, int naggr) {
    c->send_at = calloc(2 * (size_t)naggr, sizeof *c->send_at);
    c->user_at = calloc((size_t)naggr, sizeof *c->user_at);
    c->seg_at = calloc((size_t)naggr + 1, sizeof *c->seg_at);
    return c->send_at && c->user_at && c->seg_at ? PARIO_OK : PARIO_ERR_NO_MEM;
}

static void cycle_free(cycle *c) {
    free(c->send_at);
    free(c->user_at);
    free(c->seg_at);
    free(c->segs.p);
    free(c->meta_out.p);
    free(c->data_out.p);
    free(c->meta_in.p);
    free(c->pieces.p);
}

static int twophase_alloc(twophase *t) {
    int n = t->fh->nranks, naggr = t->p->naggr, nslots = t->pipelined ? 2 : 1;
    t->streams = calloc((size_t)naggr, sizeof *t->streams);
    t->types = calloc((size_t)n + (size_t)naggr, sizeof *t->types);
    if (!t->streams || !t->types)
        return PARIO_ERR_NO_MEM;
    for (int s = 0; s < nslots; s++) /* before the counts: a failure reaches every rank */
        if (cycle_alloc(&t->cyc[s], naggr) != PARIO_OK)
            return PARIO_ERR_NO_MEM;
    return windows_alloc(t);
}

static void twophase_free(twophase *t) {
    free(t->streams);
    free(t->types);
    free(t->type_args.p);
    for (int i = 0; i < 2; i++) {
        cycle_free(&t->cyc[i]);
        free(t->window[i].p);
    }
}

/* Every call but a quick read: the set-up, cycle 0's counts, the cycles;
 * *agree: the outcome is still to be agreed (all but a settled read that
 * every rank began). */
static int run_cycles(twophase *t, const coll_call *c, int *agree) {
    pario_file *fh = t->fh;
    const char *op = t->write ? "write_all" : "read_all";
    int rc = twophase_alloc(t);
    if (rc == PARIO_OK) /* the route is taken only when every rank's part was decoded */
        rc = streams_open(t, c->pos, c->buf, c->count, c->mt, c->total);
    if (rc != PARIO_OK && fh->last.code == PARIO_OK)
        pario_fail(&fh->last, rc, "%s %s: cannot set up collective buffering", op, fh->path);
    t->rc = rc;
    rc = open_cycles(t);
    *agree = !(rc == PARIO_OK && t->settled && !t->aborted);
    if (rc == PARIO_OK && !t->aborted)
        rc = t->settled ? read_settled(t) : t->write ? write_cycles(t) : read_cycles(t);
    if (rc != PARIO_OK)
        pario_fail(&fh->last, rc, "%s %s: exchange failed", op, fh->path);
    job_join(t);
    if (rc == PARIO_OK)
        rc = t->write ? io_file_flushed(fh, t->rc) : t->rc; /* the writes reach the storage */
    return rc;
}

int coll_twophase(coll_call *c, const coll_plan *p) {
    pario_file *fh = c->fh;
    int write = c->write, n = fh->nranks;
    twophase t = {.fh = fh,
                  .p = p,
                  .reqs = fh->coll_requests,
                  .write = write,
                  .pipelined = p->halved,
                  .settled = !write && p->whole && p->ncycles == 1,
                  .pos = c->pos,
                  .buf = c->buf,
                  .count = c->count,
                  .mt = c->mt};
    for (int s = 0; s < 2; s++) { /* with the file: a rank whose set-up failed still sends */
        t.cyc[s].send_cnt = fh->coll_counts + (int64_t)4 * s * n;
        t.cyc[s].recv_cnt = t.cyc[s].send_cnt + (int64_t)2 * n;
    }
    t.quick = t.settled && c->plain;
    io_trace_plan(fh->trace, p->naggr, p->my_aggr >= 0 ? p->dom_start[p->my_aggr] : 0,
                  p->my_aggr >= 0 ? p->dom_end[p->my_aggr] : 0, p->cycle_bytes, p->ncycles);
    int agree = 1;
    int rc = t.quick ? read_quick(&t, &agree) : run_cycles(&t, c, &agree);
    streams_close(&t);
    twophase_free(&t);
    if (agree)
        return io_agree(fh->comm, rc, &fh->last);
    if (rc != PARIO_OK) /* this rank's alone: reported on every rank at the next sync or close */
        io_hold_failure(fh);
    return rc;
}
