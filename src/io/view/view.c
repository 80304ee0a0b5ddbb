#include "io/view/view.h"

#include <stdio.h>
#include <string.h>
#include "common/error.h"

static bool is_named(MPI_Datatype t) {
    int ni, na, nd, combiner;
    MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    return combiner == MPI_COMBINER_NAMED;
}

int io_check_type(MPI_Comm comm, MPI_Datatype t, const char *op, const char *what, const char *path,
                  pario_error *err) {
    if (t == MPI_DATATYPE_NULL)
        return pario_fail(err, PARIO_ERR_TYPE, "%s %s: %s is MPI_DATATYPE_NULL", op, path, what);
    if (is_named(t)) /* predefined types are committed: no probe on every call */
        return PARIO_OK;
    /* Open MPI refuses an uncommitted type in MPI_Pack, MPICH in MPI_Pack_size. */
    int size = 0, position = 0;
    char probe[1];
    if (MPI_Pack_size(1, t, comm, &size) != MPI_SUCCESS ||
        MPI_Pack(probe, 0, t, probe, (int)sizeof probe, &position, comm) != MPI_SUCCESS)
        return pario_fail(err, PARIO_ERR_TYPE, "%s %s: %s is not a committed datatype", op, path,
                          what);
    return PARIO_OK;
}

static int keep_type(MPI_Datatype t, MPI_Datatype *out) {
    if (is_named(t)) {
        *out = t;
        return PARIO_OK;
    }
    return MPI_Type_dup(t, out) == MPI_SUCCESS ? PARIO_OK : PARIO_ERR_NO_MEM;
}

static void drop_type(MPI_Datatype *t) {
    if (*t != MPI_DATATYPE_NULL && !is_named(*t))
        MPI_Type_free(t);
    *t = MPI_DATATYPE_NULL;
}

/* The representation called datarep, which must be able to hold every type
 * of the etype and the filetype at its native size (see io/datarep). */
static int view_datarep(const char *datarep, MPI_Datatype etype, MPI_Datatype filetype,
                        const char *path, const io_datarep **rep, pario_error *err) {
    int rc = io_datarep_find(datarep, rep, "set_view", path, err);
    if (rc == PARIO_OK)
        rc = io_datarep_check_type(*rep, etype, "set_view", "the etype", path, err);
    if (rc == PARIO_OK)
        rc = io_datarep_check_type(*rep, filetype, "set_view", "the filetype", path, err);
    return rc;
}

/* Blocks that overlap but never start before an earlier one, within an
 * instance and from one instance to the next: readable in typemap order. */
static bool overlap_readable(const flat_type *ft) {
    return ft->nondecreasing && ft->last_start - ft->true_lb <= ft->extent;
}

/* The filetype's layout as a view: validated against the etype. A
 * filetype with no data (a darray or subarray for a rank that owns no
 * element) is valid: that rank's view is empty and moves no byte. A file
 * opened read-only may have overlapping blocks (MPI forbids them only where
 * the file may be written, as ROMIO does). */
static int check_filetype(const flat_type *ft, int64_t esize, const char *path, bool read_only,
                          pario_error *err) {
    if (ft->size == 0)
        return PARIO_OK;
    /* The standard names no class for the next two; ROMIO's (and OMPIO's) are
     * MPI_ERR_ARG and MPI_ERR_IO. */
    if (ft->size % esize != 0)
        return pario_fail(err, PARIO_ERR_ARG,
                          "set_view %s: filetype size %lld is not a multiple of the etype size "
                          "%lld",
                          path, (long long)ft->size, (long long)esize);
    if (ft->true_lb < 0 || !(ft->monotonic || (read_only && overlap_readable(ft))))
        return pario_fail(err, PARIO_ERR_IO,
                          "set_view %s: filetype has negative or decreasing displacements%s", path,
                          read_only ? "" : ", or overlaps in a file opened for writing");
    if (ft->extent <= 0)
        return pario_fail(err, PARIO_ERR_TYPE, "set_view %s: filetype extent is not positive",
                          path);
    return PARIO_OK;
}

static void view_set_shape(io_view *v) {
    const flat_type *ft = v->flat;
    v->empty = ft->size == 0;
    v->linear = !v->empty && flat_is_contiguous(ft) && ft->size == ft->extent;
    v->overlapping = !v->empty && !ft->monotonic;
    v->linear_base = ft->true_lb;
}

