/* File error handlers: MPI_File_create/set/get/call_errhandler.
 *
 * An MPI_Errhandler cannot give back the function it was made from, so
 * MPI_File_create_errhandler makes a communicator errhandler around a
 * trampoline and records (handle -> user function) here. Invoking a file's
 * handler looks the function up and calls it with the file handle.
 *
 * Registry (process-wide, guarded by ehs.lock):
 *   - entries: the handlers made by MPI_File_create_errhandler. An entry is
 *     never removed (MPI does not say when a handle is freed); a handle value
 *     that MPI reuses overwrites its entry, so the table holds at most one
 *     entry per distinct handle value ever created;
 *   - file_null: the handler of MPI_FILE_NULL, the default for files opened
 *     later and the one run for failures of open, delete and invalid handles;
 *   - holder: a private duplicate of MPI_COMM_SELF used to take references.
 *
 * References follow MPI's rules: a file holds one reference to a user handler
 * (predefined handlers need none), and MPI_File_get_errhandler returns a new
 * reference the caller frees with MPI_Errhandler_free. MPI has no call to add
 * a reference, but MPI_Comm_get_errhandler returns one: setting the handler
 * on the holder communicator and getting it back takes it.
 */
#include "mpiio/mpiio.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Initial number of registry entries; doubles when full. */
#define MPIIO_ERRHANDLERS_INITIAL 8

struct eh_entry {
    MPI_Errhandler eh;
    MPI_File_errhandler_function *fn;
};

static struct {
    pthread_mutex_t lock;
    struct eh_entry *entries;
    int n, cap;
    MPI_Errhandler file_null;
    int file_null_set; /* file_null was set by the program (else MPI_ERRORS_RETURN) */
    MPI_Comm holder;
    int holder_made;
} ehs = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int is_predefined(MPI_Errhandler eh) {
#if MPI_VERSION >= 4
    if (eh == MPI_ERRORS_ABORT)
        return 1;
#endif
    return eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ARE_FATAL;
}

/* The user function of eh, or NULL. Lock held. */
static MPI_File_errhandler_function *entry_fn(MPI_Errhandler eh) {
    for (int i = 0; i < ehs.n; i++)
        if (ehs.entries[i].eh == eh)
            return ehs.entries[i].fn;
    return NULL;
}

static MPI_File_errhandler_function *lookup_fn(MPI_Errhandler eh) {
    pthread_mutex_lock(&ehs.lock);
    MPI_File_errhandler_function *fn = entry_fn(eh);
    pthread_mutex_unlock(&ehs.lock);
    return fn;
}

/* Records eh -> fn; PARIO_ERR_NO_MEM when the table cannot grow. */
static int record_fn(MPI_Errhandler eh, MPI_File_errhandler_function *fn) {
    int rc = PARIO_OK;
    pthread_mutex_lock(&ehs.lock);
    int i = 0;
    while (i < ehs.n && ehs.entries[i].eh != eh)
        i++;
    if (i == ehs.n && ehs.n == ehs.cap) {
        int cap = ehs.cap ? 2 * ehs.cap : MPIIO_ERRHANDLERS_INITIAL;
        struct eh_entry *e = realloc(ehs.entries, (size_t)cap * sizeof *e);
        if (e) {
            ehs.entries = e;
            ehs.cap = cap;
        } else {
            rc = PARIO_ERR_NO_MEM;
        }
    }
    if (rc == PARIO_OK) {
        ehs.entries[i].eh = eh;
        ehs.entries[i].fn = fn;
        if (i == ehs.n)
            ehs.n++;
    }
    pthread_mutex_unlock(&ehs.lock);
    return rc;
}

