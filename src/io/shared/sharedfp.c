/* The shared file pointer: one 64-bit counter (in etypes) on rank 0 of the
 * file's communicator, advanced with MPI's atomic fetch-and-add, so no rank
 * ever waits for another to take a turn and no hidden file is needed.
 * Ordered calls compute every rank's place with a prefix sum and advance the
 * counter once for the whole group. */
#include "common/error.h"
#include "io/coll/coll.h"
#include "io/file/file.h"
#include "io/async/async.h"
#include "io/indep/rw.h"
#include "io/shared/side.h"

/* The counter's window on fh->comm. On one machine (MPI's, whatever nodes
 * PARIO_NODE_SIZE simulates) it is a shared-memory window: Open MPI 4.1
 * names the backing file of an MPI_Win_allocate window by host, job and
 * communicator id only, and disjoint groups of one split may get the same
 * id, so two files' shared pointers would count in one segment; its
 * shared-memory windows carry the creator's rank in the name. Across
 * machines MPI_Win_allocate is still used (the same clash is possible for
 * groups that share a machine: not mended). */
static int allocate_counter(pario_file *fh, MPI_Aint size, int64_t **base) {
    if (fh->one_host)
        return MPI_Win_allocate_shared(size, (int)sizeof(int64_t), MPI_INFO_NULL, fh->comm, base,
                                       &fh->shared_win);
    return MPI_Win_allocate(size, (int)sizeof(int64_t), MPI_INFO_NULL, fh->comm, base,
                            &fh->shared_win);
}

/* The counter's window, locked for passive access (a window that exists is
 * always locked, so io_shared_free can unlock it). MPI places it in shared
 * memory, where a fetch-and-add needs nothing from rank 0; when MPI fails to
 * set that up, every rank falls back to a window over memory of its own, where
 * updates are just as atomic but may wait for rank 0 to enter MPI. */
static int shared_window(pario_file *fh) {
    MPI_Aint size = fh->rank == 0 ? (MPI_Aint)sizeof(int64_t) : 0;
    int64_t *base = NULL;
    int ok = allocate_counter(fh, size, &base) == MPI_SUCCESS;
    if (ok) /* a failing RMA call returns, and the open reports it */
        MPI_Win_set_errhandler(fh->shared_win, MPI_ERRORS_RETURN);
    int all_ok = 0, any_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, fh->comm);
    MPI_Allreduce(&ok, &any_ok, 1, MPI_INT, MPI_MAX, fh->comm);
    if (all_ok) {
        MPI_Win_lock_all(MPI_MODE_NOCHECK, fh->shared_win);
        return PARIO_OK;
    }
    fh->shared_win = MPI_WIN_NULL;
    if (any_ok) /* half-made window: nothing collective can undo it */
        return PARIO_ERR_COMM;
    if (MPI_Alloc_mem(size > 0 ? size : 1, MPI_INFO_NULL, &fh->shared_mem) != MPI_SUCCESS)
        return PARIO_ERR_NO_MEM;
    if (MPI_Win_create(fh->shared_mem, size, (int)sizeof(int64_t), MPI_INFO_NULL, fh->comm,
                       &fh->shared_win) != MPI_SUCCESS) {
        fh->shared_win = MPI_WIN_NULL;
        return PARIO_ERR_COMM;
    }
    MPI_Win_set_errhandler(fh->shared_win, MPI_ERRORS_RETURN);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, fh->shared_win);
    return PARIO_OK;
}

/* Whether this rank's one-sided calls on the counter work: MPI may make a
 * window whose first RMA call fails (Open MPI 4.1's osc rdma over its TCP
 * transport, across nodes: "invalid window"). Such a window is not valid
 * enough for its own error handler, so MPI raises the error on
 * MPI_COMM_WORLD's: that one returns errors for the probe's two calls, and
 * the program's is put back. */
static int shared_window_works(pario_file *fh, pario_error *err) {
    int64_t none = 0, now = 0;
    MPI_Errhandler program;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &program);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Fetch_and_op(&none, &now, MPI_INT64_T, 0, 0, MPI_NO_OP, fh->shared_win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush(0, fh->shared_win);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, program);
    MPI_Errhandler_free(&program);
    if (rc == MPI_SUCCESS)
        return PARIO_OK;
    char why[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, why, &len);
    return pario_fail(err, PARIO_ERR_COMM, "MPI_Fetch_and_op on the window: %s", why);
}

/* Where MPI's one-sided calls fail (no window, or a window whose first
 * call fails), the counter goes to a side file (side.c): the open then
 * works as ROMIO's and OMPIO's do there. */
