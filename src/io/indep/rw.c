/* Entry points of independent and collective data access. The collective
 * forms agree on argument errors before touching the file, so a bad call
 * fails on every rank without moving data, and agree on the outcome. */
#include "common/error.h"
#include "io/coll/coll.h"
#include "io/datarep/convert.h"
#include "io/indep/access.h"
#include "io/indep/rw.h"
#include "io/memstage/memstage.h"
#include "io/trace/trace.h"

int io_check_readable(pario_file *fh, const char *op) {
    if (fh->amode & MPI_MODE_WRONLY)
        return pario_fail(&fh->last, PARIO_ERR_ACCESS, "%s %s: file is open write-only", op,
                          fh->path);
    return PARIO_OK;
}

int io_check_writable(pario_file *fh, const char *op) {
    if (fh->amode & MPI_MODE_RDONLY)
        return pario_fail(&fh->last, PARIO_ERR_READ_ONLY, "%s %s: file is open read-only", op,
                          fh->path);
    return PARIO_OK;
}

int io_check_explicit_offset(pario_file *fh, MPI_Offset offset, const char *op) {
    if (fh->amode & MPI_MODE_SEQUENTIAL)
        return pario_fail(&fh->last, PARIO_ERR_UNSUPPORTED_OPERATION,
                          "%s %s: explicit offsets are not allowed on a SEQUENTIAL file", op,
                          fh->path);
    if (offset < 0)
        return pario_fail(&fh->last, PARIO_ERR_ARG, "%s %s: negative offset %lld", op, fh->path,
                          (long long)offset);
    return PARIO_OK;
}

int io_check_buffer(pario_file *fh, MPI_Count count, MPI_Datatype type, const char *op) {
    if (count < 0)
        return pario_fail(&fh->last, PARIO_ERR_COUNT_ARG, "%s %s: negative count %lld", op,
                          fh->path, (long long)count);
    int rc = io_check_type(fh->comm, type, op, "datatype", fh->path, &fh->last);
    if (rc != PARIO_OK)
        return rc;
    MPI_Count size = 0;
    MPI_Type_size_x(type, &size);
    if ((size * count) % fh->view.etype_size != 0)
        return pario_fail(&fh->last, PARIO_ERR_TYPE,
                          "%s %s: %lld bytes is not a whole number of %lld-byte etypes", op,
                          fh->path, (long long)(size * count), (long long)fh->view.etype_size);
    return PARIO_OK;
}

/* A view with no data takes part in collective calls but holds nowhere to
 * put a byte: reads of it find nothing (as at end of file), and a write of
 * data through it is refused rather than dropped. */
static int check_view_holds(pario_file *fh, const rw_call *c, MPI_Count count, MPI_Datatype type) {
    if (!c->write || !fh->view.empty) /* before the type's size: this runs on every call */
        return PARIO_OK;
    MPI_Count size = 0;
    MPI_Type_size_x(type, &size);
    if (size * count == 0)
        return PARIO_OK;
    return pario_fail(&fh->last, PARIO_ERR_ARG,
                      "%s %s: the view's filetype holds no data, so %lld bytes cannot be written",
                      c->op, fh->path, (long long)(size * count));
}

int io_rw_check(pario_file *fh, const rw_call *c, MPI_Count count, MPI_Datatype type) {
    int rc = c->write ? io_check_writable(fh, c->op) : io_check_readable(fh, c->op);
    if (rc == PARIO_OK && c->explicit_offset && !c->shared)
        rc = io_check_explicit_offset(fh, c->offset, c->op);
    if (rc == PARIO_OK)
        rc = io_check_buffer(fh, count, type, c->op);
    if (rc == PARIO_OK)
        rc = check_view_holds(fh, c, count, type);
    return rc;
}

static int64_t rw_start(const pario_file *fh, const rw_call *c) {
    return (c->explicit_offset ? c->offset : fh->fp) * fh->view.etype_size;
}

static void rw_advance(pario_file *fh, const rw_call *c, int64_t moved) {
    if (!c->explicit_offset)
        fh->fp += moved / fh->view.etype_size;
}

/* The call's outcome once its staged memory was put back (a failure there
 * is reported unless the call itself failed). */
static int stage_result(pario_file *fh, const rw_call *c, int stage_rc, int rc) {
    if (rc != PARIO_OK || stage_rc == PARIO_OK)
        return rc;
    return pario_fail(&fh->last, stage_rc, "%s %s: cannot unpack the data into the memory datatype",
                      c->op, fh->path);
}

