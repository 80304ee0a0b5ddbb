/* Internal helpers to fill a pario_error. */
#ifndef PARIO_COMMON_ERROR_H
#define PARIO_COMMON_ERROR_H

#include <stdarg.h>
#include "pario/pario.h"

/* Record code and a printf-style message in err (which may be NULL); returns code. */
int pario_fail(pario_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* pario_fail with the arguments in a va_list (for a layer's own fail
 * function that fills its object's record). */
int pario_vfail(pario_error *err, int code, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* The pario code for an errno value from a file system call. */
int pario_err_from_errno(int errnum);

/* Record a failed system call on path: "<what> <path>: <strerror>"; returns the code. */
int pario_fail_errno(pario_error *err, int errnum, const char *what, const char *path);

static inline void pario_error_clear(pario_error *err) {
    if (err) {
        err->code = PARIO_OK;
        err->msg[0] = '\0';
    }
}

#endif