int io_shared_create(pario_file *fh, pario_error *err) {
    pario_error why;
    int rc = shared_window(fh);
    rc = rc == PARIO_OK ? shared_window_works(fh, &why)
                        : pario_fail(&why, rc, "MPI could not make the window");
    if (io_agree(fh->comm, rc, &why) == PARIO_OK)
        return PARIO_OK;
    io_shared_free(fh);
    pario_error side;
    rc = io_shared_side_make(fh, &side);
    if (rc != PARIO_OK)
        pario_fail(err, rc,
                   "%.300s; the shared file pointer's MPI window did not work either (%.300s)",
                   side.msg, why.msg);
    return rc;
}

void io_shared_free(pario_file *fh) {
    io_shared_side_free(fh);
    if (fh->shared_win != MPI_WIN_NULL) {
        MPI_Win_unlock_all(fh->shared_win);
        MPI_Win_free(&fh->shared_win);
    }
    if (fh->shared_mem) {
        MPI_Free_mem(fh->shared_mem);
        fh->shared_mem = NULL;
    }
}

int io_shared_set(pario_file *fh, int64_t etypes) {
    fh->shared_moved = etypes != 0;
    if (fh->shared_fd >= 0)
        return io_shared_side_update(fh, 1, etypes, NULL);
    if (MPI_Accumulate(&etypes, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, MPI_REPLACE,
                       fh->shared_win) != MPI_SUCCESS ||
        MPI_Win_flush(0, fh->shared_win) != MPI_SUCCESS)
        return PARIO_ERR_COMM;
    return PARIO_OK;
}

/* Atomically add n etypes; *old gets the value before. n = 0 reads it. */
static int shared_fetch_add(pario_file *fh, int64_t n, int64_t *old) {
    MPI_Op op = n ? MPI_SUM : MPI_NO_OP;
    fh->shared_moved |= n != 0;
    if (fh->shared_fd >= 0)
        return io_shared_side_update(fh, 0, n, old);
    if (MPI_Fetch_and_op(&n, old, MPI_INT64_T, 0, 0, op, fh->shared_win) != MPI_SUCCESS ||
        MPI_Win_flush(0, fh->shared_win) != MPI_SUCCESS)
        return pario_fail(&fh->last, PARIO_ERR_COMM, "%s: shared file pointer update failed",
                          fh->path);
    return PARIO_OK;
}

int io_shared_get(pario_file *fh, int64_t *etypes) {
    return shared_fetch_add(fh, 0, etypes);
}

/* Etypes covered by count instances of type (whole etypes checked before). */
static int64_t etypes_of(const pario_file *fh, MPI_Count count, MPI_Datatype type) {
    MPI_Count size = 0;
    MPI_Type_size_x(type, &size);
    return (int64_t)(count * size) / fh->view.etype_size;
}

/* Check the call and take its place: advance the shared pointer by the
 * amount requested; c->offset gets where the access starts. */
static int shared_claim(pario_file *fh, rw_call *c, MPI_Count count, MPI_Datatype type) {
    int64_t at = 0;
    int rc = io_rw_check(fh, c, count, type);
    if (rc == PARIO_OK)
        rc = shared_fetch_add(fh, etypes_of(fh, count, type), &at);
    c->offset = at;
    return io_file_result(fh, rc);
}

static int shared_independent(pario_file *fh, rw_call *c, void *buf, MPI_Count count,
                              MPI_Datatype type, MPI_Count *bytes) {
    int rc = shared_claim(fh, c, count, type);
    if (rc != PARIO_OK) {
        if (bytes)
            *bytes = 0;
        return rc;
    }
    return io_rw_independent(fh, c, buf, count, type, bytes);
}

static int shared_start(pario_file *fh, rw_call *c, void *buf, MPI_Count count, MPI_Datatype type,
                        pario_request **req) {
    *req = NULL;
    int rc = shared_claim(fh, c, count, type);
    return rc == PARIO_OK ? io_rw_start(fh, c, buf, count, type, req) : rc;
}

int pario_file_iread_shared(pario_file *fh, void *buf, MPI_Count count, MPI_Datatype type,
                            pario_request **req) {
    rw_call c = {"iread_shared", 0, 1, 1, 0};
    return shared_start(fh, &c, buf, count, type, req);
}

int pario_file_iwrite_shared(pario_file *fh, const void *buf, MPI_Count count, MPI_Datatype type,
                             pario_request **req) {
    rw_call c = {"iwrite_shared", 1, 1, 1, 0};
    return shared_start(fh, &c, (void *)buf, count, type, req);
}

