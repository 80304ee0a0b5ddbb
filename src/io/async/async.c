#include "io/async/async.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include "common/error.h"
#include "io/cache/cache.h"
#include "io/coll/coll.h"
#include "io/datarep/convert.h"
#include "io/indep/access.h"
#include "io/trace/trace.h"

struct pario_request {
    pario_request *next; /* queue link */
    pario_file snap;     /* the file as it was when the access started */
    int write;
    int64_t pos; /* stream byte of the view where the access starts */
    void *buf;
    MPI_Count count;
    const flat_type *mt; /* the memory datatype, decoded in the caller's thread */
    int64_t moved;
    int rc;
    atomic_int done;
    int detached;    /* freed by its owner before it finished: the thread frees it */
    io_async *owner; /* the thread it was queued on; NULL when it ran in the call */
};

/* One file's background thread and its queue. */
struct io_async {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;     /* work queued, or stop */
    pthread_cond_t finished; /* a request finished */
    pario_request *head, *tail;
    int64_t unfinished; /* queued or running */
    int stop;
    io_scratch scratch; /* the thread's own buffers, reused across requests */
};

static void request_run(io_async *a, pario_request *r) {
    r->snap.scratch = a->scratch;
    r->rc = io_access_flat(&r->snap, r->write, r->pos, r->buf, r->count, r->mt, &r->moved);
    a->scratch = r->snap.scratch;
    r->snap.scratch = (io_scratch){0};
    flat_release(r->mt);
    r->mt = NULL;
}

static pario_request *queue_pop(io_async *a) {
    pario_request *r = a->head;
    a->head = r->next;
    if (!a->head)
        a->tail = NULL;
    r->next = NULL;
    return r;
}

static void *async_main(void *arg) {
    io_async *a = arg;
    pthread_mutex_lock(&a->lock);
    for (;;) {
        while (!a->head && !a->stop)
            pthread_cond_wait(&a->wake, &a->lock);
        if (!a->head)
            break;
        pario_request *r = queue_pop(a);
        pthread_mutex_unlock(&a->lock);
        request_run(a, r);
        pthread_mutex_lock(&a->lock);
        /* Read before done is set: from then on the owner may free r
         * (pario_request_wait sees done without taking the lock). */
        int detached = r->detached;
        atomic_store(&r->done, 1);
        a->unfinished--;
        if (detached)
            free(r);
        pthread_cond_broadcast(&a->finished);
    }
    pthread_mutex_unlock(&a->lock);
    return NULL;
}

/* The file's thread, started on first use; NULL when it cannot be made. */
static io_async *async_of(pario_file *fh) {
    if (fh->async)
        return fh->async;
    io_async *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    pthread_mutex_init(&a->lock, NULL);
    pthread_cond_init(&a->wake, NULL);
    pthread_cond_init(&a->finished, NULL);
    if (pthread_create(&a->thread, NULL, async_main, a) != 0) {
        pthread_cond_destroy(&a->finished);
        pthread_cond_destroy(&a->wake);
        pthread_mutex_destroy(&a->lock);
        free(a);
        return NULL;
    }
    fh->async = a;
    return a;
}

static void queue_push(io_async *a, pario_request *r) {
    pthread_mutex_lock(&a->lock);
    if (a->tail)
        a->tail->next = r;
    else
        a->head = r;
    a->tail = r;
    a->unfinished++;
    pthread_cond_signal(&a->wake);
    pthread_mutex_unlock(&a->lock);
}

/* Hand the request to the file's thread, or run it here when there is none. */
static void request_submit(pario_file *fh, pario_request *r) {
    io_async *a = io_cache_on(&fh->io) ? NULL : async_of(fh); /* the cache communicates */
    if (a) {
        r->owner = a;
        queue_push(a, r);
        return;
    }
    io_async local = {0};
    request_run(&local, r);
    io_scratch_free(&local.scratch);
    atomic_store(&r->done, 1);
}

static pario_request *request_new(pario_file *fh, const rw_call *c, void *buf, MPI_Count count,
                                  const flat_type *mt) {
    pario_request *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->snap = *fh;
    r->snap.scratch = (io_scratch){0};
    r->snap.async = NULL;
    pario_error_clear(&r->snap.last);
    r->write = c->write;
    r->pos = (c->explicit_offset ? c->offset : fh->fp) * fh->view.etype_size;
    r->buf = buf;
    r->count = count;
    r->mt = mt;
    flat_retain(mt);
    return r;
}

/* A converting view: the conversion may run the program's own functions,
 * which may call MPI, so the access runs in the call; the request is born
 * finished. */
static int run_in_call(pario_file *fh, const rw_call *c, void *buf, MPI_Count count,
                       MPI_Datatype type, pario_request **req) {
    pario_request *r = calloc(1, sizeof *r);
    if (!r)
        return io_file_result(fh, pario_fail(&fh->last, PARIO_ERR_NO_MEM,
                                             "%s %s: no memory for a request", c->op, fh->path));
    MPI_Count bytes = 0;
    int rc = io_rw_independent(fh, c, buf, count, type, &bytes);
    if (rc != PARIO_OK) {
        free(r);
        return rc;
    }
    r->moved = bytes;
    atomic_store(&r->done, 1);
    *req = r;
    return PARIO_OK;
}

