/* Nonblocking data access: iread/iwrite, _at, _shared, _all, _at_all.
 *
 * Independent forms check their arguments and move the file pointer in the
 * call (errors come back from the call itself), then the bytes move in the
 * file's background thread (io/async) while the program computes; the
 * MPI_Request completes inside MPI's progress once they have moved
 * (grequest.c); accesses through a view that converts the data run in the
 * call (io/async). Collective forms run to completion in the call and return
 * a request that is already complete. */
#include "mpiio/mpiio.h"

/* Starts an independent access in the background. */
static int start_access(pario_file *pf, const struct mpiio_access *a, pario_request **req) {
    switch (a->op) {
    case MPIIO_READ:
        return pario_file_iread(pf, a->buf, a->count, a->type, req);
    case MPIIO_WRITE:
        return pario_file_iwrite(pf, a->buf, a->count, a->type, req);
    case MPIIO_READ_AT:
        return pario_file_iread_at(pf, a->offset, a->buf, a->count, a->type, req);
    case MPIIO_WRITE_AT:
        return pario_file_iwrite_at(pf, a->offset, a->buf, a->count, a->type, req);
    case MPIIO_READ_SHARED:
        return pario_file_iread_shared(pf, a->buf, a->count, a->type, req);
    case MPIIO_WRITE_SHARED:
        return pario_file_iwrite_shared(pf, a->buf, a->count, a->type, req);
    default: /* collective forms have no background version */
        return PARIO_ERR_INTERN;
    }
}

int mpiio_transfer_request(MPI_File fh, const struct mpiio_access *a, MPI_Request *request) {
    struct mpiio_file *f;
    int rc = mpiio_lookup(fh, a->fname, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!request)
        return mpiio_fail(f, a->fname, MPI_ERR_REQUEST, "NULL request argument");
    *request = MPI_REQUEST_NULL;
    if (!mpiio_op_collective(a->op)) {
        pario_request *access = NULL;
        rc = mpiio_check(f, a->fname, start_access(f->pf, a, &access));
        return rc == MPI_SUCCESS ? mpiio_request_start(f, a->fname, access, request) : rc;
    }
    MPI_Count bytes = 0;
    rc = mpiio_transfer(f, a, &bytes);
    return rc == MPI_SUCCESS ? mpiio_request_done(f, a->fname, bytes, request) : rc;
}

int PMPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                    MPI_Request *request) {
    struct mpiio_access a = {"MPI_File_iread", MPIIO_READ, 0, buf, count, datatype};
    return mpiio_transfer_request(fh, &a, request);
}
MPIIO_ALIAS(MPI_File_iread);

int PMPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                     MPI_Request *request) {
    struct mpiio_access a = {"MPI_File_iwrite", MPIIO_WRITE, 0, (void *)buf, count, datatype};
    return mpiio_transfer_request(fh, &a, request);
}
MPIIO_ALIAS(MPI_File_iwrite);

int PMPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                       MPI_Request *request) {
    struct mpiio_access a = {"MPI_File_iread_at", MPIIO_READ_AT, offset, buf, count, datatype};
    return mpiio_transfer_request(fh, &a, request);
}
MPIIO_ALIAS(MPI_File_iread_at);

int PMPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                        MPI_Datatype datatype, MPI_Request *request) {
    struct mpiio_access a = {"MPI_File_iwrite_at", MPIIO_WRITE_AT, offset,
                             (void *)buf,          count,          datatype};
    return mpiio_transfer_request(fh, &a, request);
}
MPIIO_ALIAS(MPI_File_iwrite_at);

int PMPI_File_iread_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                        MPI_Request *request) {
    struct mpiio_access a = {"MPI_File_iread_all", MPIIO_READ_ALL, 0, buf, count, datatype};
    return mpiio_transfer_request(fh, &a, request);
}
MPIIO_ALIAS(MPI_File_iread_all);

int PMPI_File_iwrite_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                         MPI_Request *request) {
    struct mpiio_access a = {"MPI_File_iwrite_all", MPIIO_WRITE_ALL, 0,
                             (void *)buf,           count,           datatype};
    return mpiio_transfer_request(fh, &a, request);
}
MPIIO_ALIAS(MPI_File_iwrite_all);

int PMPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
                           MPI_Datatype datatype, MPI_Request *request) {
    struct mpiio_access a = {
        "MPI_File_iread_at_all", MPIIO_READ_AT_ALL, offset, buf, count, datatype};
    return mpiio_transfer_request(fh, &a, request);
}
MPIIO_ALIAS(MPI_File_iread_at_all);

int PMPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                            MPI_Datatype datatype, MPI_Request *request) {
    struct mpiio_access a = {
        "MPI_File_iwrite_at_all", MPIIO_WRITE_AT_ALL, offset, (void *)buf, count, datatype};
    return mpiio_transfer_request(fh, &a, request);
}
MPIIO_ALIAS(MPI_File_iwrite_at_all);
