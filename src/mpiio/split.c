/* Split collective data access: the _begin/_end pairs of read_all, write_all,
 * read_at_all, write_at_all, read_ordered and write_ordered.
 *
 * The standard lets the whole collective run in the begin call; the end call
 * reports its status. At most one split collective may be outstanding on a
 * file: a second begin, an end without a begin or an end that does not match
 * the begin fails with MPI_ERR_OTHER (the standard calls these programs
 * erroneous and names no class; Open MPI's own MPI-IO uses MPI_ERR_OTHER).
 * A begin whose access fails leaves no operation outstanding. */
#include "mpiio/mpiio.h"

static const char *split_name(enum mpiio_split_kind kind) {
    switch (kind) {
    case MPIIO_SPLIT_READ_ALL:
        return "MPI_File_read_all_begin";
    case MPIIO_SPLIT_WRITE_ALL:
        return "MPI_File_write_all_begin";
    case MPIIO_SPLIT_READ_AT_ALL:
        return "MPI_File_read_at_all_begin";
    case MPIIO_SPLIT_WRITE_AT_ALL:
        return "MPI_File_write_at_all_begin";
    case MPIIO_SPLIT_READ_ORDERED:
        return "MPI_File_read_ordered_begin";
    case MPIIO_SPLIT_WRITE_ORDERED:
        return "MPI_File_write_ordered_begin";
    case MPIIO_SPLIT_NONE:
        break;
    }
    return "none";
}

int mpiio_split_begin(MPI_File fh, enum mpiio_split_kind kind, const struct mpiio_access *a) {
    struct mpiio_file *f;
    int rc = mpiio_lookup(fh, a->fname, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (f->split != MPIIO_SPLIT_NONE)
        return mpiio_fail(f, a->fname, MPI_ERR_OTHER,
                          "a split collective (%s) is already outstanding on the file",
                          split_name(f->split));
    MPI_Count bytes = 0;
    rc = mpiio_transfer(f, a, &bytes);
    if (rc != MPI_SUCCESS)
        return rc;
    f->split = kind;
    f->split_bytes = bytes;
    return MPI_SUCCESS;
}

int mpiio_split_end(MPI_File fh, enum mpiio_split_kind kind, const char *fname,
                    MPI_Status *status) {
    struct mpiio_file *f;
    int rc = mpiio_lookup(fh, fname, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (f->split == MPIIO_SPLIT_NONE)
        return mpiio_fail(f, fname, MPI_ERR_OTHER,
                          "no split collective is outstanding on the file");
    if (f->split != kind)
        return mpiio_fail(f, fname, MPI_ERR_OTHER,
                          "the outstanding split collective was begun by %s", split_name(f->split));
    mpiio_status_set(status, f->split_bytes);
    f->split = MPIIO_SPLIT_NONE;
    f->split_bytes = 0;
    return MPI_SUCCESS;
}

int PMPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype) {
    struct mpiio_access a = {"MPI_File_read_all_begin", MPIIO_READ_ALL, 0, buf, count, datatype};
    return mpiio_split_begin(fh, MPIIO_SPLIT_READ_ALL, &a);
}
MPIIO_ALIAS(MPI_File_read_all_begin);

int PMPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status) {
    (void)buf;
    return mpiio_split_end(fh, MPIIO_SPLIT_READ_ALL, "MPI_File_read_all_end", status);
}
MPIIO_ALIAS(MPI_File_read_all_end);

int PMPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype) {
    struct mpiio_access a = {
        "MPI_File_write_all_begin", MPIIO_WRITE_ALL, 0, (void *)buf, count, datatype};
    return mpiio_split_begin(fh, MPIIO_SPLIT_WRITE_ALL, &a);
}
MPIIO_ALIAS(MPI_File_write_all_begin);

int PMPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status) {
    (void)buf;
    return mpiio_split_end(fh, MPIIO_SPLIT_WRITE_ALL, "MPI_File_write_all_end", status);
}
MPIIO_ALIAS(MPI_File_write_all_end);

int PMPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count,
                                MPI_Datatype datatype) {
    struct mpiio_access a = {
        "MPI_File_read_at_all_begin", MPIIO_READ_AT_ALL, offset, buf, count, datatype};
    return mpiio_split_begin(fh, MPIIO_SPLIT_READ_AT_ALL, &a);
}
MPIIO_ALIAS(MPI_File_read_at_all_begin);

int PMPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status) {
    (void)buf;
    return mpiio_split_end(fh, MPIIO_SPLIT_READ_AT_ALL, "MPI_File_read_at_all_end", status);
}
MPIIO_ALIAS(MPI_File_read_at_all_end);

int PMPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                 MPI_Datatype datatype) {
    struct mpiio_access a = {
        "MPI_File_write_at_all_begin", MPIIO_WRITE_AT_ALL, offset, (void *)buf, count, datatype};
    return mpiio_split_begin(fh, MPIIO_SPLIT_WRITE_AT_ALL, &a);
}
MPIIO_ALIAS(MPI_File_write_at_all_begin);

int PMPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status) {
    (void)buf;
    return mpiio_split_end(fh, MPIIO_SPLIT_WRITE_AT_ALL, "MPI_File_write_at_all_end", status);
}
MPIIO_ALIAS(MPI_File_write_at_all_end);
