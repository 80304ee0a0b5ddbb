/* The calls a layer over the storage (io/cache) passes to the driver below. */
#include "common/error.h"
#include "io/cache/cache.h"

int io_below_open(io_handle *h, const char *path, int flags, pario_error *err) {
    (void)h;
    (void)flags;
    return pario_fail(err, PARIO_ERR_INTERN, "open %s: a cache layer is put over an open file",
                      path);
}

int io_below_lock(io_handle *h, int64_t off, int64_t len, int write, pario_error *err) {
    return h->below->lock(h, off, len, write, err);
}

int io_below_unlock(io_handle *h, int64_t off, int64_t len, pario_error *err) {
    return h->below->unlock(h, off, len, err);
}

void io_below_drop_cached(io_handle *h, int64_t off, int64_t len) {
    if (h->below->drop_cached)
        h->below->drop_cached(h, off, len);
}

int io_below_flush(io_handle *h, pario_error *err) {
    return h->below->flush ? h->below->flush(h, err) : PARIO_OK;
}

/* A file under a layer is a posix file (the layers are put over posix only). */
int io_below_remove(const char *path, pario_error *err) {
    return io_driver_posix.remove(path, err);
}

int64_t io_below_block_size(const char *path) {
    return io_driver_posix.block_size(path);
}
