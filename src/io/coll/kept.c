/* Kept collective writes (write-behind: pario_cb_write_behind).
 *
 * When every rank's view maps its data to one contiguous extent and all
 * ranks share one node, a collective write gains nothing from moving data
 * between ranks except fewer, larger system calls; what it costs is its
 * synchronisation, every call. Here such a write sends no message. Each
 * rank copies its part into its own slice of a shared-memory window (two
 * two-phase cycles in all) and publishes it, unless the part is large and
 * well-formed, which the rank writes at once itself. A slice has two
 * halves: while a rank fills one, the pieces of the other are written.
 * Any rank can write the published pieces of the calls every rank has
 * finished, under a lock kept in the window: sorted by offset, one pwritev
 * per run of adjacent pieces, straight from the window, so each call's
 * pieces reach the file together as long runs. A rank does that when its
 * half is full (waiting, if need be, for slower ranks to finish earlier
 * calls), before its own independent accesses, get_size or a seek from the
 * end (then with all of its own pieces, so it reads its own writes), and
 * rank 0 does it at every collective point that must see all kept bytes
 * (sync, close, set_view, set_size, preallocate, set_info, set_atomicity, a
 * collective access that is not kept), where the outcome is agreed. MPI's
 * nonatomic mode promises other ranks a write only after sync or close.
 * Kept bytes do not wait for that, however: a thread of the process (the
 * flusher) writes the pieces of finished calls within
 * pario_cb_write_behind_delay, so a program killed then loses none, and
 * MPI_Finalize writes those of files never closed (io/file/registry.c).
 *
 * The window outlives the file: it is made on the file's communicator and
 * waits with it (fh->kept_idle, parked and taken with it by
 * io/file/parked.c, freed with it) for the next file opened there.
 *
 * What changes for the program: a kept call checks its arguments on its own
 * rank only (a bad argument fails that rank; the others' parts are kept).
 * Storing kept bytes is write-behind, like POSIX write-back where fsync and
 * close report ENOSPC: a kept call never returns a failure to store them,
 * whichever rank met it (it met it writing pieces of any rank, or this
 * rank's own part written at once). The first such failure is recorded in
 * the window, naming the file and the cause, and the next collective point
 * reports it on every rank, where the outcome is agreed anyway; so no rank
 * leaves the calls the others go on making. No rank waits for another
 * beyond a short bound either (make_room). An independent access, get_size
 * or a seek from the end that writes the rank's own pieces first reports a
 * failure there too. Overlapping writes of different ranks land in call
 * order when they reach the file together, in an unspecified order
 * otherwise (MPI leaves that undefined without sync).
 * pario_cb_write_behind=disable turns all this off. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/error.h"
#include "io/coll/coll_internal.h"
#include "io/indep/access.h"
#include "io/indep/cursor.h"

/* Pieces one rank's slice holds. */
#define KEPT_PIECES 4096
/* Largest sum of all ranks' slices. */
#define KEPT_ALL_MAX ((int64_t)1 << 30)
/* Largest well-formed part kept (a part that starts and ends on stripe-unit
 * boundaries); a larger one is written at once by its rank, still without a
 * message, since its copy into the window costs about what its own pwrite
 * does. Parts that are not well-formed are kept up to half a slice: ranks
 * writing pieces of one block contend for it, and the window turns them
 * into well-formed runs. Measured (pario bench ior, 4 ranks, medians of 5):
 * keeping everything, segmented-64k-coll 1715 and 1706 MiB/s, strided-1m
 * 2944 and 2326; keeping well-formed parts up to 32 KiB only, 3039 and
 * 3007, 3954 and 3902. hard-coll (47,008 B, never well-formed): kept 2493
 * and 2767, written at once 1973 and 1913. */
#define KEPT_PART_MAX ((int64_t)32 << 10)
/* How long a rank whose half is full waits for slower ranks to finish their
 * earlier calls before it writes its own pieces alone (make_room). Waiting
 * is what lets a call's pieces reach the file together, so it must outlast
 * a rank merely waiting for a processor: several scheduler time slices. In
 * pario bench ior (strided-4k-coll and hard-coll, 4 ranks on 2 cores busy
 * with other work, 5 repetitions) no rank ever waited that long. */
