/* File-level operations: size, sync, info, atomicity, views and pointers. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include "common/error.h"
#include "io/async/async.h"
#include "io/cache/cache.h"
#include "io/coll/coll.h"
#include "io/driver/stripe.h"
#include "io/file/file.h"

static void size_learnt(pario_file *fh, int64_t size) {
    int64_t floor = atomic_load(&fh->size_floor);
    while (size > floor && !atomic_compare_exchange_weak(&fh->size_floor, &floor, size))
        ;
}

int io_file_size_for_read(pario_file *fh, int64_t end, int64_t *size) {
    int64_t floor = atomic_load(&fh->size_floor);
    if (!fh->atomic && end <= floor) {
        *size = floor;
        return PARIO_OK;
    }
    int rc = fh->io.drv->get_size(&fh->io, size, &fh->last);
    if (rc == PARIO_OK)
        size_learnt(fh, *size);
    return rc;
}

void io_file_size_forget(pario_file *fh) {
    atomic_store(&fh->size_floor, 0);
    io_cache_size_forget(&fh->io);
}

/* The file's size as this rank must report it: what storage holds, or as
 * far as the parts other ranks keep reach (io/coll/funnel_kept.c). */
static int size_with_kept(pario_file *fh, int64_t *size) {
    int rc = fh->io.drv->get_size(&fh->io, size, &fh->last);
    if (rc == PARIO_OK && io_coll_own_kept_end(fh) > *size)
        *size = io_coll_own_kept_end(fh);
    return rc;
}

int pario_file_get_size(pario_file *fh, MPI_Offset *size) {
    int64_t s = 0;
    /* Not collective (programs call it on one rank), yet every kept write
     * completed on any rank counts: a rank publishes its part before its
     * call returns (HDF5 and PnetCDF compare the size with what all ranks
     * wrote). */
    int rc = io_coll_kept_write_published(fh);
    if (rc == PARIO_OK)
        rc = size_with_kept(fh, &s);
    if (rc == PARIO_OK)
        size_learnt(fh, s);
    *size = s;
    return io_file_result(fh, rc);
}

static int resize(pario_file *fh, MPI_Offset size, int grow_only, const char *op) {
    pario_error *err = &fh->last;
    io_async_drain(fh);
    int rc = io_coll_kept_flush(fh);
    if (rc != PARIO_OK)
        return io_file_result(fh, rc);
    if (size < 0)
        rc = pario_fail(err, PARIO_ERR_ARG, "%s %s: negative size %lld", op, fh->path,
                        (long long)size);
    else if (fh->amode & MPI_MODE_RDONLY)
        rc = pario_fail(err, PARIO_ERR_READ_ONLY, "%s %s: file is open read-only", op, fh->path);
    else if (fh->amode & MPI_MODE_SEQUENTIAL)
        rc = pario_fail(err, PARIO_ERR_UNSUPPORTED_OPERATION,
                        "%s %s: not allowed on a file opened SEQUENTIAL", op, fh->path);
    io_vote v = {.same = {size}, .nsame = 1, .call = op, .what = "sizes", .path = fh->path};
    rc = io_agree_vote(fh->comm, rc, &v, err); /* the checks and the sizes in one step */
    if (rc != PARIO_OK)
        return io_file_result(fh, rc);
    io_file_size_forget(fh);
    if (fh->rank == 0)
        rc = grow_only ? fh->io.drv->preallocate(&fh->io, size, err)
                       : fh->io.drv->set_size(&fh->io, size, err);
    return io_file_result(fh, io_agree(fh->comm, rc, err));
}

int pario_file_set_size(pario_file *fh, MPI_Offset size) {
    return resize(fh, size, 0, "set_size");
}

int pario_file_preallocate(pario_file *fh, MPI_Offset size) {
    return resize(fh, size, 1, "preallocate");
}

int pario_file_get_amode(const pario_file *fh, int *amode) {
    *amode = fh->amode;
    return PARIO_OK;
}

int pario_file_get_group(const pario_file *fh, MPI_Group *group) {
    return MPI_Comm_group(fh->comm, group) == MPI_SUCCESS ? PARIO_OK : PARIO_ERR_COMM;
}

