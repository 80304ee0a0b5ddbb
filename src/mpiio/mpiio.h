/* Internal interface of the MPI_File_* drop-in (libpario-mpiio).
 *
 * An MPI_File handed to the program is a pointer to a struct mpiio_file. Every
 * MPI_File_x is an alias of PMPI_File_x (MPIIO_ALIAS), so a profiling layer
 * that defines MPI_File_x and forwards to PMPI_File_x sits on top of pario.
 *
 * Process-wide state lives in three registries, each guarded by its own mutex:
 *   handle.c     the open file handles (validation, MPI_File_c2f/f2c);
 *   errhandler.c the file error handlers created by MPI_File_create_errhandler
 *                and the handler of MPI_FILE_NULL (the default for new files);
 *   errors.c     the bounded pool of MPI error codes that carry pario messages.
 * Nothing else is global.
 */
#ifndef PARIO_MPIIO_H
#define PARIO_MPIIO_H

#include <mpi.h>
#include <stdint.h>
#include "pario/io.h"

/* Makes MPI_File_x (or any MPI_x) an alias of the PMPI_x defined in the same
 * file. A macro because an alias must name both symbols. */
#define MPIIO_ALIAS(name) extern __typeof__(P##name) name __attribute__((alias("P" #name)))

/* Marker the tests look up with dlsym to detect the drop-in; returns 1. */
int pario_mpiio_active(void);

/* The MPI error class for a pario error code. */
int mpiio_error_class(int code);

/* ---- file handles (handle.c) ---------------------------------------------- */

/* Outstanding split collective operation on a file (at most one). */
enum mpiio_split_kind {
    MPIIO_SPLIT_NONE = 0,
    MPIIO_SPLIT_READ_ALL,
    MPIIO_SPLIT_WRITE_ALL,
    MPIIO_SPLIT_READ_AT_ALL,
    MPIIO_SPLIT_WRITE_AT_ALL,
    MPIIO_SPLIT_READ_ORDERED,
    MPIIO_SPLIT_WRITE_ORDERED,
};

struct mpiio_file {
    uint64_t magic;              /* MPIIO_FILE_MAGIC while the handle is open */
    int fint;                    /* Fortran handle: index in the handle registry */
    pario_file *pf;              /* the pario file */
    MPI_Errhandler errhandler;   /* one reference held unless predefined */
    enum mpiio_split_kind split; /* outstanding split collective, if any */
    MPI_Count split_bytes;       /* bytes moved by its begin call */
};

/* Allocates a handle for pf and registers it; NULL when out of memory. */
struct mpiio_file *mpiio_handle_new(pario_file *pf, MPI_Errhandler errhandler);
/* Unregisters and frees the handle (not the pario file or the errhandler). */
void mpiio_handle_free(struct mpiio_file *f);
/* The open handle fh points to, or NULL for MPI_FILE_NULL and bogus handles. */
struct mpiio_file *mpiio_handle_find(MPI_File fh);
static inline MPI_File mpiio_handle_of(struct mpiio_file *f) {
    return (MPI_File)(void *)f;
}

/* ---- error codes (errors.c) ------------------------------------------------ */

/* An MPI error code in class cls whose MPI_Error_string is msg. */
int mpiio_error_code(int cls, const char *msg);

/* ---- error handlers (errhandler.c) ---------------------------------------- */

/* Retains eh for storing in a file (no-op for predefined handlers). */
int mpiio_errhandler_keep(MPI_Errhandler eh, MPI_Errhandler *kept);
/* Drops a handle obtained from mpiio_errhandler_keep. */
void mpiio_errhandler_drop(MPI_Errhandler *eh);
/* The handler of MPI_FILE_NULL, retained for a new file. */
MPI_Errhandler mpiio_errhandler_default(void);
/* True for a predefined handler or one made by MPI_File_create_errhandler. */
int mpiio_errhandler_valid(MPI_Errhandler eh);
/* Runs eh for code on the file whose handle is *fh; comm is the file's
 * communicator (MPI_COMM_NULL without one) and msg the text printed before an
 * abort. Returns code (unless the handler aborts). */
int mpiio_errhandler_invoke(MPI_Errhandler eh, MPI_File *fh, MPI_Comm comm, int code,
                            const char *msg);

/* ---- failing a call (errors.c) --------------------------------------------- */

/* Reports a failure of the MPI function fname: builds the message (naming the
 * file), makes an error code of class cls, runs the error handler of f (or of
 * MPI_FILE_NULL when f is NULL) and returns the code. */
