/* Collective writes kept at the funnel (write-behind across nodes:
 * pario_cb_write_behind).
 *
 * Where write calls are request-bound (a network file system: every write
 * is a round trip to a server) a stream of small collective writes whose
 * parts make one run per call (IOR's strided 4 KiB calls, ior-hard's
 * 47,008-byte records) costs the funnel (small.c) one write request per
 * call. Here the funnel keeps such a run in its memory instead, answers
 * the ranks at once, and appends the next call's run when it follows on,
 * so that consecutive calls reach the file as one long write. On the
 * GlusterFS test bed over TCP this took IOR's strided 4 KiB collective
 * writes from 63-87 to 140-179 MiB/s (docs/benchmarks.md, "Collective
 * writes kept at the funnel").
 *
 * What keeps the guarantees of writing at once:
 *   - While it keeps a run the funnel holds a byte-range lock on the range
 *     the run may grow into, taken before it answers the first call of the
 *     run. Another rank that must see its own kept bytes (its independent
 *     accesses, get_size, a seek from the end) takes the same range for a
 *     moment and so waits until they are written. A lock that fails fails
 *     the call, on every rank.
 *   - The run is written when the next call's run does not follow on or
 *     does not fit, at every collective point that must see all written
 *     bytes (io_coll_kept_flush: sync, close, set_view, ...), before the
 *     funnel's own independent accesses, at MPI_Finalize for a file never
 *     closed, and by the flusher thread (kept.c) once it is
 *     FUNNEL_KEPT_MS old, whatever the program does meanwhile: a rank
 *     waiting for the lock waits no longer than that, and a program killed
 *     after its calls returned loses no byte the operating system had
 *     FUNNEL_KEPT_MS to receive.
 *   - A failure to write a kept run is write-behind, as for writes kept on
 *     one node: the funnel records it (naming the file and the cause) and
 *     reports it in its answer to the next collective write or at the next
 *     collective point, on every rank alike. Its own independent accesses
 *     report it there too.
 * Every rank knows from the funnel's last answer whether it keeps a run
 * (fh->funnel_kept_pending, the same on every rank) and which range it
 * holds locked.
 *
 * Each rank's own parts: where the funnel plans a call and the ranges send
 * each rank its own way (parts apart: IOR's segmented calls), each rank
 * keeps its part in a run of its own when it follows on (the same
 * structure, without a lock: only this rank must see its bytes before the
 * next collective point, and get_size counts every rank's kept parts by how
 * far they reach, io_coll_own_kept_end). The call then ends with the
 * funnel's answer. A rank writes its run before its part goes to the funnel
 * unless the part follows on it (coll_own_kept_before), before any other
 * write of its own in a collective call, at collective points, before its
 * own independent accesses, at MPI_Finalize and by the flusher; a failure
 * becomes its verdict in its next message to the funnel, which fails that
 * call on every rank, or is agreed at the next collective point. IOR's
 * segmented 4 KiB collective writes on the test bed: 26-32 -> 138-193 MiB/s. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "common/error.h"
#include "io/coll/coll_internal.h"
#include "io/indep/access.h"
#include "io/indep/cursor.h"

/* The oldest a kept run gets before the flusher writes it. */
#define FUNNEL_KEPT_MS 10

struct funnel_kept {
    pthread_mutex_t lock; /* the program's thread and the flusher */
    char *buf;
    int64_t cap;
    int64_t off, len; /* the run kept: file bytes [off, off + len) */
    int locked;       /* the file's bytes [off, off + cap) are locked */
    int own;          /* the run holds this rank's own parts (else a funnel's calls) */
    int64_t since;    /* ns, monotonic: when the run began to be kept */
    int rc;           /* the first failure to write a kept run, not yet reported */
    pario_error err;
};

/* Whether the funnel may keep writes of this file at all (its runs, or the
 * ranks their own parts: it decides for them). */
static int may_keep(const pario_file *fh) {
    return fh->write_call_bytes >= IO_REQUEST_BOUND_WRITE &&
           fh->hints.cb_write_behind != IO_DISABLE && !fh->atomic && !io_client_caches(&fh->io) &&
           fh->io.drv->lock && fh->io.drv->unlock;
}

static funnel_kept *kept_of(pario_file *fh) {
    if (fh->funnel_kept)
        return fh->funnel_kept;
    funnel_kept *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    k->cap = fh->hints.cb_buffer_size;
    k->buf = malloc((size_t)k->cap);
    if (!k->buf || pthread_mutex_init(&k->lock, NULL) != 0) {
        free(k->buf);
        free(k);
        return NULL;
    }
    fh->funnel_kept = k;
    return k;
}

/* With k->lock held: a failure to record for the next report (the first
 * one; the calls that met it returned success on every rank alike). */
static void record(funnel_kept *k, int rc, const pario_error *err) {
    if (rc != PARIO_OK && k->rc == PARIO_OK) {
        k->rc = rc;
        k->err = *err;
    }
}

/* With k->lock held: write the kept run, release its range. A failure is
 * recorded for the next report (err: where the writer records it) and
 * returned. */