int pario_file_get_info(pario_file *fh, MPI_Info *info) {
    io_hints in_effect = fh->hints; /* whether the client caches, as decided */
    in_effect.client_cache = io_client_caches(&fh->io) ? IO_ENABLE : IO_DISABLE;
    in_effect.cb_cycle_size = io_coll_cycle_size(fh); /* as the file system decides */
    int rc = io_hints_to_info(&in_effect, info);
    if (rc != PARIO_OK)
        return io_file_result(
            fh, pario_fail(&fh->last, rc, "get_info %s: cannot create an info object", fh->path));
    char v[160]; /* cb_nodes in effect: the aggregators cb_config_list allows */
    snprintf(v, sizeof v, "%d", io_coll_naggr(fh));
    MPI_Info_set(*info, "cb_nodes", v);
    snprintf(v, sizeof v, "%lld", (long long)fh->write_call_bytes); /* the costs in effect */
    MPI_Info_set(*info, "pario_write_call_bytes", v);
    snprintf(v, sizeof v, "%lld", (long long)fh->read_call_bytes);
    MPI_Info_set(*info, "pario_read_call_bytes", v);
    if (io_coll_routes_text(fh, v, sizeof v) == PARIO_OK) /* what collective calls did */
        MPI_Info_set(*info, "pario_coll_routes", v);
    return io_file_result(fh, PARIO_OK);
}

/* What the ranks' views allow, agreed in one allreduce:
 * - A sieving write reads a window, patches it and writes it back: a plain
 *   write by another rank into a gap of that window would be lost unless it
 *   takes part in the same byte-range locking. Only ranks whose view has
 *   holes ever sieve a write, so while no rank's does (always the case with
 *   the default view), plain writes skip the two fcntl calls of a lock.
 * - When every rank's view is contiguous in a regular file, small
 *   collective writes may be kept (io/coll/kept.c).
 * - When no view spreads its data too thinly (COLL_MAX_SPREAD), collective
 *   reads on one node are each rank's own, and so are collective writes
 *   when the views with holes all have tiny blocks (COLL_TINY_BLOCK).
 * - A view with overlapping blocks (read-only files) is read by its own
 *   rank: two-phase finds a rank's data by file offset, which such a view
 *   does not map to one stream position.
 * - Where some rank's read calls cost as much as IO_REQUEST_BOUND_READ
 *   bytes, small adjacent collective reads are aggregated (route.c); the
 *   costs are per rank, the flag rides with the views'. */
/* This rank's part of those flags for view (VIEW_FLAGS of them). */
#define VIEW_FLAGS 7
static void view_flags(const pario_file *fh, const io_view *view, int *mine) {
    const flat_type *ft = view->flat;
    if (!ft) { /* no view (an open that failed before making it): nothing to say */
        memset(mine, 0, VIEW_FLAGS * sizeof *mine);
        return;
    }
    int holes = !view->linear && !view->empty; /* an empty view moves nothing */
    int coarse = holes && ft->size >= COLL_TINY_BLOCK * flat_blocks(ft);
    int64_t reach = ft->extent > ft->true_extent ? ft->extent : ft->true_extent;
    int sparse = holes && reach > COLL_MAX_SPREAD * ft->size;
    mine[0] = holes && fh->hints.ds_write != IO_DISABLE;
    mine[1] = holes || !fh->io.regular;
    mine[2] = holes;
    mine[3] = coarse;
    mine[4] = sparse;
    mine[5] = view->overlapping;
    mine[6] = fh->read_call_bytes >= IO_REQUEST_BOUND_READ;
}

static void apply_view_flags(pario_file *fh, const int *any) {
    fh->sieve_writers = any[0];
    fh->plain_views = !any[1];
    fh->tiny_holes = any[2] && !any[3];
    fh->dense_views = !any[4];
    fh->overlapping_views = any[5];
    fh->request_bound_reads = any[6];
}

int io_file_vote(pario_file *fh, const io_view *view, int rc, io_vote *v, pario_error *err) {
    int at = v->nany;
    view_flags(fh, view, v->any + at);
    v->nany += VIEW_FLAGS;
    rc = io_agree_vote(fh->comm, rc, v, err);
    if (rc == PARIO_OK)
        apply_view_flags(fh, v->any + at);
    return rc;
}

/* Whether this rank prefetches the streams of its reads (io/file/prefetch.c):
 * on a read-only file, by the hint pario_cb_prefetch, by default where read
 * calls are request-bound (IO_REQUEST_BOUND_READ). Reads up to
 * PREFETCH_CALLS read calls' cost long, whose request is at least a fifth of
 * their time, are prefetched. On the GlusterFS test bed without client
 * caching (2 nodes x 2 ranks and 4 x 1, TCP, costs calibrated), IOR's
 * strided and segmented 4 KiB reads: see docs/benchmarks.md, "Prefetching
 * a read-only file's streams". */
#define PREFETCH_CALLS 4
static int prefetches(const pario_file *fh) {
    io_switch sw = fh->hints.cb_prefetch;
    if (!(fh->amode & MPI_MODE_RDONLY) || sw == IO_DISABLE)
        return 0;
    return sw == IO_ENABLE || fh->read_call_bytes >= IO_REQUEST_BOUND_READ;
}

