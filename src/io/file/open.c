/* Collective open and close, delete. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/error.h"
#include "io/async/async.h"
#include "io/cache/cache.h"
#include "io/coll/coll.h"
#include "io/driver/stripe.h"
#include "io/file/file.h"
#include "io/file/name.h"
#include "io/trace/trace.h"

/* Every access mode bit pario knows. */
static const int known_amode_bits = MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR |
                                    MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE |
                                    MPI_MODE_UNIQUE_OPEN | MPI_MODE_SEQUENTIAL | MPI_MODE_APPEND;

static int check_amode(int amode, const char *path, pario_error *err) {
    int rw = !!(amode & MPI_MODE_RDONLY) + !!(amode & MPI_MODE_WRONLY) + !!(amode & MPI_MODE_RDWR);
    if (rw != 1)
        return pario_fail(err, PARIO_ERR_AMODE,
                          "open %s: access mode needs exactly one of RDONLY, WRONLY, RDWR", path);
    if (amode & ~known_amode_bits)
        return pario_fail(err, PARIO_ERR_AMODE, "open %s: unknown access mode bits 0x%x", path,
                          amode & ~known_amode_bits);
    if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return pario_fail(err, PARIO_ERR_AMODE,
                          "open %s: RDONLY cannot be combined with CREATE or EXCL", path);
    if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        return pario_fail(err, PARIO_ERR_AMODE, "open %s: RDWR cannot be combined with SEQUENTIAL",
                          path);
    return PARIO_OK;
}

static int driver_flags(int amode, int create) {
    int flags = IO_OPEN_READ | IO_OPEN_WRITE;
    if (amode & MPI_MODE_RDONLY)
        flags = IO_OPEN_READ;
    if (create && (amode & MPI_MODE_CREATE))
        flags |= IO_OPEN_CREATE;
    if (create && (amode & MPI_MODE_EXCL))
        flags |= IO_OPEN_EXCL;
    return flags;
}

/* Open the storage (create: with CREATE and EXCL as amode asks) with the
 * driver the file needs (io/driver/select.c). A WRONLY file is opened for
 * reading too when permitted, so data sieving can read the gaps. */
static int open_storage(pario_file *fh, int create, pario_error *err) {
    int flags = driver_flags(fh->amode, create);
    int rc = io_driver_open(&fh->io, fh->path, flags, fh->stripe_named, err);
    if (rc == PARIO_ERR_ACCESS && (fh->amode & MPI_MODE_WRONLY))
        rc = io_driver_open(&fh->io, fh->path, flags & ~IO_OPEN_READ, fh->stripe_named, err);
    return rc;
}

/* How rank 0 stripes a new file: its own hints (others read the record). */
static io_stripe_wish stripe_wish_of(const io_hints *h) {
    return (io_stripe_wish){
        .targets = h->stripe_targets,
        .factor = (h->striping_given & IO_STRIPING_FACTOR_GIVEN) ? h->striping_factor : 0,
        .unit = (h->striping_given & IO_STRIPING_UNIT_GIVEN) ? h->striping_unit : 0,
    };
}

/* Rank 0 creates or opens the file, striped when its hints ask. */
static int first_rank_opens_storage(pario_file *fh, pario_error *err) {
    io_stripe_wish wish = stripe_wish_of(&fh->hints);
    fh->io.stripe_wish = &wish;
    int rc = open_storage(fh, 1, err);
    fh->io.stripe_wish = NULL;
    return rc;
}

/* What rank 0 tells every rank at open, in one broadcast: the outcome of
 * its checks and of creating or opening the file, its access mode, its
 * hints, the block size and the size of an APPEND file. */
typedef struct open_news {
    int rc;
    int amode;
    int regular;  /* the file rank 0 opened is a regular file */
    int striped;  /* it is a striped file (no deferred open: io/driver/stripe.c) */
    uint64_t dev; /* its file system's device, for ranks that defer their open */
    int64_t block_size;
    int64_t size;
    pario_error err;
    io_hints hints;
} open_news;

/* This rank's hints: defaults for the file, then $ROMIO_HINTS, $PARIO_HINTS,
 * info and $PARIO_HINT_*; whether to trace (rank 0's decides). */