int io_rw_start(pario_file *fh, const rw_call *c, void *buf, MPI_Count count, MPI_Datatype type,
                pario_request **req) {
    const flat_type *mt = NULL;
    *req = NULL;
    if (io_datarep_applies(fh, type))
        return run_in_call(fh, c, buf, count, type, req);
    pario_error_clear(&fh->last);
    int rc = io_rw_check(fh, c, count, type);
    if (rc == PARIO_OK) /* this rank's kept collective writes come first */
        rc = io_coll_kept_write_own(fh);
    if (rc == PARIO_OK && (rc = flat_get_committed(type, fh->comm, &mt)) != PARIO_OK)
        pario_fail(&fh->last, rc, "%s %s: cannot decode the memory datatype", c->op, fh->path);
    pario_request *r = rc == PARIO_OK ? request_new(fh, c, buf, count, mt) : NULL;
    if (rc == PARIO_OK && !r)
        rc = pario_fail(&fh->last, PARIO_ERR_NO_MEM, "%s %s: no memory for a request", c->op,
                        fh->path);
    if (rc != PARIO_OK)
        return io_file_result(fh, rc);
    io_trace_call(fh, c, 0, 1, r->pos, (int64_t)count * mt->size, PARIO_OK,
                  io_trace_clock(fh->trace), NULL);
    if (!c->explicit_offset) /* the pointer moves by the amount requested, now */
        fh->fp += (int64_t)count * mt->size / fh->view.etype_size;
    if (c->write) /* the request writes through a copy of the handle: the file's own
                     marks say so for the sync (which drains the requests first) */
        io_mark_written(&fh->io);
    request_submit(fh, r);
    *req = r;
    return PARIO_OK;
}

void io_async_drain(pario_file *fh) {
    io_async *a = fh->async;
    if (!a)
        return;
    pthread_mutex_lock(&a->lock);
    while (a->unfinished > 0)
        pthread_cond_wait(&a->finished, &a->lock);
    pthread_mutex_unlock(&a->lock);
}

void io_async_stop(pario_file *fh) {
    io_async *a = fh->async;
    if (!a)
        return;
    pthread_mutex_lock(&a->lock);
    a->stop = 1;
    pthread_cond_signal(&a->wake);
    pthread_mutex_unlock(&a->lock);
    pthread_join(a->thread, NULL); /* the thread finishes the queue before it stops */
    io_scratch_free(&a->scratch);
    pthread_cond_destroy(&a->finished);
    pthread_cond_destroy(&a->wake);
    pthread_mutex_destroy(&a->lock);
    free(a);
    fh->async = NULL;
}

int pario_request_test(const pario_request *req, int *done) {
    if (!req || !done)
        return PARIO_ERR_ARG;
    *done = atomic_load(&req->done);
    return PARIO_OK;
}

/* Block until r is done. A request run without a thread is done already,
 * and so is every request of a closed file (close drains). */
static void request_wait(pario_request *r) {
    io_async *a = r->owner;
    if (atomic_load(&r->done))
        return;
    pthread_mutex_lock(&a->lock);
    while (!atomic_load(&r->done))
        pthread_cond_wait(&a->finished, &a->lock);
    pthread_mutex_unlock(&a->lock);
}

int pario_request_wait(pario_request *req, MPI_Count *bytes, pario_error *err) {
    if (!req)
        return PARIO_ERR_ARG;
    request_wait(req);
    int rc = req->rc;
    if (bytes)
        *bytes = req->moved;
    if (err)
        *err = req->snap.last;
    free(req);
    return rc;
}

/* ---- the public starters -------------------------------------------------------- */

int pario_file_iread_at(pario_file *fh, MPI_Offset offset, void *buf, MPI_Count count,
                        MPI_Datatype type, pario_request **req) {
    rw_call c = {"iread_at", 0, 1, 0, offset};
    return io_rw_start(fh, &c, buf, count, type, req);
}

int pario_file_iwrite_at(pario_file *fh, MPI_Offset offset, const void *buf, MPI_Count count,
                         MPI_Datatype type, pario_request **req) {
    rw_call c = {"iwrite_at", 1, 1, 0, offset};
    return io_rw_start(fh, &c, (void *)buf, count, type, req);
}

int pario_file_iread(pario_file *fh, void *buf, MPI_Count count, MPI_Datatype type,
                     pario_request **req) {
    rw_call c = {"iread", 0, 0, 0, 0};
    return io_rw_start(fh, &c, buf, count, type, req);
}

int pario_file_iwrite(pario_file *fh, const void *buf, MPI_Count count, MPI_Datatype type,
                      pario_request **req) {
    rw_call c = {"iwrite", 1, 0, 0, 0};
    return io_rw_start(fh, &c, (void *)buf, count, type, req);
}

void pario_request_free(pario_request *req) {
    if (!req)
        return;
    io_async *a = req->owner;
    if (a)
        pthread_mutex_lock(&a->lock);
    int done = atomic_load(&req->done);
    req->detached = !done;
    if (a)
        pthread_mutex_unlock(&a->lock);
    if (done)
        free(req);
}
