/* Collective data access: the call goes the way route.c decides, first
 * from the state every rank agreed on, then from every rank's range. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include "common/error.h"
#include "io/async/async.h"
#include "io/cache/cache.h"
#include "io/coll/coll_internal.h"
#include "io/coll/route.h"
#include "io/indep/access.h"

/* A read of *total bytes from view position pos whose last byte is file
 * byte *last, cut at end of file: data past it is not read, and the byte
 * count says so. *last follows the cut. */
static int clip_at_eof(pario_file *fh, int64_t pos, int64_t *total, int64_t *last) {
    int64_t eof = 0, below = 0;
    int rc = io_file_size_for_read(fh, *last + 1, &eof);
    if (rc == PARIO_OK)
        rc = view_pos_of_byte(&fh->view, eof, &below);
    if (rc == PARIO_OK && below - pos < *total) {
        *total = below - pos > 0 ? below - pos : 0;
        if (*total > 0)
            rc = view_byte_of_pos(&fh->view, pos + *total - 1, last);
    }
    return rc;
}

/* This rank's range; reads clipped at end of file first. */
static int my_range(pario_file *fh, int write, int64_t pos, int64_t *total, coll_range *r) {
    int64_t last = 0; /* the file byte of the access's last byte */
    int rc = *total > 0 ? view_byte_of_pos(&fh->view, pos + *total - 1, &last) : PARIO_OK;
    if (rc == PARIO_OK && !write && *total > 0)
        rc = clip_at_eof(fh, pos, total, &last);
    *r = (coll_range){0, 0, *total};
    if (rc == PARIO_OK && *total > 0) {
        rc = view_byte_of_pos(&fh->view, pos, &r->first);
        r->end = last + 1;
    }
    return rc;
}

/* Online processors of this machine, counted once per process: the count
 * reads a file under /sys, too slow to repeat in every collective call.
 * Written once under pthread_once, read-only afterwards. */
static pthread_once_t cpus_once = PTHREAD_ONCE_INIT;
static long cpus_online = 1;

static void count_cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    cpus_online = n > 0 ? n : 1;
}

/* Whether this rank wants collective reads pipelined: the hint
 * pario_cb_read_pipeline, by default (automatic) when a background reader
 * would have a processor of its own on this rank's node, i.e. fewer ranks
 * there than online processors. On 2 cores with 2 and 4 ranks, a reader
 * thread competing with the ranks made the coll3d collective read 20-35 %
 * slower than reading in turn. */
static int has_spare_core(const pario_file *fh) {
    if (fh->hints.cb_read_pipeline != IO_AUTOMATIC)
        return fh->hints.cb_read_pipeline == IO_ENABLE;
    pthread_once(&cpus_once, count_cpus);
    int nodes = fh->nnodes > 0 ? fh->nnodes : 1;
    return cpus_online > (fh->nranks + nodes - 1) / nodes;
}

/* Whether this rank's call is plain: its view linear in the file and its
 * memory one block, so where each file byte of its range lands is known
 * without describing its pieces (a quick read: twophase.c). */
static int call_plain(const coll_call *c) {
    const flat_type *t = c->mt;
    return t && c->fh->view.linear && flat_is_contiguous(t) &&
           (c->count == 1 || t->size == t->extent);
}

/* One allgather carries every rank's verdict, range, wish to pipeline
 * reads (*spare: every rank has it), the outcome of its read made ahead
 * (read_rc; *read_failed: some rank's failed) and whether its call is
 * plain (c->plain: every rank's is). On a failure, the lowest failing
 * rank's message is shared, as io_agree does. */
