/* pgas io files: open, close, sync, seek, size, preallocate, fcntl; errors and
 * the agreement every call ends with. */
#include "pgas/io/pgas_io_internal.h"
#include "pgas/pgas_internal.h"
#include "common/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors and agreement ------------------------------------------------------------ */

int pio_fail(pario_pgas_file *fd, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pario_vfail(&fd->last, code, fmt, ap);
    va_end(ap);
    return code;
}

int pio_io_failed(pario_pgas_file *fd, int rc) {
    fd->last = *pario_file_last_error(fd->fh);
    fd->last.code = rc;
    return rc;
}

/* Order-preserving map between unsigned and signed 64-bit values: the
 * reduction is a signed MIN (unsigned MIN is not reliable across MPIs). */
static int64_t as_signed(uint64_t v) {
    return (int64_t)(v ^ ((uint64_t)1 << 63));
}
static uint64_t as_unsigned(int64_t v) {
    return (uint64_t)v ^ ((uint64_t)1 << 63);
}

int pio_agree(pario_pgas_file *fd, int rc, uint64_t *min_values, int n) {
    int64_t in[PIO_AGREE_MAX + 1], out[PIO_AGREE_MAX + 1];
    if (n > PIO_AGREE_MAX)
        return pio_fail(fd, PARIO_ERR_INTERN, "pgas io: %d values to agree on", n);
    in[0] = rc != PARIO_OK ? fd->rank : INT64_MAX;
    for (int i = 0; i < n; i++)
        in[i + 1] = as_signed(min_values[i]);
    if (MPI_Allreduce(in, out, n + 1, MPI_INT64_T, MPI_MIN, fd->comm) != MPI_SUCCESS)
        return pio_fail(fd, PARIO_ERR_COMM, "pgas io %s: the agreement failed", fd->name);
    for (int i = 0; i < n; i++)
        min_values[i] = as_unsigned(out[i + 1]);
    if (out[0] == INT64_MAX)
        return PARIO_OK;
    /* The lowest failing rank's code and message, to every rank. */
    pario_error shared = fd->last;
    if (MPI_Bcast(&shared, (int)sizeof shared, MPI_BYTE, (int)out[0], fd->comm) != MPI_SUCCESS)
        return pio_fail(fd, PARIO_ERR_COMM, "pgas io %s: the agreement failed", fd->name);
    fd->last = shared;
    return shared.code;
}

int pio_agree_same(pario_pgas_file *fd, int rc, const uint64_t *values, int n, const char *what) {
    uint64_t v[PIO_AGREE_MAX];
    if (2 * n > PIO_AGREE_MAX)
        return pio_fail(fd, PARIO_ERR_INTERN, "pgas io: %d values to compare", n);
    for (int i = 0; i < n; i++) {
        v[i] = values[i];
        v[n + i] = ~values[i];
    }
    rc = pio_agree(fd, rc, v, 2 * n);
    for (int i = 0; i < n && rc == PARIO_OK; i++)
        if (v[i] != ~v[n + i])
            rc = pio_fail(fd, PARIO_ERR_NOT_SAME,
                          "%s %s: argument %d differs between ranks (%llu .. %llu)", what, fd->name,
                          i + 1, (unsigned long long)v[i], (unsigned long long)~v[n + i]);
    return rc;
}

int pio_check_usable(pario_pgas_file *fd, const char *what) {
    if (fd->async.outstanding)
        return pio_fail(fd, PARIO_ERR_REQUEST,
                        "%s %s: an asynchronous call is outstanding (wait for it first)", what,
                        fd->name);
    return PARIO_OK;
}

int pio_barrier(pario_pgas_file *fd) {
    int rc = pario_pgas_barrier(fd->ctx, PARIO_PGAS_ANY);
    if (rc != PARIO_OK)
        return pio_fail(fd, rc, "pgas io %s: barrier: %s", fd->name,
                        pario_pgas_last_error(fd->ctx)->msg);
    return PARIO_OK;
}

const pario_error *pario_pgas_file_last_error(const pario_pgas_file *fd) {
    return &fd->last;
}

