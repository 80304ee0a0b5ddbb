/* The shared file pointer in a side file, where MPI's one-sided calls do
 * not work between the file's processes (sharedfp.c probes that at open):
 * the counter is 8 bytes at offset 0 of a hidden file beside the data file,
 * ".NAME.pario-sfp-XXXXXX", read and rewritten under an exclusive byte-range
 * lock of the open file description, so updates from any node are atomic
 * wherever the file system keeps such locks coherent (what ROMIO's shared
 * pointer asks of it too). Rank 0 makes the file at open and removes it at
 * close; every rank keeps it open in between. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/error.h"
#include "io/driver/driver.h"
#include "io/file/file.h"
#include "io/shared/side.h"

/* Rank 0: a new side file beside fh->path; its name goes to `name`. */
static int side_create(const pario_file *fh, char *name, size_t len, pario_error *err) {
    char dir[PATH_MAX], base[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", fh->path);
    snprintf(base, sizeof base, "%s", fh->path);
    int n = snprintf(name, len, "%s/.%s.pario-sfp-XXXXXX", dirname(dir), basename(base));
    if (n < 0 || (size_t)n >= len)
        return pario_fail(err, PARIO_ERR_BAD_FILE,
                          "open %s: the path is too long for the "
                          "shared file pointer's side file",
                          fh->path);
    int fd = mkstemp(name);
    if (fd < 0)
        return pario_fail(err, PARIO_ERR_ACCESS,
                          "open %s: cannot create the shared file pointer's side file %s: %s",
                          fh->path, name, strerror(errno));
    int64_t zero = 0;
    int ok = pwrite(fd, &zero, sizeof zero, 0) == (ssize_t)sizeof zero;
    close(fd);
    if (!ok) {
        unlink(name);
        return pario_fail(err, PARIO_ERR_IO, "open %s: cannot write the side file %s", fh->path,
                          name);
    }
    return PARIO_OK;
}

int io_shared_side_make(pario_file *fh, pario_error *err) {
    char name[PATH_MAX] = "";
    int rc = fh->rank == 0 ? side_create(fh, name, sizeof name, err) : PARIO_OK;
    rc = io_agree(fh->comm, rc, err);
    if (rc != PARIO_OK)
        return rc;
    MPI_Bcast(name, (int)sizeof name, MPI_CHAR, 0, fh->comm);
    fh->shared_fd = open(name, O_RDWR | O_CLOEXEC);
    rc = fh->shared_fd >= 0 ? PARIO_OK
                            : pario_fail(err, PARIO_ERR_ACCESS,
                                         "open %s: cannot open the shared file pointer's side "
                                         "file %s: %s",
                                         fh->path, name, strerror(errno));
    if (fh->rank == 0)
        fh->shared_side = strdup(name);
    rc = io_agree(fh->comm, rc, err);
    if (rc != PARIO_OK)
        io_shared_side_free(fh);
    return rc;
}

void io_shared_side_free(pario_file *fh) {
    if (fh->shared_fd >= 0)
        close(fh->shared_fd);
    fh->shared_fd = -1;
    if (fh->shared_side) /* rank 0, once every rank is done with it (close is collective) */
        unlink(fh->shared_side);
    free(fh->shared_side);
    fh->shared_side = NULL;
}

static int side_lock(int fd, short type) {
    struct flock l = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 8};
    int rc;
    while ((rc = fcntl(fd, F_OFD_SETLKW, &l)) < 0 && errno == EINTR)
        ;
    return rc;
}

int io_shared_side_update(pario_file *fh, int replace, int64_t n, int64_t *old) {
    int fd = fh->shared_fd;
    int64_t now = 0;
    if (side_lock(fd, F_WRLCK) < 0)
        return pario_fail(&fh->last, PARIO_ERR_IO, "%s: cannot lock the shared file pointer: %s",
                          fh->path, strerror(errno));
    int caches = io_client_caches(&fh->io);
    if (caches) /* a client that caches: what another node wrote, not what this one read */
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    int ok = pread(fd, &now, sizeof now, 0) == (ssize_t)sizeof now;
    int64_t next = replace ? n : now + n;
    if (ok && next != now)
        ok = pwrite(fd, &next, sizeof next, 0) == (ssize_t)sizeof next &&
             (!caches || fdatasync(fd) == 0);
    int err = errno;
    side_lock(fd, F_UNLCK);
    if (!ok)
        return pario_fail(&fh->last, PARIO_ERR_IO,
                          "%s: cannot update the shared file pointer in its side file: %s",
                          fh->path, strerror(err));
    if (old)
        *old = now;
    return PARIO_OK;
}