#define KEPT_WAIT_NS ((int64_t)20 * 1000 * 1000)

/* A kept piece: file extent, the collective call it came from, where its
 * bytes are in the slice's data. */
typedef struct kept_piece {
    int64_t off, len, seq, at;
} kept_piece;

/* The head of every slice. The lock and the failure record are used in
 * rank 0's slice only. */
typedef struct slice_head {
    pthread_mutex_t lock;          /* process-shared: whoever writes pieces holds it */
    _Atomic int64_t committed;     /* pieces the owner has published (ever) */
    _Atomic int64_t consumed;      /* of them, written to the file (under the lock) */
    _Atomic int64_t done;          /* collective writes this rank has finished */
    int failed;                    /* first failure of a write of kept pieces ... */
    char msg[PARIO_ERROR_MSG_MAX]; /* ... and its message */
} slice_head;

typedef struct kept_window kept_window;

/* One window: every rank's slice is a head, a ring of KEPT_PIECES pieces
 * (piece i at i % KEPT_PIECES) and cap bytes of data in two halves. A rank
 * fills one half while the other may still be waiting to be written. */
struct kept_window {
    MPI_Win win;
    int locked; /* in its passive-target epoch (MPI_Win_lock_all) */
    int nranks, rank;
    int64_t cap;
    char **slice;      /* every rank's slice */
    int half;          /* the half this rank fills */
    int64_t pos;       /* bytes of it filled */
    int64_t in_half;   /* pieces in it */
    int64_t end_of[2]; /* pieces committed when each half was last filled */
    int64_t calls;     /* collective writes kept or considered with this window */
    coll_piece *all;   /* room for every rank's pieces when writing them (lock held) */
    /* pario_cb_write_behind_delay of the latest kept call, for the flusher */
    _Atomic int64_t delay_ms;
    /* The flusher's own: the calls every rank had finished at its last tick,
     * and when that was (ns, monotonic clock). */
    int64_t aged, ticked_at;
};

static slice_head *head_of(const kept_window *w, int r) {
    return (slice_head *)w->slice[r];
}

static kept_piece *pieces_of(const kept_window *w, int r) {
    return (kept_piece *)(w->slice[r] + sizeof(slice_head));
}

static char *data_of(const kept_window *w, int r) {
    return w->slice[r] + sizeof(slice_head) + KEPT_PIECES * sizeof(kept_piece);
}

int64_t coll_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* ---- the window ---------------------------------------------------------------------- */

/* After MPI_Finalize began: the window is MPI's to tear down. */
static void window_forget(kept_window *w) {
    free(w->slice);
    free(w->all);
    free(w);
}

static void window_free(kept_window *w) {
    if (!w)
        return;
    if (w->win != MPI_WIN_NULL) {
        if (w->locked && w->rank == 0)
            pthread_mutex_destroy(&head_of(w, 0)->lock);
        if (w->locked)
            MPI_Win_unlock_all(w->win);
        MPI_Win_free(&w->win);
    }
    window_forget(w);
}

static int init_lock(slice_head *h) {
    pthread_mutexattr_t a;
    int rc = pthread_mutexattr_init(&a);
    if (rc == 0)
        rc = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    if (rc == 0)
        rc = pthread_mutex_init(&h->lock, &a);
    pthread_mutexattr_destroy(&a);
    return rc == 0 ? PARIO_OK : PARIO_ERR_INTERN;
}

/* Where every slice is; rank 0 makes the lock. */
static int window_map(kept_window *w) {
    w->slice = malloc((size_t)w->nranks * sizeof *w->slice);
    w->all = malloc((size_t)w->nranks * KEPT_PIECES * sizeof *w->all);
    if (!w->slice || !w->all)
        return PARIO_ERR_NO_MEM;
    for (int r = 0; r < w->nranks; r++) {
        MPI_Aint size = 0;
        int unit = 0;
        if (MPI_Win_shared_query(w->win, r, &size, &unit, &w->slice[r]) != MPI_SUCCESS)
            return PARIO_ERR_COMM;
    }
    memset(head_of(w, w->rank), 0, sizeof(slice_head));
    if (w->rank == 0 && init_lock(head_of(w, 0)) != PARIO_OK)
        return PARIO_ERR_INTERN;
    w->locked = MPI_Win_lock_all(MPI_MODE_NOCHECK, w->win) == MPI_SUCCESS;
    return w->locked ? PARIO_OK : PARIO_ERR_COMM;
}