static int share_ranges(coll_call *c, int rc, coll_range *all, int read_rc, int *spare,
                        int *read_failed) {
    pario_file *fh = c->fh;
    const coll_range *mine = &c->mine;
    int64_t out[SHARE_N] = {rc,      mine->first,  mine->end, mine->bytes, has_spare_core(fh),
                            read_rc, call_plain(c)};
    int64_t *in = fh->coll_share; /* allocated with the file: no failure here */
    int ok =
        MPI_Allgather(out, SHARE_N, MPI_INT64_T, in, SHARE_N, MPI_INT64_T, fh->comm) == MPI_SUCCESS;
    int failed = 0;
    *spare = 1;
    *read_failed = 0;
    c->plain = 1;
    for (int r = 0; ok && r < fh->nranks; r++) {
        const int64_t *x = in + SHARE_N * r;
        all[r] = (coll_range){x[SHARE_FIRST], x[SHARE_END], x[SHARE_BYTES]};
        failed |= x[SHARE_RC] != PARIO_OK;
        *spare &= x[SHARE_SPARE] != 0;
        c->plain &= x[SHARE_PLAIN] != 0;
        *read_failed |= x[SHARE_READ] != PARIO_OK && x[SHARE_READ] != SHARE_NOT_READ;
    }
    if (!ok) /* without the allgather, io_agree keeps the ranks together */
        return io_agree(
            fh->comm,
            pario_fail(&fh->last, PARIO_ERR_COMM, "%s: exchange of access ranges failed", fh->path),
            &fh->last);
    return failed ? io_agree(fh->comm, rc, &fh->last) : PARIO_OK;
}

/* Two-phase aggregation by a plan made from every rank's range. */
static int run_planned(coll_call *c, const coll_range *all, int pipelined) {
    coll_plan plan;
    coll_plan_make(&plan, c->fh, all, c->write, pipelined);
    int rc = coll_twophase(c, &plan);
    if (rc == PARIO_OK)
        c->moved = c->total;
    return rc;
}

/* This rank's part: its memory type decoded and its range (check: its
 * verdict on the arguments; a failure is described in fh->last). */
static int call_prepare(coll_call *c, int check) {
    pario_file *fh = c->fh;
    int rc = check;
    if (rc == PARIO_OK && (rc = flat_get_committed(c->type, fh->comm, &c->mt)) == PARIO_OK) {
        c->total = (int64_t)c->count * c->mt->size;
        rc = my_range(fh, c->write, c->pos, &c->total, &c->mine);
    }
    if (rc != PARIO_OK && fh->last.code == PARIO_OK)
        pario_fail(&fh->last, rc, "%s %s: cannot plan the collective access",
                   c->write ? "write_all" : "read_all", fh->path);
    return rc;
}

/* A read made ahead of the allgather of ranges, where the last collective
 * read since the view went each rank on its own (fh->reads_alone, agreed)
 * and the file is open read-only: its outcome rides in the allgather, so
 * when the ranges send this call the same way it needs no agreement after
 * it; when they do not, it is forgotten and the call goes its way. A read
 * ahead that failed on some rank fails the call on every rank, whatever the
 * route: the storage's error is reported, not retried along another way.
 * Returns the outcome, or SHARE_NOT_READ. On the GlusterFS test bed
 * over TCP (2 nodes x 2 ranks), IOR's segmented 4 KiB collective read was
 * one agreement (a TCP round trip) behind ROMIO, which does not agree on a
 * read's outcome. Only read-only: on a writable file the allgather also
 * orders each rank's read after the other ranks' earlier writes (and their
 * flush, where the client caches), which MPI leaves to sync-barrier-sync
 * but programs and pario's random sequences across caching clients
 * (testbed.roundtrip) count on. */
static int read_ahead(coll_call *c, int rc, pario_error *saved) {
    pario_file *fh = c->fh;
    if (c->write || rc != PARIO_OK || !fh->reads_alone || !(fh->amode & MPI_MODE_RDONLY))
        return SHARE_NOT_READ;
    *saved = fh->last;
    return io_access(fh, 0, c->pos, c->buf, c->count, c->type, &c->moved);
}

/* Every rank's range, through the funnel (which may finish a small write
 * itself) or one allgather; then the route the ranges call for. */
