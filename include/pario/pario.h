/* pario: parallel I/O and global-address-space runtime on MPI.
 *
 * Common definitions shared by every layer: error codes and the error record
 * that carries a human-readable message naming the object and the cause.
 *
 * Every pario function returns PARIO_OK (0) or one of the codes below.
 * Nothing in the library calls exit() or abort().
 */
#ifndef PARIO_PARIO_H
#define PARIO_PARIO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes. Each maps to one MPI error class in the mpiio layer
 * (see mpiio_error_class in src/mpiio/errclass.c). Keep PARIO_ERR_COUNT last. */
typedef enum pario_err {
    PARIO_OK = 0,
    PARIO_ERR_ARG,                   /* invalid argument (negative offset, bad whence, ...) */
    PARIO_ERR_AMODE,                 /* invalid access mode combination */
    PARIO_ERR_NO_SUCH_FILE,          /* file does not exist */
    PARIO_ERR_FILE_EXISTS,           /* MPI_MODE_EXCL and the file exists */
    PARIO_ERR_ACCESS,                /* permission denied */
    PARIO_ERR_NO_SPACE,              /* device full */
    PARIO_ERR_QUOTA,                 /* quota exceeded */
    PARIO_ERR_READ_ONLY,             /* write to a read-only file or file system */
    PARIO_ERR_IO,                    /* other I/O failure */
    PARIO_ERR_TYPE,                  /* invalid datatype, or view that does not fit the etype */
    PARIO_ERR_COUNT_ARG,             /* invalid count */
    PARIO_ERR_UNSUPPORTED_DATAREP,   /* data representation not supported */
    PARIO_ERR_UNSUPPORTED_OPERATION, /* operation not allowed (e.g. seek with SEQUENTIAL) */
    PARIO_ERR_FILE_IN_USE,           /* file is open elsewhere (delete) */
    PARIO_ERR_BAD_FILE,              /* invalid file name */
    PARIO_ERR_NOT_SAME,              /* collective arguments differ between ranks */
    PARIO_ERR_INFO,                  /* invalid info / hint value */
    PARIO_ERR_NO_MEM,                /* allocation failed */
    PARIO_ERR_FILE,                  /* invalid file handle */
    PARIO_ERR_REQUEST,               /* invalid request / misuse of split collective */
    PARIO_ERR_DUP_DATAREP,           /* data representation already registered */
    PARIO_ERR_CONVERSION,            /* data conversion failed */
    PARIO_ERR_COMM,                  /* communication failure (MPI call failed) */
    PARIO_ERR_RANK,                  /* rank outside the team */
    PARIO_ERR_INTERN,                /* internal error: a bug in pario */
    PARIO_ERR_COUNT                  /* number of codes; not an error */
} pario_err;

/* Longest message kept with an error, including the terminating NUL. */
#define PARIO_ERROR_MSG_MAX 512

/* An error record: the code and a message naming the object and the cause,
 * e.g. "open /data/x.bin: no such file or directory". */
typedef struct pario_error {
    int code;
    char msg[PARIO_ERROR_MSG_MAX];
} pario_error;

/* Short fixed name of a code, e.g. "PARIO_ERR_NO_SUCH_FILE". */
const char *pario_err_name(int code);

#ifdef __cplusplus
}
#endif

#endif
