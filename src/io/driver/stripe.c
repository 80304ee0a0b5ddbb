/* The stripe driver: a logical file stored as objects in several target
 * directories, RAID-0 with a stripe unit (layout in stripe.h). Each object
 * is a plain file opened through the posix driver, so every storage call
 * goes through sys.h and the fault injection of the tests reaches it. */
#include "io/driver/stripe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/error.h"
#include "io/driver/sys.h"

/* Memory segments handed to one object call at most. */
#define STRIPE_IOV_BATCH 256

/* ---- open and close ---------------------------------------------------------------- */

static void close_objects(io_stripe_file *s, int n) {
    for (int i = 0; i < n; i++)
        io_driver_posix.close(&s->objects[i], NULL);
}

static void stripe_free(io_handle *h) {
    if (!h->stripe)
        return;
    io_stripe_layout_free(&h->stripe->layout);
    free(h->stripe);
    h->stripe = NULL;
}

/* Opens every object; a new file's objects are created empty (and removed
 * again when a later one fails). */
static int open_objects(io_stripe_file *s, int flags, int fresh, pario_error *err) {
    int oflags = flags & (IO_OPEN_READ | IO_OPEN_WRITE);
    for (int i = 0; i < s->layout.factor; i++) {
        int rc = io_driver_posix.open(&s->objects[i], s->layout.objects[i],
                                      oflags | (fresh ? IO_OPEN_CREATE : 0), err);
        if (rc == PARIO_OK && fresh &&
            (rc = io_driver_posix.set_size(&s->objects[i], 0, err)) != PARIO_OK)
            io_driver_posix.close(&s->objects[i], NULL);
        if (rc != PARIO_OK) {
            close_objects(s, i);
            for (int made = 0; fresh && made < i; made++)
                unlink(s->layout.objects[made]); /* a failed open leaves nothing behind */
            return rc;
        }
    }
    return PARIO_OK;
}

/* Writes the record of a new layout into the empty file fd. */
static int write_record(int fd, const io_stripe_layout *l, const char *path, pario_error *err) {
    char buf[8192];
    int64_t n = io_stripe_layout_format(l, buf, sizeof buf);
    if (n < 0)
        return pario_fail(err, PARIO_ERR_ARG, "open %s: stripe layout too long", path);
    if (io_sys_pwrite(fd, buf, (size_t)n, 0) != (ssize_t)n || io_sys_fsync(fd) != 0)
        return pario_fail_errno(err, errno ? errno : EIO, "write layout of", path);
    return PARIO_OK;
}

/* The layout of the file at fd: its record, or for an empty file created
 * by this open, a new one from the wish (written to the record). */
static int load_layout(io_handle *h, int fd, int flags, int *fresh, pario_error *err) {
    io_stripe_layout *l = &h->stripe->layout;
    off_t size = lseek(fd, 0, SEEK_END);
    int wished = h->stripe_wish && h->stripe_wish->targets && h->stripe_wish->targets[0];
    *fresh = size == 0 && (flags & IO_OPEN_CREATE) && wished;
    if (size == 0 && !*fresh)
        return pario_fail(err, PARIO_ERR_ARG,
                          "open %s: a new striped file needs stripe targets "
                          "(hint pario_stripe_targets or $PARIO_STRIPE_TARGETS)",
                          h->path);
    if (!*fresh)
        return io_stripe_layout_read(fd, l, h->path, err);
    int rc = io_stripe_layout_plan(l, h->stripe_wish, h->path, err);
    if (rc == PARIO_OK && (rc = write_record(fd, l, h->path, err)) != PARIO_OK)
        io_stripe_layout_free(l);
    return rc;
}

/* Opens the record, creating it when asked; *created: by this call. */
static int open_record(const char *path, int flags, int *created) {
    int oflags = ((flags & IO_OPEN_WRITE) ? O_RDWR : O_RDONLY) | O_CLOEXEC;
    *created = 0;
    if (flags & IO_OPEN_CREATE) {
        int fd = open(path, oflags | O_CREAT | O_EXCL, 0666);
        if (fd >= 0 || errno != EEXIST || (flags & IO_OPEN_EXCL)) {
            *created = fd >= 0;
            return fd;
        }
    }
    return open(path, oflags);
}

