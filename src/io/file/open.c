/* Collective open and close, delete. */
#include <stdlib.h>
#include <string.h>
#include "common/error.h"
#include "common/node.h"
#include "io/async/async.h"
#include "io/cache/cache.h"
#include "io/coll/coll.h"
#include "io/driver/stripe.h"
#include "io/file/file.h"
#include "io/trace/trace.h"
#include "io/file/name.h"

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

/* The shared-memory nodes comm spans, and this rank's index on its node
 * (PARIO_NODE_SIZE may cut a machine into several: common/node.h). */
static void node_layout(pario_file *fh) {
    MPI_Comm node;
    int leader = 0;
    fh->nnodes = 1;
    fh->node_rank = fh->rank;
    if (pario_node_comm(fh->comm, &node) != MPI_SUCCESS)
        return;
    MPI_Comm_rank(node, &fh->node_rank);
    leader = fh->node_rank == 0;
    MPI_Allreduce(&leader, &fh->nnodes, 1, MPI_INT, MPI_SUM, fh->comm);
    MPI_Comm_free(&node);
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

/* Open the storage: rank 0 creates, then the others open. A WRONLY file is
 * opened for reading too when permitted, so data sieving can read the gaps. */
static int open_driver(pario_file *fh, int create, pario_error *err) {
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

static int open_storage(pario_file *fh, pario_error *err) {
    int rc = PARIO_OK;
    fh->io.fd = -1;
    io_stripe_wish wish = stripe_wish_of(&fh->hints);
    fh->io.stripe_wish = &wish;
    if (fh->rank == 0)
        rc = open_driver(fh, 1, err);
    rc = io_agree(fh->comm, rc, err);
    if (rc == PARIO_OK) {
        if (fh->rank != 0)
            rc = open_driver(fh, 0, err);
        rc = io_agree(fh->comm, rc, err);
    }
    fh->io.stripe_wish = NULL;
    if (rc != PARIO_OK && fh->io.fd >= 0)
        fh->io.drv->close(&fh->io, NULL);
    return rc;
}

/* Both file pointers start at 0, or at the end of file for APPEND. */
static int init_pointers(pario_file *fh, pario_error *err) {
    int64_t size = 0;
    int rc = PARIO_OK;
    if (fh->amode & MPI_MODE_APPEND)
        rc = fh->io.drv->get_size(&fh->io, &size, err);
    rc = io_agree(fh->comm, rc, err);
    if (rc == PARIO_OK)
        fh->fp = size;
    if (rc == PARIO_OK)
        rc = io_shared_create(fh, size, err);
    return rc;
}

static void file_free(pario_file *fh) {
    if (!fh)
        return;
    view_free(&fh->view);
    io_scratch_free(&fh->scratch);
    io_coll_kept_detach(fh);
    free(fh->cb_ranks);
    free(fh->coll_ranges);
    free(fh->coll_share);
    if (fh->comm != MPI_COMM_NULL)
        MPI_Comm_free(&fh->comm);
    free(fh->path);
    free(fh);
}

static int file_new(MPI_Comm comm, const io_name *name, int amode, pario_file **out,
                    pario_error *err) {
    const char *path = name->path;
    pario_file *fh = calloc(1, sizeof *fh);
    if (!fh)
        return pario_fail(err, PARIO_ERR_NO_MEM, "open %s: out of memory", path);
    fh->comm = MPI_COMM_NULL;
    fh->shared_win = MPI_WIN_NULL;
    fh->view.etype = fh->view.filetype = MPI_DATATYPE_NULL;
    fh->io.fd = -1;
    fh->amode = amode;
    fh->driver = name->driver;
    fh->stripe_named = name->driver == &io_driver_stripe;
    fh->path = strdup(name->path);
    if (!fh->path || MPI_Comm_dup(comm, &fh->comm) != MPI_SUCCESS) {
        file_free(fh);
        return pario_fail(err, PARIO_ERR_NO_MEM, "open %s: cannot set up the file", path);
    }
    MPI_Comm_set_errhandler(fh->comm, MPI_ERRORS_RETURN);
    fh->kept_cache = io_coll_kept_cache(comm);
    MPI_Comm_rank(fh->comm, &fh->rank);
    MPI_Comm_size(fh->comm, &fh->nranks);
    *out = fh;
    return PARIO_OK;
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
    pario_file *fh = NULL;
    io_name name;
    int rc = io_name_resolve(path, "open", &name, err);
    if (rc == PARIO_OK)
        rc = file_new(comm, &name, amode, &fh, err);
    rc = io_agree(comm, rc, err);
    if (rc != PARIO_OK) {
        file_free(fh);
        return rc;
    }
    rc = check_amode(amode, path, err);
    if (rc == PARIO_OK)
        rc = io_check_same(fh->comm, &(long long){amode}, 1, "open", "access modes", path, err);
    rc = io_agree(fh->comm, rc, err);
    if (rc == PARIO_OK) {
        node_layout(fh);
        io_hints_defaults(&fh->hints, io_driver_posix.block_size(fh->path), fh->nranks,
                          fh->nnodes);
        io_hints_resolve(&fh->hints, info);
        rc = io_agree(fh->comm, view_init_default(&fh->view, fh->comm, fh->path, err), err);
    }
    if (rc == PARIO_OK)
        rc = open_storage(fh, err);
    if (rc == PARIO_OK) /* the global cache or the node's copy, when the hints ask */
        rc = io_agree(fh->comm, io_cache_attach(&fh->io, fh->comm, &fh->hints, amode, err), err);
    if (rc == PARIO_OK) {
        io_costs_lookup(fh->path, &fh->costs); /* the file exists now: its mount is known */
        io_trace_wish(fh, info);               /* agreed by the settle, rank 0's */
        rc = io_file_settle(fh, err);          /* after open_storage: it asks what the file is */
    }
    if (rc == PARIO_OK)
        rc = init_pointers(fh, err);
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
    io_shared_free(fh);
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