/* This rank's own cost figures: hints first, then the file system's. */
void io_file_apply_costs(pario_file *fh) {
    const io_hints *h = &fh->hints;
    fh->write_call_bytes =
        h->write_call_bytes > 0 ? h->write_call_bytes : fh->costs.write_call_bytes;
    fh->read_call_bytes = h->read_call_bytes > 0 ? h->read_call_bytes : fh->costs.read_call_bytes;
    fh->io.cache_wish = h->client_cache == IO_ENABLE ? 1 : h->client_cache == IO_DISABLE ? -1 : 0;
    int pays = io_costs_reserve_pays(&fh->costs, fh->io.reserve_measured);
    atomic_store_explicit(&fh->io.prealloc_min, io_hints_prealloc_min(h, pays),
                          memory_order_relaxed);
    if (fh->io.drv && fh->io.drv->apply)
        fh->io.drv->apply(&fh->io);
    fh->prefetch.max = prefetches(fh) ? h->cb_buffer_size : 0;
    fh->prefetch.small = PREFETCH_CALLS * fh->read_call_bytes;
}

int io_file_flushed(pario_file *fh, int rc) {
    if (rc != PARIO_OK || !fh->io.drv->flush)
        return rc;
    return fh->io.drv->flush(&fh->io, &fh->last);
}

void io_file_drop_cached(pario_file *fh) {
    io_prefetch_drop(&fh->prefetch);
    if (fh->io.drv->drop_cached)
        fh->io.drv->drop_cached(&fh->io, 0, 0);
}

int io_file_meet_storage(pario_file *fh) {
    if (!io_client_caches(&fh->io))
        return PARIO_OK;
    io_file_drop_cached(fh);
    return io_file_flushed(fh, PARIO_OK);
}

void io_file_pin_striping(pario_file *fh) {
    const io_stripe_file *s = fh->io.stripe;
    if (!s)
        return;
    fh->hints.striping_unit = s->layout.unit;
    fh->hints.striping_factor = s->layout.factor;
}

int io_file_settle_local(pario_file *fh, pario_error *err) {
    io_file_pin_striping(fh);
    io_file_apply_costs(fh);
    return io_coll_place(fh, err);
}

int io_file_settle(pario_file *fh, pario_error *err) {
    int rc = io_hints_agree(&fh->hints, fh->comm) == PARIO_OK
                 ? PARIO_OK
                 : pario_fail(err, PARIO_ERR_COMM, "%s: cannot agree on the hints", fh->path);
    int prc = io_file_settle_local(fh, err); /* every rank places, whatever rc is */
    io_vote v = {0};
    return io_file_vote(fh, &fh->view, rc != PARIO_OK ? rc : prc, &v, err);
}

int pario_file_set_info(pario_file *fh, MPI_Info info) {
    int rc = io_coll_kept_flush(fh); /* kept under the hints in effect until now */
    io_hints_update(&fh->hints, info);
    if (rc == PARIO_OK)
        rc = io_file_settle(fh, &fh->last);
    return io_file_result(fh, rc);
}

int pario_file_set_atomicity(pario_file *fh, int flag) {
    long long mine = !!flag;
    int rc = io_coll_kept_flush(fh);
    if (rc == PARIO_OK)
        rc = io_check_same(fh->comm, &mine, 1, "set_atomicity", "flags", fh->path, &fh->last);
    if (rc == PARIO_OK)
        fh->atomic = !!flag;
    return io_file_result(fh, rc);
}

int pario_file_get_atomicity(const pario_file *fh, int *flag) {
    *flag = fh->atomic;
    return PARIO_OK;
}

