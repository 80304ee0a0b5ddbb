/* MPI requests for accesses that finish in a pario background thread.
 *
 * A generalized request completes when MPI_Grequest_complete is called, but
 * the background thread must not call MPI (the program may run at
 * MPI_THREAD_SINGLE). So the completion happens inside MPI's own progress,
 * in the thread that tests or waits, through one of two hooks:
 *   - MPICH: MPIX_Grequest_start, whose poll function MPI_Test and MPI_Wait
 *     call, and whose wait function blocks until the access has finished;
 *   - Open MPI: a progress callback registered with opal_progress_register,
 *     which every MPI_Test/MPI_Wait loop runs; it completes the requests whose
 *     access has finished.
 * Both are looked up with dlsym, so the drop-in links against neither. With
 * neither, the access is waited for inside the starting call and the request
 * returned complete (MPIIO_HOOK_NONE).
 *
 * Registry (process-wide, guarded by hook.lock): the hook chosen on first
 * use, and for Open MPI the list of started requests not yet completed.
 *
 * The outcome of the access is reported when the request completes: the
 * byte count in the status, and a failure as the error code MPI_Wait/MPI_Test
 * return (its class and pario's message naming the file and the cause). */
#include "mpiio/mpiio.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef int(grequest_poll_fn)(void *state, MPI_Status *status);
typedef int(grequest_wait_fn)(int count, void **states, double timeout, MPI_Status *status);
typedef int (*grequestx_start_fn)(MPI_Grequest_query_function *, MPI_Grequest_free_function *,
                                  MPI_Grequest_cancel_function *, grequest_poll_fn *,
                                  grequest_wait_fn *, void *, MPI_Request *);
typedef int (*progress_register_fn)(int (*callback)(void));

enum mpiio_hook { MPIIO_HOOK_NONE, MPIIO_HOOK_MPIX, MPIIO_HOOK_OPAL };

/* One started access and what its request reports. */
struct pending {
    struct pending *next;  /* Open MPI: the list of requests not yet completed */
    pario_request *access; /* NULL once its outcome has been collected */
    const char *fname;     /* the starting MPI function */
    char *path;            /* the file's name (a copy: the file may be closed first) */
    MPI_Request request;
    MPI_Count bytes;
    int code; /* MPI code of the outcome */
};

static struct {
    pthread_once_t once;
    pthread_mutex_t lock;
    enum mpiio_hook hook;
    grequestx_start_fn start_x;
    struct pending *head; /* Open MPI: started, not completed */
    atomic_int npending;
} hook = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

/* Wait for the access (returns at once if it has finished) and keep its
 * outcome for the status. */
static void collect(struct pending *p) {
    pario_error err = {PARIO_OK, ""};
    int rc = pario_request_wait(p->access, &p->bytes, &err);
    p->access = NULL;
    p->code = rc == PARIO_OK ? MPI_SUCCESS : mpiio_pario_code(p->fname, p->path, rc, &err);
}

static void complete(struct pending *p) {
    collect(p);
    PMPI_Grequest_complete(p->request);
}

static int finished(const struct pending *p) {
    int done = 0;
    pario_request_test(p->access, &done);
    return done;
}

/* Open MPI progress callback: complete every request whose access has
 * finished. Called from MPI's progress loop, possibly in several threads. */
static int progress_pending(void) {
    if (atomic_load(&hook.npending) == 0 || pthread_mutex_trylock(&hook.lock) != 0)
        return 0;
    struct pending *ready = NULL, **at = &hook.head;
    while (*at) {
        struct pending *p = *at;
        if (finished(p)) {
            *at = p->next;
            p->next = ready;
            ready = p;
            atomic_fetch_sub(&hook.npending, 1);
        } else {
            at = &p->next;
        }
    }
    pthread_mutex_unlock(&hook.lock);
    int n = 0;
    for (struct pending *p = ready, *next; p; p = next, n++) {
        next = p->next;
        complete(p);
    }
    return n;
}

static void hook_choose(void) {
    hook.start_x = (grequestx_start_fn)dlsym(RTLD_DEFAULT, "MPIX_Grequest_start");
    if (hook.start_x) {
        hook.hook = MPIIO_HOOK_MPIX;
        return;
    }
    progress_register_fn reg = (progress_register_fn)dlsym(RTLD_DEFAULT, "opal_progress_register");
    hook.hook = reg && reg(progress_pending) == 0 ? MPIIO_HOOK_OPAL : MPIIO_HOOK_NONE;
}