static int write_run(pario_file *fh, funnel_kept *k, pario_error *err) {
    int rc = PARIO_OK;
    if (k->len > 0) {
        coll_piece p = {k->off, k->len, 0, k->buf};
        rc = coll_pieces_write(fh, &p, 1, 1, err);
        record(k, rc, err);
    }
    if (k->locked) {
        pario_error ignored;
        fh->io.drv->unlock(&fh->io, k->off, k->cap, &ignored);
    }
    k->len = 0;
    k->locked = 0;
    return rc;
}

/* With k->lock held: the recorded failure, taken into fh->last (it is
 * reported now on every rank). */
static int recorded(pario_file *fh, funnel_kept *k) {
    int rc = k->rc;
    if (rc != PARIO_OK)
        fh->last = k->err;
    k->rc = PARIO_OK;
    return rc;
}

/* With k->lock held: start keeping a run at off; a funnel's with its range
 * locked (a lock that fails fails the call, as any storage call does), a
 * rank's own without: only that rank must see its own bytes before the
 * next collective point (it writes them first), and get_size counts them
 * by how far they reach (io_coll_own_kept_end). */
static int start_run(pario_file *fh, funnel_kept *k, int64_t off, int own) {
    int rc = own ? PARIO_OK : fh->io.drv->lock(&fh->io, off, k->cap, 1, &fh->last);
    if (rc != PARIO_OK)
        return rc;
    k->own = own;
    k->off = off;
    k->len = 0;
    k->locked = !own;
    k->since = coll_now_ns();
    io_coll_flusher_poke(); /* it writes the run once FUNNEL_KEPT_MS old */
    return PARIO_OK;
}

static int64_t run_bytes(const coll_piece *p, int64_t m) {
    int64_t n = 0;
    for (int64_t i = 0; i < m; i++)
        n += p[i].len;
    return n;
}

int coll_funnel_write(pario_file *fh, const coll_piece *p, int64_t m, int one_run) {
    int wanted = one_run && m > 0 && may_keep(fh);
    funnel_kept *k = wanted ? kept_of(fh) : fh->funnel_kept;
    if (!k)
        return io_file_flushed(fh, coll_pieces_write(fh, p, m, 1, &fh->last));
    pthread_mutex_lock(&k->lock);
    int64_t bytes = run_bytes(p, m);
    int keepable = wanted && bytes <= k->cap;
    int follows = keepable && k->len > 0 && !k->own && p[0].off == k->off + k->len &&
                  k->len + bytes <= k->cap;
    if (!follows) /* what is kept reaches the file before anything after it */
        write_run(fh, k, &fh->last);
    int rc = keepable && !follows ? start_run(fh, k, p[0].off, 0) : PARIO_OK;
    if (rc == PARIO_OK && keepable) {
        for (int64_t i = 0; i < m; i++, k->len += p[i - 1].len)
            memcpy(k->buf + k->len, p[i].data, (size_t)p[i].len);
    } else if (rc == PARIO_OK) {
        rc = io_file_flushed(fh, coll_pieces_write(fh, p, m, 1, &fh->last));
    }
    int krc = recorded(fh, k);
    pthread_mutex_unlock(&k->lock);
    return krc != PARIO_OK ? krc : rc;
}

int coll_funnel_kept_write(pario_file *fh, int funnel_only) {
    funnel_kept *k = fh->funnel_kept;
    if (!k)
        return PARIO_OK;
    pthread_mutex_lock(&k->lock);
    int rc = PARIO_OK;
    if (!(funnel_only && k->own)) {
        write_run(fh, k, &fh->last);
        rc = recorded(fh, k);
    }
    pthread_mutex_unlock(&k->lock);
    return rc;
}

int coll_own_keep_wanted(const pario_file *fh) {
    return may_keep(fh);
}

int coll_funnel_kept_state(pario_file *fh, int64_t *lo, int64_t *hi) {
    funnel_kept *k = fh->funnel_kept;
    if (!k)
        return 0;
    pthread_mutex_lock(&k->lock);
    int kept = k->len > 0 || k->rc != PARIO_OK;
    *lo = k->off;
    *hi = k->locked ? k->off + k->cap : k->off;
    pthread_mutex_unlock(&k->lock);
    return kept;
}

int io_coll_funnel_kept_meet(pario_file *fh) {
    funnel_kept *k = fh->funnel_kept;
    int rc = PARIO_OK;
    if (k) { /* this rank's run, now; a failure is reported here too */
        pthread_mutex_lock(&k->lock);
        rc = write_run(fh, k, &fh->last);
        pthread_mutex_unlock(&k->lock);
    }
    if (rc != PARIO_OK || !fh->funnel_kept_pending || fh->rank == 0 || fh->funnel_kept_waited ||
        fh->funnel_kept_hi <= fh->funnel_kept_lo)
        return rc;
    int64_t lo = fh->funnel_kept_lo, len = fh->funnel_kept_hi - lo;
    /* exclusive: a shared lock needs a descriptor open for reading */
    rc = fh->io.drv->lock(&fh->io, lo, len, 1, &fh->last);
    if (rc == PARIO_OK)
        rc = fh->io.drv->unlock(&fh->io, lo, len, &fh->last);
    fh->funnel_kept_waited = rc == PARIO_OK;
    return rc;
}