static int stripe_open(io_handle *h, const char *path, int flags, pario_error *err) {
    io_sys_setup();
    int created = 0;
    int fd = open_record(path, flags, &created);
    if (fd < 0)
        return pario_fail_errno(err, errno, "open", path);
    h->path = path;
    h->stripe = calloc(1, sizeof *h->stripe);
    int fresh = 0;
    int rc = h->stripe ? load_layout(h, fd, flags, &fresh, err)
                       : pario_fail(err, PARIO_ERR_NO_MEM, "open %s: out of memory", path);
    if (rc == PARIO_OK && (rc = open_objects(h->stripe, flags, fresh, err)) != PARIO_OK)
        io_stripe_layout_free(&h->stripe->layout);
    if (rc != PARIO_OK) {
        free(h->stripe);
        h->stripe = NULL;
        close(fd);
        if (created)
            unlink(path); /* a name this call made must not stay behind empty */
        return rc;
    }
    h->drv = &io_driver_stripe;
    h->fd = fd;
    h->readable = (flags & IO_OPEN_READ) != 0;
    h->regular = h->local_disk = 1;
    h->cache_fs = 0;
    for (int i = 0; i < h->stripe->layout.factor; i++) {
        h->regular &= h->stripe->objects[i].regular;
        h->local_disk &= h->stripe->objects[i].local_disk;
        h->cache_fs |= h->stripe->objects[i].cache_fs;
    }
    h->reserve_measured = h->stripe->objects[0].reserve_measured;
    atomic_store_explicit(&h->prealloc_min, -1, memory_order_relaxed);
    return PARIO_OK;
}

static int stripe_close(io_handle *h, pario_error *err) {
    if (h->fd < 0)
        return PARIO_OK;
    int rc = PARIO_OK;
    for (int i = 0; i < h->stripe->layout.factor; i++) {
        int orc = io_driver_posix.close(&h->stripe->objects[i], err);
        rc = rc == PARIO_OK ? orc : rc;
    }
    if (close(h->fd) != 0 && rc == PARIO_OK)
        rc = pario_fail_errno(err, errno, "close", h->path);
    h->fd = -1;
    stripe_free(h);
    return rc;
}

/* ---- mapping logical bytes to objects ---------------------------------------------- */

/* The pieces of logical bytes [off, off + len) on one object: stripe by
 * stripe, consecutive in the object. */
typedef struct piece_walk {
    const io_stripe_layout *l;
    int64_t off, end; /* the logical range */
    int64_t stripe;   /* the object's next stripe */
} piece_walk;

static void walk_start(piece_walk *w, const io_stripe_layout *l, int obj, int64_t off,
                       int64_t len) {
    int64_t first = off / l->unit;
    *w = (piece_walk){.l = l, .off = off, .end = off + len};
    w->stripe = first + ((obj - first % l->factor) + l->factor) % l->factor;
}

/* The next piece: logical start, length and offset in the object. */
static int walk_next(piece_walk *w, int64_t *at, int64_t *len, int64_t *obj_off) {
    int64_t u = w->l->unit, s = w->stripe * u;
    if (s >= w->end)
        return 0;
    *at = s > w->off ? s : w->off;
    *len = (s + u < w->end ? s + u : w->end) - *at;
    *obj_off = w->stripe / w->l->factor * u + (*at - s);
    w->stripe += w->l->factor;
    return 1;
}

/* A forward-only cursor over memory segments holding consecutive logical
 * bytes from the write's offset. */
typedef struct iov_cursor {
    const struct iovec *iov;
    int cnt, i;
    int64_t base; /* logical position (from the write's offset) of iov[i] */
} iov_cursor;

/* Appends to out[*n..room) the segments of logical bytes from `at`
 * (relative to the write's offset), at most len of them; returns how many
 * bytes it appended. */
static int64_t cursor_take(iov_cursor *c, int64_t at, int64_t len, struct iovec *out, int *n,
                           int room) {
    while (c->i < c->cnt && c->base + (int64_t)c->iov[c->i].iov_len <= at)
        c->base += (int64_t)c->iov[c->i++].iov_len;
    int64_t took = 0, base = c->base;
    for (int i = c->i; took < len && i < c->cnt && *n < room; i++) {
        int64_t skip = at + took > base ? at + took - base : 0;
        int64_t seg = (int64_t)c->iov[i].iov_len - skip;
        seg = seg < len - took ? seg : len - took;
        out[(*n)++] = (struct iovec){(char *)c->iov[i].iov_base + skip, (size_t)seg};
        took += seg;
        base += (int64_t)c->iov[i].iov_len;
    }
    return took;
}

/* ---- data ------------------------------------------------------------------------- */

/* Writes object obj's pieces of logical [off, off + len), whose data is in
 * the segments of c: one call per STRIPE_IOV_BATCH segments (an object's
 * pieces are consecutive in it). */
