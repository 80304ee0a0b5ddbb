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
 * Writes over several cycles are pipelined: the window is split into two
 * halves, and while a background writer (plain pwrite calls, never MPI)
 * stores cycle k from one half, the exchange of cycle k+1 fills the other.
 * The aggregator still holds at most cb_buffer_size bytes. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "common/error.h"
#include "io/coll/coll_internal.h"
#include "io/indep/cursor.h"
#include "io/view/view.h"

/* Message tags of the exchange, distinct from anything else on the file's
 * private communicator. */
enum { TAG_META = 0x7a01, TAG_DATA = 0x7a02 };
/* What one system call costs in bytes of transfer (see indep/access.c). */
#define COLL_SYSCALL_BYTES ((int64_t)16 << 10)

/* This rank's data bound for one aggregator's domain. */
typedef struct coll_stream {
    io_file_cursor file;
    io_mem_cursor mem;
    int64_t left; /* data bytes of this rank not yet sent anywhere past here */
    int open;
} coll_stream;

typedef struct growbuf {
    char *p;
    int64_t cap;
} growbuf;

/* One cycle's store, run by a background thread. */
typedef struct writer {
    pthread_t thread;
    io_handle *io;
    const char *window;
    const struct run *runs;
    int64_t nruns, ws;
    int slot; /* the half of the window it reads */
    int rc;
    pario_error err; /* the thread's own record: fh->last belongs to the caller */
} writer;

typedef struct twophase {
    pario_file *fh;
    const coll_plan *p;
    int write;
    coll_stream *streams; /* one per aggregator */
    int64_t *send_cnt;    /* per rank: pieces, bytes I send it this cycle */
    int64_t *recv_cnt;    /* per rank: pieces, bytes it sends me */
    int64_t *send_at;     /* per aggregator: first piece index and first data byte */
    char **user_at;       /* per aggregator: this cycle's data in place in user memory
                             (contiguous memory: sent or received with no copy), or NULL */
    int64_t out_bytes;    /* data bytes this rank moves this cycle */
    int packs;            /* user memory is noncontiguous: data goes through data_out */
    growbuf meta_out, data_out, meta_in;
    growbuf window[2], pieces[2]; /* cycle k uses slot k % 2 when pipelined, else slot 0 */
    int pipelined;
    struct writer *writer; /* background store of the previous cycle, or NULL */
    MPI_Request *reqs;
    MPI_Datatype *types;
    int rc; /* first local failure; the cycles go on so nobody waits */
} twophase;

static int grow(growbuf *g, int64_t bytes) {
    return io_scratch_reserve(&g->p, &g->cap, bytes > 0 ? bytes : 1);
}