int pario_pgas_io_errno(int code) {
    switch (code) {
    case PARIO_OK:
        return 0;
    case PARIO_ERR_NO_SUCH_FILE:
        return ENOENT;
    case PARIO_ERR_FILE_EXISTS:
        return EEXIST;
    case PARIO_ERR_ACCESS:
        return EACCES;
    case PARIO_ERR_NO_SPACE:
        return ENOSPC;
    case PARIO_ERR_QUOTA:
        return EDQUOT;
    case PARIO_ERR_READ_ONLY:
        return EROFS;
    case PARIO_ERR_FILE:
        return EBADF;
    case PARIO_ERR_NO_MEM:
        return ENOMEM;
    case PARIO_ERR_FILE_IN_USE:
        return EBUSY;
    case PARIO_ERR_BAD_FILE:
        return ENAMETOOLONG;
    case PARIO_ERR_IO:
    case PARIO_ERR_COMM:
    case PARIO_ERR_INTERN:
    case PARIO_ERR_CONVERSION:
        return EIO;
    default: /* argument, mode, type, count, request, info, agreement errors */
        return EINVAL;
    }
}

/* ---- open and close ------------------------------------------------------------------ */

static int bits(int flags, int mask) {
    return __builtin_popcount((unsigned)(flags & mask));
}

#define PIO_MODE_MASK (PARIO_PGAS_RDONLY | PARIO_PGAS_WRONLY | PARIO_PGAS_RDWR)
#define PIO_FP_MASK (PARIO_PGAS_INDIVIDUAL_FP | PARIO_PGAS_COMMON_FP)
#define PIO_ALL_FLAGS ((1 << 11) - 1)

static const char *flags_problem(int flags) {
    if (flags & ~PIO_ALL_FLAGS)
        return "unknown flag bits";
    if (bits(flags, PIO_MODE_MASK) != 1)
        return "not exactly one of RDONLY, WRONLY, RDWR";
    if (bits(flags, PIO_FP_MASK) != 1)
        return "not exactly one of INDIVIDUAL_FP, COMMON_FP";
    if ((flags & PARIO_PGAS_TRUNC) && (flags & PARIO_PGAS_RDONLY))
        return "TRUNC with RDONLY";
    if ((flags & PARIO_PGAS_CREATE) && (flags & PARIO_PGAS_RDONLY))
        return "CREATE with RDONLY";
    return NULL;
}

static int io_amode(int flags) {
    int amode = (flags & PARIO_PGAS_RDONLY)   ? MPI_MODE_RDONLY
                : (flags & PARIO_PGAS_WRONLY) ? MPI_MODE_WRONLY
                                              : MPI_MODE_RDWR;
    if (flags & PARIO_PGAS_CREATE)
        amode |= MPI_MODE_CREATE;
    if (flags & PARIO_PGAS_EXCL)
        amode |= MPI_MODE_EXCL;
    if (flags & PARIO_PGAS_DELETE_ON_CLOSE)
        amode |= MPI_MODE_DELETE_ON_CLOSE;
    return amode;
}

static int hint_ok(const pario_pgas_hint *h) {
    return h->key && h->value && h->key[0] && strlen(h->key) < MPI_MAX_INFO_KEY &&
           strlen(h->value) < MPI_MAX_INFO_VAL;
}

static int hints_info(const pario_pgas_hint *hints, size_t n, MPI_Info *info) {
    *info = MPI_INFO_NULL;
    if (n == 0)
        return PARIO_OK;
    if (MPI_Info_create(info) != MPI_SUCCESS)
        return PARIO_ERR_NO_MEM;
    for (size_t i = 0; i < n; i++)
        if (!hint_ok(&hints[i]) ||
            MPI_Info_set(*info, hints[i].key, hints[i].value) != MPI_SUCCESS) {
            MPI_Info_free(info);
            return PARIO_ERR_INFO;
        }
    return PARIO_OK;
}

static void free_hints(pario_pgas_file *fd) {
    for (size_t i = 0; i < fd->nhints; i++) {
        free((char *)fd->hints[i].key);
        free((char *)fd->hints[i].value);
    }
    free(fd->hints);
    fd->hints = NULL;
    fd->nhints = 0;
}