/* Rank r accesses after ranks 0..r-1: a prefix sum of the amounts, and one
 * fetch-and-add of the total by rank 0. */
static int shared_ordered(pario_file *fh, rw_call *c, void *buf, MPI_Count count, MPI_Datatype type,
                          MPI_Count *bytes) {
    int rc = io_agree(fh->comm, io_rw_check(fh, c, count, type), &fh->last);
    if (rc != PARIO_OK) {
        if (bytes)
            *bytes = 0;
        return io_file_result(fh, rc);
    }
    int64_t mine = etypes_of(fh, count, type), before = 0, total = 0, base = 0;
    MPI_Exscan(&mine, &before, 1, MPI_INT64_T, MPI_SUM, fh->comm);
    MPI_Allreduce(&mine, &total, 1, MPI_INT64_T, MPI_SUM, fh->comm);
    if (fh->rank == 0) {
        before = 0;
        rc = shared_fetch_add(fh, total, &base);
    }
    rc = io_agree(fh->comm, rc, &fh->last);
    if (rc == PARIO_OK)
        MPI_Bcast(&base, 1, MPI_INT64_T, 0, fh->comm);
    if (rc != PARIO_OK)
        return io_file_result(fh, rc);
    c->offset = base + before;
    return io_rw_collective(fh, c, buf, count, type, bytes);
}

int pario_file_read_shared(pario_file *fh, void *buf, MPI_Count count, MPI_Datatype type,
                           MPI_Count *bytes) {
    rw_call c = {"read_shared", 0, 1, 1, 0};
    return shared_independent(fh, &c, buf, count, type, bytes);
}

int pario_file_write_shared(pario_file *fh, const void *buf, MPI_Count count, MPI_Datatype type,
                            MPI_Count *bytes) {
    rw_call c = {"write_shared", 1, 1, 1, 0};
    return shared_independent(fh, &c, (void *)buf, count, type, bytes);
}

int pario_file_read_ordered(pario_file *fh, void *buf, MPI_Count count, MPI_Datatype type,
                            MPI_Count *bytes) {
    rw_call c = {"read_ordered", 0, 1, 1, 0};
    return shared_ordered(fh, &c, buf, count, type, bytes);
}

int pario_file_write_ordered(pario_file *fh, const void *buf, MPI_Count count, MPI_Datatype type,
                             MPI_Count *bytes) {
    rw_call c = {"write_ordered", 1, 1, 1, 0};
    return shared_ordered(fh, &c, (void *)buf, count, type, bytes);
}

static int seek_target(pario_file *fh, MPI_Offset offset, int whence, int64_t *target) {
    int64_t base = 0;
    int rc = PARIO_OK;
    if (whence == MPI_SEEK_CUR)
        rc = io_shared_get(fh, &base);
    else if (whence == MPI_SEEK_END) {
        MPI_Offset eof = 0;
        rc = io_eof_position(fh, &eof);
        base = eof;
    } else if (whence != MPI_SEEK_SET)
        return pario_fail(&fh->last, PARIO_ERR_ARG, "seek_shared %s: invalid whence %d", fh->path,
                          whence);
    if (rc == PARIO_OK && base + offset < 0)
        rc = pario_fail(&fh->last, PARIO_ERR_ARG, "seek_shared %s: position %lld would be negative",
                        fh->path, (long long)(base + offset));
    *target = base + offset;
    return rc;
}

int pario_file_seek_shared(pario_file *fh, MPI_Offset offset, int whence) {
    int rc = PARIO_OK;
    int64_t target = 0;
    if (fh->amode & MPI_MODE_SEQUENTIAL)
        rc = pario_fail(&fh->last, PARIO_ERR_UNSUPPORTED_OPERATION,
                        "seek_shared %s: not allowed on a file opened SEQUENTIAL", fh->path);
    rc = io_agree(fh->comm, rc, &fh->last);
    if (rc == PARIO_OK)
        rc = io_agree(fh->comm,
                      io_check_same(fh->comm, (long long[]){offset, whence}, 2, "seek_shared",
                                    "offsets or whence", fh->path, &fh->last),
                      &fh->last);
    if (rc == PARIO_OK && fh->rank == 0) {
        rc = seek_target(fh, offset, whence, &target);
        if (rc == PARIO_OK)
            rc = io_shared_set(fh, target);
    }
    return io_file_result(fh, io_agree(fh->comm, rc, &fh->last));
}

int pario_file_get_position_shared(pario_file *fh, MPI_Offset *offset) {
    int64_t at = 0;
    int rc = io_shared_get(fh, &at);
    *offset = at;
    return io_file_result(fh, rc);
}