static int write_object(io_handle *h, int obj, iov_cursor *c, int64_t off, int64_t len,
                        pario_error *err) {
    io_handle *o = &h->stripe->objects[obj];
    struct iovec batch[STRIPE_IOV_BATCH];
    int n = 0;
    int64_t start = 0, at, plen, ooff;
    piece_walk w;
    walk_start(&w, &h->stripe->layout, obj, off, len);
    while (walk_next(&w, &at, &plen, &ooff)) {
        while (plen > 0) {
            if (n == STRIPE_IOV_BATCH) {
                atomic_fetch_add_explicit(&h->stripe->data_calls[obj], 1, memory_order_relaxed);
                int rc = io_driver_posix.pwritev(o, batch, n, start, err);
                if (rc != PARIO_OK)
                    return rc;
                n = 0;
            }
            start = n == 0 ? ooff : start;
            int64_t took = cursor_take(c, at - off, plen, batch, &n, STRIPE_IOV_BATCH);
            at += took;
            ooff += took;
            plen -= took;
        }
    }
    if (n == 0)
        return PARIO_OK;
    atomic_fetch_add_explicit(&h->stripe->data_calls[obj], 1, memory_order_relaxed);
    return io_driver_posix.pwritev(o, batch, n, start, err);
}

static int stripe_pwritev(io_handle *h, const struct iovec *iov, int iovcnt, int64_t off,
                          pario_error *err) {
    int64_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += (int64_t)iov[i].iov_len;
    for (int obj = 0; obj < h->stripe->layout.factor && len > 0; obj++) {
        iov_cursor c = {.iov = iov, .cnt = iovcnt};
        int rc = write_object(h, obj, &c, off, len, err);
        if (rc != PARIO_OK)
            return rc;
    }
    return PARIO_OK;
}

static int stripe_pwrite(io_handle *h, const void *buf, int64_t len, int64_t off,
                         pario_error *err) {
    struct iovec one = {(void *)buf, (size_t)len};
    return stripe_pwritev(h, &one, 1, off, err);
}

static int stripe_get_size(io_handle *h, int64_t *size, pario_error *err) {
    const io_stripe_layout *l = &h->stripe->layout;
    int64_t end = 0;
    for (int i = 0; i < l->factor; i++) {
        int64_t osize = 0;
        int rc = io_driver_posix.get_size(&h->stripe->objects[i], &osize, err);
        if (rc != PARIO_OK)
            return rc;
        int64_t e = io_stripe_logical_end(l, i, osize);
        end = e > end ? e : end;
    }
    *size = end;
    return PARIO_OK;
}

/* Reads object obj's pieces of [off, off + len) into buf; a piece past the
 * object's end is zero-filled (a hole, or past the logical end) and *short_read set. */
static int read_object(io_handle *h, int obj, char *buf, int64_t off, int64_t len, int *short_read,
                       pario_error *err) {
    io_handle *o = &h->stripe->objects[obj];
    int64_t at, plen, ooff, got;
    piece_walk w;
    walk_start(&w, &h->stripe->layout, obj, off, len);
    while (walk_next(&w, &at, &plen, &ooff)) {
        atomic_fetch_add_explicit(&h->stripe->data_calls[obj], 1, memory_order_relaxed);
        int rc = io_driver_posix.pread(o, buf + (at - off), plen, ooff, &got, err);
        if (rc != PARIO_OK)
            return rc;
        if (got < plen) {
            memset(buf + (at - off) + got, 0, (size_t)(plen - got));
            *short_read = 1;
        }
    }
    return PARIO_OK;
}

static int stripe_pread(io_handle *h, void *buf, int64_t len, int64_t off, int64_t *done,
                        pario_error *err) {
    int short_read = 0;
    *done = 0;
    for (int obj = 0; obj < h->stripe->layout.factor && len > 0; obj++) {
        int rc = read_object(h, obj, buf, off, len, &short_read, err);
        if (rc != PARIO_OK)
            return rc;
    }
    int64_t size = off + len;
    if (short_read) { /* holes read as zeros up to the logical end, nothing past it */
        int rc = stripe_get_size(h, &size, err);
        if (rc != PARIO_OK)
            return rc;
    }
    *done = size <= off ? 0 : size - off < len ? size - off : len;
    return PARIO_OK;
}

/* ---- size, sync, locks, delete ---------------------------------------------------- */

static int stripe_sync(io_handle *h, pario_error *err) {
    for (int i = 0; i < h->stripe->layout.factor; i++) {
        int rc = io_driver_posix.sync(&h->stripe->objects[i], err);
        if (rc != PARIO_OK)
            return rc;
    }
    return PARIO_OK;
}

/* op (set_size or preallocate) on every object with its share of a
 * logical file of `size` bytes. */