/* A new reference to eh via the holder communicator. Lock held. */
static int take_reference(MPI_Errhandler eh, MPI_Errhandler *ref) {
    if (!ehs.holder_made) {
        int rc = PMPI_Comm_dup(MPI_COMM_SELF, &ehs.holder);
        if (rc != MPI_SUCCESS)
            return rc;
        ehs.holder_made = 1;
    }
    int rc = PMPI_Comm_set_errhandler(ehs.holder, eh);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_get_errhandler(ehs.holder, ref);
    PMPI_Comm_set_errhandler(ehs.holder, MPI_ERRORS_RETURN);
    return rc;
}

/* A reference to eh the caller may free with MPI_Errhandler_free. */
static int errhandler_new_reference(MPI_Errhandler eh, MPI_Errhandler *ref) {
    pthread_mutex_lock(&ehs.lock);
    int rc = take_reference(eh, ref);
    pthread_mutex_unlock(&ehs.lock);
    return rc;
}

int mpiio_errhandler_keep(MPI_Errhandler eh, MPI_Errhandler *kept) {
    if (is_predefined(eh)) {
        *kept = eh;
        return MPI_SUCCESS;
    }
    return errhandler_new_reference(eh, kept);
}

void mpiio_errhandler_drop(MPI_Errhandler *eh) {
    if (!is_predefined(*eh) && *eh != MPI_ERRHANDLER_NULL)
        PMPI_Errhandler_free(eh);
    *eh = MPI_ERRHANDLER_NULL;
}

MPI_Errhandler mpiio_errhandler_default(void) {
    pthread_mutex_lock(&ehs.lock);
    MPI_Errhandler eh = ehs.file_null_set ? ehs.file_null : MPI_ERRORS_RETURN;
    MPI_Errhandler kept = eh;
    if (!is_predefined(eh) && take_reference(eh, &kept) != MPI_SUCCESS)
        kept = MPI_ERRORS_RETURN;
    pthread_mutex_unlock(&ehs.lock);
    return kept;
}

int mpiio_errhandler_valid(MPI_Errhandler eh) {
    return is_predefined(eh) || (eh != MPI_ERRHANDLER_NULL && lookup_fn(eh) != NULL);
}

/* Prints msg and aborts the processes of comm, as MPI requires. */
static void abort_for(MPI_Comm comm, int code, const char *msg) {
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "pario: rank %d: %s (MPI_ERRORS_ARE_FATAL: aborting)\n", rank,
            msg ? msg : "error");
    fflush(stderr);
    PMPI_Abort(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, code);
}

int mpiio_errhandler_invoke(MPI_Errhandler eh, MPI_File *fh, MPI_Comm comm, int code,
                            const char *msg) {
    if (eh == MPI_ERRORS_RETURN)
        return code;
    if (eh == MPI_ERRORS_ARE_FATAL) {
        abort_for(MPI_COMM_WORLD, code, msg);
        return code;
    }
#if MPI_VERSION >= 4
    if (eh == MPI_ERRORS_ABORT) {
        abort_for(comm, code, msg);
        return code;
    }
#else
    (void)comm;
#endif
    MPI_File_errhandler_function *fn = lookup_fn(eh);
    if (fn) {
        int c = code;
        fn(fh, &c);
    }
    return code;
}

/* Comm errhandler behind every file handler: runs only if the program sets a
 * file handler on a communicator; calls the user function with MPI_FILE_NULL. */
static void file_handler_trampoline(MPI_Comm *comm, int *code, ...) {
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    if (PMPI_Comm_get_errhandler(*comm, &eh) != MPI_SUCCESS)
        return;
    MPI_File_errhandler_function *fn = lookup_fn(eh);
    PMPI_Errhandler_free(&eh);
    if (fn) {
        MPI_File none = MPI_FILE_NULL;
        fn(&none, code);
    }
}

