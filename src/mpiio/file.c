/* File manipulation: open, close, delete, size, group, amode, info,
 * atomicity and sync, translated onto pario_file_*. */
#include "mpiio/mpiio.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/error.h"

/* Longest path kept to report a failed close (Linux PATH_MAX). */
#define MPIIO_PATH_MAX 4096

/* MPI_SUCCESS when comm is an intracommunicator; else MPI_ERR_COMM's code. */
static int check_open_comm(MPI_Comm comm, const char *fname, const char *path) {
    int inter = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return mpiio_fail(NULL, fname, MPI_ERR_COMM, "invalid communicator for %s",
                          path ? path : "(null)");
    if (inter)
        return mpiio_fail(NULL, fname, MPI_ERR_COMM, "intercommunicator given for %s",
                          path ? path : "(null)");
    return MPI_SUCCESS;
}

/* Wraps an open pario file in a new handle with the default handler. */
static int wrap_open_file(pario_file *pf, const char *fname, const char *path, MPI_File *fh) {
    MPI_Errhandler eh = mpiio_errhandler_default();
    struct mpiio_file *f = mpiio_handle_new(pf, eh);
    if (f) {
        *fh = mpiio_handle_of(f);
        return MPI_SUCCESS;
    }
    mpiio_errhandler_drop(&eh);
    pario_error err;
    pario_file_close(&pf, &err);
    return mpiio_fail(NULL, fname, MPI_ERR_NO_MEM, "no memory for a handle to %s", path);
}

int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh) {
    static const char fname[] = "MPI_File_open";
    if (!fh)
        return mpiio_fail(NULL, fname, MPI_ERR_ARG, "NULL file handle argument");
    *fh = MPI_FILE_NULL;
    int rc = check_open_comm(comm, fname, filename);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!filename)
        return mpiio_fail(NULL, fname, MPI_ERR_BAD_FILE, "NULL file name");
    pario_file *pf = NULL;
    pario_error err;
    pario_error_clear(&err);
    rc = pario_file_open(comm, filename, amode, info, &pf, &err);
    if (rc != PARIO_OK)
        return mpiio_fail_nofile(fname, filename, rc, &err);
    return wrap_open_file(pf, fname, filename, fh);
}
MPIIO_ALIAS(MPI_File_open);

/* Frees everything the handle owns except the pario file. */
static void release_handle(struct mpiio_file *f) {
    mpiio_errhandler_drop(&f->errhandler);
    mpiio_handle_free(f);
}

/* Frees the handle of a file whose close failed, then runs the file's
 * handler, which sees MPI_FILE_NULL: the handle is gone. */
static int report_failed_close(struct mpiio_file *f, const char *fname, const char *path, int prc,
                               const pario_error *err) {
    MPI_Errhandler eh = f->errhandler;
    f->errhandler = MPI_ERRHANDLER_NULL;
    release_handle(f);
    int rc = mpiio_fail_closed(eh, fname, path, prc, err);
    mpiio_errhandler_drop(&eh);
    return rc;
}

