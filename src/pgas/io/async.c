/* Asynchronous pgas io calls: at most one per file. The starting call checks
 * and agrees on its arguments, makes the IN synchronisation and the views,
 * and hands each rank's bytes to the io layer's nonblocking accesses, which
 * move them in the file's background thread (it makes no MPI call, so any
 * thread level works) while the program computes. fwait_async (or an
 * ftest_async that finds every rank done) waits for them, agrees on the
 * outcome, and ends the call as a blocking one ends: result, OUT
 * synchronisation, pointer. */
#include "pgas/io/pgas_io_internal.h"

#include <stdlib.h>
#include <string.h>

/* PARIO_OK when an asynchronous call may start on fd (the same on every rank:
 * whether a call is outstanding is). */
static int may_start(pario_pgas_file *fd, const char *what) {
    return fd ? pio_check_usable(fd, what) : PARIO_ERR_FILE;
}

int pio_async_start(pario_pgas_file *fd, pio_call *c, int rc, int nrounds) {
    pio_async *a = &fd->async;
    *a = (pio_async){.outstanding = 1, .call = *c, .rc = rc};
    if (rc == PARIO_OK) {
        a->reqs = calloc((size_t)nrounds + 1, sizeof *a->reqs);
        a->rc = pio_job_start(fd, &a->call.job, nrounds, a->call.write, a->reqs, &a->nreqs);
    }
    if (a->rc != PARIO_OK)
        a->err = fd->last;
    return PARIO_OK;
}

/* Waits for this rank's requests: the first failure (start or transfer). */
static int wait_requests(pario_pgas_file *fd) {
    pio_async *a = &fd->async;
    int rc = a->rc;
    if (rc != PARIO_OK)
        fd->last = a->err;
    for (int i = 0; i < a->nreqs; i++) {
        pario_error err = {0};
        int r = pario_request_wait(a->reqs[i], NULL, &err);
        if (r != PARIO_OK && rc == PARIO_OK) {
            fd->last = err;
            fd->last.code = r;
            rc = r;
        }
    }
    free(a->reqs);
    a->reqs = NULL;
    a->nreqs = 0;
    return rc;
}

int pio_async_complete(pario_pgas_file *fd, pario_pgas_off *bytes) {
    int rc = pio_agree(fd, wait_requests(fd), NULL, 0);
    pio_call c = fd->async.call;
    fd->async = (pio_async){0};
    return pio_call_finish(fd, &c, rc, bytes);
}

/* 1 when every request of this rank has finished. */
static int requests_done(const pio_async *a) {
    for (int i = 0; i < a->nreqs; i++) {
        int done = 0;
        if (pario_request_test(a->reqs[i], &done) != PARIO_OK || !done)
            return 0;
    }
    return 1;
}

static int check_outstanding(pario_pgas_file *fd, const char *what) {
    int rc = fd->async.outstanding
                 ? PARIO_OK
                 : pio_fail(fd, PARIO_ERR_REQUEST, "%s %s: no asynchronous call outstanding", what,
                            fd->name);
    return pio_agree(fd, rc, NULL, 0);
}

int pario_pgas_fwait_async(pario_pgas_file *fd, pario_pgas_off *bytes) {
    if (!fd)
        return PARIO_ERR_FILE;
    int rc = check_outstanding(fd, "pario_pgas_fwait_async");
    return rc == PARIO_OK ? pio_async_complete(fd, bytes) : rc;
}

/* Collective: the call completes only when every rank's bytes have moved,
 * so *flag is the same on every rank. */
int pario_pgas_ftest_async(pario_pgas_file *fd, int *flag, pario_pgas_off *bytes) {
    if (!fd)
        return PARIO_ERR_FILE;
    if (flag)
        *flag = 0;
    int rc = check_outstanding(fd, "pario_pgas_ftest_async");
    uint64_t all_done = (uint64_t)requests_done(&fd->async);
    if (rc == PARIO_OK)
        rc = pio_agree(fd, PARIO_OK, &all_done, 1);
    if (rc != PARIO_OK || !all_done)
        return rc;
    if (flag)
        *flag = 1;
    return pio_async_complete(fd, bytes);
}

