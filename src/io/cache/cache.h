/* Layers over the storage of an open file, put in place at open when the
 * hints ask for them. Each is a driver (io/driver/driver.h) that passes the
 * storage calls it cannot answer to the driver below it (h->below), so every
 * io path (views, sieving, two-phase, shared pointers, locks) runs over it
 * unchanged.
 *
 * The global cache (pario_cache=enable; cache.c): the file is cut into pages
 * of pario_cache_page_size bytes and page k belongs to process k mod P of
 * the file's P processes, in slot (k / P) mod pario_cache_pages of an MPI
 * window there. Every read and write of a page goes to that one copy under
 * a passive-target lock of its owner (so an owner busy computing stalls no
 * one); the first process to touch a page fills it from storage, a page is
 * written back whole (up to the end of its data) when its slot is taken by
 * another page and by its owner at sync, close and MPI_Finalize. Its calls
 * make MPI calls: collective calls over it go independent and nonblocking
 * ones run in the call (no background thread touches it).
 *
 * Reading once per node (pario_read_once=enable, read-only files; once.c):
 * the first process of a node that reads the file reads all of it into a
 * shared-memory window of the node; every read on the node, independent or
 * collective, is then a copy from there. */
#ifndef PARIO_IO_CACHE_H
#define PARIO_IO_CACHE_H

#include <mpi.h>
#include "io/driver/driver.h"
#include "io/hints/hints.h"

/* Collective over comm, after the storage is open on every rank: puts the
 * read-once copy (read-only file, pario_read_once=enable) or else the global
 * cache (pario_cache=enable) over h. Nothing when the hints do not ask for
 * either. The caller agrees on the outcome. */
int io_cache_attach(io_handle *h, MPI_Comm comm, const io_hints *hints, int amode,
                    pario_error *err);
/* Whether the hints ask for either (the same on every rank with agreed hints). */
int io_cache_wanted(const io_hints *hints, int amode);

/* Whether h goes through the global cache, whose calls communicate: only
 * the program's thread may make them. */
int io_cache_on(const io_handle *h);
/* Where h goes through the global cache: forget how long the file was seen
 * to be (at sync, and on every process before set_size, which may shrink it). */
void io_cache_size_forget(io_handle *h);
/* Whether h reads through its node's copy (reading once per node). */
int io_cache_once_on(const io_handle *h);
/* Reading once per node over h: at open for pario_read_once=enable (span
 * < 0), or chosen by the access pattern (io/coll/route.c), then only where
 * the `span` bytes the ranks ask for in common are a piece (1 MiB) or more,
 * or half of a smaller file. Collective on comm, the outcome the same on
 * every rank (io_cache_once_on says which): a file larger than
 * read_once_max, or a window that cannot be made, leaves h as it was, since
 * it is advice. */
int io_cache_attach_once(io_handle *h, MPI_Comm comm, const io_hints *hints, int64_t span);

/* At MPI_Finalize for a file never closed: the owner writes its dirty pages
 * back (no collective call; the other processes finalize in any order). */
int io_cache_finalize(io_handle *h, pario_error *err);

/* Cache layers (internal to io/cache). */
int io_cache_attach_global(io_handle *h, MPI_Comm comm, const io_hints *hints, pario_error *err);
extern const io_driver io_driver_cache;
/* What both layers pass straight to the driver below them (below.c). A layer
 * is put over a file already open, so its open only refuses. */
int io_below_open(io_handle *h, const char *path, int flags, pario_error *err);
int io_below_lock(io_handle *h, int64_t off, int64_t len, int write, pario_error *err);
int io_below_unlock(io_handle *h, int64_t off, int64_t len, pario_error *err);
void io_below_drop_cached(io_handle *h, int64_t off, int64_t len);
int io_below_flush(io_handle *h, pario_error *err);
int io_below_remove(const char *path, pario_error *err);
int64_t io_below_block_size(const char *path);
extern const io_driver io_driver_once;

#endif
