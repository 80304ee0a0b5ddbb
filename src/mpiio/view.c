/* File views and the individual file pointer: set/get_view, seek,
 * get_position, get_byte_offset, get_type_extent.
 *
 * The program may free its etype and filetype right after MPI_File_set_view:
 * pario's view keeps its own duplicates. MPI_File_get_view returns predefined
 * types as they are and new duplicates of derived ones, which the caller frees. */
#include "mpiio/mpiio.h"

static int is_predefined_type(MPI_Datatype type) {
    int ni, na, nd, combiner;
    if (PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return 0;
    return combiner == MPI_COMBINER_NAMED;
}

/* type itself if predefined, else a duplicate (the same committed state). */
static int type_keep(MPI_Datatype type, MPI_Datatype *kept) {
    if (is_predefined_type(type)) {
        *kept = type;
        return MPI_SUCCESS;
    }
    return PMPI_Type_dup(type, kept);
}

static void type_release(MPI_Datatype *type) {
    if (*type != MPI_DATATYPE_NULL && !is_predefined_type(*type))
        PMPI_Type_free(type);
    *type = MPI_DATATYPE_NULL;
}

/* MPI_SUCCESS when the view can be set; else the error's code. The types
 * and displacement are checked by pario, which makes the ranks agree. */
static int check_view_args(struct mpiio_file *f, const char *fname, const char *datarep) {
    if (!datarep)
        return mpiio_fail(f, fname, MPI_ERR_UNSUPPORTED_DATAREP, "NULL data representation");
    if (f->split != MPIIO_SPLIT_NONE)
        return mpiio_fail(f, fname, MPI_ERR_OTHER,
                          "a split collective operation is outstanding on the file");
    return MPI_SUCCESS;
}

int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                       const char *datarep, MPI_Info info) {
    static const char fname[] = "MPI_File_set_view";
    struct mpiio_file *f;
    int rc = mpiio_lookup(fh, fname, &f);
    if (rc == MPI_SUCCESS)
        rc = check_view_args(f, fname, datarep);
    if (rc != MPI_SUCCESS)
        return rc;
    return mpiio_check(f, fname, pario_file_set_view(f->pf, disp, etype, filetype, datarep, info));
}
MPIIO_ALIAS(MPI_File_set_view);

int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                       char *datarep) {
    static const char fname[] = "MPI_File_get_view";
    struct mpiio_file *f;
    int rc = mpiio_lookup(fh, fname, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!disp || !etype || !filetype || !datarep)
        return mpiio_fail(f, fname, MPI_ERR_ARG, "NULL output argument");
    MPI_Datatype e, t;
    rc = pario_file_get_view(f->pf, disp, &e, &t, datarep);
    if (rc != PARIO_OK)
        return mpiio_fail_pario(f, fname, rc);
    if (type_keep(e, etype) != MPI_SUCCESS)
        return mpiio_fail(f, fname, MPI_ERR_TYPE, "cannot duplicate the etype");
    if (type_keep(t, filetype) != MPI_SUCCESS) {
        type_release(etype);
        return mpiio_fail(f, fname, MPI_ERR_TYPE, "cannot duplicate the filetype");
    }
    return MPI_SUCCESS;
}
MPIIO_ALIAS(MPI_File_get_view);

int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence) {
    static const char fname[] = "MPI_File_seek";
    struct mpiio_file *f;
    int rc = mpiio_lookup(fh, fname, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    return mpiio_check(f, fname, pario_file_seek(f->pf, offset, whence));
}
MPIIO_ALIAS(MPI_File_seek);

int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset) {
    static const char fname[] = "MPI_File_get_position";
    struct mpiio_file *f;
    int rc = mpiio_lookup(fh, fname, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!offset)
        return mpiio_fail(f, fname, MPI_ERR_ARG, "NULL offset argument");
    return mpiio_check(f, fname, pario_file_get_position(f->pf, offset));
}
MPIIO_ALIAS(MPI_File_get_position);

int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp) {
    static const char fname[] = "MPI_File_get_byte_offset";
    struct mpiio_file *f;
    int rc = mpiio_lookup(fh, fname, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!disp)
        return mpiio_fail(f, fname, MPI_ERR_ARG, "NULL disp argument");
    return mpiio_check(f, fname, pario_file_get_byte_offset(f->pf, offset, disp));
}
MPIIO_ALIAS(MPI_File_get_byte_offset);

/* The extent of type under the data representation of f's view. */
static int file_extent_in_view(struct mpiio_file *f, const char *fname, MPI_Datatype type,
                               MPI_Aint *extent) {
    MPI_Offset disp;
    MPI_Datatype etype, filetype;
    char datarep[MPI_MAX_DATAREP_STRING];
    int rc = pario_file_get_view(f->pf, &disp, &etype, &filetype, datarep);
    if (rc != PARIO_OK)
        return mpiio_fail_pario(f, fname, rc);
    pario_error err;
    rc = pario_datarep_type_extent(datarep, type, extent, &err);
    if (rc != PARIO_OK)
        return mpiio_fail(f, fname, mpiio_error_class(rc), "%s", err.msg);
    return MPI_SUCCESS;
}

/* The file extent of type, for both the int and the MPI_Count forms. */
int mpiio_type_extent(MPI_File fh, const char *fname, MPI_Datatype type, MPI_Aint *extent) {
    struct mpiio_file *f;
    int rc = mpiio_lookup(fh, fname, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!extent)
        return mpiio_fail(f, fname, MPI_ERR_ARG, "NULL extent argument");
    return file_extent_in_view(f, fname, type, extent);
}

int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent) {
    return mpiio_type_extent(fh, "MPI_File_get_type_extent", datatype, extent);
}
MPIIO_ALIAS(MPI_File_get_type_extent);
