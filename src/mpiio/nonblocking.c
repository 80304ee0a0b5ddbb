/* Nonblocking data access: iread/iwrite, _at, _all, _at_all.
 *
 * For now the access runs to completion inside the call, which then returns
 * an already completed generalized request; MPI_Wait, MPI_Test and their
 * any/some/all forms complete it and report the bytes moved through its
 * query function. A failure is reported by the initiating call (through the
 * file's error handler) and no request is made. */
#include "mpiio/mpiio.h"

#include <stdlib.h>

/* What the request's query function reports. */
struct done_request {
    MPI_Count bytes;
};

static int done_query(void *state, MPI_Status *status) {
    const struct done_request *d = state;
    PMPI_Status_set_elements_x(status, MPI_BYTE, d->bytes);
    PMPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int done_free(void *state) {
    free(state);
    return MPI_SUCCESS;
}

/* The operation has completed: cancelling it has no effect. */
static int done_cancel(void *state, int complete) {
    (void)state;
    (void)complete;
    return MPI_SUCCESS;
}

/* A completed generalized request reporting bytes. */
static int completed_request(struct mpiio_file *f, const char *fname, MPI_Count bytes,
                             MPI_Request *request) {
    struct done_request *d = malloc(sizeof *d);
    if (!d)
        return mpiio_fail(f, fname, MPI_ERR_NO_MEM, "no memory for a request");
    d->bytes = bytes;
    int rc = PMPI_Grequest_start(done_query, done_free, done_cancel, d, request);
    if (rc != MPI_SUCCESS) {
        free(d);
        return mpiio_fail(f, fname, MPI_ERR_INTERN, "cannot start a generalized request");
    }
    rc = PMPI_Grequest_complete(*request);
    if (rc != MPI_SUCCESS)
        return mpiio_fail(f, fname, MPI_ERR_INTERN, "cannot complete a generalized request");
    return MPI_SUCCESS;
}

int mpiio_transfer_request(MPI_File fh, const struct mpiio_access *a, MPI_Request *request) {
    struct mpiio_file *f;
    int rc = mpiio_lookup(fh, a->fname, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!request)
        return mpiio_fail(f, a->fname, MPI_ERR_REQUEST, "NULL request argument");
    *request = MPI_REQUEST_NULL;
    MPI_Count bytes = 0;
    rc = mpiio_transfer(f, a, &bytes);
    if (rc != MPI_SUCCESS)
        return rc;
    return completed_request(f, a->fname, bytes, request);
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