int PMPI_File_close(MPI_File *fh) {
    static const char fname[] = "MPI_File_close";
    struct mpiio_file *f = NULL;
    if (!fh)
        return mpiio_fail(NULL, fname, MPI_ERR_ARG, "NULL file handle argument");
    int rc = mpiio_lookup(*fh, fname, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    pario_error err;
    pario_error_clear(&err);
    char path[MPIIO_PATH_MAX];
    snprintf(path, sizeof path, "%s", pario_file_path(f->pf));
    int prc = pario_file_close(&f->pf, &err);
    *fh = MPI_FILE_NULL;
    if (prc == PARIO_OK) {
        release_handle(f);
        return MPI_SUCCESS;
    }
    return report_failed_close(f, fname, path, prc, &err);
}
MPIIO_ALIAS(MPI_File_close);

int PMPI_File_delete(const char *filename, MPI_Info info) {
    static const char fname[] = "MPI_File_delete";
    if (!filename)
        return mpiio_fail(NULL, fname, MPI_ERR_BAD_FILE, "NULL file name");
    pario_error err;
    pario_error_clear(&err);
    int rc = pario_file_delete(filename, info, &err);
    return rc == PARIO_OK ? MPI_SUCCESS : mpiio_fail_nofile(fname, filename, rc, &err);
}
MPIIO_ALIAS(MPI_File_delete);

/* MPI_ERR_ARG's code through f's handler when the output argument is NULL. */
static int check_out_arg(struct mpiio_file *f, const char *fname, const void *out,
                         const char *what) {
    return out ? MPI_SUCCESS : mpiio_fail(f, fname, MPI_ERR_ARG, "NULL %s argument", what);
}

int PMPI_File_set_size(MPI_File fh, MPI_Offset size) {
    static const char fname[] = "MPI_File_set_size";
    struct mpiio_file *f;
    int rc = mpiio_lookup(fh, fname, &f);
    return rc != MPI_SUCCESS ? rc : mpiio_check(f, fname, pario_file_set_size(f->pf, size));
}
MPIIO_ALIAS(MPI_File_set_size);

int PMPI_File_preallocate(MPI_File fh, MPI_Offset size) {
    static const char fname[] = "MPI_File_preallocate";
    struct mpiio_file *f;
    int rc = mpiio_lookup(fh, fname, &f);
    return rc != MPI_SUCCESS ? rc : mpiio_check(f, fname, pario_file_preallocate(f->pf, size));
}
MPIIO_ALIAS(MPI_File_preallocate);

int PMPI_File_get_size(MPI_File fh, MPI_Offset *size) {
    static const char fname[] = "MPI_File_get_size";
    struct mpiio_file *f;
    int rc = mpiio_lookup(fh, fname, &f);
    if (rc == MPI_SUCCESS)
        rc = check_out_arg(f, fname, size, "size");
    return rc != MPI_SUCCESS ? rc : mpiio_check(f, fname, pario_file_get_size(f->pf, size));
}
MPIIO_ALIAS(MPI_File_get_size);

int PMPI_File_get_group(MPI_File fh, MPI_Group *group) {
    static const char fname[] = "MPI_File_get_group";
    struct mpiio_file *f;
    int rc = mpiio_lookup(fh, fname, &f);
    if (rc == MPI_SUCCESS)
        rc = check_out_arg(f, fname, group, "group");
    return rc != MPI_SUCCESS ? rc : mpiio_check(f, fname, pario_file_get_group(f->pf, group));
}
MPIIO_ALIAS(MPI_File_get_group);

int PMPI_File_get_amode(MPI_File fh, int *amode) {
    static const char fname[] = "MPI_File_get_amode";
    struct mpiio_file *f;
    int rc = mpiio_lookup(fh, fname, &f);
    if (rc == MPI_SUCCESS)
        rc = check_out_arg(f, fname, amode, "amode");
    return rc != MPI_SUCCESS ? rc : mpiio_check(f, fname, pario_file_get_amode(f->pf, amode));
}
MPIIO_ALIAS(MPI_File_get_amode);

int PMPI_File_set_info(MPI_File fh, MPI_Info info) {
    static const char fname[] = "MPI_File_set_info";
    struct mpiio_file *f;
    int rc = mpiio_lookup(fh, fname, &f);
    return rc != MPI_SUCCESS ? rc : mpiio_check(f, fname, pario_file_set_info(f->pf, info));
}
MPIIO_ALIAS(MPI_File_set_info);

int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used) {
    static const char fname[] = "MPI_File_get_info";
    struct mpiio_file *f;
    int rc = mpiio_lookup(fh, fname, &f);
    if (rc == MPI_SUCCESS)
        rc = check_out_arg(f, fname, info_used, "info");
    return rc != MPI_SUCCESS ? rc : mpiio_check(f, fname, pario_file_get_info(f->pf, info_used));
}
MPIIO_ALIAS(MPI_File_get_info);

int PMPI_File_set_atomicity(MPI_File fh, int flag) {
    static const char fname[] = "MPI_File_set_atomicity";
    struct mpiio_file *f;
    int rc = mpiio_lookup(fh, fname, &f);
    return rc != MPI_SUCCESS ? rc : mpiio_check(f, fname, pario_file_set_atomicity(f->pf, flag));
}
MPIIO_ALIAS(MPI_File_set_atomicity);

int PMPI_File_get_atomicity(MPI_File fh, int *flag) {
    static const char fname[] = "MPI_File_get_atomicity";
    struct mpiio_file *f;
    int rc = mpiio_lookup(fh, fname, &f);
    if (rc == MPI_SUCCESS)
        rc = check_out_arg(f, fname, flag, "flag");
    return rc != MPI_SUCCESS ? rc : mpiio_check(f, fname, pario_file_get_atomicity(f->pf, flag));
}
MPIIO_ALIAS(MPI_File_get_atomicity);

int PMPI_File_sync(MPI_File fh) {
    static const char fname[] = "MPI_File_sync";
    struct mpiio_file *f;
    int rc = mpiio_lookup(fh, fname, &f);
    return rc != MPI_SUCCESS ? rc : mpiio_check(f, fname, pario_file_sync(f->pf));
}
MPIIO_ALIAS(MPI_File_sync);