int view_make(io_view *out, MPI_Comm comm, MPI_Offset disp, MPI_Datatype etype,
              MPI_Datatype filetype, const char *datarep, const char *path, bool read_only,
              pario_error *err) {
    int rc;
    *out = (io_view){.etype = MPI_DATATYPE_NULL, .filetype = MPI_DATATYPE_NULL};
    if (disp < 0)
        return pario_fail(err, PARIO_ERR_ARG, "set_view %s: negative displacement %lld", path,
                          (long long)disp);
    if ((rc = io_check_type(comm, etype, "set_view", "etype", path, err)) != PARIO_OK ||
        (rc = io_check_type(comm, filetype, "set_view", "filetype", path, err)) != PARIO_OK)
        return rc;
    const io_datarep *rep = NULL;
    if ((rc = view_datarep(datarep, etype, filetype, path, &rep, err)) != PARIO_OK)
        return rc;
    int esize = 0;
    MPI_Type_size(etype, &esize);
    if (esize <= 0)
        return pario_fail(err, PARIO_ERR_TYPE, "set_view %s: etype has no data", path);
    io_view nv = {.disp = disp, .etype_size = esize, .rep = rep};
    snprintf(nv.datarep, sizeof nv.datarep, "%s", datarep);
    if ((rc = keep_type(etype, &nv.etype)) != PARIO_OK)
        return pario_fail(err, rc, "set_view %s: cannot keep the etype", path);
    if ((rc = keep_type(filetype, &nv.filetype)) != PARIO_OK) {
        drop_type(&nv.etype);
        return pario_fail(err, rc, "set_view %s: cannot keep the filetype", path);
    }
    rc = flat_get_committed(nv.filetype, comm, &nv.flat);
    if (rc != PARIO_OK)
        rc = pario_fail(err, rc, "set_view %s: cannot decode the filetype", path);
    else
        rc = check_filetype(nv.flat, esize, path, read_only, err);
    if (rc != PARIO_OK) {
        drop_type(&nv.filetype);
        drop_type(&nv.etype);
        return rc;
    }
    view_set_shape(&nv);
    *out = nv;
    return PARIO_OK;
}

void view_install(io_view *v, io_view *made) {
    view_free(v);
    *v = *made;
    *made = (io_view){.etype = MPI_DATATYPE_NULL, .filetype = MPI_DATATYPE_NULL};
}

int view_init_default(io_view *v, MPI_Comm comm, const char *path, pario_error *err) {
    return view_make(v, comm, 0, MPI_BYTE, MPI_BYTE, "native", path, false, err);
}

void view_free(io_view *v) {
    drop_type(&v->filetype);
    drop_type(&v->etype);
    v->flat = NULL;
}

int view_type_extent(const io_view *v, MPI_Datatype type, MPI_Aint *extent, pario_error *err) {
    return io_datarep_type_extent(v->rep, type, extent, err);
}

int view_iter_init(const io_view *v, flat_iter *it, int64_t pos) {
    return flat_iter_init(it, v->flat, v->disp, INT64_MAX, pos);
}

int view_byte_of_pos(const io_view *v, int64_t pos, int64_t *off) {
    if (v->empty) { /* no data byte: every position is where the view starts */
        *off = v->disp;
        return PARIO_OK;
    }
    if (v->linear) {
        *off = v->disp + v->linear_base + pos;
        return PARIO_OK;
    }
    flat_iter it;
    int rc = view_iter_init(v, &it, pos);
    if (rc != PARIO_OK)
        return rc;
    int64_t len = 0;
    if (!flat_iter_next(&it, 1, off, &len))
        rc = PARIO_ERR_INTERN;
    flat_iter_free(&it);
    return rc;
}

/* The stream position of the first data byte at or after file offset off:
 * the number of data bytes below it. Stream positions map to file offsets
 * monotonically (views require it), so an exponential then binary search
 * over view_byte_of_pos finds it in O(depth log n) for any filetype, whether
 * its instances overlap in extent or not. */
int view_pos_of_byte(const io_view *v, int64_t off, int64_t *pos) {
    if (v->empty) {
        *pos = 0;
        return PARIO_OK;
    }
    if (v->linear) {
        int64_t rel = off - v->disp - v->linear_base;
        *pos = rel > 0 ? rel : 0;
        return PARIO_OK;
    }
    int64_t lo = 0, hi = v->flat->size, at = 0;
    int rc = PARIO_OK;
    while ((rc = view_byte_of_pos(v, hi - 1, &at)) == PARIO_OK && at < off) {
        lo = hi;
        hi = hi <= INT64_MAX / 4 ? hi * 2 : INT64_MAX / 2;
    }
    /* Invariant: every position below lo maps below off; hi - 1 maps at or past it. */
    while (rc == PARIO_OK && lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        rc = view_byte_of_pos(v, mid, &at);
        if (at < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    *pos = lo;
    return rc;
}