static void fail(twophase *t, int rc, const char *what) {
    if (t->rc == PARIO_OK)
        t->rc = pario_fail(&t->fh->last, rc, "%s %s: %s", t->write ? "write_all" : "read_all",
                           t->fh->path, what);
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
        t->packs |= s->mem.contig == NULL;
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

/* Append this rank's pieces inside aggregator a's window [ws, we). */
static int collect_pieces(twophase *t, int a, int64_t ws, int64_t we, int64_t *npieces,
                          int64_t *nbytes) {
    coll_stream *s = &t->streams[a];
    int64_t off, len;
    while (s->left > 0 && io_file_peek(&s->file, s->left, &off, &len) && off < we) {
        if (off < ws)
            return PARIO_ERR_INTERN; /* the stream skipped a window: a planning bug */
        len = off + len > we ? we - off : len;
        int64_t n = *npieces;
        if (grow(&t->meta_out, (n + 1) * 2 * (int64_t)sizeof(int64_t)) != PARIO_OK)
            return PARIO_ERR_NO_MEM;
        int64_t *m = (int64_t *)t->meta_out.p;
        m[2 * n] = off;
        m[2 * n + 1] = len;
        if (s->mem.contig) {
            s->mem.contig += len; /* the data goes straight from/to user memory */
        } else if (t->write) {
            if (grow(&t->data_out, *nbytes + len) != PARIO_OK)
                return PARIO_ERR_NO_MEM;
            io_mem_copy(&s->mem, t->data_out.p + *nbytes, len, 1);
        }
        io_file_take(&s->file, len);
        s->left -= len;
        *npieces = n + 1;
        *nbytes += len;
    }
    return PARIO_OK;
}

static int collect_cycle(twophase *t, int64_t k) {
    const coll_plan *p = t->p;
    int64_t npieces = 0, nbytes = 0;
    memset(t->send_cnt, 0, 2 * (size_t)t->fh->nranks * sizeof *t->send_cnt);
    for (int a = 0; a < p->naggr; a++) {
        int64_t ws, we, n0 = npieces, b0 = nbytes;
        coll_plan_window(p, a, k, &ws, &we);
        t->send_at[2 * a] = n0;
        t->send_at[2 * a + 1] = b0;
        t->user_at[a] = t->streams[a].open ? t->streams[a].mem.contig : NULL;
        if (ws < we) {
            int rc = collect_pieces(t, a, ws, we, &npieces, &nbytes);
            if (rc != PARIO_OK)
                return rc;
        }
        t->send_cnt[2 * p->aggr[a]] = npieces - n0;
        t->send_cnt[2 * p->aggr[a] + 1] = nbytes - b0;
    }
    t->out_bytes = nbytes;
    return PARIO_OK;
}

static int wait_all(MPI_Request *reqs, int n) {
    if (n == 0)
        return PARIO_OK;
    return MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE) == MPI_SUCCESS ? PARIO_OK : PARIO_ERR_COMM;
}

/* Send my piece lists to the aggregators; aggregators receive everyone's. */
static int exchange_meta(twophase *t, int64_t *nin) {
    pario_file *fh = t->fh;
    int nreq = 0;
    *nin = 0;
    for (int r = 0; r < fh->nranks; r++)
        *nin += t->recv_cnt[2 * r];
    if (grow(&t->meta_in, *nin * 2 * (int64_t)sizeof(int64_t)) != PARIO_OK)
        return PARIO_ERR_NO_MEM;
    int64_t at = 0;
    for (int r = 0; r < fh->nranks; r++) {
        int64_t n = t->recv_cnt[2 * r];
        if (n > 0)
            MPI_Irecv((int64_t *)t->meta_in.p + 2 * at, (int)(2 * n), MPI_INT64_T, r, TAG_META,
                      fh->comm, &t->reqs[nreq++]);
        at += n;
    }
    for (int a = 0; a < t->p->naggr; a++) {
        int dst = t->p->aggr[a];
        int64_t n = t->send_cnt[2 * dst];
        if (n > 0)
            MPI_Isend((int64_t *)t->meta_out.p + 2 * t->send_at[2 * a], (int)(2 * n), MPI_INT64_T,
                      dst, TAG_META, fh->comm, &t->reqs[nreq++]);
    }
    return wait_all(t->reqs, nreq);
}

/* The pieces rank r sent, as a datatype over the window buffer starting at ws. */
static int pieces_type(const int64_t *m, int64_t n, int64_t ws, MPI_Datatype *type) {
    int *lens = malloc((size_t)n * sizeof *lens);
    MPI_Aint *disps = malloc((size_t)n * sizeof *disps);
    int rc = lens && disps ? PARIO_OK : PARIO_ERR_NO_MEM;
    for (int64_t i = 0; rc == PARIO_OK && i < n; i++) {
        disps[i] = (MPI_Aint)(m[2 * i] - ws);
        lens[i] = (int)m[2 * i + 1];
    }
    if (rc == PARIO_OK &&
        (MPI_Type_create_hindexed((int)n, lens, disps, MPI_BYTE, type) != MPI_SUCCESS ||
         MPI_Type_commit(type) != MPI_SUCCESS))
        rc = PARIO_ERR_COMM;
    free(lens);
    free(disps);
    return rc;
}

/* ---- phase 2: the aggregator's file access ------------------------------------------ */

typedef struct run {
    int64_t off, end;
} run;

