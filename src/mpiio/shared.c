/* Shared file pointer functions: read/write_shared, their nonblocking forms,
 * read/write_ordered and their split forms, seek_shared and
 * get_position_shared, over pario's shared pointer (an atomic counter). */
#include "mpiio/mpiio.h"

int mpiio_seek_shared(MPI_File fh, const char *fname, MPI_Offset offset, int whence) {
    struct mpiio_file *f;
    int rc = mpiio_lookup(fh, fname, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    return mpiio_check(f, fname, pario_file_seek_shared(f->pf, offset, whence));
}

int mpiio_position_shared(MPI_File fh, const char *fname, MPI_Offset *offset) {
    struct mpiio_file *f;
    int rc = mpiio_lookup(fh, fname, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!offset)
        return mpiio_fail(f, fname, MPI_ERR_ARG, "offset is NULL");
    return mpiio_check(f, fname, pario_file_get_position_shared(f->pf, offset));
}

int PMPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                          MPI_Status *status) {
    struct mpiio_access a = {"MPI_File_read_shared", MPIIO_READ_SHARED, 0, buf, count, datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_read_shared);

int PMPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                           MPI_Status *status) {
    struct mpiio_access a = {
        "MPI_File_write_shared", MPIIO_WRITE_SHARED, 0, (void *)buf, count, datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_write_shared);

int PMPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                           MPI_Request *request) {
    struct mpiio_access a = {"MPI_File_iread_shared", MPIIO_READ_SHARED, 0, buf, count, datatype};
    return mpiio_transfer_request(fh, &a, request);
}
MPIIO_ALIAS(MPI_File_iread_shared);

int PMPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                            MPI_Request *request) {
    struct mpiio_access a = {
        "MPI_File_iwrite_shared", MPIIO_WRITE_SHARED, 0, (void *)buf, count, datatype};
    return mpiio_transfer_request(fh, &a, request);
}
MPIIO_ALIAS(MPI_File_iwrite_shared);

int PMPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                           MPI_Status *status) {
    struct mpiio_access a = {"MPI_File_read_ordered", MPIIO_READ_ORDERED, 0, buf, count, datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_read_ordered);

int PMPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                            MPI_Status *status) {
    struct mpiio_access a = {
        "MPI_File_write_ordered", MPIIO_WRITE_ORDERED, 0, (void *)buf, count, datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_write_ordered);

int PMPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype) {
    struct mpiio_access a = {
        "MPI_File_read_ordered_begin", MPIIO_READ_ORDERED, 0, buf, count, datatype};
    return mpiio_split_begin(fh, MPIIO_SPLIT_READ_ORDERED, &a);
}
MPIIO_ALIAS(MPI_File_read_ordered_begin);

int PMPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status) {
    (void)buf;
    return mpiio_split_end(fh, MPIIO_SPLIT_READ_ORDERED, "MPI_File_read_ordered_end", status);
}
MPIIO_ALIAS(MPI_File_read_ordered_end);

int PMPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype) {
    struct mpiio_access a = {
        "MPI_File_write_ordered_begin", MPIIO_WRITE_ORDERED, 0, (void *)buf, count, datatype};
    return mpiio_split_begin(fh, MPIIO_SPLIT_WRITE_ORDERED, &a);
}
MPIIO_ALIAS(MPI_File_write_ordered_begin);

int PMPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status) {
    (void)buf;
    return mpiio_split_end(fh, MPIIO_SPLIT_WRITE_ORDERED, "MPI_File_write_ordered_end", status);
}
MPIIO_ALIAS(MPI_File_write_ordered_end);

int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) {
    return mpiio_seek_shared(fh, "MPI_File_seek_shared", offset, whence);
}
MPIIO_ALIAS(MPI_File_seek_shared);

int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset) {
    return mpiio_position_shared(fh, "MPI_File_get_position_shared", offset);
}
MPIIO_ALIAS(MPI_File_get_position_shared);
