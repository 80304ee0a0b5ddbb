/* Asynchronous pgas io calls: at most one per file. The starting call moves
 * the bytes (as the io layer's nonblocking collective calls do) and keeps the
 * outcome; fwait_async and ftest_async hand it out. */
#include "pgas/io/pgas_io_internal.h"

#include <string.h>

/* PARIO_OK when an asynchronous call may start on fd. */
static int may_start(pario_pgas_file *fd, const char *what) {
    return fd ? pio_check_usable(fd, what) : PARIO_ERR_FILE;
}

/* The outcome of the call just made (its bytes at *bytes), kept for the wait. */
static int keep_outcome(pario_pgas_file *fd, int rc, const pario_pgas_off *bytes) {
    fd->async_outstanding = 1;
    fd->async_rc = rc;
    fd->async_bytes = rc == PARIO_OK ? *bytes : -1;
    fd->async_err = fd->last;
    fd->async_err.code = rc;
    return PARIO_OK;
}

int pario_pgas_fread_local_async(pario_pgas_file *fd, void *buffer, size_t size, size_t nmemb,
                                 int sync) {
    pario_pgas_off n = 0;
    int rc = may_start(fd, "pario_pgas_fread_local_async");
    return rc ? rc
              : keep_outcome(fd, pario_pgas_fread_local(fd, buffer, size, nmemb, sync, &n), &n);
}

int pario_pgas_fwrite_local_async(pario_pgas_file *fd, const void *buffer, size_t size,
                                  size_t nmemb, int sync) {
    pario_pgas_off n = 0;
    int rc = may_start(fd, "pario_pgas_fwrite_local_async");
    return rc ? rc
              : keep_outcome(fd, pario_pgas_fwrite_local(fd, buffer, size, nmemb, sync, &n), &n);
}

int pario_pgas_fread_shared_async(pario_pgas_file *fd, pario_pgas_ptr buffer, size_t blocksize,
                                  size_t size, size_t nmemb, int sync) {
    pario_pgas_off n = 0;
    int rc = may_start(fd, "pario_pgas_fread_shared_async");
    return rc ? rc
              : keep_outcome(
                    fd, pario_pgas_fread_shared(fd, buffer, blocksize, size, nmemb, sync, &n), &n);
}

int pario_pgas_fwrite_shared_async(pario_pgas_file *fd, pario_pgas_ptr buffer, size_t blocksize,
                                   size_t size, size_t nmemb, int sync) {
    pario_pgas_off n = 0;
    int rc = may_start(fd, "pario_pgas_fwrite_shared_async");
    return rc ? rc
              : keep_outcome(
                    fd, pario_pgas_fwrite_shared(fd, buffer, blocksize, size, nmemb, sync, &n), &n);
}

int pario_pgas_fread_list_local_async(pario_pgas_file *fd, size_t nm,
                                      const pario_pgas_local_memvec *memvec, size_t nf,
                                      const pario_pgas_filevec *filevec, int sync) {
    pario_pgas_off n = 0;
    int rc = may_start(fd, "pario_pgas_fread_list_local_async");
    return rc ? rc
              : keep_outcome(fd, pario_pgas_fread_list_local(fd, nm, memvec, nf, filevec, sync, &n),
                             &n);
}

int pario_pgas_fwrite_list_local_async(pario_pgas_file *fd, size_t nm,
                                       const pario_pgas_local_memvec *memvec, size_t nf,
                                       const pario_pgas_filevec *filevec, int sync) {
    pario_pgas_off n = 0;
    int rc = may_start(fd, "pario_pgas_fwrite_list_local_async");
    return rc ? rc
              : keep_outcome(
                    fd, pario_pgas_fwrite_list_local(fd, nm, memvec, nf, filevec, sync, &n), &n);
}

int pario_pgas_fread_list_shared_async(pario_pgas_file *fd, size_t nm,
                                       const pario_pgas_shared_memvec *memvec, size_t nf,
                                       const pario_pgas_filevec *filevec, int sync) {
    pario_pgas_off n = 0;
    int rc = may_start(fd, "pario_pgas_fread_list_shared_async");
    return rc ? rc
              : keep_outcome(
                    fd, pario_pgas_fread_list_shared(fd, nm, memvec, nf, filevec, sync, &n), &n);
}

int pario_pgas_fwrite_list_shared_async(pario_pgas_file *fd, size_t nm,
                                        const pario_pgas_shared_memvec *memvec, size_t nf,
                                        const pario_pgas_filevec *filevec, int sync) {
    pario_pgas_off n = 0;
    int rc = may_start(fd, "pario_pgas_fwrite_list_shared_async");
    return rc ? rc
              : keep_outcome(
                    fd, pario_pgas_fwrite_list_shared(fd, nm, memvec, nf, filevec, sync, &n), &n);
}

/* Collective like the call it completes; every rank has the same state. */
int pario_pgas_fwait_async(pario_pgas_file *fd, pario_pgas_off *bytes) {
    if (!fd)
        return PARIO_ERR_FILE;
    int rc =
        fd->async_outstanding
            ? PARIO_OK
            : pio_fail(fd, PARIO_ERR_REQUEST,
                       "pario_pgas_fwait_async %s: no asynchronous call outstanding", fd->name);
    rc = pio_agree(fd, rc, NULL, 0);
    if (rc != PARIO_OK)
        return rc;
    fd->async_outstanding = 0;
    if (bytes)
        *bytes = fd->async_bytes;
    if (fd->async_rc != PARIO_OK)
        fd->last = fd->async_err;
    return fd->async_rc;
}

int pario_pgas_ftest_async(pario_pgas_file *fd, int *flag, pario_pgas_off *bytes) {
    if (!fd)
        return PARIO_ERR_FILE;
    int outstanding = fd->async_outstanding; /* the same on every rank */
    int rc = pario_pgas_fwait_async(fd, bytes);
    if (flag)
        *flag = outstanding;
    return rc;
}