/* The hints in effect, as the io layer reports them (GET_HINTS). */
static int refresh_hints(pario_pgas_file *fd) {
    MPI_Info info;
    int nkeys = 0, rc = pario_file_get_info(fd->fh, &info);
    if (rc != PARIO_OK)
        return pio_io_failed(fd, rc);
    free_hints(fd);
    MPI_Info_get_nkeys(info, &nkeys);
    fd->hints = calloc((size_t)nkeys + 1, sizeof *fd->hints);
    rc = fd->hints ? PARIO_OK : PARIO_ERR_NO_MEM;
    for (int i = 0; i < nkeys && rc == PARIO_OK; i++) {
        char key[MPI_MAX_INFO_KEY + 1], value[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        MPI_Info_get_nthkey(info, i, key);
        MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
        fd->hints[i].key = strdup(key);
        fd->hints[i].value = strdup(flag ? value : "");
        fd->nhints = (size_t)i + 1;
        if (!fd->hints[i].key || !fd->hints[i].value)
            rc = PARIO_ERR_NO_MEM;
    }
    MPI_Info_free(&info);
    return rc == PARIO_OK ? rc : pio_fail(fd, rc, "pgas io %s: cannot list the hints", fd->name);
}

static void free_file(pario_pgas_file *fd) {
    free_hints(fd);
    if (fd->empty != MPI_DATATYPE_NULL)
        MPI_Type_free(&fd->empty);
    if (fd->comm != MPI_COMM_NULL)
        MPI_Comm_free(&fd->comm);
    free(fd->name);
    free(fd);
}

/* What every rank can check alone before the file is opened. */
static int open_check(pario_pgas_file *fd, const char *fname, int flags, size_t numhints,
                      const pario_pgas_hint *hints) {
    const char *problem = flags_problem(flags);
    if (!fname)
        return pio_fail(fd, PARIO_ERR_BAD_FILE, "pario_pgas_fopen: NULL file name");
    if (!fd->name)
        return pio_fail(fd, PARIO_ERR_NO_MEM, "pario_pgas_fopen %s: out of memory", fname);
    if (problem)
        return pio_fail(fd, PARIO_ERR_AMODE, "pario_pgas_fopen %s: flags 0x%x: %s", fname, flags,
                        problem);
    if (numhints && !hints)
        return pio_fail(fd, PARIO_ERR_ARG, "pario_pgas_fopen %s: %zu hints at NULL", fname,
                        numhints);
    for (size_t i = 0; i < numhints; i++)
        if (!hint_ok(&hints[i]))
            return pio_fail(fd, PARIO_ERR_INFO,
                            "pario_pgas_fopen %s: hint %zu has no key or value, or is too long",
                            fname, i);
    if (MPI_Type_contiguous(0, MPI_BYTE, &fd->empty) != MPI_SUCCESS ||
        MPI_Type_commit(&fd->empty) != MPI_SUCCESS)
        return pio_fail(fd, PARIO_ERR_TYPE, "pario_pgas_fopen %s: cannot make a type", fname);
    return PARIO_OK;
}

/* After the open: truncation, consistency and the pointers' start. */
static int open_finish(pario_pgas_file *fd) {
    int rc = PARIO_OK;
    if (fd->flags & PARIO_PGAS_TRUNC)
        rc = pario_file_set_size(fd->fh, 0);
    if (rc == PARIO_OK && (fd->flags & PARIO_PGAS_STRONG_CA))
        rc = pario_file_set_atomicity(fd->fh, 1);
    MPI_Offset size = 0;
    if (rc == PARIO_OK && (fd->flags & PARIO_PGAS_APPEND))
        rc = pario_file_get_size(fd->fh, &size);
    if (rc != PARIO_OK)
        pio_io_failed(fd, rc);
    fd->pos = (pario_pgas_off)size;
    int rc2 = refresh_hints(fd);
    return pio_agree(fd, rc != PARIO_OK ? rc : rc2, NULL, 0);
}

static pario_pgas_file *new_file(pario_pgas *ctx, const char *fname, int flags) {
    pario_pgas_file *fd = calloc(1, sizeof *fd);
    if (!fd)
        return NULL;
    fd->ctx = ctx;
    fd->flags = flags;
    fd->comm = MPI_COMM_NULL;
    fd->empty = MPI_DATATYPE_NULL;
    fd->name = fname ? strdup(fname) : strdup("(null)");
    MPI_Comm_rank(ctx->comm, &fd->rank);
    MPI_Comm_size(ctx->comm, &fd->nranks);
    return fd;
}

int pario_pgas_fopen(pario_pgas *ctx, const char *fname, int flags, size_t numhints,
                     const pario_pgas_hint *hints, pario_pgas_file **out, pario_error *err) {
    if (out)
        *out = NULL;
    if (!ctx || !out)
        return pario_fail(err, PARIO_ERR_ARG, "pario_pgas_fopen: NULL %s",
                          ctx ? "file handle pointer" : "context");
    pario_pgas_file *fd = new_file(ctx, fname, flags);
    if (!fd || MPI_Comm_dup(ctx->comm, &fd->comm) != MPI_SUCCESS) {
        /* Nothing to agree with: every rank fails alike only if all ran out. */
        if (fd)
            free_file(fd);
        return pario_fail(err, PARIO_ERR_NO_MEM, "pario_pgas_fopen: out of memory");
    }
    int rc = open_check(fd, fname, flags, numhints, hints);
    uint64_t same = (uint64_t)(unsigned)flags;
    MPI_Info info = MPI_INFO_NULL;
    if (rc == PARIO_OK && hints_info(hints, numhints, &info) != PARIO_OK)
        rc = pio_fail(fd, PARIO_ERR_NO_MEM, "pario_pgas_fopen %s: cannot pass the hints", fd->name);
    rc = pio_agree_same(fd, rc, &same, 1, "pario_pgas_fopen");
    if (rc == PARIO_OK) {
        /* On the context's communicator, not this file's duplicate: the io layer
         * parks its buffers of collective writes on the program's communicator
         * for the next file, so they are made (and first touched) once. */
        rc = pario_file_open(ctx->comm, fname, io_amode(flags), info, &fd->fh, &fd->last);
        if (rc == PARIO_OK)
            rc = open_finish(fd);
    }
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    if (rc != PARIO_OK) {
        if (err)
            *err = fd->last;
        if (fd->fh)
            pario_file_close(&fd->fh, NULL);
        free_file(fd);
        return rc;
    }
    *out = fd;
    return PARIO_OK;
}

int pario_pgas_fclose(pario_pgas_file **pfd, pario_error *err) {
    if (!pfd || !*pfd)
        return pario_fail(err, PARIO_ERR_FILE, "pario_pgas_fclose: NULL file handle");
    pario_pgas_file *fd = *pfd;
    *pfd = NULL;
    /* An outstanding asynchronous call is completed first, as fwait_async
     * would (collective like fclose); its failure is fclose's, on every rank,
     * and the file is closed all the same. */
    int pending = fd->async.outstanding ? pio_async_complete(fd, NULL) : PARIO_OK;
    pario_error e = {0};
    int rc = pario_file_close(&fd->fh, &e);
    if (pending != PARIO_OK) {
        rc = pending;
        e = fd->last;
    }
    if (rc != PARIO_OK && err)
        *err = e;
    free_file(fd);
    return rc;
}

/* ---- file-level calls ------------------------------------------------------------------- */

int pario_pgas_fsync(pario_pgas_file *fd) {
    if (!fd)
        return PARIO_ERR_FILE;
    int rc = pio_agree(fd, pio_check_usable(fd, "pario_pgas_fsync"), NULL, 0);
    if (rc == PARIO_OK && (rc = pario_file_sync(fd->fh)) != PARIO_OK)
        pio_io_failed(fd, rc);
    return rc;
}

static int seek_target(pario_pgas_file *fd, pario_pgas_off offset, int origin,
                       pario_pgas_off *pos) {
    MPI_Offset size = 0;
    int rc;
    switch (origin) {
    case PARIO_PGAS_SEEK_SET:
        *pos = offset;
        break;
    case PARIO_PGAS_SEEK_CUR:
        *pos = fd->pos + offset;
        break;
    case PARIO_PGAS_SEEK_END:
        if ((rc = pario_file_get_size(fd->fh, &size)) != PARIO_OK)
            return pio_io_failed(fd, rc);
        *pos = (pario_pgas_off)size + offset;
        break;
    default:
        return pio_fail(fd, PARIO_ERR_ARG, "pario_pgas_fseek %s: unknown origin %d", fd->name,
                        origin);
    }
    if (*pos < 0)
        return pio_fail(fd, PARIO_ERR_ARG, "pario_pgas_fseek %s: position %lld before the start",
                        fd->name, (long long)*pos);
    return PARIO_OK;
}

int pario_pgas_fseek(pario_pgas_file *fd, pario_pgas_off offset, int origin, pario_pgas_off *pos) {
    if (!fd)
        return PARIO_ERR_FILE;
    pario_pgas_off target = 0;
    int rc = pio_check_usable(fd, "pario_pgas_fseek");
    if (rc == PARIO_OK)
        rc = seek_target(fd, offset, origin, &target);
    if (fd->flags & PARIO_PGAS_COMMON_FP) {
        uint64_t same[2] = {(uint64_t)offset, (uint64_t)origin};
        rc = pio_agree_same(fd, rc, same, 2, "pario_pgas_fseek");
    } else {
        rc = pio_agree(fd, rc, NULL, 0);
    }
    if (rc != PARIO_OK)
        return rc;
    fd->pos = target;
    if (pos)
        *pos = target;
    return PARIO_OK;
}

/* set_size and preallocate: the same size on every rank, a writable file. */
static int size_call(pario_pgas_file *fd, pario_pgas_off size, const char *what,
                     int (*call)(pario_file *, MPI_Offset)) {
    if (!fd)
        return PARIO_ERR_FILE;
    int rc = pio_check_usable(fd, what);
    if (rc == PARIO_OK && size < 0)
        rc = pio_fail(fd, PARIO_ERR_ARG, "%s %s: negative size %lld", what, fd->name,
                      (long long)size);
    if (rc == PARIO_OK && (fd->flags & PARIO_PGAS_RDONLY))
        rc = pio_fail(fd, PARIO_ERR_FILE, "%s %s: the file is open read-only", what, fd->name);
    uint64_t same = (uint64_t)size;
    rc = pio_agree_same(fd, rc, &same, 1, what);
    if (rc == PARIO_OK && (rc = call(fd->fh, (MPI_Offset)size)) != PARIO_OK)
        pio_io_failed(fd, rc);
    return rc;
}

int pario_pgas_fset_size(pario_pgas_file *fd, pario_pgas_off size) {
    return size_call(fd, size, "pario_pgas_fset_size", pario_file_set_size);
}

int pario_pgas_fpreallocate(pario_pgas_file *fd, pario_pgas_off size) {
    return size_call(fd, size, "pario_pgas_fpreallocate", pario_file_preallocate);
}

int pario_pgas_fget_size(pario_pgas_file *fd, pario_pgas_off *size) {
    if (!fd)
        return PARIO_ERR_FILE;
    MPI_Offset s = 0;
    int rc = pio_check_usable(fd, "pario_pgas_fget_size");
    if (rc == PARIO_OK && !size)
        rc = pio_fail(fd, PARIO_ERR_ARG, "pario_pgas_fget_size %s: NULL result", fd->name);
    if (rc == PARIO_OK && (rc = pario_file_get_size(fd->fh, &s)) != PARIO_OK)
        pio_io_failed(fd, rc);
    rc = pio_agree(fd, rc, NULL, 0);
    if (rc == PARIO_OK)
        *size = (pario_pgas_off)s;
    return rc;
}

/* ---- fcntl ---------------------------------------------------------------------------- */

static int set_hint(pario_pgas_file *fd, const pario_pgas_hint *hint) {
    MPI_Info info;
    if (hints_info(hint, 1, &info) != PARIO_OK)
        return pio_fail(fd, PARIO_ERR_INFO, "pario_pgas_fcntl %s: SET_HINT: bad hint", fd->name);
    int rc = pario_file_set_info(fd->fh, info);
    MPI_Info_free(&info);
    if (rc != PARIO_OK)
        return pio_io_failed(fd, rc);
    return refresh_hints(fd);
}

static int set_atomic(pario_pgas_file *fd, int strong) {
    int rc = pario_file_set_atomicity(fd->fh, strong);
    if (rc != PARIO_OK)
        return pio_io_failed(fd, rc);
    fd->flags = strong ? fd->flags | PARIO_PGAS_STRONG_CA : fd->flags & ~PARIO_PGAS_STRONG_CA;
    return PARIO_OK;
}

static void set_fp(pario_pgas_file *fd, int type) {
    fd->flags = (fd->flags & ~PIO_FP_MASK) | type;
    fd->pos = 0;
}

/* Commands that only read the handle; *result as the header says. */
static int fcntl_get(pario_pgas_file *fd, int cmd, void *arg, int *result) {
    switch (cmd) {
    case PARIO_PGAS_GET_CA_SEMANTICS:
        *result = fd->flags & PARIO_PGAS_STRONG_CA;
        return PARIO_OK;
    case PARIO_PGAS_GET_FP:
        *result = fd->flags & PIO_FP_MASK;
        return PARIO_OK;
    case PARIO_PGAS_GET_FL:
        *result = fd->flags;
        return PARIO_OK;
    case PARIO_PGAS_ASYNC_OUTSTANDING:
        *result = fd->async.outstanding;
        return PARIO_OK;
    case PARIO_PGAS_GET_FN:
        *(const char **)arg = fd->name;
        return PARIO_OK;
    case PARIO_PGAS_GET_HINTS:
        *(const pario_pgas_hint **)arg = fd->hints;
        *result = (int)fd->nhints;
        return PARIO_OK;
    }
    return PARIO_ERR_ARG;
}

static int fcntl_check(pario_pgas_file *fd, int cmd, void *arg) {
    int needs_arg = PARIO_PGAS_GET_FN | PARIO_PGAS_GET_HINTS | PARIO_PGAS_SET_HINT;
    if (cmd <= 0 || cmd > PARIO_PGAS_ASYNC_OUTSTANDING || bits(cmd, cmd) != 1)
        return pio_fail(fd, PARIO_ERR_ARG, "pario_pgas_fcntl %s: unknown command %d", fd->name,
                        cmd);
    if ((cmd & needs_arg) && !arg)
        return pio_fail(fd, PARIO_ERR_ARG, "pario_pgas_fcntl %s: command %d needs an argument",
                        fd->name, cmd);
    if (cmd == PARIO_PGAS_SET_HINT && !hint_ok(arg))
        return pio_fail(fd, PARIO_ERR_INFO,
                        "pario_pgas_fcntl %s: SET_HINT: no key, no value or too long", fd->name);
    if (cmd == PARIO_PGAS_ASYNC_OUTSTANDING)
        return PARIO_OK;
    return pio_check_usable(fd, "pario_pgas_fcntl");
}

int pario_pgas_fcntl(pario_pgas_file *fd, int cmd, void *arg, int *result) {
    if (!fd)
        return PARIO_ERR_FILE;
    int ignored = 0;
    if (!result)
        result = &ignored;
    uint64_t same = (uint64_t)(unsigned)cmd;
    int rc = pio_agree_same(fd, fcntl_check(fd, cmd, arg), &same, 1, "pario_pgas_fcntl");
    if (rc != PARIO_OK)
        return rc;
    *result = 0;
    switch (cmd) {
    case PARIO_PGAS_SET_WEAK_CA_SEMANTICS:
        return set_atomic(fd, 0);
    case PARIO_PGAS_SET_STRONG_CA_SEMANTICS:
        return set_atomic(fd, 1);
    case PARIO_PGAS_SET_COMMON_FP:
        set_fp(fd, PARIO_PGAS_COMMON_FP);
        return PARIO_OK;
    case PARIO_PGAS_SET_INDIVIDUAL_FP:
        set_fp(fd, PARIO_PGAS_INDIVIDUAL_FP);
        return PARIO_OK;
    case PARIO_PGAS_SET_HINT:
        return pio_agree(fd, set_hint(fd, arg), NULL, 0);
    default:
        return fcntl_get(fd, cmd, arg, result);
    }
}
