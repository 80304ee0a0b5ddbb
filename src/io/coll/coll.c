/* Collective data access: decide between two-phase aggregation and
 * independent access, from everyone's access range and the hints. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include "common/error.h"
#include "io/coll/coll_internal.h"
#include "io/indep/access.h"

/* This rank's range. Reads are clipped at end of file first: data past it
 * is not read, and the byte count says so. */
static int my_range(pario_file *fh, int write, int64_t pos, int64_t *total, coll_range *r) {
    int rc = PARIO_OK;
    if (!write && *total > 0) {
        int64_t eof = 0, below = 0;
        rc = fh->io.drv->get_size(&fh->io, &eof, &fh->last);
        if (rc == PARIO_OK)
            rc = view_pos_of_byte(&fh->view, eof, &below);
        if (rc == PARIO_OK && below - pos < *total)
            *total = below - pos > 0 ? below - pos : 0;
    }
    *r = (coll_range){0, 0, *total};
    if (rc == PARIO_OK && *total > 0) {
        rc = view_byte_of_pos(&fh->view, pos, &r->first);
        if (rc == PARIO_OK)
            rc = view_byte_of_pos(&fh->view, pos + *total - 1, &r->end);
        r->end += 1;
    }
    return rc;
}

static int aggregate(const pario_file *fh, int write, const coll_range *all) {
    io_switch sw = write ? fh->hints.cb_write : fh->hints.cb_read;
    if (sw == IO_DISABLE || fh->atomic) /* atomic mode: locked independent access */
        return 0;
    if (fh->nranks == 1) /* one rank has nobody to combine with: buffering only copies */
        return 0;
    if (sw == IO_ENABLE)
        return 1;
    if (write && fh->nnodes == 1 && fh->tiny_holes && fh->dense_views) /* COLL_TINY_BLOCK */
        return 0;
    return coll_should_aggregate(all, fh->nranks);
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

/* One allgather carries every rank's verdict, range and wish to pipeline
 * reads (*spare: every rank has it). On a failure, the lowest failing rank's
 * message is shared, as io_agree does. */
static int share_ranges(pario_file *fh, int rc, const coll_range *mine, coll_range *all,
                        int *spare) {
    int64_t out[SHARE_N] = {rc, mine->first, mine->end, mine->bytes, has_spare_core(fh)};
    int64_t *in = fh->coll_share; /* allocated with the file: no failure here */
    int ok =
        MPI_Allgather(out, SHARE_N, MPI_INT64_T, in, SHARE_N, MPI_INT64_T, fh->comm) == MPI_SUCCESS;
    int failed = 0;
    *spare = 1;
    for (int r = 0; ok && r < fh->nranks; r++) {
        const int64_t *x = in + SHARE_N * r;
        all[r] = (coll_range){x[SHARE_FIRST], x[SHARE_END], x[SHARE_BYTES]};
        failed |= x[SHARE_RC] != PARIO_OK;
        *spare &= x[SHARE_SPARE] != 0;
    }
    if (!ok) /* without the allgather, io_agree keeps the ranks together */
        return io_agree(
            fh->comm,
            pario_fail(&fh->last, PARIO_ERR_COMM, "%s: exchange of access ranges failed", fh->path),
            &fh->last);
    return failed ? io_agree(fh->comm, rc, &fh->last) : PARIO_OK;
}

/* Every rank's range, through the funnel for small writes (which may
 * finish the call: *done), else through one allgather. *pipelined: whether
 * several cycles may overlap their file access with the exchange (writes
 * always; reads with a spare processor on every node). */
static int gather_ranges(pario_file *fh, int rc, int write, int64_t pos, void *buf, MPI_Count count,
                         const flat_type *mt, int64_t total, const coll_range *mine,
                         coll_range *all, int *done, int *pipelined) {
    *done = 0;
    *pipelined = 1;
    if (coll_small_eligible(fh, write))
        return coll_small_write(fh, rc, pos, buf, count, mt, total, mine, all, done);
    rc = share_ranges(fh, rc, mine, all, pipelined);
    *pipelined |= write;
    return rc;
}

/* Two-phase aggregation by the plan (rc: whether making it succeeded). */
static int run_planned(pario_file *fh, coll_plan *plan, int rc, int write, int64_t pos, void *buf,
                       MPI_Count count, MPI_Datatype type, int64_t total, int64_t *moved) {
    if (rc != PARIO_OK)
        pario_fail(&fh->last, rc, "%s %s: out of memory", write ? "write_all" : "read_all",
                   fh->path);
    rc = coll_twophase(fh, plan, rc, write, pos, buf, count, type, total);
    coll_plan_free(plan);
    if (rc == PARIO_OK)
        *moved = total;
    return rc;
}

/* Whether this collective read is every rank's own independent read (the
 * same answer on every rank): all ranks share one node's page cache, so
 * aggregating could only trade copies for fewer system calls, and each rank
 * reading its own blocks (sieved when that pays) moves each byte once.
 * Measured (pario bench noncontig and coll3d, 4 ranks on 2 cores, cached,
 * medians of 5, MiB/s, two-phase vs independent reads of the same views):
 * 8 B blocks interleaved in the file 113 vs 7156, 64 B 720 vs 10465, 4 KiB
 * 4120 vs 14196; the 3-D array 6340 vs 15186; from the device (durable), 8 B
 * 118 vs 1018, 4 KiB 922 vs 1098, the array 1609 vs 2319. Views that spread
 * their data thinner than COLL_MAX_SPREAD, romio_cb_read=enable and atomic
 * mode keep two-phase reads. Kept writes are flushed first. */
static int each_rank_reads(const pario_file *fh, int write) {
    return !write && fh->nranks > 1 && fh->nnodes == 1 && !fh->atomic && fh->dense_views &&
           fh->hints.cb_read == IO_AUTOMATIC;
}

/* Each rank's own collective read (its arguments checked by it alone). It
 * sends no message, so a failed access fails this rank at once and is held
 * for the next sync or close, which report it on every rank. */
static int own_read(pario_file *fh, int64_t pos, void *buf, MPI_Count count, MPI_Datatype type,
                    int64_t *moved) {
    int rc = io_access(fh, 0, pos, buf, count, type, moved);
    if (rc != PARIO_OK)
        io_hold_failure(fh);
    return rc;
}

int io_coll_access(pario_file *fh, int check, int write, int64_t pos, void *buf, MPI_Count count,
                   MPI_Datatype type, int64_t *moved) {
    const flat_type *mt = NULL;
    int64_t total = 0;
    coll_range mine = {0, 0, 0}, *all = fh->coll_ranges; /* allocated with the file */
    *moved = 0;
    int rc = check, done = 0, pipelined = 0, keep = coll_behind_applies(fh, write);
    if (!keep) { /* kept writes reach the file first (and count for end of file) */
        int frc = io_coll_kept_flush(fh);
        if (frc != PARIO_OK)
            return frc;
    }
    if (each_rank_reads(fh, write))
        return rc != PARIO_OK ? rc : own_read(fh, pos, buf, count, type, moved);
    if (rc == PARIO_OK && (rc = flat_get(type, &mt)) == PARIO_OK) {
        total = (int64_t)count * mt->size;
        rc = my_range(fh, write, pos, &total, &mine);
    }
    if (rc != PARIO_OK && fh->last.code == PARIO_OK)
        pario_fail(&fh->last, rc, "%s %s: cannot plan the collective access",
                   write ? "write_all" : "read_all", fh->path);
    if (keep)
        return coll_kept_write(fh, rc, pos, buf, count, mt, total, moved);
    rc = gather_ranges(fh, rc, write, pos, buf, count, mt, total, &mine, all, &done, &pipelined);
    int planned = !done && rc == PARIO_OK && aggregate(fh, write, all);
    coll_plan plan;
    int plan_rc = planned ? coll_plan_make(&plan, fh, all, pipelined) : PARIO_OK;
    if (planned)
        return run_planned(fh, &plan, plan_rc, write, pos, buf, count, type, total, moved);
    if (done || rc != PARIO_OK) { /* the funnel finished the call, or it failed everywhere */
        if (rc == PARIO_OK)
            *moved = total;
        return rc;
    }
    return io_agree(fh->comm, io_access(fh, write, pos, buf, count, type, moved), &fh->last);
}