static void hints_setup(pario_file *fh, MPI_Info info, int64_t block_size) {
    io_hints_defaults(&fh->hints, block_size, fh->nranks, fh->nnodes);
    io_hints_resolve(&fh->hints, info);
    io_trace_wish(fh, info);
}

/* Rank 0, alone, before the broadcast: only it touches the file system to
 * create, truncate or check for EXCL; it sets the shared file pointer
 * (every other rank's first use of it comes after the broadcast). */
static void first_rank_opens(pario_file *fh, MPI_Info info, int rc, open_news *news,
                             pario_error *err) {
    if (rc == PARIO_OK)
        rc = check_amode(fh->amode, fh->path, err);
    hints_setup(fh, info, 0); /* the stripe layout of a new file comes from them */
    if (rc == PARIO_OK)
        rc = first_rank_opens_storage(fh, err);
    news->block_size = fh->io.blksize > 0 ? fh->io.blksize /* from the open: no stat */
                                          : io_driver_posix.block_size(fh->path);
    io_hints_block_size(&fh->hints, news->block_size); /* known now the file is open */
    io_file_pin_striping(fh); /* a striped file's layout, whatever the hints said */
    if (rc == PARIO_OK && (fh->amode & MPI_MODE_APPEND))
        rc = fh->io.drv->get_size(&fh->io, &news->size, err);
    if (rc == PARIO_OK && io_shared_set(fh, news->size) != PARIO_OK)
        rc = pario_fail(err, PARIO_ERR_COMM, "open %s: cannot set the shared file pointer",
                        fh->path);
    news->rc = rc;
    news->amode = fh->amode;
    news->regular = fh->io.regular;
    news->striped = fh->io.stripe != NULL;
    news->dev = fh->io.dev;
    news->hints = fh->hints;
    if (rc != PARIO_OK)
        news->err = *err;
}

/* Every other rank, after the broadcast: rank 0's hints where they must
 * agree, and its own checks (it opens once the aggregators are placed). */
static int other_rank_checks(pario_file *fh, MPI_Info info, int rc, const open_news *news,
                             pario_error *err) {
    hints_setup(fh, info, news->block_size);
    io_hints_adopt(&fh->hints, &news->hints);
    if (rc == PARIO_OK)
        rc = check_amode(fh->amode, fh->path, err);
    if (rc == PARIO_OK && fh->amode != news->amode)
        rc = pario_fail(err, PARIO_ERR_NOT_SAME, "open %s: ranks passed different access modes",
                        fh->path);
    return rc;
}

/* romio_no_indep_rw, as ROMIO: collective buffering for every collective
 * call, so only aggregators touch the file, and unless cb_nodes or
 * cb_config_list say otherwise ROMIO's default of one aggregator per node
 * (pario's own default, several per node, would leave no rank to defer). */
static void promise_collective_only(pario_file *fh) {
    io_hints *h = &fh->hints;
    if (!h->no_indep_rw)
        return;
    h->cb_read = h->cb_write = IO_ENABLE;
    if (h->cb_given)
        return;
    h->cb_nodes = fh->nnodes > 0 ? fh->nnodes : 1;
    snprintf(h->cb_config_list, sizeof h->cb_config_list, "*:1");
}

static int is_aggregator(const pario_file *fh) {
    int n = io_coll_naggr(fh);
    for (int i = 0; i < n && fh->cb_ranks; i++)
        if (io_coll_aggregator(fh, i, n) == fh->rank)
            return 1;
    return 0;
}

/* A rank other than 0 opens the file rank 0 made, or, under
 * romio_no_indep_rw when it does not aggregate, defers its open to the
 * first call that needs the file (ROMIO opens there too). */
static int other_rank_opens(pario_file *fh, const open_news *news, pario_error *err) {
    if (!fh->hints.no_indep_rw || news->striped || is_aggregator(fh))
        return open_storage(fh, 0, err);
    io_posix_defer(&fh->io, fh->path, driver_flags(fh->amode, 0));
    fh->io.regular = news->regular;
    fh->io.dev = news->dev;
    return PARIO_OK;
}

/* Collective, one broadcast on comm: rank 0 opens first; its failure is
 * every rank's (*settled: no rank opens after it, nothing else to agree). */
