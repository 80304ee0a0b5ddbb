/* Large-count forms (MPI 4.0): MPI_File_*_c with MPI_Count counts, which
 * MPICH-built programs such as IOR call. They share the cores of the int
 * forms (whose counts are MPI_Count inside). Only built against an MPI that
 * declares them. */
#include "mpiio/mpiio.h"

#if MPI_VERSION >= 4

/* ---- blocking ---- */

int PMPI_File_read_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Status *status) {
    struct mpiio_access a = {"MPI_File_read_c", MPIIO_READ, 0, buf, count, datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_read_c);

int PMPI_File_write_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Status *status) {
    struct mpiio_access a = {"MPI_File_write_c", MPIIO_WRITE, 0, (void *)buf, count, datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_write_c);

int PMPI_File_read_at_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Status *status) {
    struct mpiio_access a = {"MPI_File_read_at_c", MPIIO_READ_AT, offset, buf, count, datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_read_at_c);

int PMPI_File_write_at_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Status *status) {
    struct mpiio_access a = {"MPI_File_write_at_c", MPIIO_WRITE_AT, offset,
                             (void *)buf,           count,          datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_write_at_c);

int PMPI_File_read_all_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Status *status) {
    struct mpiio_access a = {"MPI_File_read_all_c", MPIIO_READ_ALL, 0, buf, count, datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_read_all_c);

int PMPI_File_write_all_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                          MPI_Status *status) {
    struct mpiio_access a = {
        "MPI_File_write_all_c", MPIIO_WRITE_ALL, 0, (void *)buf, count, datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_write_all_c);

int PMPI_File_read_at_all_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                            MPI_Datatype datatype, MPI_Status *status) {
    struct mpiio_access a = {
        "MPI_File_read_at_all_c", MPIIO_READ_AT_ALL, offset, buf, count, datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_read_at_all_c);

int PMPI_File_write_at_all_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                             MPI_Datatype datatype, MPI_Status *status) {
    struct mpiio_access a = {
        "MPI_File_write_at_all_c", MPIIO_WRITE_AT_ALL, offset, (void *)buf, count, datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_write_at_all_c);

/* ---- nonblocking ---- */

int PMPI_File_iread_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Request *request) {
    struct mpiio_access a = {"MPI_File_iread_c", MPIIO_READ, 0, buf, count, datatype};
    return mpiio_transfer_request(fh, &a, request);
}
MPIIO_ALIAS(MPI_File_iread_c);

int PMPI_File_iwrite_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Request *request) {
    struct mpiio_access a = {"MPI_File_iwrite_c", MPIIO_WRITE, 0, (void *)buf, count, datatype};
    return mpiio_transfer_request(fh, &a, request);
}
MPIIO_ALIAS(MPI_File_iwrite_c);

int PMPI_File_iread_at_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Request *request) {
    struct mpiio_access a = {"MPI_File_iread_at_c", MPIIO_READ_AT, offset, buf, count, datatype};
    return mpiio_transfer_request(fh, &a, request);
}
MPIIO_ALIAS(MPI_File_iread_at_c);

int PMPI_File_iwrite_at_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Request *request) {
    struct mpiio_access a = {
        "MPI_File_iwrite_at_c", MPIIO_WRITE_AT, offset, (void *)buf, count, datatype};
    return mpiio_transfer_request(fh, &a, request);
}
MPIIO_ALIAS(MPI_File_iwrite_at_c);

int PMPI_File_iread_all_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                          MPI_Request *request) {
    struct mpiio_access a = {"MPI_File_iread_all_c", MPIIO_READ_ALL, 0, buf, count, datatype};
    return mpiio_transfer_request(fh, &a, request);
}
MPIIO_ALIAS(MPI_File_iread_all_c);

int PMPI_File_iwrite_all_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                           MPI_Request *request) {
    struct mpiio_access a = {
        "MPI_File_iwrite_all_c", MPIIO_WRITE_ALL, 0, (void *)buf, count, datatype};
    return mpiio_transfer_request(fh, &a, request);
}
MPIIO_ALIAS(MPI_File_iwrite_all_c);

int PMPI_File_iread_at_all_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                             MPI_Datatype datatype, MPI_Request *request) {
    struct mpiio_access a = {
        "MPI_File_iread_at_all_c", MPIIO_READ_AT_ALL, offset, buf, count, datatype};
    return mpiio_transfer_request(fh, &a, request);
}
MPIIO_ALIAS(MPI_File_iread_at_all_c);

int PMPI_File_iwrite_at_all_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                              MPI_Datatype datatype, MPI_Request *request) {
    struct mpiio_access a = {
        "MPI_File_iwrite_at_all_c", MPIIO_WRITE_AT_ALL, offset, (void *)buf, count, datatype};
    return mpiio_transfer_request(fh, &a, request);
}
MPIIO_ALIAS(MPI_File_iwrite_at_all_c);

