/* Blocking data access: read/write, _at, _all, _at_all (and the core that the
 * nonblocking and split collective forms share). */
#include "mpiio/mpiio.h"

int mpiio_op_collective(enum mpiio_op op) {
    return op == MPIIO_READ_ALL || op == MPIIO_WRITE_ALL || op == MPIIO_READ_AT_ALL ||
           op == MPIIO_WRITE_AT_ALL || op == MPIIO_READ_ORDERED || op == MPIIO_WRITE_ORDERED;
}

void mpiio_status_set(MPI_Status *status, MPI_Count bytes) {
    if (status == MPI_STATUS_IGNORE)
        return;
    PMPI_Status_set_elements_x(status, MPI_BYTE, bytes);
    PMPI_Status_set_cancelled(status, 0);
}

/* A collective access while a split collective is outstanding is erroneous.
 * Arguments, access mode and offsets are checked by pario itself, which
 * makes the ranks of a collective call agree on the error, so a bad argument
 * on one rank fails the call everywhere instead of hanging the others. */
static int check_no_split(struct mpiio_file *f, const struct mpiio_access *a) {
    if (mpiio_op_collective(a->op) && f->split != MPIIO_SPLIT_NONE)
        return mpiio_fail(f, a->fname, MPI_ERR_OTHER,
                          "a split collective operation is outstanding on the file");
    return MPI_SUCCESS;
}

/* The pario call for the access; its pario code. */
static int run_access(pario_file *pf, const struct mpiio_access *a, MPI_Count *bytes) {
    switch (a->op) {
    case MPIIO_READ:
        return pario_file_read(pf, a->buf, a->count, a->type, bytes);
    case MPIIO_WRITE:
        return pario_file_write(pf, a->buf, a->count, a->type, bytes);
    case MPIIO_READ_AT:
        return pario_file_read_at(pf, a->offset, a->buf, a->count, a->type, bytes);
    case MPIIO_WRITE_AT:
        return pario_file_write_at(pf, a->offset, a->buf, a->count, a->type, bytes);
    case MPIIO_READ_ALL:
        return pario_file_read_all(pf, a->buf, a->count, a->type, bytes);
    case MPIIO_WRITE_ALL:
        return pario_file_write_all(pf, a->buf, a->count, a->type, bytes);
    case MPIIO_READ_AT_ALL:
        return pario_file_read_at_all(pf, a->offset, a->buf, a->count, a->type, bytes);
    case MPIIO_WRITE_AT_ALL:
        return pario_file_write_at_all(pf, a->offset, a->buf, a->count, a->type, bytes);
    case MPIIO_READ_SHARED:
        return pario_file_read_shared(pf, a->buf, a->count, a->type, bytes);
    case MPIIO_WRITE_SHARED:
        return pario_file_write_shared(pf, a->buf, a->count, a->type, bytes);
    case MPIIO_READ_ORDERED:
        return pario_file_read_ordered(pf, a->buf, a->count, a->type, bytes);
    case MPIIO_WRITE_ORDERED:
        return pario_file_write_ordered(pf, a->buf, a->count, a->type, bytes);
    }
    return PARIO_ERR_INTERN;
}

int mpiio_transfer(struct mpiio_file *f, const struct mpiio_access *a, MPI_Count *bytes) {
    *bytes = 0;
    int rc = check_no_split(f, a);
    if (rc != MPI_SUCCESS)
        return rc;
    return mpiio_check(f, a->fname, run_access(f->pf, a, bytes));
}

int mpiio_transfer_status(MPI_File fh, const struct mpiio_access *a, MPI_Status *status) {
    struct mpiio_file *f;
    int rc = mpiio_lookup(fh, a->fname, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Count bytes = 0;
    rc = mpiio_transfer(f, a, &bytes);
    mpiio_status_set(status, bytes);
    return rc;
}

/* ---- the MPI functions ---------------------------------------------------------- */

int PMPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status) {
    struct mpiio_access a = {"MPI_File_read", MPIIO_READ, 0, buf, count, datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_read);

int PMPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                    MPI_Status *status) {
    struct mpiio_access a = {"MPI_File_write", MPIIO_WRITE, 0, (void *)buf, count, datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_write);

int PMPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                      MPI_Status *status) {
    struct mpiio_access a = {"MPI_File_read_at", MPIIO_READ_AT, offset, buf, count, datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_read_at);

int PMPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                       MPI_Datatype datatype, MPI_Status *status) {
    struct mpiio_access a = {"MPI_File_write_at", MPIIO_WRITE_AT, offset,
                             (void *)buf,         count,          datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_write_at);

int PMPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                       MPI_Status *status) {
    struct mpiio_access a = {"MPI_File_read_all", MPIIO_READ_ALL, 0, buf, count, datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_read_all);

int PMPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                        MPI_Status *status) {
    struct mpiio_access a = {"MPI_File_write_all", MPIIO_WRITE_ALL, 0,
                             (void *)buf,          count,           datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_write_all);

int PMPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
                          MPI_Datatype datatype, MPI_Status *status) {
    struct mpiio_access a = {
        "MPI_File_read_at_all", MPIIO_READ_AT_ALL, offset, buf, count, datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_read_at_all);

int PMPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                           MPI_Datatype datatype, MPI_Status *status) {
    struct mpiio_access a = {
        "MPI_File_write_at_all", MPIIO_WRITE_AT_ALL, offset, (void *)buf, count, datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_write_at_all);