/* Collective: a new window of cap bytes of data per rank; *out NULL when
 * it could not be made on some rank (the same on every rank). */
static int window_new(MPI_Comm comm, int64_t cap, kept_window **out) {
    kept_window *w = calloc(1, sizeof *w);
    int rc = w ? PARIO_OK : PARIO_ERR_NO_MEM;
    if (w) {
        w->win = MPI_WIN_NULL;
        w->cap = cap;
        MPI_Comm_rank(comm, &w->rank);
        MPI_Comm_size(comm, &w->nranks);
        char *base = NULL;
        MPI_Aint bytes = (MPI_Aint)(sizeof(slice_head) + KEPT_PIECES * sizeof(kept_piece) + cap);
        if (MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, comm, &base, &w->win) != MPI_SUCCESS)
            rc = PARIO_ERR_NO_MEM;
        else /* failures come back as codes, as on the file's communicator */
            MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN);
    }
    if (rc == PARIO_OK)
        rc = window_map(w);
    int ok = rc == PARIO_OK, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, comm); /* the lock exists after this */
    if (!all) {
        window_free(w);
        w = NULL;
    }
    *out = w;
    return all ? PARIO_OK : PARIO_ERR_NO_MEM;
}

void io_coll_kept_window_free(kept_window *w) {
    window_free(w);
}

/* ---- writing kept pieces ---------------------------------------------------------------- */

