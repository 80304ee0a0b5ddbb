/* Error codes that carry pario's messages, and the reporting of failures.
 *
 * A failed call returns an MPI error code whose MPI_Error_class is the
 * standard class and whose MPI_Error_string is pario's message naming the
 * file and the cause. Codes come from MPI_Add_error_code and get their text
 * from MPI_Add_error_string, which the standard allows to replace an earlier
 * string. To keep a long-running program from growing MPI's table without
 * bound, each class has a pool of MPIIO_CODES_PER_CLASS codes reused
 * round-robin: the text of a code changes when it is handed out again, after
 * MPIIO_CODES_PER_CLASS later failures of the same class.
 *
 * Registry (process-wide, guarded by codes.lock): the pools and the way codes
 * are made, chosen once by checking that a code's string and class round-trip:
 *   - MPIIO_CODES_STRINGS: the pools above (Open MPI, conforming MPIs);
 *   - MPIIO_CODES_MPICH_RING: MPICH 4.0 drops the dynamic-code flag from codes
 *     added to a predefined class, so MPI_Error_string on them prints an
 *     unrelated message. There the code comes from MPICH's own constructor
 *     (the one its MPI-IO uses), whose messages live in a fixed ring buffer:
 *     bounded as well, class right, text "Other I/O error <pario message>";
 *   - MPIIO_CODES_CLASS_ONLY: neither works; the bare class is returned.
 */
#include "mpiio/mpiio.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Codes per error class: how many recent failures of one class keep their own
 * message. Small, since MPI implementations cap user codes (MPICH: 8192). */
#define MPIIO_CODES_PER_CLASS 8
/* Classes with a pool; MPI defines about 60 predefined classes. */
#define MPIIO_POOL_CLASSES 64
/* Longest message: MPI_Error_string's limit (it includes the NUL). */
#define MPIIO_MSG_MAX MPI_MAX_ERROR_STRING
/* Text set on the first code to check that strings round-trip. */
#define MPIIO_PROBE_TEXT "pario error string check"

enum mpiio_codes_how {
    MPIIO_CODES_UNCHECKED = 0,
    MPIIO_CODES_STRINGS,
    MPIIO_CODES_MPICH_RING,
    MPIIO_CODES_CLASS_ONLY,
};

struct class_pool {
    int cls;
    int ncodes; /* codes created so far, <= MPIIO_CODES_PER_CLASS */
    int next;   /* index of the code handed out next once all exist */
    int codes[MPIIO_CODES_PER_CLASS];
};

/* MPICH's internal error-code constructor (exported by libmpich). */
typedef int (*mpich_err_create_fn)(int lastcode, int fatal, const char *fcname, int line,
                                   int error_class, const char *generic_msg,
                                   const char *specific_msg, ...);

static struct {
    pthread_mutex_t lock;
    enum mpiio_codes_how how;
    mpich_err_create_fn mpich_create;
    struct class_pool pools[MPIIO_POOL_CLASSES];
    int npools;
} codes = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The pool of class cls, created if there is room; NULL otherwise. */
static struct class_pool *pool_of(int cls) {
    for (int i = 0; i < codes.npools; i++)
        if (codes.pools[i].cls == cls)
            return &codes.pools[i];
    if (codes.npools == MPIIO_POOL_CLASSES)
        return NULL;
    struct class_pool *p = &codes.pools[codes.npools++];
    p->cls = cls;
    p->ncodes = 0;
    p->next = 0;
    return p;
}

/* The next code of class cls from its pool; cls itself when none can be made. */
static int pool_next_code(int cls) {
    struct class_pool *p = pool_of(cls);
    if (!p)
        return cls;
    if (p->ncodes < MPIIO_CODES_PER_CLASS) {
        int code;
        if (PMPI_Add_error_code(cls, &code) != MPI_SUCCESS)
            return p->ncodes ? p->codes[0] : cls;
        p->codes[p->ncodes++] = code;
        return code;
    }
    int code = p->codes[p->next];
    p->next = (p->next + 1) % MPIIO_CODES_PER_CLASS;
    return code;
}

/* True when code reports class cls and the string text. */
static int code_round_trips(int code, int cls, const char *text) {
    char got[MPI_MAX_ERROR_STRING];
    int len = 0, got_cls = MPI_SUCCESS;
    if (PMPI_Error_string(code, got, &len) != MPI_SUCCESS ||
        PMPI_Error_class(code, &got_cls) != MPI_SUCCESS)
        return 0;
    return got_cls == cls && strcmp(got, text) == 0;
}

/* Chooses how codes are made (see the top of the file). Lock held. */
static enum mpiio_codes_how codes_choose(void) {
    int code = pool_next_code(MPI_ERR_OTHER);
    if (code != MPI_ERR_OTHER && PMPI_Add_error_string(code, MPIIO_PROBE_TEXT) == MPI_SUCCESS &&
        code_round_trips(code, MPI_ERR_OTHER, MPIIO_PROBE_TEXT))
        return MPIIO_CODES_STRINGS;
    void *sym = dlsym(RTLD_DEFAULT, "MPIR_Err_create_code");
    if (sym) {
        /* POSIX guarantees dlsym results convert to function pointers. */
        memcpy(&codes.mpich_create, &sym, sizeof sym);
        return MPIIO_CODES_MPICH_RING;
    }
    return MPIIO_CODES_CLASS_ONLY;
}