static int run_by_ranges(coll_call *c, int rc, coll_route first) {
    pario_file *fh = c->fh;
    coll_range *all = fh->coll_ranges; /* allocated with the file */
    int done = 0, pipelined = 1;       /* may cycles overlap file access and exchange? */
    int read_failed = 0;
    pario_error saved;
    int ahead = read_ahead(c, rc, &saved);
    if (first == COLL_ROUTE_FUNNEL) {
        rc = coll_small_write(c, rc, all, &done);
    } else {
        rc = share_ranges(c, rc, all, ahead, &pipelined, &read_failed);
        pipelined |= c->write; /* writes always; reads with a spare processor everywhere */
    }
    if (done || rc != PARIO_OK) { /* the funnel finished the call, or it failed everywhere */
        if (done)
            coll_route_count(fh, COLL_ROUTE_FUNNEL);
        c->moved = rc == PARIO_OK ? c->total : 0; /* a read made ahead counts for nothing */
        return rc;
    }
    if (coll_read_once_applies(fh, c->write, all)) {
        fh->once_judged = 1;
        io_async_drain(fh); /* requests in flight finish on the handle as it is */
        io_cache_attach_once(&fh->io, fh->comm, &fh->hints, all[0].bytes);
    }
    coll_route route = coll_route_by_ranges(fh, c->write, all);
    coll_route_count(fh, route);
    if (!c->write)
        fh->reads_alone = route == COLL_ROUTE_INDEPENDENT;
    /* Every rank read ahead: where the call goes each rank's own way, or some
     * read failed, the reads are the call (a storage error is reported, not
     * retried along another route). */
    if (ahead != SHARE_NOT_READ && (route == COLL_ROUTE_INDEPENDENT || read_failed))
        return read_failed ? io_agree(fh->comm, ahead, &fh->last) : PARIO_OK;
    if (ahead != SHARE_NOT_READ) { /* another way: the read ahead is forgotten */
        fh->last = saved;
        c->moved = 0;
    }
    if (c->write && c->keep_own && route == COLL_ROUTE_INDEPENDENT) {
        coll_own_keep(c, all); /* kept, or written: a failure waits for the next report */
        return PARIO_OK;
    }
    if (c->write) /* this rank's kept parts reach the file before the call's bytes */
        coll_own_kept_write(fh);
    if (route == COLL_ROUTE_TWOPHASE)
        return run_planned(c, all, pipelined);
    int arc = io_access(fh, c->write, c->pos, c->buf, c->count, c->type, &c->moved);
    return io_agree(fh->comm, c->write ? io_file_flushed(fh, arc) : arc, &fh->last);
}

/* Each rank's own collective read (its arguments checked by it alone). It
 * sends no message, so a failed access fails this rank at once and is held
 * for the next sync or close, which report it on every rank. */
static int own_read(coll_call *c) {
    pario_file *fh = c->fh;
    int rc = io_access(fh, 0, c->pos, c->buf, c->count, c->type, &c->moved);
    if (rc != PARIO_OK)
        io_hold_failure(fh);
    return rc;
}

static int run_call(coll_call *c, int check) {
    pario_file *fh = c->fh;
    if (check == PARIO_OK) /* aggregators access this rank's bytes: current ones */
        check = io_file_meet_storage(fh);
    coll_route first = coll_route_first(fh, c->write);
    if (first != COLL_ROUTE_KEPT) { /* kept writes reach the file first (and count for EOF) */
        int frc = first == COLL_ROUTE_FUNNEL ? io_coll_kept_flush_node(fh) : io_coll_kept_flush(fh);
        if (frc != PARIO_OK)
            return frc;
    }
    if (first == COLL_ROUTE_OWN_READ || first == COLL_ROUTE_NODE_COPY) {
        coll_route_count(fh, first);
        return check != PARIO_OK ? check : own_read(c);
    }
    int rc = call_prepare(c, check);
    if (first == COLL_ROUTE_KEPT) {
        coll_route_count(fh, first);
        return coll_kept_write(c, rc);
    }
    return run_by_ranges(c, rc, first);
}

int io_coll_access(pario_file *fh, int check, int write, int64_t pos, void *buf, MPI_Count count,
                   MPI_Datatype type, int64_t *moved) {
    coll_call c = {.fh = fh, .write = write, .pos = pos, .buf = buf, .count = count, .type = type};
    int rc = run_call(&c, check);
    *moved = c.moved;
    return rc;
}