/* ---- the starting calls ---------------------------------------------------------------- */

static int async_local(pario_pgas_file *fd, const char *what, int write, void *buffer, size_t size,
                       size_t nmemb, int sync) {
    int rc = may_start(fd, what);
    if (rc != PARIO_OK)
        return rc;
    pio_call c = {.what = what, .write = write, .sync = sync, .use_pointer = 1, .async = 1};
    return pio_local_call(fd, &c, buffer, size, nmemb, NULL);
}

static int async_shared(pario_pgas_file *fd, const char *what, int write, pario_pgas_ptr buffer,
                        size_t blocksize, size_t size, size_t nmemb, int sync) {
    int rc = may_start(fd, what);
    if (rc != PARIO_OK)
        return rc;
    pio_call c = {.what = what, .write = write, .sync = sync, .use_pointer = 1, .async = 1};
    return pio_shared_call(fd, &c, buffer, blocksize, size, nmemb, NULL);
}

static int async_list(pario_pgas_file *fd, const char *what, int write, size_t nm,
                      const void *memvec, int shared, size_t nf, const pario_pgas_filevec *fv,
                      int sync) {
    int rc = may_start(fd, what);
    if (rc != PARIO_OK)
        return rc;
    pio_call c = {.what = what, .write = write, .sync = sync, .async = 1};
    return pio_list_call(fd, &c, nm, memvec, shared, nf, fv, NULL);
}

int pario_pgas_fread_local_async(pario_pgas_file *fd, void *buffer, size_t size, size_t nmemb,
                                 int sync) {
    return async_local(fd, "pario_pgas_fread_local_async", 0, buffer, size, nmemb, sync);
}

int pario_pgas_fwrite_local_async(pario_pgas_file *fd, const void *buffer, size_t size,
                                  size_t nmemb, int sync) {
    return async_local(fd, "pario_pgas_fwrite_local_async", 1, (void *)buffer, size, nmemb, sync);
}

int pario_pgas_fread_shared_async(pario_pgas_file *fd, pario_pgas_ptr buffer, size_t blocksize,
                                  size_t size, size_t nmemb, int sync) {
    return async_shared(fd, "pario_pgas_fread_shared_async", 0, buffer, blocksize, size, nmemb,
                        sync);
}

int pario_pgas_fwrite_shared_async(pario_pgas_file *fd, pario_pgas_ptr buffer, size_t blocksize,
                                   size_t size, size_t nmemb, int sync) {
    return async_shared(fd, "pario_pgas_fwrite_shared_async", 1, buffer, blocksize, size, nmemb,
                        sync);
}

int pario_pgas_fread_list_local_async(pario_pgas_file *fd, size_t nm,
                                      const pario_pgas_local_memvec *memvec, size_t nf,
                                      const pario_pgas_filevec *filevec, int sync) {
    return async_list(fd, "pario_pgas_fread_list_local_async", 0, nm, memvec, 0, nf, filevec, sync);
}

int pario_pgas_fwrite_list_local_async(pario_pgas_file *fd, size_t nm,
                                       const pario_pgas_local_memvec *memvec, size_t nf,
                                       const pario_pgas_filevec *filevec, int sync) {
    return async_list(fd, "pario_pgas_fwrite_list_local_async", 1, nm, memvec, 0, nf, filevec,
                      sync);
}

int pario_pgas_fread_list_shared_async(pario_pgas_file *fd, size_t nm,
                                       const pario_pgas_shared_memvec *memvec, size_t nf,
                                       const pario_pgas_filevec *filevec, int sync) {
    return async_list(fd, "pario_pgas_fread_list_shared_async", 0, nm, memvec, 1, nf, filevec,
                      sync);
}

int pario_pgas_fwrite_list_shared_async(pario_pgas_file *fd, size_t nm,
                                        const pario_pgas_shared_memvec *memvec, size_t nf,
                                        const pario_pgas_filevec *filevec, int sync) {
    return async_list(fd, "pario_pgas_fwrite_list_shared_async", 1, nm, memvec, 1, nf, filevec,
                      sync);
}