int io_rw_independent(pario_file *fh, const rw_call *c, void *buf, MPI_Count count,
                      MPI_Datatype type, MPI_Count *bytes) {
    if (io_datarep_applies(fh, type)) /* non-native view: convert, then come back as bytes */
        return io_datarep_rw_independent(fh, c, buf, count, type, bytes);
    int64_t moved = 0;
    io_trace_inflight traced;
    double t0 = io_trace_begin(fh->trace, &traced, 1);
    pario_error_clear(&fh->last);
    int rc = io_rw_check(fh, c, count, type);
    if (rc == PARIO_OK) /* this rank's kept collective writes come first */
        rc = io_coll_kept_write_own(fh);
    if (rc == PARIO_OK) {
        mem_stage st;
        mem_stage_open(&st, fh->comm, c->write, buf, count, type);
        rc = io_access(fh, c->write, rw_start(fh, c), mem_stage_buf(&st, buf),
                       mem_stage_count(&st, count), mem_stage_type(&st, type), &moved);
        rc = stage_result(fh, c, mem_stage_close(&st), rc);
    }
    if (t0 != 0.0)
        io_trace_call(fh, c, 0, 0, rw_start(fh, c), moved, rc, t0, &traced);
    rw_advance(fh, c, moved);
    if (bytes)
        *bytes = moved;
    return io_file_result(fh, rc);
}

int io_rw_collective(pario_file *fh, const rw_call *c, void *buf, MPI_Count count,
                     MPI_Datatype type, MPI_Count *bytes) {
    if (io_datarep_applies(fh, type)) /* non-native view: convert, then come back as bytes */
        return io_datarep_rw_collective(fh, c, buf, count, type, bytes);
    int64_t moved = 0;
    io_trace_inflight traced;
    double t0 = io_trace_begin(fh->trace, &traced, 0);
    pario_error_clear(&fh->last);
    int rc = io_rw_check(fh, c, count, type);
    mem_stage st = {.active = false};
    if (rc == PARIO_OK)
        mem_stage_open(&st, fh->comm, c->write, buf, count, type);
    rc = io_coll_access(fh, rc, c->write, rw_start(fh, c), mem_stage_buf(&st, buf),
                        mem_stage_count(&st, count), mem_stage_type(&st, type), &moved);
    rc = stage_result(fh, c, mem_stage_close(&st), rc);
    if (t0 != 0.0)
        io_trace_call(fh, c, 1, 0, rw_start(fh, c), moved, rc, t0, &traced);
    rw_advance(fh, c, moved);
    if (bytes)
        *bytes = moved;
    return io_file_result(fh, rc);
}

int pario_file_read_at(pario_file *fh, MPI_Offset offset, void *buf, MPI_Count count,
                       MPI_Datatype type, MPI_Count *bytes) {
    rw_call c = {"read_at", 0, 1, 0, offset};
    return io_rw_independent(fh, &c, buf, count, type, bytes);
}

int pario_file_write_at(pario_file *fh, MPI_Offset offset, const void *buf, MPI_Count count,
                        MPI_Datatype type, MPI_Count *bytes) {
    rw_call c = {"write_at", 1, 1, 0, offset};
    return io_rw_independent(fh, &c, (void *)buf, count, type, bytes);
}

int pario_file_read(pario_file *fh, void *buf, MPI_Count count, MPI_Datatype type,
                    MPI_Count *bytes) {
    rw_call c = {"read", 0, 0, 0, 0};
    return io_rw_independent(fh, &c, buf, count, type, bytes);
}

int pario_file_write(pario_file *fh, const void *buf, MPI_Count count, MPI_Datatype type,
                     MPI_Count *bytes) {
    rw_call c = {"write", 1, 0, 0, 0};
    return io_rw_independent(fh, &c, (void *)buf, count, type, bytes);
}

int pario_file_read_at_all(pario_file *fh, MPI_Offset offset, void *buf, MPI_Count count,
                           MPI_Datatype type, MPI_Count *bytes) {
    rw_call c = {"read_at_all", 0, 1, 0, offset};
    return io_rw_collective(fh, &c, buf, count, type, bytes);
}

int pario_file_write_at_all(pario_file *fh, MPI_Offset offset, const void *buf, MPI_Count count,
                            MPI_Datatype type, MPI_Count *bytes) {
    rw_call c = {"write_at_all", 1, 1, 0, offset};
    return io_rw_collective(fh, &c, (void *)buf, count, type, bytes);
}

int pario_file_read_all(pario_file *fh, void *buf, MPI_Count count, MPI_Datatype type,
                        MPI_Count *bytes) {
    rw_call c = {"read_all", 0, 0, 0, 0};
    return io_rw_collective(fh, &c, buf, count, type, bytes);
}

int pario_file_write_all(pario_file *fh, const void *buf, MPI_Count count, MPI_Datatype type,
                         MPI_Count *bytes) {
    rw_call c = {"write_all", 1, 0, 0, 0};
    return io_rw_collective(fh, &c, (void *)buf, count, type, bytes);
}