static int each_object_share(io_handle *h, int64_t size,
                             int (*op)(io_handle *, int64_t, pario_error *), pario_error *err) {
    const io_stripe_layout *l = &h->stripe->layout;
    for (int i = 0; i < l->factor; i++) {
        int rc = op(&h->stripe->objects[i], io_stripe_share(l, i, size), err);
        if (rc != PARIO_OK)
            return rc;
    }
    return PARIO_OK;
}

/* Every object cut or extended to its share of the new size. */
static int stripe_set_size(io_handle *h, int64_t size, pario_error *err) {
    return each_object_share(h, size, io_driver_posix.set_size, err);
}

/* Every object given at least its share of `size` bytes, allocated. */
static int stripe_preallocate(io_handle *h, int64_t size, pario_error *err) {
    return each_object_share(h, size, io_driver_posix.preallocate, err);
}

/* The objects follow the hints set on the logical file: whether the
 * client caches, which writes reserve their blocks first. */
static void stripe_apply(io_handle *h) {
    if (!h->stripe)
        return;
    for (int i = 0; i < h->stripe->layout.factor; i++) {
        io_handle *o = &h->stripe->objects[i];
        o->cache_wish = h->cache_wish;
        atomic_store_explicit(&o->prealloc_min,
                              atomic_load_explicit(&h->prealloc_min, memory_order_relaxed),
                              memory_order_relaxed);
    }
}

/* Every object's bytes in the stripe rows that logical [off, off + len)
 * touches (len 0: to the end): from the first row's unit on each object to
 * the end of the last row's. */
static void stripe_drop_cached(io_handle *h, int64_t off, int64_t len) {
    const io_stripe_layout *l = &h->stripe->layout;
    int64_t row = l->unit * l->factor;
    int64_t first = off / row * l->unit;
    int64_t span = len > 0 ? ((off + len - 1) / row + 1) * l->unit - first : 0;
    for (int i = 0; i < l->factor; i++)
        io_driver_posix.drop_cached(&h->stripe->objects[i], first, span);
}

/* Locks live on the record at logical offsets: the same ranges, the same
 * exclusion as on a plain file (the posix driver's locks on its descriptor).
 * Where the client caches, the objects' data meets the storage at the lock
 * as a plain file's does (posix.c): dropped once granted, flushed before
 * the release. */
static int stripe_lock(io_handle *h, int64_t off, int64_t len, int write, pario_error *err) {
    io_handle record = {.fd = h->fd, .path = h->path};
    int rc = io_driver_posix.lock(&record, off, len, write, err);
    if (rc == PARIO_OK)
        stripe_drop_cached(h, off, len);
    return rc;
}

static int stripe_flush(io_handle *h, pario_error *err) {
    int frc = PARIO_OK;
    for (int i = 0; i < h->stripe->layout.factor; i++) {
        int rc = io_driver_posix.flush(&h->stripe->objects[i], err);
        frc = frc != PARIO_OK ? frc : rc;
    }
    return frc;
}

static int stripe_unlock(io_handle *h, int64_t off, int64_t len, pario_error *err) {
    int frc = stripe_flush(h, err);
    io_handle record = {.fd = h->fd, .path = h->path};
    int rc = io_driver_posix.unlock(&record, off, len, err);
    return frc != PARIO_OK ? frc : rc;
}

/* The objects first (a missing one is no error), then the record. */
static int stripe_remove(const char *path, pario_error *err) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return pario_fail_errno(err, errno, "delete", path);
    io_stripe_layout l;
    int rc = io_stripe_layout_read(fd, &l, path, err);
    close(fd);
    if (rc != PARIO_OK)
        return rc;
    for (int i = 0; rc == PARIO_OK && i < l.factor; i++)
        if (unlink(l.objects[i]) != 0 && errno != ENOENT)
            rc = pario_fail_errno(err, errno, "delete", l.objects[i]);
    io_stripe_layout_free(&l);
    return rc == PARIO_OK ? io_driver_posix.remove(path, err) : rc;
}

const io_driver io_driver_stripe = {
    .name = "stripe",
    .open = stripe_open,
    .close = stripe_close,
    .pread = stripe_pread,
    .pwrite = stripe_pwrite,
    .pwritev = stripe_pwritev,
    .sync = stripe_sync,
    .get_size = stripe_get_size,
    .set_size = stripe_set_size,
    .preallocate = stripe_preallocate,
    .lock = stripe_lock,
    .unlock = stripe_unlock,
    .drop_cached = stripe_drop_cached,
    .flush = stripe_flush,
    .remove = stripe_remove,
    .block_size = NULL, /* the unit is the layout's (io_handle.stripe) */
    .apply = stripe_apply,
};
