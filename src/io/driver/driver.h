/* Storage drivers: the small table of operations the io layer needs from a
 * file system. `posix` stores a file as one file; other drivers (striping
 * over several targets) implement the same table. Every driver makes its
 * storage system calls through sys.h (io_sys_pwrite, ...) and calls
 * io_sys_setup on open, so the fault injection of the tests reaches it. */
#ifndef PARIO_IO_DRIVER_H
#define PARIO_IO_DRIVER_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/uio.h>
#include "pario/pario.h"

typedef struct io_driver io_driver;

/* One open file of a driver. `err` receives messages naming `path`. */
typedef struct io_handle {
    const io_driver *drv;
    const char *path;             /* owned by the caller; outlives the handle */
    int fd;                       /* posix: the file descriptor */
    int readable;                 /* opened with read access (data sieving needs it for writes) */
    int regular;                  /* a regular file (not a device, pipe or socket) */
    uint64_t dev;                 /* the device of its file system (st_dev), 0 when unknown */
    uint64_t ino;                 /* posix: its inode number (st_ino), 0 when unknown */
    int64_t blksize;              /* its preferred I/O size (st_blksize), 0 when unknown */
    int deferred;                 /* IO_OPEN_* flags of a deferred open (io_posix_defer), else 0 */
    int reserve_measured;         /* on a file system where reserving blocks before a large
                                     write was measured to pay (ext4) */
    int local_disk;               /* on a local disk file system (ext2/3/4, XFS, Btrfs, tmpfs,
                                     overlayfs), where byte-range locks and the bytes under them are
                                     coherent between processes; 0: a network one, or unknown */
    int cache_fs;                 /* its file system's clients cache data between opens (NFS,
                                     SMB: close-to-open consistency) */
    int cache_wish;               /* pario_client_cache: > 0 the client caches, < 0 it does not,
                                     0 the file system's type says (cache_fs) */
    int read_exact;               /* posix: kernel read-ahead is off (where the client caches) */
    _Atomic int unflushed;        /* posix, where the client caches: written since the last
                                     fdatasync or fsync */
    _Atomic int64_t prealloc_min; /* writes of at least this many bytes reserve their
                                     blocks first (the file's size kept); < 0: never.
                                     Set from the hints; writers of any thread read it */
    _Atomic int unsynced;         /* posix: something may have been written, truncated or
                                     created through this handle since its last sync */
    const io_driver *below;       /* a layer over the storage (io/cache): the driver it passes
                                     the storage calls to; NULL without one */
    void *layer;                  /* that layer's state */
    /* Striped files (stripe.c): set by the caller before open, the layout a new file
     * is given; NULL: a file is never created striped. */
    const struct io_stripe_wish *stripe_wish;
    struct io_stripe_file *stripe; /* the open layout and its objects; NULL: not striped */
} io_handle;

/* Flags for io_driver.open, independent of the MPI amode bits. */
enum {
    IO_OPEN_READ = 1 << 0,
    IO_OPEN_WRITE = 1 << 1,
    IO_OPEN_CREATE = 1 << 2,
    IO_OPEN_EXCL = 1 << 3,
};

struct io_driver {
    const char *name;
    int (*open)(io_handle *h, const char *path, int flags, pario_error *err);
    int (*close)(io_handle *h, pario_error *err);
    /* Transfer exactly len bytes at off (reads may stop short at end of file:
     * *done says how many bytes were read). */
    int (*pread)(io_handle *h, void *buf, int64_t len, int64_t off, int64_t *done,
                 pario_error *err);
    int (*pwrite)(io_handle *h, const void *buf, int64_t len, int64_t off, pario_error *err);
    /* Write iovcnt buffers to consecutive bytes starting at off. */
    int (*pwritev)(io_handle *h, const struct iovec *iov, int iovcnt, int64_t off,
                   pario_error *err);
    int (*sync)(io_handle *h, pario_error *err);
    int (*get_size)(io_handle *h, int64_t *size, pario_error *err);
    int (*set_size)(io_handle *h, int64_t size, pario_error *err);
    int (*preallocate)(io_handle *h, int64_t size, pario_error *err);
    /* Byte-range lock (exclusive when `write`), blocking; len 0 means to the end. */
    int (*lock)(io_handle *h, int64_t off, int64_t len, int write, pario_error *err);
    int (*unlock)(io_handle *h, int64_t off, int64_t len, pario_error *err);
    /* Drops what this process's client caches of bytes [off, off + len) of the
     * file (len 0: to its end), so that later reads ask the storage: where it
     * caches between opens, the half of MPI_File_sync that makes the others'
     * synced writes visible. NULL: it caches nothing. */
    void (*drop_cached)(io_handle *h, int64_t off, int64_t len);
    /* Where the client caches between opens, makes what was written through h
     * since its last flush reach the storage (fdatasync), for other clients to
     * read. NULL: every write reaches it at once. */
    int (*flush)(io_handle *h, pario_error *err);
    int (*remove)(const char *path, pario_error *err);
    /* Preferred I/O size of the storage under path (file system block size). */
    int64_t (*block_size)(const char *path);
    /* h's cache_wish and prealloc_min were set from the hints: passes them to
     * the handles h is made of (a striped file's objects). NULL: none. */
    void (*apply)(io_handle *h);
};

/* Something may have been written, truncated or created through h since its
 * last sync (and, where the client caches, since its last flush). */
static inline void io_mark_written(io_handle *h) {
    atomic_store(&h->unsynced, 1);
    atomic_store(&h->unflushed, 1);
}

/* Whether h's client caches file data between opens: there a write reaches
 * the storage at fsync or close, and a read may be served from what the
 * client read before. */
static inline int io_client_caches(const io_handle *h) {
    return h->cache_wish > 0 || (h->cache_wish == 0 && h->cache_fs);
}

extern const io_driver io_driver_posix;
extern const io_driver io_driver_stripe;

/* Opens path with the driver the file needs (select.c): the stripe driver
 * when `stripe` (the name had the "stripe:" prefix), when the file holds a
 * stripe layout record, or when it is created empty here and h->stripe_wish
 * names targets; else posix. */
int io_driver_open(io_handle *h, const char *path, int flags, int stripe, pario_error *err);
/* Removes the file at path with the driver it needs (a striped file: its
 * objects, then its layout record). */
int io_driver_remove(const char *path, pario_error *err);

/* A posix handle that opens path with flags (less CREATE and EXCL) at its
 * first operation that needs the file; sync and close before that do
 * nothing. ROMIO's deferred open: romio_no_indep_rw. */
void io_posix_defer(io_handle *h, const char *path, int flags);

#endif