int PMPI_File_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler) {
    static const char fname[] = "MPI_File_create_errhandler";
    if (!fn || !errhandler)
        return mpiio_fail(NULL, fname, MPI_ERR_ARG, "NULL %s", fn ? "errhandler" : "function");
    MPI_Errhandler eh;
    int rc = PMPI_Comm_create_errhandler(file_handler_trampoline, &eh);
    if (rc != MPI_SUCCESS)
        return rc;
    if (record_fn(eh, fn) != PARIO_OK) {
        PMPI_Errhandler_free(&eh);
        return mpiio_fail(NULL, fname, MPI_ERR_NO_MEM, "no memory to record the handler");
    }
    *errhandler = eh;
    return MPI_SUCCESS;
}
MPIIO_ALIAS(MPI_File_create_errhandler);

/* Replaces the handler of MPI_FILE_NULL with a kept reference to eh. */
static void set_file_null_handler(MPI_Errhandler kept) {
    pthread_mutex_lock(&ehs.lock);
    MPI_Errhandler old = ehs.file_null_set ? ehs.file_null : MPI_ERRORS_RETURN;
    ehs.file_null = kept;
    ehs.file_null_set = 1;
    pthread_mutex_unlock(&ehs.lock);
    mpiio_errhandler_drop(&old);
}

int PMPI_File_set_errhandler(MPI_File fh, MPI_Errhandler errhandler) {
    static const char fname[] = "MPI_File_set_errhandler";
    struct mpiio_file *f = NULL;
    if (fh != MPI_FILE_NULL) {
        int rc = mpiio_lookup(fh, fname, &f);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (!mpiio_errhandler_valid(errhandler))
        return mpiio_fail(f, fname, MPI_ERR_ARG, "not a file error handler");
    MPI_Errhandler kept;
    int rc = mpiio_errhandler_keep(errhandler, &kept);
    if (rc != MPI_SUCCESS)
        return mpiio_fail(f, fname, MPI_ERR_OTHER, "cannot take a reference to the handler");
    if (!f) {
        set_file_null_handler(kept);
        return MPI_SUCCESS;
    }
    MPI_Errhandler old = f->errhandler;
    f->errhandler = kept;
    mpiio_errhandler_drop(&old);
    return MPI_SUCCESS;
}
MPIIO_ALIAS(MPI_File_set_errhandler);

int PMPI_File_get_errhandler(MPI_File fh, MPI_Errhandler *errhandler) {
    static const char fname[] = "MPI_File_get_errhandler";
    struct mpiio_file *f = NULL;
    if (fh != MPI_FILE_NULL) {
        int rc = mpiio_lookup(fh, fname, &f);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (!errhandler)
        return mpiio_fail(f, fname, MPI_ERR_ARG, "NULL errhandler argument");
    MPI_Errhandler eh = f ? f->errhandler : mpiio_errhandler_default();
    int rc = errhandler_new_reference(eh, errhandler);
    if (!f)
        mpiio_errhandler_drop(&eh);
    if (rc != MPI_SUCCESS)
        return mpiio_fail(f, fname, MPI_ERR_OTHER, "cannot take a reference to the handler");
    return MPI_SUCCESS;
}
MPIIO_ALIAS(MPI_File_get_errhandler);

int PMPI_File_call_errhandler(MPI_File fh, int errorcode) {
    static const char fname[] = "MPI_File_call_errhandler";
    struct mpiio_file *f = NULL;
    if (fh != MPI_FILE_NULL) {
        int rc = mpiio_lookup(fh, fname, &f);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (PMPI_Error_string(errorcode, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "error code %d", errorcode);
    if (f) {
        MPI_File h = fh;
        mpiio_errhandler_invoke(f->errhandler, &h, pario_file_comm(f->pf), errorcode, msg);
        return MPI_SUCCESS;
    }
    MPI_Errhandler eh = mpiio_errhandler_default();
    MPI_File h = MPI_FILE_NULL;
    mpiio_errhandler_invoke(eh, &h, MPI_COMM_NULL, errorcode, msg);
    mpiio_errhandler_drop(&eh);
    return MPI_SUCCESS;
}
MPIIO_ALIAS(MPI_File_call_errhandler);