static int by_call(const void *a, const void *b) {
    const coll_piece *x = a, *y = b;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Write n pieces: sorted by offset, one pwritev per run of adjacent ones;
 * when two overlap, one by one in the order of their calls (a later call's
 * bytes win). */
static int write_sorted(pario_file *fh, coll_piece *p, int64_t n, pario_error *err) {
    int overlap = coll_pieces_sort(p, n);
    if (overlap) /* stable enough: one rank's pieces of one call never overlap */
        qsort(p, (size_t)n, sizeof *p, by_call);
    return coll_pieces_write(fh, p, n, !overlap, err);
}

/* The collective writes every rank has finished: all their pieces are
 * published (a rank publishes its piece of a call before it counts the
 * call done). */
static int64_t calls_done_by_all(const kept_window *w) {
    int64_t d = INT64_MAX;
    for (int r = 0; r < w->nranks; r++) {
        int64_t x = atomic_load_explicit(&head_of(w, r)->done, memory_order_acquire);
        d = x < d ? x : d;
    }
    return d;
}

/* With the lock held: the first failure to store kept bytes since the last
 * collective point (err holds its message, which names the file and the
 * cause), for that point to report on every rank. */
static void record_failure(kept_window *w, int rc, const pario_error *err) {
    slice_head *h0 = head_of(w, 0);
    if (rc != PARIO_OK && !h0->failed) {
        h0->failed = rc;
        snprintf(h0->msg, sizeof h0->msg, "%s", err->msg);
    }
}

/* With the lock held: write the published, unwritten pieces of the calls up
 * to limit (calls every rank has finished), so that each call's pieces reach
 * the file together and coalesce into long runs; with mine_all, also every
 * piece of this rank (it must read its own writes, or cannot wait). Each
 * rank's pieces go in call order: a write takes a prefix of its ring. Pieces
 * count as written even when writing failed (the failure is recorded for the
 * next collective point), so no piece is written twice. */
static int write_published(pario_file *fh, kept_window *w, int64_t limit, int mine_all,
                           pario_error *err) {
    int64_t upto[COLL_KEPT_MAX_RANKS], n = 0;
    for (int r = 0; r < w->nranks; r++) {
        int64_t end = atomic_load_explicit(&head_of(w, r)->committed, memory_order_acquire);
        int64_t i = atomic_load_explicit(&head_of(w, r)->consumed, memory_order_relaxed);
        for (; i < end; i++) {
            const kept_piece *p = &pieces_of(w, r)[i % KEPT_PIECES];
            if (p->seq > limit && !(mine_all && r == w->rank))
                break;
            w->all[n++] = (coll_piece){p->off, p->len, p->seq, data_of(w, r) + p->at};
        }
        upto[r] = i;
    }
    int rc = write_sorted(fh, w->all, n, err);
    for (int r = 0; r < w->nranks; r++) /* the owner may fill their half again */
        atomic_store_explicit(&head_of(w, r)->consumed, upto[r], memory_order_release);
    record_failure(w, rc, err);
    return rc;
}

/* Which calls' pieces a writer takes beside its own (write_locked). */
enum { UPTO_DONE_BY_ALL = -1 };

/* write_published under the window's lock; limit UPTO_DONE_BY_ALL: the
 * calls every rank has finished, read with the lock held. */
static int write_locked(pario_file *fh, kept_window *w, int64_t limit, int mine_all,
                        pario_error *err) {
    pthread_mutex_lock(&head_of(w, 0)->lock);
    if (limit == UPTO_DONE_BY_ALL)
        limit = calls_done_by_all(w);
    int rc = write_published(fh, w, limit, mine_all, err);
    pthread_mutex_unlock(&head_of(w, 0)->lock);
    return rc;
}

static int write_all_published(pario_file *fh, kept_window *w, int mine_all) {
    return write_locked(fh, w, UPTO_DONE_BY_ALL, mine_all, &fh->last);
}

int io_coll_kept_write_own(pario_file *fh) {
    int rc = fh->kept ? write_all_published(fh, fh->kept, 1) : PARIO_OK;
    int frc = io_coll_funnel_kept_meet(fh);
    return rc != PARIO_OK ? rc : frc;
}

int io_coll_kept_write_published(pario_file *fh) {
    int rc = fh->kept ? write_locked(fh, fh->kept, INT64_MAX, 1, &fh->last) : PARIO_OK;
    int frc = io_coll_funnel_kept_meet(fh);
    return rc != PARIO_OK ? rc : frc;
}

/* ---- the flusher ------------------------------------------------------------------------ */

/* One thread per process writes, every half pario_cb_write_behind_delay,
 * the kept pieces of the calls every rank had finished when it last looked
 * at the window: the bytes of a finished collective write reach the
 * operating system within the delay even if the program makes no further
 * call (a program killed then loses none of them), while a stream of small
 * calls still coalesces (its calls make room for themselves much sooner).
 * Writing every rank's pieces up to one call keeps calls in order, as any
 * writer of finished calls does. It is one more such writer, under the
 * window's lock, like another rank: it makes no MPI call (the program may
 * run at MPI_THREAD_SINGLE), fills its own error record (failures go to the
 * window's record, as any writer's do) and reads the delay the latest kept
 * call stored, not the hints. It walks the registry of open files holding
 * it, so no file closes and no window is replaced under it. Started on
 * first use of a window, stopped and joined when MPI_Finalize begins.
 * Process-wide state, guarded by flusher.lock. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* poked (a window new to a file, a delay changed) or stop */
    pthread_t thread;
    int started, poked, stop;
} flusher = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

typedef struct flusher_pass {
    int64_t now, next; /* ns, monotonic: this pass, the earliest tick due next */
    pario_error err;   /* the flusher's own record */
} flusher_pass;

/* With the registry held: a tick of this file's window, when due, and the
 * funnel's kept run (funnel_kept.c), when old enough. */
static void flusher_tick(pario_file *fh, void *arg) {
    flusher_pass *p = arg;
    int64_t due = coll_funnel_kept_tick(fh, p->now, &p->err);
    if (due < p->next)
        p->next = due;
    kept_window *w = fh->kept;
    if (!w)
        return;
    int64_t half = atomic_load_explicit(&w->delay_ms, memory_order_relaxed) * 500000;
    if (p->now >= w->ticked_at + half) {
        int64_t limit = w->aged;
        w->aged = calls_done_by_all(w);
        w->ticked_at = p->now;
        write_locked(fh, w, limit, 0, &p->err);
    }
    if (w->ticked_at + half < p->next)
        p->next = w->ticked_at + half;
}

/* With flusher.lock held: wait until `until` (INT64_MAX: no window to look
 * at), a poke or stop. The condition variable runs on the realtime clock. */
