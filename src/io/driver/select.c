/* Which driver a file needs: one small decision, made at open and delete. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "common/error.h"
#include "io/driver/driver.h"
#include "io/driver/stripe.h"

/* Whether a file just opened plain is to be striped: it holds a layout
 * record, or it is empty, created by this open, with targets wished for. */
static int wants_stripe(const io_handle *h, int flags) {
    if (io_stripe_is_record(h->fd))
        return 1;
    int wished = h->stripe_wish && h->stripe_wish->targets && h->stripe_wish->targets[0];
    return wished && (flags & IO_OPEN_CREATE) && h->regular && lseek(h->fd, 0, SEEK_END) == 0;
}

/* Opens path plain; *made: this call created it. Only an open that may
 * stripe a new file asks (one more open call when the file exists): a
 * striped open that fails must not leave behind a name it made. */
static int open_plain(io_handle *h, const char *path, int flags, int *made, pario_error *err) {
    int wished = h->stripe_wish && h->stripe_wish->targets && h->stripe_wish->targets[0];
    *made = 0;
    if (wished && (flags & IO_OPEN_CREATE) && !(flags & IO_OPEN_EXCL)) {
        pario_error ignored;
        if (io_driver_posix.open(h, path, flags | IO_OPEN_EXCL, &ignored) == PARIO_OK) {
            *made = 1;
            return PARIO_OK;
        }
    }
    int rc = io_driver_posix.open(h, path, flags, err);
    *made = rc == PARIO_OK && (flags & IO_OPEN_EXCL);
    return rc;
}

int io_driver_open(io_handle *h, const char *path, int flags, int stripe, pario_error *err) {
    if (stripe)
        return io_driver_stripe.open(h, path, flags, err);
    int made = 0;
    int rc = open_plain(h, path, flags, &made, err);
    if (rc != PARIO_OK || !wants_stripe(h, flags))
        return rc;
    io_driver_posix.close(h, NULL);
    rc = io_driver_stripe.open(h, path, flags & ~IO_OPEN_EXCL, err);
    if (rc != PARIO_OK && made)
        unlink(path); /* the empty record this open made */
    return rc;
}

int io_driver_remove(const char *path, pario_error *err) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int striped = fd >= 0 && io_stripe_is_record(fd);
    if (fd >= 0)
        close(fd);
    return striped ? io_driver_stripe.remove(path, err) : io_driver_posix.remove(path, err);
}