int io_coll_funnel_kept_flush(pario_file *fh) {
    if (!fh->funnel_kept_pending && !fh->own_kept_pending)
        return PARIO_OK;
    fh->funnel_kept_pending = fh->own_kept_pending = 0;
    fh->own_kept_end = 0;
    return io_agree(fh->comm, coll_funnel_kept_write(fh, 0), &fh->last);
}

int64_t io_coll_own_kept_end(const pario_file *fh) {
    return fh->own_kept_end; /* 0 from the flush that ends the keeping on */
}

/* ---- each rank's own parts --------------------------------------------------------------- */

void coll_own_kept_write(pario_file *fh) {
    funnel_kept *k = fh->funnel_kept;
    if (!k)
        return;
    pthread_mutex_lock(&k->lock);
    if (k->own)
        write_run(fh, k, &fh->last);
    pthread_mutex_unlock(&k->lock);
}

static int one_extent(const coll_range *r) {
    return r->bytes > 0 && r->bytes == r->end - r->first;
}

int coll_own_kept_before(pario_file *fh, int rc, const coll_range *mine) {
    funnel_kept *k = fh->funnel_kept;
    if (!k)
        return rc;
    pthread_mutex_lock(&k->lock);
    if (k->own && k->len > 0 && !(one_extent(mine) && mine->first == k->off + k->len))
        write_run(fh, k, &fh->last);
    int krc = k->own ? recorded(fh, k) : PARIO_OK; /* the funnel reports its own */
    pthread_mutex_unlock(&k->lock);
    return rc != PARIO_OK ? rc : krc;
}

/* With k->lock held: this rank's part of c appended to its run at off. */
static int append_part(coll_call *c, funnel_kept *k) {
    io_mem_cursor m;
    int rc = io_mem_open(&m, c->mt, c->buf, c->count, 0);
    if (rc != PARIO_OK)
        return rc;
    io_mem_copy(&m, k->buf + k->len, c->total, 1);
    io_mem_close(&m);
    k->len += c->total;
    return PARIO_OK;
}

void coll_own_keep(coll_call *c, const coll_range *all) {
    pario_file *fh = c->fh;
    for (int r = 0; r < fh->nranks; r++)
        if (all[r].end > fh->own_kept_end && all[r].bytes > 0)
            fh->own_kept_end = all[r].end;
    fh->own_kept_pending = 1;
    c->moved = c->total;
    if (c->total == 0)
        return;
    funnel_kept *k = kept_of(fh); /* the funnel decided (c->keep_own), for every rank */
    int64_t first = c->mine.first;
    int fits = k && one_extent(&c->mine) && c->total <= k->cap;
    int rc = PARIO_OK;
    if (k)
        pthread_mutex_lock(&k->lock);
    int follows =
        fits && k->own && k->len > 0 && first == k->off + k->len && k->len + c->total <= k->cap;
    if (k && !follows)
        write_run(fh, k, &fh->last);
    if (fits && !follows)
        rc = start_run(fh, k, first, 1);
    if (fits && rc == PARIO_OK) {
        rc = append_part(c, k);
    } else { /* written at once; a failure waits for the next report, as a kept one's */
        int64_t moved = 0;
        rc = io_access(fh, 1, c->pos, c->buf, c->count, c->type, &moved);
    }
    if (k) {
        record(k, rc, &fh->last);
        pthread_mutex_unlock(&k->lock);
    } else if (rc != PARIO_OK) {
        io_hold_failure(fh);
    }
}

void coll_funnel_kept_heard(pario_file *fh, int kept, int64_t lo, int64_t hi) {
    fh->funnel_kept_pending = kept;
    fh->funnel_kept_waited = 0;
    fh->funnel_kept_lo = lo;
    fh->funnel_kept_hi = hi;
}

int64_t coll_funnel_kept_tick(pario_file *fh, int64_t now, pario_error *err) {
    funnel_kept *k = fh->funnel_kept;
    if (!k)
        return INT64_MAX;
    pthread_mutex_lock(&k->lock);
    int64_t due = k->len > 0 ? k->since + (int64_t)FUNNEL_KEPT_MS * 1000000 : INT64_MAX;
    if (now >= due) {
        write_run(fh, k, err);
        due = INT64_MAX;
    }
    pthread_mutex_unlock(&k->lock);
    return due;
}

void io_coll_funnel_kept_free(pario_file *fh) {
    funnel_kept *k = fh->funnel_kept;
    if (!k)
        return;
    write_run(fh, k, &fh->last); /* nothing left after close's flush; a failed open's */
    pthread_mutex_destroy(&k->lock);
    free(k->buf);
    free(k);
    fh->funnel_kept = NULL;
}