static void flusher_sleep(int64_t until) {
    if (flusher.stop || flusher.poked)
        return;
    if (until == INT64_MAX) {
        pthread_cond_wait(&flusher.wake, &flusher.lock);
        return;
    }
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    int64_t at = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec + (until - coll_now_ns());
    t = (struct timespec){at / 1000000000, at % 1000000000};
    pthread_cond_timedwait(&flusher.wake, &flusher.lock, &t);
}

static void *flusher_main(void *arg) {
    (void)arg;
    pthread_mutex_lock(&flusher.lock);
    while (!flusher.stop) {
        flusher.poked = 0;
        pthread_mutex_unlock(&flusher.lock);
        flusher_pass p = {coll_now_ns(), INT64_MAX, {0}};
        io_files_each(flusher_tick, &p);
        pthread_mutex_lock(&flusher.lock);
        flusher_sleep(p.next);
    }
    pthread_mutex_unlock(&flusher.lock);
    return NULL;
}

/* With flusher.lock held. The thread blocks every signal: the program's
 * signals go to its own threads, and a write past RLIMIT_FSIZE fails with
 * EFBIG here instead of killing the process. */
static void flusher_start(void) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    flusher.started = pthread_create(&flusher.thread, NULL, flusher_main, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void io_coll_flusher_poke(void) {
    pthread_mutex_lock(&flusher.lock);
    if (!flusher.started && !flusher.stop)
        flusher_start(); /* without it, kept bytes wait for the next collective point */
    flusher.poked = 1;
    pthread_cond_signal(&flusher.wake);
    pthread_mutex_unlock(&flusher.lock);
}

/* The flusher keeps w's delay: this call's hint (set_info may change it).
 * A window new to its file or a changed delay starts the flusher, or makes
 * it look again: it sleeps while no open file has a window. */
static void flusher_note(kept_window *w, int64_t ms, int new_to_file) {
    if (!new_to_file && atomic_load_explicit(&w->delay_ms, memory_order_relaxed) == ms)
        return;
    atomic_store_explicit(&w->delay_ms, ms, memory_order_relaxed);
    io_coll_flusher_poke();
}

void io_coll_kept_finalize(void) {
    pthread_mutex_lock(&flusher.lock);
    int started = flusher.started;
    flusher.stop = 1;
    flusher.started = 0;
    pthread_cond_signal(&flusher.wake);
    pthread_mutex_unlock(&flusher.lock);
    if (started)
        pthread_join(flusher.thread, NULL);
}

/* ---- the call ------------------------------------------------------------------------- */

/* Data bytes of one slice. The whole window is two two-phase cycles
 * (pario_cb_cycle_size each, within cb_buffer_size), like an aggregator's
 * two pipelined halves: small enough to stay in the CPU cache and to be
 * touched for the first time cheaply. Measured (pario bench ior, 4 ranks,
 * cached, medians of 5, two runs each): a window of 16 MiB gave
 * segmented-4k-coll 674 and 784 MiB/s, strided-4k 2475 and 2224, hard-coll
 * 1216 and 1270; 4 MiB 1243 and 1317, 2148 and 1883, 2627 and 2827; 2 MiB
 * 1397 and 1624, 2495 and 2650, 2953 and 3196; 1 MiB 1660 and 1660, 2470
 * and 2313, 2818 and 2712. A multiple of 64, so every slice (packed one
 * after the other in the window) starts aligned and on its own cache line. */
static int64_t slice_cap(const pario_file *fh) {
    int64_t all = 2 * fh->hints.cb_cycle_size;
    all = all < fh->hints.cb_buffer_size ? all : fh->hints.cb_buffer_size;
    all = all < KEPT_ALL_MAX ? all : KEPT_ALL_MAX;
    return all / fh->nranks / 64 * 64;
}

/* This file's window, out of the flusher's sight: it reads fh->kept with the
 * registry of open files held, so none changes under it. */
static kept_window *kept_take(pario_file *fh) {
    io_files_lock();
    kept_window *w = fh->kept;
    fh->kept = NULL;
    io_files_unlock();
    return w;
}

static void kept_show(pario_file *fh, kept_window *w) {
    io_files_lock();
    fh->kept = w;
    io_files_unlock();
}

/* Collective: a window of cap bytes per slice, the one waiting with the
 * file's communicator when it is of that size, else made (and the waiting
 * one of another size freed). */
static kept_window *window_for(pario_file *fh, int64_t cap) {
    kept_window *w = fh->kept_idle;
    fh->kept_idle = NULL;
    if (w && w->cap == cap)
        return w;
    window_free(w);
    w = NULL;
    if (window_new(fh->comm, cap, &w) != PARIO_OK)
        fh->kept_failed = 1; /* the same on every rank: keep nothing on this file */
    return w;
}

/* Collective (every rank keeps the same calls): this file's window, of the
 * size the hints give; the flusher learns the delay of this call. */
static kept_window *kept_get(pario_file *fh) {
    int64_t cap = slice_cap(fh);
    kept_window *w = fh->kept;
    int new_to_file = !w || w->cap != cap;
    if (new_to_file) {
        io_coll_kept_release(fh); /* empty: set_info flushed it before cb_buffer_size changed */
        w = window_for(fh, cap);
        kept_show(fh, w);
    }
    if (w)
        flusher_note(w, fh->hints.cb_write_behind_delay, new_to_file);
    return w;
}

/* Room for total bytes in the half this rank fills. When it lacks it, the
 * rank goes on in its other half once that half's pieces are written: it
 * writes the finished calls' pieces itself whenever nobody else is writing,
 * and otherwise yields its processor to the ranks it waits for. Those are
 * calls before its current one and a half holds many calls, so while all
 * ranks make the same calls they drift apart by at most half a slice, and
 * each call's pieces reach the file together. But a rank may be elsewhere
 * for long (computing, waiting for a message from this rank, on an error
 * path): after KEPT_WAIT_NS this rank writes all of its own pieces alone,
 * which needs nobody. Its pieces still reach the file in call order (every
 * write takes a prefix of each rank's ring, and overlapping pieces of one
 * write go in call order), so its later calls still win over its earlier
 * ones; what changes is that a piece of another rank's earlier call may now
 * land after one of these it overlaps. Overlapping writes of different
 * ranks are undefined in MPI without sync, so that is allowed. A failure is
 * recorded for the next collective point, not returned: the other ranks'
 * calls succeed, and every rank must learn of it at the same point. */
static void make_room(pario_file *fh, kept_window *w, int64_t total) {
    if (w->pos + total <= w->cap / 2 && w->in_half < KEPT_PIECES / 2)
        return;
    slice_head *mine = head_of(w, w->rank), *h0 = head_of(w, 0);
    int other = 1 - w->half;
    int64_t give_up = -1;
    for (;;) {
        if (pthread_mutex_trylock(&h0->lock) == 0) {
            write_published(fh, w, calls_done_by_all(w), 0, &fh->last);
            pthread_mutex_unlock(&h0->lock);
        }
        if (atomic_load_explicit(&mine->consumed, memory_order_acquire) >= w->end_of[other])
            break;
        int64_t now = coll_now_ns();
        if (give_up < 0)
            give_up = now + KEPT_WAIT_NS;
        else if (now >= give_up) {
            write_all_published(fh, w, 1);
            break;
        }
        sched_yield();
    }
    w->half = other;
    w->pos = w->in_half = 0;
}

/* Copy the part into the slice and publish it. */
static int keep(kept_window *w, int64_t off, int64_t seq, const void *buf, MPI_Count count,
                const flat_type *mt, int64_t total) {
    io_mem_cursor m;
    int rc = io_mem_open(&m, mt, (void *)buf, count, 0);
    if (rc != PARIO_OK)
        return rc;
    int64_t at = w->half * (w->cap / 2) + w->pos;
    char *to = data_of(w, w->rank) + at;
    if (m.contig)
        memcpy(to, m.contig, (size_t)total);
    else
        io_mem_copy(&m, to, total, 1);
    io_mem_close(&m);
    slice_head *mine = head_of(w, w->rank);
    int64_t n = atomic_load_explicit(&mine->committed, memory_order_relaxed);
    pieces_of(w, w->rank)[n % KEPT_PIECES] = (kept_piece){off, total, seq, at};
    w->pos += total;
    w->in_half++;
    w->end_of[w->half] = n + 1;
    atomic_store_explicit(&mine->committed, n + 1, memory_order_release);
    return PARIO_OK;
}

static int worth_keeping(const pario_file *fh, const kept_window *w, int64_t off, int64_t total) {
    int64_t unit = fh->hints.striping_unit;
    int well_formed = off % unit == 0 && total % unit == 0;
    return total <= w->cap / 2 && (total <= KEPT_PART_MAX || !well_formed);
}

/* This rank's part of call seq: kept, or written now when it is too large
 * to keep. Like kept pieces, a part written now reports its failure at the
 * next collective point, on every rank: returned here it would reach this
 * rank only, which would then leave the calls the others go on making. */
static int write_part(pario_file *fh, kept_window *w, int64_t seq, int64_t pos, const void *buf,
                      MPI_Count count, const flat_type *mt, int64_t total, int64_t *moved) {
    int64_t off = 0;
    int rc = view_byte_of_pos(&fh->view, pos, &off);
    if (rc != PARIO_OK)
        return rc;
    if (worth_keeping(fh, w, off, total)) {
        make_room(fh, w, total);
        rc = keep(w, off, seq, buf, count, mt, total);
        *moved = rc == PARIO_OK ? total : 0;
        return rc;
    }
    io_coll_kept_write_own(fh); /* its kept pieces first; a failure is recorded */
    rc = io_access_flat(fh, 1, pos, (void *)buf, count, mt, moved);
    if (rc != PARIO_OK) {
        pthread_mutex_lock(&head_of(w, 0)->lock);
        record_failure(w, rc, &fh->last);
        pthread_mutex_unlock(&head_of(w, 0)->lock);
    }
    *moved = total;
    return PARIO_OK;
}

int coll_kept_write(coll_call *c, int rc) {
    pario_file *fh = c->fh;
    fh->kept_pending = 1; /* every rank: the next collective point writes the slices */
    kept_window *w = kept_get(fh);
    if (!w) { /* no window (on any rank): written at once, the outcome agreed */
        if (rc == PARIO_OK && c->total > 0)
            rc = io_access_flat(fh, 1, c->pos, c->buf, c->count, c->mt, &c->moved);
        return io_agree(fh->comm, rc, &fh->last);
    }
    int64_t seq = ++w->calls; /* the same on every rank */
    if (rc == PARIO_OK && c->total > 0)
        rc = write_part(fh, w, seq, c->pos, c->buf, c->count, c->mt, c->total, &c->moved);
    atomic_store_explicit(&head_of(w, w->rank)->done, seq, memory_order_release);
    return rc;
}

/* ---- collective points ---------------------------------------------------------------- */

/* Rank 0: the first failure of any write of kept pieces since the last
 * collective point (this one's included), then none. */
static int take_failure(pario_file *fh, kept_window *w, int rc) {
    slice_head *h0 = head_of(w, 0);
    pthread_mutex_lock(&h0->lock);
    if (h0->failed) {
        rc = pario_fail(&fh->last, h0->failed, "%s", h0->msg);
        h0->failed = 0;
    }
    pthread_mutex_unlock(&h0->lock);
    return rc;
}

int io_coll_kept_flush(pario_file *fh) {
    int rc = io_coll_kept_flush_node(fh);
    int frc = io_coll_funnel_kept_flush(fh); /* both, whatever the first's outcome */
    return rc != PARIO_OK ? rc : frc;
}

int io_coll_kept_flush_node(pario_file *fh) {
    if (!fh->kept_pending)
        return PARIO_OK;
    fh->kept_pending = 0;
    kept_window *w = fh->kept;
    if (!w)
        return PARIO_OK;
    int rc = PARIO_OK;
    MPI_Win_sync(w->win);
    if (MPI_Barrier(fh->comm) != MPI_SUCCESS) /* every rank's pieces are published */
        rc = pario_fail(&fh->last, PARIO_ERR_COMM, "%s: flush of kept collective writes failed",
                        fh->path);
    else if (fh->rank == 0)
        rc = take_failure(fh, w, write_all_published(fh, w, 1));
    rc = io_agree(fh->comm, rc, &fh->last);
    w->half = 0; /* every piece was written: this rank's slice starts again */
    w->pos = w->in_half = 0;
    return rc;
}

void io_coll_kept_release(pario_file *fh) {
    kept_window *w = kept_take(fh);
    if (w && !fh->kept_idle)
        fh->kept_idle = w; /* waits with the communicator for the next file */
    else
        window_free(w);
}
