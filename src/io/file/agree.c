#include "io/file/file.h"

#include "common/error.h"

/* Every rank learns the error of rank first, the lowest that failed. */
static int share_failure(MPI_Comm comm, int rank, int first, pario_error *err) {
    pario_error shared;
    if (rank == first)
        shared = *err;
    if (MPI_Bcast(&shared, (int)sizeof shared, MPI_BYTE, first, comm) != MPI_SUCCESS)
        return pario_fail(err, PARIO_ERR_COMM, "sharing an error failed");
    if (rank != first)
        pario_fail(err, shared.code, "%.480s (on rank %d)", shared.msg, first);
    return shared.code;
}

int io_agree(MPI_Comm comm, int rc, pario_error *err) {
    int rank = 0, nranks = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    int mine = rc != PARIO_OK ? rank : nranks, first = nranks;
    if (MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return pario_fail(err, PARIO_ERR_COMM, "agreement on the outcome failed");
    return first == nranks ? PARIO_OK : share_failure(comm, rank, first, err);
}

/* The vote's values in one buffer reduced with MAX: [0] nranks - the rank
 * when it failed (0 when it did not), then each same value and its
 * negation (max(x) == -max(-x) iff all ranks passed x), then the flags. */
#define VOTE_LEN (1 + 2 * IO_VOTE_SAME + IO_VOTE_ANY)

int io_agree_vote(MPI_Comm comm, int rc, io_vote *v, pario_error *err) {
    int rank = 0, nranks = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    long long mine[VOTE_LEN] = {0}, all[VOTE_LEN] = {0};
    int n = 1 + 2 * v->nsame + v->nany;
    mine[0] = rc != PARIO_OK ? nranks - rank : 0;
    for (int i = 0; i < v->nsame; i++) {
        mine[1 + 2 * i] = v->same[i];
        mine[2 + 2 * i] = -v->same[i];
    }
    for (int i = 0; i < v->nany; i++)
        mine[1 + 2 * v->nsame + i] = !!v->any[i];
    if (MPI_Allreduce(mine, all, n, MPI_LONG_LONG, MPI_MAX, comm) != MPI_SUCCESS)
        return pario_fail(err, PARIO_ERR_COMM, "agreement on the outcome failed");
    for (int i = 0; i < v->nany; i++)
        v->any[i] = (int)all[1 + 2 * v->nsame + i];
    if (all[0] > 0)
        return share_failure(comm, rank, nranks - (int)all[0], err);
    for (int i = 0; i < v->nsame; i++)
        if (all[1 + 2 * i] != -all[2 + 2 * i])
            return pario_fail(err, PARIO_ERR_NOT_SAME, "%s %s: ranks passed different %s", v->call,
                              v->path, v->what);
    return PARIO_OK;
}

void io_hold_failure(pario_file *fh) {
    if (fh->held.code == PARIO_OK)
        pario_fail(&fh->held, fh->last.code, "an earlier collective access failed: %.440s",
                   fh->last.msg);
}

int io_report_held(pario_file *fh, int rc, pario_error *err) {
    if (rc != PARIO_OK || fh->held.code == PARIO_OK)
        return rc;
    rc = fh->held.code;
    if (err)
        *err = fh->held;
    pario_error_clear(&fh->held);
    return rc;
}

int io_file_result(pario_file *fh, int rc) {
    if (rc == PARIO_OK)
        pario_error_clear(&fh->last);
    else
        fh->last.code = rc;
    return rc;
}

/* Most values io_check_same compares at once. */
#define IO_SAME_MAX 4

int io_check_same(MPI_Comm comm, const long long *vals, int n, const char *call, const char *what,
                  const char *path, pario_error *err) {
    long long mine[2 * IO_SAME_MAX] = {0}, all[2 * IO_SAME_MAX] = {0};
    n = n < IO_SAME_MAX ? n : IO_SAME_MAX;
    for (int i = 0; i < n; i++) { /* max(x) == -max(-x) iff all ranks passed x */
        mine[2 * i] = vals[i];
        mine[2 * i + 1] = -vals[i];
    }
    if (MPI_Allreduce(mine, all, 2 * n, MPI_LONG_LONG, MPI_MAX, comm) != MPI_SUCCESS)
        return pario_fail(err, PARIO_ERR_COMM, "%s %s: agreement on the %s failed", call, path,
                          what);
    for (int i = 0; i < n; i++)
        if (all[2 * i] != -all[2 * i + 1])
            return pario_fail(err, PARIO_ERR_NOT_SAME, "%s %s: ranks passed different %s", call,
                              path, what);
    return PARIO_OK;
}