int mpiio_error_code(int cls, const char *msg) {
    char text[MPIIO_MSG_MAX];
    snprintf(text, sizeof text, "%s", msg);
    pthread_mutex_lock(&codes.lock);
    if (codes.how == MPIIO_CODES_UNCHECKED)
        codes.how = codes_choose();
    int code = cls;
    switch (codes.how) {
    case MPIIO_CODES_STRINGS:
        code = pool_next_code(cls);
        if (code != cls && PMPI_Add_error_string(code, text) != MPI_SUCCESS)
            code = cls;
        break;
    case MPIIO_CODES_MPICH_RING:
        code = codes.mpich_create(MPI_SUCCESS, 0, "pario", 0, cls, "**io", "**io %s", text);
        break;
    default:
        break;
    }
    pthread_mutex_unlock(&codes.lock);
    return code;
}

/* ---- reporting failures ------------------------------------------------------ */

/* msg = "<fname>: <detail>", with " on <path>" after fname when the detail
 * does not already name the file. */
static void compose_message(char *msg, size_t size, const char *fname, const char *path,
                            const char *detail) {
    int n = path && *path && !strstr(detail, path)
                ? snprintf(msg, size, "%s on %s: %s", fname, path, detail)
                : snprintf(msg, size, "%s: %s", fname, detail);
    if (n < 0 || (size_t)n >= size) /* cut at MPI_MAX_ERROR_STRING, as MPI would */
        msg[size - 1] = '\0';
}

/* Runs the handler of f (or of MPI_FILE_NULL, given handle fh) for code. */
static int raise_on(struct mpiio_file *f, MPI_File fh, int code, const char *msg) {
    if (f) {
        MPI_File h = mpiio_handle_of(f);
        return mpiio_errhandler_invoke(f->errhandler, &h, pario_file_comm(f->pf), code, msg);
    }
    MPI_Errhandler eh = mpiio_errhandler_default();
    int rc = mpiio_errhandler_invoke(eh, &fh, MPI_COMM_NULL, code, msg);
    mpiio_errhandler_drop(&eh);
    return rc;
}

static int fail_with_detail(struct mpiio_file *f, const char *fname, int cls, const char *detail) {
    char msg[MPIIO_MSG_MAX];
    compose_message(msg, sizeof msg, fname, f ? pario_file_path(f->pf) : NULL, detail);
    return raise_on(f, MPI_FILE_NULL, mpiio_error_code(cls, msg), msg);
}

int mpiio_fail(struct mpiio_file *f, const char *fname, int cls, const char *fmt, ...) {
    char detail[MPIIO_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return fail_with_detail(f, fname, cls, detail);
}

/* pario's message for rc, or the code's name when none was recorded. */
static const char *pario_detail(const pario_error *err, int rc) {
    return err && err->code == rc && err->msg[0] ? err->msg : pario_err_name(rc);
}

int mpiio_fail_pario(struct mpiio_file *f, const char *fname, int rc) {
    const pario_error *err = pario_file_last_error(f->pf);
    return fail_with_detail(f, fname, mpiio_error_class(rc), pario_detail(err, rc));
}

int mpiio_fail_nofile(const char *fname, const char *path, int rc, const pario_error *err) {
    char msg[MPIIO_MSG_MAX];
    compose_message(msg, sizeof msg, fname, path, pario_detail(err, rc));
    return raise_on(NULL, MPI_FILE_NULL, mpiio_error_code(mpiio_error_class(rc), msg), msg);
}

int mpiio_pario_code(const char *fname, const char *path, int rc, const pario_error *err) {
    char msg[MPIIO_MSG_MAX];
    compose_message(msg, sizeof msg, fname, path, pario_detail(err, rc));
    return mpiio_error_code(mpiio_error_class(rc), msg);
}

int mpiio_fail_closed(MPI_Errhandler eh, const char *fname, const char *path, int rc,
                      const pario_error *err) {
    char msg[MPIIO_MSG_MAX];
    compose_message(msg, sizeof msg, fname, path, pario_detail(err, rc));
    MPI_File none = MPI_FILE_NULL;
    int code = mpiio_error_code(mpiio_error_class(rc), msg);
    return mpiio_errhandler_invoke(eh, &none, MPI_COMM_NULL, code, msg);
}

int mpiio_fail_bad_handle(MPI_File fh, const char *fname) {
    char msg[MPIIO_MSG_MAX];
    if (fh == MPI_FILE_NULL)
        snprintf(msg, sizeof msg, "%s: the file handle is MPI_FILE_NULL", fname);
    else
        snprintf(msg, sizeof msg, "%s: %p is not an open file handle", fname, (void *)fh);
    return raise_on(NULL, fh, mpiio_error_code(MPI_ERR_FILE, msg), msg);
}