static int cmp_run(const void *a, const void *b) {
    const run *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Sorted, merged runs of all pieces received this cycle. */
static int window_runs(twophase *t, int slot, int64_t nin, run **out, int64_t *nruns) {
    if (grow(&t->pieces[slot], nin * (int64_t)sizeof(run)) != PARIO_OK)
        return PARIO_ERR_NO_MEM;
    run *r = (run *)t->pieces[slot].p;
    const int64_t *m = (const int64_t *)t->meta_in.p;
    for (int64_t i = 0; i < nin; i++)
        r[i] = (run){m[2 * i], m[2 * i] + m[2 * i + 1]};
    qsort(r, (size_t)nin, sizeof *r, cmp_run);
    int64_t n = 0;
    for (int64_t i = 0; i < nin; i++) {
        if (n > 0 && r[i].off <= r[n - 1].end) {
            if (r[i].end > r[n - 1].end)
                r[n - 1].end = r[i].end;
        } else {
            r[n++] = r[i];
        }
    }
    *out = r;
    *nruns = n;
    return PARIO_OK;
}

static int write_runs(io_handle *io, const char *window, const run *r, int64_t n, int64_t ws,
                      pario_error *err) {
    for (int64_t i = 0; i < n; i++) {
        int rc = io->drv->pwrite(io, window + (r[i].off - ws), r[i].end - r[i].off, r[i].off, err);
        if (rc != PARIO_OK)
            return rc;
    }
    return PARIO_OK;
}

static void *writer_main(void *arg) {
    writer *w = arg;
    w->rc = write_runs(w->io, w->window, w->runs, w->nruns, w->ws, &w->err);
    return NULL;
}

/* Wait for the background store of the previous cycle; its failure becomes ours. */
static void writer_join(twophase *t) {
    if (!t->writer)
        return;
    pthread_join(t->writer->thread, NULL);
    if (t->writer->rc != PARIO_OK && t->rc == PARIO_OK) {
        t->fh->last = t->writer->err;
        t->rc = t->writer->rc;
    }
    free(t->writer);
    t->writer = NULL;
}

/* Store a cycle's runs: in the background when pipelined (joined before
 * its half of the window is reused), else right here. */
static void store_cycle(twophase *t, int slot, const run *runs, int64_t nruns, int64_t ws) {
    pario_file *fh = t->fh;
    if (t->pipelined) {
        writer *w = calloc(1, sizeof *w);
        if (w) {
            *w = (writer){.io = &fh->io,
                          .window = t->window[slot].p,
                          .runs = runs,
                          .nruns = nruns,
                          .ws = ws,
                          .slot = slot};
            if (pthread_create(&w->thread, NULL, writer_main, w) == 0) {
                t->writer = w;
                return;
            }
            free(w);
        }
    }
    int rc = write_runs(&fh->io, t->window[slot].p, runs, nruns, ws, &fh->last);
    if (rc != PARIO_OK && t->rc == PARIO_OK)
        t->rc = rc;
}

static int read_runs(twophase *t, const run *r, int64_t n, int64_t ws) {
    pario_file *fh = t->fh;
    if (n == 0)
        return PARIO_OK;
    int64_t span = r[n - 1].end - r[0].off, data = 0;
    for (int64_t i = 0; i < n; i++)
        data += r[i].end - r[i].off;
    int whole = span - data < (n - 1) * COLL_SYSCALL_BYTES;
    for (int64_t i = 0; i < n; i++) {
        int64_t off = r[i].off, len = whole ? span : r[i].end - r[i].off, got = 0;
        char *at = t->window[0].p + (off - ws);
        int rc = fh->io.drv->pread(&fh->io, at, len, off, &got, &fh->last);
        if (rc != PARIO_OK)
            return rc;
        memset(at + got, 0, (size_t)(len - got));
        if (whole)
            break;
    }
    return PARIO_OK;
}

/* ---- one cycle ---------------------------------------------------------------------- */

/* Post the data transfers: aggregators through per-sender piece types over
 * the window, the others from/to their packed buffer. */
/* This rank's data for aggregator a this cycle: in place in user memory or
 * in the packed buffer. */
static char *my_data_for(twophase *t, int a) {
    return t->user_at[a] ? t->user_at[a] : t->data_out.p + t->send_at[2 * a + 1];
}

/* An aggregator's own pieces need no message: copy them between its data and
 * the window directly. */
static void exchange_with_self(twophase *t, int slot, int64_t ws, const int64_t *m, int64_t n) {
    char *mine = my_data_for(t, t->p->my_aggr), *window = t->window[slot].p;
    for (int64_t i = 0; i < n; i++) {
        char *in_window = window + (m[2 * i] - ws);
        size_t len = (size_t)m[2 * i + 1];
        if (t->write)
            memcpy(in_window, mine, len);
        else
            memcpy(mine, in_window, len);
        mine += len;
    }
}

static int exchange_data(twophase *t, int slot, int64_t ws) {
    pario_file *fh = t->fh;
    int nreq = 0, ntypes = 0, rc = PARIO_OK;
    const int64_t *m = (const int64_t *)t->meta_in.p;
    if (!t->write && t->packs && grow(&t->data_out, t->out_bytes) != PARIO_OK)
        return PARIO_ERR_NO_MEM;
    for (int r = 0, at = 0; r < fh->nranks; at += (int)t->recv_cnt[2 * r], r++) {
        int64_t n = t->recv_cnt[2 * r];
        if (n == 0)
            continue;
        if (r == fh->rank) {
            exchange_with_self(t, slot, ws, m + 2 * at, n);
            continue;
        }
        if ((rc = pieces_type(m + 2 * at, n, ws, &t->types[ntypes])) != PARIO_OK)
            break;
        if (t->write)
            MPI_Irecv(t->window[slot].p, 1, t->types[ntypes], r, TAG_DATA, fh->comm,
                      &t->reqs[nreq++]);
        else
            MPI_Isend(t->window[slot].p, 1, t->types[ntypes], r, TAG_DATA, fh->comm,
                      &t->reqs[nreq++]);
        ntypes++;
    }
    for (int a = 0; rc == PARIO_OK && a < t->p->naggr; a++) {
        int dst = t->p->aggr[a];
        int64_t bytes = t->send_cnt[2 * dst + 1];
        char *at = my_data_for(t, a);
        if (bytes == 0 || dst == fh->rank)
            continue;
        if (t->write)
            MPI_Isend(at, (int)bytes, MPI_BYTE, dst, TAG_DATA, fh->comm, &t->reqs[nreq++]);
        else
            MPI_Irecv(at, (int)bytes, MPI_BYTE, dst, TAG_DATA, fh->comm, &t->reqs[nreq++]);
    }
    int wrc = wait_all(t->reqs, nreq);
    if (rc == PARIO_OK)
        rc = wrc;
    for (int i = 0; i < ntypes; i++)
        MPI_Type_free(&t->types[i]);
    return rc;
}

/* Reads: hand the data received from each aggregator to the user's memory. */
static void unpack_cycle(twophase *t) {
    for (int a = 0; a < t->p->naggr; a++) {
        int64_t bytes = t->send_cnt[2 * t->p->aggr[a] + 1];
        if (bytes > 0 && !t->user_at[a])
            io_mem_copy(&t->streams[a].mem, t->data_out.p + t->send_at[2 * a + 1], bytes, 0);
    }
}

static int run_cycle(twophase *t, int64_t k) {
    pario_file *fh = t->fh;
    int slot = t->pipelined ? (int)(k % 2) : 0;
    int rc = collect_cycle(t, k);
    if (rc != PARIO_OK)
        fail(t, rc, "cannot describe this rank's pieces");
    if (MPI_Alltoall(t->send_cnt, 2, MPI_INT64_T, t->recv_cnt, 2, MPI_INT64_T, fh->comm) !=
        MPI_SUCCESS)
        return PARIO_ERR_COMM;
    int64_t nin = 0, ws = 0, we = 0, nruns = 0;
    if ((rc = exchange_meta(t, &nin)) != PARIO_OK)
        return rc;
    run *runs = NULL;
    if (t->writer && t->writer->slot == slot)
        writer_join(t); /* this half is about to be refilled */
    if (t->p->my_aggr >= 0) {
        coll_plan_window(t->p, t->p->my_aggr, k, &ws, &we);
        if (window_runs(t, slot, nin, &runs, &nruns) != PARIO_OK)
            return PARIO_ERR_NO_MEM;
        if (!t->write && t->rc == PARIO_OK && (rc = read_runs(t, runs, nruns, ws)) != PARIO_OK)
            fail(t, rc, "aggregator read failed");
    }
    if ((rc = exchange_data(t, slot, ws)) != PARIO_OK)
        return rc;
    if (t->write && nruns > 0) {
        writer_join(t); /* one store at a time: the previous cycle's, from the other half */
        if (t->rc == PARIO_OK)
            store_cycle(t, slot, runs, nruns, ws);
    }
    if (!t->write)
        unpack_cycle(t);
    return PARIO_OK;
}

static int twophase_alloc(twophase *t) {
    int n = t->fh->nranks;
    t->streams = calloc((size_t)t->p->naggr, sizeof *t->streams);
    t->send_cnt = calloc(2 * (size_t)n, sizeof *t->send_cnt);
    t->recv_cnt = calloc(2 * (size_t)n, sizeof *t->recv_cnt);
    t->send_at = calloc(2 * (size_t)t->p->naggr, sizeof *t->send_at);
    t->user_at = calloc((size_t)t->p->naggr, sizeof *t->user_at);
    t->reqs = calloc(2 * (size_t)n + 2 * (size_t)t->p->naggr, sizeof *t->reqs);
    t->types = calloc((size_t)n, sizeof *t->types);
    int64_t window = t->p->my_aggr >= 0 ? t->p->cycle_bytes : 0;
    if (!t->streams || !t->send_cnt || !t->recv_cnt || !t->send_at || !t->user_at || !t->reqs ||
        !t->types || grow(&t->window[0], window) != PARIO_OK ||
        (t->pipelined && grow(&t->window[1], window) != PARIO_OK))
        return PARIO_ERR_NO_MEM;
    return PARIO_OK;
}

static void twophase_free(twophase *t) {
    free(t->streams);
    free(t->send_cnt);
    free(t->recv_cnt);
    free(t->send_at);
    free(t->user_at);
    free(t->reqs);
    free(t->types);
    free(t->meta_out.p);
    free(t->data_out.p);
    free(t->meta_in.p);
    for (int i = 0; i < 2; i++) {
        free(t->window[i].p);
        free(t->pieces[i].p);
    }
}

int coll_twophase(pario_file *fh, const coll_plan *p, int rc, int write, int64_t pos, void *buf,
                  MPI_Count count, MPI_Datatype type, int64_t total) {
    twophase t = {.fh = fh, .p = p, .write = write, .pipelined = write && p->halved};
    const flat_type *mt = NULL;
    if (rc == PARIO_OK)
        rc = twophase_alloc(&t);
    if (rc == PARIO_OK)
        rc = flat_get(type, &mt);
    if (rc == PARIO_OK)
        rc = streams_open(&t, pos, buf, count, mt, total);
    if (rc != PARIO_OK && fh->last.code == PARIO_OK)
        pario_fail(&fh->last, rc, "%s %s: cannot set up collective buffering",
                   write ? "write_all" : "read_all", fh->path);
    rc = io_agree(fh->comm, rc, &fh->last);
    for (int64_t k = 0; rc == PARIO_OK && k < p->ncycles; k++)
        if ((rc = run_cycle(&t, k)) != PARIO_OK)
            pario_fail(&fh->last, rc, "%s %s: exchange failed", write ? "write_all" : "read_all",
                       fh->path);
    writer_join(&t);
    if (rc == PARIO_OK)
        rc = t.rc;
    streams_close(&t);
    twophase_free(&t);
    return io_agree(fh->comm, rc, &fh->last);
}