static int open_first_step(pario_file *fh, MPI_Comm comm, MPI_Info info, int rc, int *settled,
                           open_news *news, pario_error *err) {
    *news = (open_news){.rc = PARIO_OK};
    if (fh->rank == 0)
        first_rank_opens(fh, info, rc, news, err);
    *settled = 1;
    if (MPI_Bcast(news, (int)sizeof *news, MPI_BYTE, 0, comm) != MPI_SUCCESS)
        return pario_fail(err, PARIO_ERR_COMM, "open %s: cannot learn rank 0's outcome", fh->path);
    *settled = news->rc != PARIO_OK;
    if (news->rc != PARIO_OK) {
        if (fh->rank != 0)
            pario_fail(err, news->rc, "%.480s (on rank 0)", news->err.msg);
        return news->rc;
    }
    if (fh->amode & MPI_MODE_APPEND) /* the default view: etypes are bytes */
        fh->fp = news->size;
    fh->shared_moved = news->size != 0;
    if (fh->rank != 0)
        rc = other_rank_checks(fh, info, rc, news, err);
    promise_collective_only(fh);
    return rc;
}

/* Collective, one allreduce (and the placement of the aggregators when
 * cb_config_list is new on the communicator): every rank's outcome and
 * the flags of the default view. With the global cache or read-once asked
 * for, one more agreed step attaches it. */
static int open_last_step(pario_file *fh, int rc, const open_news *news, pario_error *err) {
    if (rc == PARIO_OK)
        rc = view_init_default(&fh->view, fh->comm, fh->path, err);
    int prc = io_coll_place(fh, err); /* every rank: it may be collective */
    if (rc == PARIO_OK && prc == PARIO_OK && fh->rank != 0)
        rc = other_rank_opens(fh, news, err);
    if (rc == PARIO_OK) /* the file exists now: its mount is known */
        io_costs_lookup(fh->path, fh->io.dev, &fh->costs);
    io_file_apply_costs(fh);
    io_vote v = {0};
    rc = io_file_vote(fh, &fh->view, rc != PARIO_OK ? rc : prc, &v, err);
    if (rc == PARIO_OK && io_cache_wanted(&fh->hints, fh->amode))
        rc =
            io_agree(fh->comm, io_cache_attach(&fh->io, fh->comm, &fh->hints, fh->amode, err), err);
    return rc;
}

/* What fh holds besides itself and its path; its communicator and window
 * are parked for the next open (collective). */
static void file_release(pario_file *fh) {
    view_free(&fh->view);
    io_scratch_free(&fh->scratch);
    io_prefetch_free(&fh->prefetch);
    io_coll_kept_release(fh);
    io_coll_funnel_kept_free(fh);
    io_parked_give(fh);
    free(fh->cb_ranks);
    free(fh->coll_ranges);
    free(fh->coll_share);
    free(fh->coll_counts);
    free(fh->coll_aggr);
    free(fh->coll_domains);
    free(fh->coll_requests);
}

static void file_free(pario_file *fh) {
    if (!fh)
        return;
    file_release(fh);
    free(fh->path);
    free(fh);
}

/* A file object's fields before open fills them. */
static void file_init(pario_file *fh, MPI_Comm comm, int amode) {
    fh->comm = MPI_COMM_NULL;
    fh->shared_win = MPI_WIN_NULL;
    fh->shared_fd = -1;
    fh->sync_host = MPI_COMM_NULL;
    fh->view.etype = fh->view.filetype = MPI_DATATYPE_NULL;
    fh->io.fd = -1;
    io_prefetch_init(&fh->prefetch);
    fh->amode = amode;
    MPI_Comm_rank(comm, &fh->rank);
    MPI_Comm_size(comm, &fh->nranks);
}

/* The file object for a resolved name; NULL when there is no memory for it. */
static pario_file *file_new(MPI_Comm comm, const io_name *name, int amode) {
    pario_file *fh = calloc(1, sizeof *fh);
    if (!fh)
        return NULL;
    file_init(fh, comm, amode);
    fh->driver = name->driver;
    fh->stripe_named = name->driver == &io_driver_stripe;
    fh->path = strdup(name->path);
    if (!fh->path) {
        free(fh);
        return NULL;
    }
    return fh;
}

/* Open's steps (docs/architecture.md): the communicator and window parked
 * on comm (made by the first open there), rank 0's outcome and hints (one
 * broadcast), every rank's outcome (one allreduce). */