int mpiio_fail(struct mpiio_file *f, const char *fname, int cls, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Same for a failed pario call on an open file: the class comes from the pario
 * code and the message from pario_file_last_error. */
int mpiio_fail_pario(struct mpiio_file *f, const char *fname, int rc);
/* Same for a failure without an open file (open, delete): runs the handler of
 * MPI_FILE_NULL; path names the file when err has no message. */
int mpiio_fail_nofile(const char *fname, const char *path, int rc, const pario_error *err);
/* Same for a failed close: the handle is gone, so eh (the file's handler)
 * runs with MPI_FILE_NULL; path names the file. */
int mpiio_fail_closed(MPI_Errhandler eh, const char *fname, const char *path, int rc,
                      const pario_error *err);
/* The MPI code (class and message) of a pario failure of fname on path,
 * without running any error handler. */
int mpiio_pario_code(const char *fname, const char *path, int rc, const pario_error *err);
/* MPI_ERR_FILE through the MPI_FILE_NULL handler for an invalid handle. */
int mpiio_fail_bad_handle(MPI_File fh, const char *fname);

/* Finds the open handle for fh; on failure reports MPI_ERR_FILE and returns
 * its code. */
int mpiio_lookup(MPI_File fh, const char *fname, struct mpiio_file **f);
/* The pario return code rc as an MPI code, reported through f's handler. */
static inline int mpiio_check(struct mpiio_file *f, const char *fname, int rc) {
    return rc == PARIO_OK ? MPI_SUCCESS : mpiio_fail_pario(f, fname, rc);
}

/* ---- views (view.c) ---------------------------------------------------------- */

/* MPI_File_get_type_extent for the int and the large-count forms. */
int mpiio_type_extent(MPI_File fh, const char *fname, MPI_Datatype type, MPI_Aint *extent);

/* ---- data access (data.c) -------------------------------------------------- */

enum mpiio_op {
    MPIIO_READ,
    MPIIO_WRITE,
    MPIIO_READ_AT,
    MPIIO_WRITE_AT,
    MPIIO_READ_ALL,
    MPIIO_WRITE_ALL,
    MPIIO_READ_AT_ALL,
    MPIIO_WRITE_AT_ALL,
    MPIIO_READ_SHARED,
    MPIIO_WRITE_SHARED,
    MPIIO_READ_ORDERED,
    MPIIO_WRITE_ORDERED,
};

/* One data access as the program asked for it. */
struct mpiio_access {
    const char *fname; /* the MPI function, for messages */
    enum mpiio_op op;
    MPI_Offset offset; /* explicit-offset forms only, in etypes */
    void *buf;         /* const for writes; never written through then */
    MPI_Count count;
    MPI_Datatype type;
};

/* Whether op is one of the collective forms. */
int mpiio_op_collective(enum mpiio_op op);
/* Validates and performs the access on f; *bytes gets the bytes moved.
 * Failures go through f's error handler; returns an MPI code. */
int mpiio_transfer(struct mpiio_file *f, const struct mpiio_access *a, MPI_Count *bytes);
/* mpiio_transfer on the handle fh and the status filled from the bytes moved. */
int mpiio_transfer_status(MPI_File fh, const struct mpiio_access *a, MPI_Status *status);
/* Fills status (unless MPI_STATUS_IGNORE) for bytes moved. */
void mpiio_status_set(MPI_Status *status, MPI_Count bytes);

/* ---- nonblocking (nonblocking.c) ------------------------------------------- */

/* Starts the access and makes its MPI request: independent accesses move
 * their bytes in the background, collective ones complete in the call. */
int mpiio_transfer_request(MPI_File fh, const struct mpiio_access *a, MPI_Request *request);

/* ---- requests (grequest.c) ---------------------------------------------------- */

/* An MPI request that completes once the background access has finished
 * (and reports its bytes and outcome). Takes ownership of access. */
int mpiio_request_start(struct mpiio_file *f, const char *fname, pario_request *access,
                        MPI_Request *request);
/* An MPI request already complete, reporting bytes. */
int mpiio_request_done(struct mpiio_file *f, const char *fname, MPI_Count bytes,
                       MPI_Request *request);

/* ---- split collectives (split.c) -------------------------------------------- */

int mpiio_split_begin(MPI_File fh, enum mpiio_split_kind kind, const struct mpiio_access *a);
int mpiio_split_end(MPI_File fh, enum mpiio_split_kind kind, const char *fname, MPI_Status *status);

/* ---- shared file pointer (shared.c) ----------------------------------------- */

int mpiio_seek_shared(MPI_File fh, const char *fname, MPI_Offset offset, int whence);
int mpiio_position_shared(MPI_File fh, const char *fname, MPI_Offset *offset);

#endif