/* ---- split collectives ---- */

int PMPI_File_read_all_begin_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype) {
    struct mpiio_access a = {"MPI_File_read_all_begin_c", MPIIO_READ_ALL, 0, buf, count, datatype};
    return mpiio_split_begin(fh, MPIIO_SPLIT_READ_ALL, &a);
}
MPIIO_ALIAS(MPI_File_read_all_begin_c);

int PMPI_File_write_all_begin_c(MPI_File fh, const void *buf, MPI_Count count,
                                MPI_Datatype datatype) {
    struct mpiio_access a = {
        "MPI_File_write_all_begin_c", MPIIO_WRITE_ALL, 0, (void *)buf, count, datatype};
    return mpiio_split_begin(fh, MPIIO_SPLIT_WRITE_ALL, &a);
}
MPIIO_ALIAS(MPI_File_write_all_begin_c);

int PMPI_File_read_at_all_begin_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                                  MPI_Datatype datatype) {
    struct mpiio_access a = {
        "MPI_File_read_at_all_begin_c", MPIIO_READ_AT_ALL, offset, buf, count, datatype};
    return mpiio_split_begin(fh, MPIIO_SPLIT_READ_AT_ALL, &a);
}
MPIIO_ALIAS(MPI_File_read_at_all_begin_c);

int PMPI_File_write_at_all_begin_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                                   MPI_Datatype datatype) {
    struct mpiio_access a = {
        "MPI_File_write_at_all_begin_c", MPIIO_WRITE_AT_ALL, offset, (void *)buf, count, datatype};
    return mpiio_split_begin(fh, MPIIO_SPLIT_WRITE_AT_ALL, &a);
}
MPIIO_ALIAS(MPI_File_write_at_all_begin_c);

/* ---- shared file pointer ---- */

int PMPI_File_read_shared_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Status *status) {
    struct mpiio_access a = {
        "MPI_File_read_shared_c", MPIIO_READ_SHARED, 0, buf, count, datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_read_shared_c);

int PMPI_File_write_shared_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Status *status) {
    struct mpiio_access a = {
        "MPI_File_write_shared_c", MPIIO_WRITE_SHARED, 0, (void *)buf, count, datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_write_shared_c);

int PMPI_File_read_ordered_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Status *status) {
    struct mpiio_access a = {
        "MPI_File_read_ordered_c", MPIIO_READ_ORDERED, 0, buf, count, datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_read_ordered_c);

int PMPI_File_write_ordered_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                              MPI_Status *status) {
    struct mpiio_access a = {
        "MPI_File_write_ordered_c", MPIIO_WRITE_ORDERED, 0, (void *)buf, count, datatype};
    return mpiio_transfer_status(fh, &a, status);
}
MPIIO_ALIAS(MPI_File_write_ordered_c);

int PMPI_File_read_ordered_begin_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype) {
    struct mpiio_access a = {
        "MPI_File_read_ordered_begin_c", MPIIO_READ_ORDERED, 0, buf, count, datatype};
    return mpiio_split_begin(fh, MPIIO_SPLIT_READ_ORDERED, &a);
}
MPIIO_ALIAS(MPI_File_read_ordered_begin_c);

int PMPI_File_write_ordered_begin_c(MPI_File fh, const void *buf, MPI_Count count,
                                    MPI_Datatype datatype) {
    struct mpiio_access a = {
        "MPI_File_write_ordered_begin_c", MPIIO_WRITE_ORDERED, 0, (void *)buf, count, datatype};
    return mpiio_split_begin(fh, MPIIO_SPLIT_WRITE_ORDERED, &a);
}
MPIIO_ALIAS(MPI_File_write_ordered_begin_c);

int PMPI_File_iread_shared_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Request *request) {
    struct mpiio_access a = {
        "MPI_File_iread_shared_c", MPIIO_READ_SHARED, 0, buf, count, datatype};
    return mpiio_transfer_request(fh, &a, request);
}
MPIIO_ALIAS(MPI_File_iread_shared_c);

int PMPI_File_iwrite_shared_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                              MPI_Request *request) {
    struct mpiio_access a = {
        "MPI_File_iwrite_shared_c", MPIIO_WRITE_SHARED, 0, (void *)buf, count, datatype};
    return mpiio_transfer_request(fh, &a, request);
}
MPIIO_ALIAS(MPI_File_iwrite_shared_c);

/* ---- views ---- */

int PMPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count *extent) {
    MPI_Aint e = 0;
    int rc = mpiio_type_extent(fh, "MPI_File_get_type_extent_c", datatype, extent ? &e : NULL);
    if (rc == MPI_SUCCESS)
        *extent = e;
    return rc;
}
MPIIO_ALIAS(MPI_File_get_type_extent_c);

#endif