int pario_file_set_view(pario_file *fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                        const char *datarep, MPI_Info info) {
    pario_error *err = &fh->last;
    io_async_drain(fh);              /* pending requests run on the view being replaced */
    int rc = io_coll_kept_flush(fh); /* kept writes belong to the view being replaced */
    if (rc != PARIO_OK)
        return io_file_result(fh, rc);
    if (disp == MPI_DISPLACEMENT_CURRENT) {
        if (!(fh->amode & MPI_MODE_SEQUENTIAL))
            rc = pario_fail(err, PARIO_ERR_ARG,
                            "set_view %s: MPI_DISPLACEMENT_CURRENT needs a SEQUENTIAL file",
                            fh->path);
        else { /* the shared pointer's place in the file */
            int64_t at = 0, off = 0;
            rc = io_shared_get(fh, &at);
            if (rc == PARIO_OK)
                rc = view_byte_of_pos(&fh->view, at * fh->view.etype_size, &off);
            disp = off;
        }
    }
    io_view made = {.etype = MPI_DATATYPE_NULL, .filetype = MPI_DATATYPE_NULL};
    if (rc == PARIO_OK)
        rc = view_make(&made, fh->comm, disp, etype, filetype, datarep, fh->path,
                       (fh->amode & MPI_MODE_RDONLY) != 0, err);
    /* One step: refused on one rank, no rank changes its view. The flags
     * say whether any rank passed hints and whether the shared pointer
     * may have moved off 0; the views' flags come with them. */
    io_vote v = {.nany = 2, .any = {info != MPI_INFO_NULL, fh->shared_moved}};
    rc = io_file_vote(fh, rc == PARIO_OK ? &made : &fh->view, rc, &v, err);
    if (rc != PARIO_OK) {
        view_free(&made);
        return io_file_result(fh, rc);
    }
    view_install(&fh->view, &made);
    fh->fp = 0;
    fh->reads_alone = 0; /* a new view: its first collective read is judged afresh */
    if (v.any[0]) { /* hints given: rank 0's decide, as at set_info */
        io_hints_update(&fh->hints, info);
        rc = io_file_settle(fh, err);
    }
    if (rc == PARIO_OK && v.any[1])
        rc = io_agree(fh->comm, fh->rank == 0 ? io_shared_set(fh, 0) : PARIO_OK, err);
    if (rc == PARIO_OK)
        fh->shared_moved = 0;
    return io_file_result(fh, rc);
}

int pario_file_get_view(const pario_file *fh, MPI_Offset *disp, MPI_Datatype *etype,
                        MPI_Datatype *filetype, char *datarep) {
    *disp = fh->view.disp;
    *etype = fh->view.etype;
    *filetype = fh->view.filetype;
    if (datarep)
        snprintf(datarep, MPI_MAX_DATAREP_STRING, "%s", fh->view.datarep);
    return PARIO_OK;
}

int pario_file_seek(pario_file *fh, MPI_Offset offset, int whence) {
    pario_error *err = &fh->last;
    if (fh->amode & MPI_MODE_SEQUENTIAL)
        return io_file_result(fh, pario_fail(err, PARIO_ERR_UNSUPPORTED_OPERATION,
                                             "seek %s: not allowed on a file opened SEQUENTIAL",
                                             fh->path));
    MPI_Offset base = 0;
    if (whence == MPI_SEEK_CUR) {
        base = fh->fp;
    } else if (whence == MPI_SEEK_END) {
        int rc = io_eof_position(fh, &base);
        if (rc != PARIO_OK)
            return io_file_result(fh, rc);
    } else if (whence != MPI_SEEK_SET) {
        return io_file_result(
            fh, pario_fail(err, PARIO_ERR_ARG, "seek %s: invalid whence %d", fh->path, whence));
    }
    if (base + offset < 0)
        return io_file_result(fh, pario_fail(err, PARIO_ERR_ARG,
                                             "seek %s: position %lld would be negative", fh->path,
                                             (long long)(base + offset)));
    fh->fp = base + offset;
    return io_file_result(fh, PARIO_OK);
}

int io_eof_position(pario_file *fh, MPI_Offset *etypes) {
    int64_t size = 0, pos = 0;
    int rc = io_coll_kept_write_own(fh); /* this rank's kept writes count */
    if (rc == PARIO_OK)
        rc = size_with_kept(fh, &size);
    if (rc == PARIO_OK)
        rc = view_pos_of_byte(&fh->view, size, &pos);
    *etypes = (pos + fh->view.etype_size - 1) / fh->view.etype_size;
    return rc;
}

int pario_file_get_position(const pario_file *fh, MPI_Offset *offset) {
    *offset = fh->fp;
    return PARIO_OK;
}

int pario_file_get_byte_offset(pario_file *fh, MPI_Offset offset, MPI_Offset *disp) {
    if (offset < 0)
        return io_file_result(fh, pario_fail(&fh->last, PARIO_ERR_ARG,
                                             "get_byte_offset %s: negative offset %lld", fh->path,
                                             (long long)offset));
    int64_t off = 0;
    int rc = view_byte_of_pos(&fh->view, offset * fh->view.etype_size, &off);
    *disp = off;
    return io_file_result(fh, rc);
}

int pario_file_get_type_extent(const pario_file *fh, MPI_Datatype type, MPI_Aint *extent) {
    pario_error e; /* a const file keeps its last error: the code says it all */
    return view_type_extent(&fh->view, type, extent, &e);
}