/* ---- generalized request callbacks ------------------------------------------------ */

static int pending_query(void *state, MPI_Status *status) {
    const struct pending *p = state;
    PMPI_Status_set_elements_x(status, MPI_BYTE, p->bytes);
    PMPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    status->MPI_ERROR = p->code;
    return p->code;
}

/* Removes p from the list of requests to complete, if it is there. */
static void pending_unlist(struct pending *p) {
    pthread_mutex_lock(&hook.lock);
    for (struct pending **at = &hook.head; *at; at = &(*at)->next)
        if (*at == p) {
            *at = p->next;
            atomic_fetch_sub(&hook.npending, 1);
            break;
        }
    pthread_mutex_unlock(&hook.lock);
}

/* Called when the request is freed: after MPI_Wait/MPI_Test completed it, or
 * by MPI_Request_free, which MPICH runs at once even while the access is
 * still moving bytes: the access then goes on alone (close waits for it). */
static int pending_free(void *state) {
    struct pending *p = state;
    if (p->access) {
        pending_unlist(p);
        pario_request_free(p->access);
    }
    free(p->path);
    free(p);
    return MPI_SUCCESS;
}

/* A started access cannot be withdrawn: cancelling has no effect. */
static int pending_cancel(void *state, int complete) {
    (void)state;
    (void)complete;
    return MPI_SUCCESS;
}

static int pending_poll(void *state, MPI_Status *status) {
    (void)status;
    struct pending *p = state;
    if (p->access && finished(p))
        complete(p);
    return MPI_SUCCESS;
}

/* MPICH calls this to block on requests of this kind: wait for them all. */
static int pending_wait(int count, void **states, double timeout, MPI_Status *status) {
    (void)timeout;
    (void)status;
    for (int i = 0; i < count; i++) {
        struct pending *p = states[i];
        if (p->access)
            complete(p);
    }
    return MPI_SUCCESS;
}

/* ---- starting ---------------------------------------------------------------------- */

static int start_plain(struct pending *p) {
    return PMPI_Grequest_start(pending_query, pending_free, pending_cancel, p, &p->request);
}

static int start_hooked(struct pending *p) {
    if (hook.hook == MPIIO_HOOK_MPIX)
        return hook.start_x(pending_query, pending_free, pending_cancel, pending_poll,
                            pending_wait, p, &p->request);
    int rc = start_plain(p);
    if (rc != MPI_SUCCESS || hook.hook == MPIIO_HOOK_NONE) {
        if (rc == MPI_SUCCESS)
            complete(p);
        return rc;
    }
    pthread_mutex_lock(&hook.lock);
    p->next = hook.head;
    hook.head = p;
    atomic_fetch_add(&hook.npending, 1);
    pthread_mutex_unlock(&hook.lock);
    return MPI_SUCCESS;
}

int mpiio_request_start(struct mpiio_file *f, const char *fname, pario_request *access,
                        MPI_Request *request) {
    pthread_once(&hook.once, hook_choose);
    struct pending *p = calloc(1, sizeof *p);
    char *path = strdup(pario_file_path(f->pf));
    if (!p || !path) {
        free(p);
        free(path);
        pario_request_wait(access, NULL, NULL);
        return mpiio_fail(f, fname, MPI_ERR_NO_MEM, "no memory for a request");
    }
    *p = (struct pending){.access = access, .fname = fname, .path = path};
    if (start_hooked(p) != MPI_SUCCESS) {
        pario_request_wait(access, NULL, NULL);
        free(path);
        free(p);
        return mpiio_fail(f, fname, MPI_ERR_INTERN, "cannot start a generalized request");
    }
    *request = p->request;
    return MPI_SUCCESS;
}

int mpiio_request_done(struct mpiio_file *f, const char *fname, MPI_Count bytes,
                       MPI_Request *request) {
    pthread_once(&hook.once, hook_choose);
    struct pending *p = calloc(1, sizeof *p);
    if (!p)
        return mpiio_fail(f, fname, MPI_ERR_NO_MEM, "no memory for a request");
    *p = (struct pending){.fname = fname, .bytes = bytes, .code = MPI_SUCCESS};
    if (start_plain(p) != MPI_SUCCESS) {
        free(p);
        return mpiio_fail(f, fname, MPI_ERR_INTERN, "cannot start a generalized request");
    }
    PMPI_Grequest_complete(p->request);
    *request = p->request;
    return MPI_SUCCESS;
}
