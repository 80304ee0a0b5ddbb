#include "common/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const err_names[PARIO_ERR_COUNT] = {
    [PARIO_OK] = "PARIO_OK",
    [PARIO_ERR_ARG] = "PARIO_ERR_ARG",
    [PARIO_ERR_AMODE] = "PARIO_ERR_AMODE",
    [PARIO_ERR_NO_SUCH_FILE] = "PARIO_ERR_NO_SUCH_FILE",
    [PARIO_ERR_FILE_EXISTS] = "PARIO_ERR_FILE_EXISTS",
    [PARIO_ERR_ACCESS] = "PARIO_ERR_ACCESS",
    [PARIO_ERR_NO_SPACE] = "PARIO_ERR_NO_SPACE",
    [PARIO_ERR_QUOTA] = "PARIO_ERR_QUOTA",
    [PARIO_ERR_READ_ONLY] = "PARIO_ERR_READ_ONLY",
    [PARIO_ERR_IO] = "PARIO_ERR_IO",
    [PARIO_ERR_TYPE] = "PARIO_ERR_TYPE",
    [PARIO_ERR_COUNT_ARG] = "PARIO_ERR_COUNT_ARG",
    [PARIO_ERR_UNSUPPORTED_DATAREP] = "PARIO_ERR_UNSUPPORTED_DATAREP",
    [PARIO_ERR_UNSUPPORTED_OPERATION] = "PARIO_ERR_UNSUPPORTED_OPERATION",
    [PARIO_ERR_FILE_IN_USE] = "PARIO_ERR_FILE_IN_USE",
    [PARIO_ERR_BAD_FILE] = "PARIO_ERR_BAD_FILE",
    [PARIO_ERR_NOT_SAME] = "PARIO_ERR_NOT_SAME",
    [PARIO_ERR_INFO] = "PARIO_ERR_INFO",
    [PARIO_ERR_NO_MEM] = "PARIO_ERR_NO_MEM",
    [PARIO_ERR_FILE] = "PARIO_ERR_FILE",
    [PARIO_ERR_REQUEST] = "PARIO_ERR_REQUEST",
    [PARIO_ERR_DUP_DATAREP] = "PARIO_ERR_DUP_DATAREP",
    [PARIO_ERR_CONVERSION] = "PARIO_ERR_CONVERSION",
    [PARIO_ERR_COMM] = "PARIO_ERR_COMM",
    [PARIO_ERR_RANK] = "PARIO_ERR_RANK",
    [PARIO_ERR_INTERN] = "PARIO_ERR_INTERN",
};

const char *pario_err_name(int code) {
    if (code < 0 || code >= PARIO_ERR_COUNT)
        return "PARIO_ERR_UNKNOWN";
    return err_names[code];
}

int pario_vfail(pario_error *err, int code, const char *fmt, va_list ap) {
    if (err) {
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        err->code = code;
    }
    return code;
}

int pario_fail(pario_error *err, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pario_vfail(err, code, fmt, ap);
    va_end(ap);
    return code;
}

int pario_err_from_errno(int errnum) {
    switch (errnum) {
    case ENOENT:
    case ENOTDIR:
        return PARIO_ERR_NO_SUCH_FILE;
    case EEXIST:
        return PARIO_ERR_FILE_EXISTS;
    case EACCES:
    case EPERM:
        return PARIO_ERR_ACCESS;
    case ENOSPC:
    case EFBIG:
        return PARIO_ERR_NO_SPACE;
    case EDQUOT:
        return PARIO_ERR_QUOTA;
    case EROFS:
        return PARIO_ERR_READ_ONLY;
    case ENAMETOOLONG:
    case EISDIR:
    case ELOOP:
        return PARIO_ERR_BAD_FILE;
    case ETXTBSY:
    case EBUSY:
        return PARIO_ERR_FILE_IN_USE;
    case ENOMEM:
        return PARIO_ERR_NO_MEM;
    case EINVAL:
        return PARIO_ERR_ARG;
    default:
        return PARIO_ERR_IO;
    }
}

int pario_fail_errno(pario_error *err, int errnum, const char *what, const char *path) {
    return pario_fail(err, pario_err_from_errno(errnum), "%s %s: %s", what, path,
                      strerror(errnum));
}
