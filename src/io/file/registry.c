/* The files open in this process, and what becomes of them at MPI_Finalize.
 *
 * Registry (process-wide, the folder's one; guarded by open_files.lock):
 * every file from the end of a successful open to the start of its close,
 * linked through pario_file.next_open. Two things walk it:
 *   - MPI_Finalize, through the delete callback of an attribute on
 *     MPI_COMM_SELF (MPI runs those first in MPI_Finalize): a program that
 *     ends without closing a file (erroneous, but common after an error
 *     path) must still find its writes in the file, as it would with a
 *     system MPI-IO that writes at once. Each file's nonblocking accesses
 *     are finished and this rank's kept collective writes are written; no
 *     collective call is made, since the other ranks may be finalizing in
 *     any order. A failure there has no call to be reported by.
 *   - the flusher of kept collective writes (io/coll/kept.c), which runs
 *     in a thread of its own: holding the lock, it sees no file being
 *     closed and no window being replaced (kept_get holds it to do that).
 * The attribute's keyval is made once, on first use. */
#include <pthread.h>
#include <stdatomic.h>
#include "io/async/async.h"
#include "io/cache/cache.h"
#include "io/coll/coll.h"
#include "io/file/file.h"
#include "io/trace/trace.h"

static struct {
    pthread_mutex_t lock;
    pario_file *head;
} open_files = {PTHREAD_MUTEX_INITIALIZER, NULL};

static pthread_once_t watch_once = PTHREAD_ONCE_INIT;
static int watching;              /* the attribute is set (written once, under watch_once) */
static atomic_int finalize_begun; /* MPI_Finalize has begun deleting attributes */

void io_files_lock(void) {
    pthread_mutex_lock(&open_files.lock);
}

void io_files_unlock(void) {
    pthread_mutex_unlock(&open_files.lock);
}

void io_files_add(pario_file *fh) {
    io_files_lock();
    fh->next_open = open_files.head;
    open_files.head = fh;
    io_files_unlock();
}

void io_files_remove(pario_file *fh) {
    io_files_lock();
    pario_file **at = &open_files.head;
    while (*at && *at != fh)
        at = &(*at)->next_open;
    if (*at)
        *at = fh->next_open;
    fh->next_open = NULL;
    io_files_unlock();
}

void io_files_each(void (*fn)(pario_file *fh, void *arg), void *arg) {
    io_files_lock();
    for (pario_file *fh = open_files.head; fh; fh = fh->next_open)
        fn(fh, arg);
    io_files_unlock();
}

/* What a file still open owes the file system when the program ends. */
static void flush_at_finalize(pario_file *fh, void *arg) {
    (void)arg;
    io_async_drain(fh);
    io_coll_kept_write_own(fh);
    io_trace_finalize(fh);                 /* this rank's part of its trace, after its last write */
    io_cache_finalize(&fh->io, &fh->last); /* this owner's cached pages */
}

static int finalize_begins(MPI_Comm comm, int keyval, void *value, void *extra) {
    (void)comm;
    (void)keyval;
    (void)value;
    (void)extra;
    io_coll_kept_finalize(); /* first: no background writer runs beside this walk */
    io_files_each(flush_at_finalize, NULL);
    io_parked_finalize(); /* parked communicators and windows, while MPI still works */
    atomic_store(&finalize_begun, 1);
    return MPI_SUCCESS;
}

static void watch_create(void) {
    int keyval = MPI_KEYVAL_INVALID;
    watching = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_begins, &keyval, NULL) ==
                   MPI_SUCCESS &&
               MPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL) == MPI_SUCCESS;
}

int io_files_watch_finalize(void) {
    pthread_once(&watch_once, watch_create);
    return watching;
}

int io_files_finalizing(void) {
    return atomic_load(&finalize_begun);
}