static int open_steps(pario_file *fh, MPI_Comm comm, MPI_Info info, int rc, pario_error *err) {
    /* A failure of taking the kit is every rank's; this rank's own rc goes
     * on through the steps, where the others learn it. */
    int taken = io_parked_take(fh, comm, rc, err);
    if (taken != PARIO_OK)
        return taken;
    int settled = 0;
    open_news news;
    rc = open_first_step(fh, comm, info, rc, &settled, &news, err);
    return settled ? rc : open_last_step(fh, rc, &news, err);
}

/* No file object (a name not understood, no memory): this rank still takes
 * every step of the open, failing, with a stand-in on its stack, so every
 * rank returns the failure. */
static int open_failed_early(MPI_Comm comm, const char *path, int amode, MPI_Info info, int rc,
                             pario_error *err) {
    pario_file spare = {.path = (char *)path};
    file_init(&spare, comm, amode);
    rc = open_steps(&spare, comm, info, rc, err);
    file_release(&spare);
    return rc;
}

int pario_file_open(MPI_Comm comm, const char *path, int amode, MPI_Info info, pario_file **out,
                    pario_error *err) {
    *out = NULL;
    pario_error_clear(err);
    if (comm == MPI_COMM_NULL)
        return pario_fail(err, PARIO_ERR_COMM, "open %s: communicator is MPI_COMM_NULL",
                          path ? path : "(null)");
    if (!path || !*path)
        return pario_fail(err, PARIO_ERR_BAD_FILE, "open: empty file name");
    io_name name;
    int rc = io_name_resolve(path, "open", &name, err);
    pario_file *fh = rc == PARIO_OK ? file_new(comm, &name, amode) : NULL;
    if (!fh && rc == PARIO_OK)
        rc = pario_fail(err, PARIO_ERR_NO_MEM, "open %s: out of memory", path);
    if (rc != PARIO_OK)
        return open_failed_early(comm, path, amode, info, rc, err);
    rc = open_steps(fh, comm, info, PARIO_OK, err);
    if (rc != PARIO_OK) {
        if (fh->io.fd >= 0)
            fh->io.drv->close(&fh->io, NULL);
        file_free(fh);
        return rc;
    }
    io_trace_open(fh, info);
    io_files_watch_finalize();
    io_files_add(fh);
    *out = fh;
    return PARIO_OK;
}

int pario_file_close(pario_file **pfh, pario_error *err) {
    pario_error_clear(err);
    pario_file *fh = pfh ? *pfh : NULL;
    if (!fh)
        return pario_fail(err, PARIO_ERR_FILE, "close: invalid file handle");
    io_files_remove(fh);              /* first: nothing walks the file while it closes */
    io_async_stop(fh);                /* pending nonblocking accesses finish first */
    int lrc = io_coll_kept_flush(fh); /* then the kept collective writes (agreed) */
    io_trace_close(fh);               /* after the file's last storage call but close */
    int rc = fh->io.drv->close(&fh->io, err);
    rc = io_agree(fh->comm, io_report_held(fh, rc, err), err);
    if (lrc != PARIO_OK) {
        rc = lrc;
        if (err)
            *err = fh->last;
    }
    if (fh->amode & MPI_MODE_DELETE_ON_CLOSE) {
        int drc = fh->rank == 0 ? fh->io.drv->remove(fh->path, err) : PARIO_OK;
        drc = io_agree(fh->comm, drc, err);
        if (rc == PARIO_OK)
            rc = drc;
    }
    file_free(fh);
    *pfh = NULL;
    return rc;
}

int pario_file_delete(const char *path, MPI_Info info, pario_error *err) {
    (void)info;
    pario_error_clear(err);
    if (!path || !*path)
        return pario_fail(err, PARIO_ERR_BAD_FILE, "delete: empty file name");
    io_name name;
    int rc = io_name_resolve(path, "delete", &name, err);
    if (rc != PARIO_OK)
        return rc;
    return name.driver == &io_driver_stripe ? name.driver->remove(name.path, err)
                                            : io_driver_remove(name.path, err);
}

const pario_error *pario_file_last_error(const pario_file *fh) {
    return &fh->last;
}
const char *pario_file_path(const pario_file *fh) {
    return fh->path;
}
MPI_Comm pario_file_comm(const pario_file *fh) {
    return fh->comm;
}
