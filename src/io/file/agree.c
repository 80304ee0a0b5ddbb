#include "io/file/file.h"

#include "common/error.h"

int io_agree(MPI_Comm comm, int rc, pario_error *err) {
    int rank = 0, nranks = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    int mine = rc != PARIO_OK ? rank : nranks, first = nranks;
    if (MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return pario_fail(err, PARIO_ERR_COMM, "agreement on the outcome failed");
    if (first == nranks)
        return PARIO_OK;
    pario_error shared;
    if (rank == first)
        shared = *err;
    if (MPI_Bcast(&shared, (int)sizeof shared, MPI_BYTE, first, comm) != MPI_SUCCESS)
        return pario_fail(err, PARIO_ERR_COMM, "sharing an error failed");
    if (rank != first)
        pario_fail(err, shared.code, "%.480s (on rank %d)", shared.msg, first);
    return shared.code;
}

int io_file_result(pario_file *fh, int rc) {
    if (rc == PARIO_OK)
        pario_error_clear(&fh->last);
    else
        fh->last.code = rc;
    return rc;
}
