/* The global cache: one copy of each file page, held by its owner (page k on
 * process k mod P) in an MPI window and reached by passive-target RMA. See
 * cache.h for what it promises. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "common/error.h"
#include "common/node.h"
#include "io/cache/cache.h"

/* What a slot holds: page -1 when empty; valid counts the page's bytes that
 * exist in the file (read from storage or written), which is what a write-back
 * stores, so no page ever extends the file past its data. */
typedef struct cache_slot {
    int64_t page, dirty, valid;
} cache_slot;

/* The start of every process's window. size is the file's size as the cache
 * sees it (used on process 0 only); failure the first write-back of one of
 * this owner's pages that failed while another process took its slot, for
 * the owner's next sync or close to report. */
typedef struct cache_head {
    _Atomic int64_t size;
    _Atomic int lock; /* on one node: the owner's lock (held: 1) */
    pario_error failure;
} cache_head;

/* Where the pages start in a window: past the head and the slots, on a
 * cache-line boundary. */
#define DATA_ALIGN 64

typedef struct cache_layer {
    MPI_Comm comm; /* a duplicate of the file's: the cache's own barriers */
    MPI_Win win;
    char *base;   /* this process's window */
    char **peers; /* on one node: every process's window in this address space (a
                     shared-memory window), reached with plain loads and stores
                     under the owner's lock in its head, which needs no MPI
                     progress anywhere; NULL: MPI RMA under MPI's locks */
    int rank, nranks;
    int64_t page_size, npages;
    MPI_Aint data_at;   /* byte where the pages start in every window */
    char *bounce;       /* one page: fills, write-backs of a page in another process */
    MPI_Comm file_comm; /* the file's communicator, where a close parks the layer */
    int64_t size_floor; /* the file is at least this long: this process saw the
                           size word there or wrote up to there (the word only
                           grows, but at set_size, which resets every floor) */
} cache_layer;

/* One access to one page. */
typedef struct page_access {
    int64_t page, at, len; /* the page, where in it and how many bytes */
    char *buf;
    int write;
    int owner;
    MPI_Aint slot_disp, data_disp;
} page_access;

static cache_layer *layer_of(io_handle *h) {
    return (cache_layer *)h->layer;
}

/* ---- reaching an owner's window: plain memory on one node, else RMA ---- */

/* The owner's window in this address space: every owner's on one node, and
 * this process's own (its own pages are reached with loads and stores under
 * its own lock, as the write-back at sync does); else NULL. */
static char *owner_memory(const cache_layer *c, int owner) {
    return c->peers ? c->peers[owner] : owner == c->rank ? c->base : NULL;
}

static int owner_lock(cache_layer *c, int owner) {
    if (!c->peers)
        return MPI_Win_lock(MPI_LOCK_EXCLUSIVE, owner, 0, c->win) == MPI_SUCCESS;
    _Atomic int *lock = &((cache_head *)c->peers[owner])->lock;
    int free_ = 0;
    while (!atomic_compare_exchange_weak_explicit(lock, &free_, 1, memory_order_acquire,
                                                  memory_order_relaxed)) {
        free_ = 0;
        sched_yield(); /* the holder may be waiting for this processor */
    }
    return 1;
}

static int owner_unlock(cache_layer *c, int owner) {
    if (!c->peers)
        return MPI_Win_unlock(owner, c->win) == MPI_SUCCESS;
    atomic_store_explicit(&((cache_head *)c->peers[owner])->lock, 0, memory_order_release);
    return 1;
}

/* Between owner_lock and owner_unlock: bytes from or to the owner's window.
 * RMA completes at owner_flush (or the unlock); plain copies at once. */
static void owner_get(cache_layer *c, void *to, int owner, MPI_Aint at, int64_t len) {
    char *mem = owner_memory(c, owner);
    if (mem)
        memcpy(to, mem + at, (size_t)len);
    else
        MPI_Get(to, (int)len, MPI_BYTE, owner, at, (int)len, MPI_BYTE, c->win);
}

static void owner_put(cache_layer *c, const void *from, int owner, MPI_Aint at, int64_t len) {
    char *mem = owner_memory(c, owner);
    if (mem)
        memcpy(mem + at, from, (size_t)len);
    else
        MPI_Put(from, (int)len, MPI_BYTE, owner, at, (int)len, MPI_BYTE, c->win);
}

static void owner_flush(cache_layer *c, int owner) {
    if (!owner_memory(c, owner))
        MPI_Win_flush(owner, c->win);
}

/* Where a page of the owner's window is read and written whole: in place
 * where the window is in this address space, else through the bounce page
 * (moved with owner_get/owner_put). */
static char *page_buffer(cache_layer *c, int owner, MPI_Aint data_disp) {
    char *mem = owner_memory(c, owner);
    return mem ? mem + data_disp : c->bounce;
}

static int mpi_failed(pario_error *err, const char *path, const char *what) {
    return pario_fail(err, PARIO_ERR_COMM, "cache %s: %s failed", path, what);
}

static cache_slot *own_slots(cache_layer *c) {
    return (cache_slot *)(c->base + sizeof(cache_head));
}

/* ---- the size of the file (a word on process 0) ---- */

/* The word read; this process's floor follows it. */
static int size_fetch(cache_layer *c, int64_t *size) {
    int64_t none = 0;
    if (c->peers) {
        *size = atomic_load(&((cache_head *)c->peers[0])->size);
    } else {
        int ok = MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, c->win) == MPI_SUCCESS;
        ok = ok &&
             MPI_Fetch_and_op(&none, size, MPI_INT64_T, 0, 0, MPI_NO_OP, c->win) == MPI_SUCCESS;
        if (!(MPI_Win_unlock(0, c->win) == MPI_SUCCESS && ok))
            return 0;
    }
    c->size_floor = *size;
    return 1;
}

/* The word set to size (MPI_REPLACE) or raised to it (MPI_MAX); this
 * process's floor follows what the word then holds. */
static int size_update(cache_layer *c, int64_t size, MPI_Op op) {
    int64_t was = 0;
    if (c->peers) {
        _Atomic int64_t *word = &((cache_head *)c->peers[0])->size;
        was = atomic_load(word);
        if (op == MPI_REPLACE)
            atomic_store(word, size);
        while (op == MPI_MAX && was < size && !atomic_compare_exchange_weak(word, &was, size))
            ;
    } else {
        int ok = MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, c->win) == MPI_SUCCESS;
        ok = ok && MPI_Fetch_and_op(&size, &was, MPI_INT64_T, 0, 0, op, c->win) == MPI_SUCCESS;
        if (!(MPI_Win_unlock(0, c->win) == MPI_SUCCESS && ok))
            return 0;
    }
    c->size_floor = op == MPI_MAX && was > size ? was : size;
    return 1;
}

/* Whether the file is known to reach end without asking process 0: the
 * size word only grows between set_size calls, so once this process has
 * seen it (or written) up to end, it still reaches there. Reads of
 * records that follow the page mapping then touch no other process. */
static int size_reaches(const cache_layer *c, int64_t end) {
    return end <= c->size_floor;
}

/* ---- one page under its owner's lock ---- */

static page_access page_locate(const cache_layer *c, int64_t off, int64_t len, char *buf,
                               int write) {
    page_access a = {.page = off / c->page_size, .buf = buf, .write = write};
    a.at = off - a.page * c->page_size;
    a.len = len < c->page_size - a.at ? len : c->page_size - a.at;
    a.owner = (int)(a.page % c->nranks);
    int64_t slot = (a.page / c->nranks) % c->npages;
    a.slot_disp = (MPI_Aint)(sizeof(cache_head) + slot * sizeof(cache_slot));
    a.data_disp = c->data_at + (MPI_Aint)(slot * c->page_size);
    return a;
}

/* Keep the first failed write-back of the owner's pages in its head. */
static void failure_record(cache_layer *c, int owner, const pario_error *e) {
    int code = 0;
    MPI_Aint at = (MPI_Aint)offsetof(cache_head, failure);
    owner_get(c, &code, owner, at, sizeof code);
    owner_flush(c, owner);
    if (code == PARIO_OK)
        owner_put(c, e, owner, at, sizeof *e);
}

/* Write the slot's page back to storage; on failure the page stays in its
 * slot, dirty, the owner's head records why and so does err (may be NULL). */
static int slot_write_back(io_handle *h, const page_access *a, cache_slot *s, pario_error *err) {
    cache_layer *c = layer_of(h);
    pario_error e;
    char *page = page_buffer(c, a->owner, a->data_disp);
    if (page == c->bounce) {
        owner_get(c, page, a->owner, a->data_disp, s->valid);
        owner_flush(c, a->owner);
    }
    int rc = h->below->pwrite(h, page, s->valid, s->page * c->page_size, &e);
    if (rc != PARIO_OK) {
        pario_fail(&e, rc,
                   "cache %s: writing back page %lld (file bytes %lld..%lld) failed: %.400s",
                   h->path, (long long)s->page, (long long)(s->page * c->page_size),
                   (long long)(s->page * c->page_size + s->valid), e.msg);
        failure_record(c, a->owner, &e);
        if (err)
            *err = e;
        return rc;
    }
    s->dirty = 0;
    return PARIO_OK;
}

/* Bring page a->page into its slot: write back what is there when dirty,
 * then read the page from storage unless the access overwrites all of it.
 * A write's bytes are patched in here, so the page moves in one put.
 * *bypass: the old page could not be written back, so this access goes to
 * storage itself (the page is not cached anywhere, so storage holds it). */
static int slot_fill(io_handle *h, page_access *a, cache_slot *s, int *bypass, pario_error *err) {
    cache_layer *c = layer_of(h);
    *bypass = 0;
    if (s->page >= 0 && s->dirty && slot_write_back(h, a, s, NULL) != PARIO_OK) {
        *bypass = 1;
        return PARIO_OK;
    }
    if (a->write && a->at == 0 && a->len == c->page_size) {
        *s = (cache_slot){a->page, 0, 0};
        return PARIO_OK;
    }
    int64_t got = 0;
    char *page = page_buffer(c, a->owner, a->data_disp);
    int rc = h->below->pread(h, page, c->page_size, a->page * c->page_size, &got, err);
    if (rc != PARIO_OK) {
        *s = (cache_slot){-1, 0, 0}; /* its old page is clean, and may be overwritten */
        return rc;
    }
    memset(page + got, 0, (size_t)(c->page_size - got));
    *s = (cache_slot){a->page, 0, got};
    if (a->write) {
        memcpy(page + a->at, a->buf, (size_t)a->len);
        s->dirty = 1;
        s->valid = a->at + a->len > got ? a->at + a->len : got;
        a->write = -1; /* done: the page below carries it */
    } else {
        memcpy(a->buf, page + a->at, (size_t)a->len);
        a->len = -a->len; /* done */
    }
    if (page == c->bounce)
        owner_put(c, page, a->owner, a->data_disp, c->page_size);
    return PARIO_OK;
}

/* Move the access's bytes between the caller and the slot (unless the fill
 * already did) and update the slot's state. */
static void slot_transfer(cache_layer *c, page_access *a, cache_slot *s) {
    if (a->write > 0) {
        owner_put(c, a->buf, a->owner, a->data_disp + a->at, a->len);
        s->dirty = 1;
        if (a->at + a->len > s->valid)
            s->valid = a->at + a->len;
    } else if (!a->write && a->len > 0) {
        owner_get(c, a->buf, a->owner, a->data_disp + a->at, a->len);
    }
}

static int storage_access(io_handle *h, page_access *a, pario_error *err) {
    int64_t off = a->page * layer_of(h)->page_size + a->at, got = 0;
    if (a->write)
        return h->below->pwrite(h, a->buf, a->len, off, err);
    int rc = h->below->pread(h, a->buf, a->len, off, &got, err);
    if (rc == PARIO_OK && got < a->len)
        memset(a->buf + got, 0, (size_t)(a->len - got)); /* a hole before the cached end */
    return rc;
}

static int page_access_run(io_handle *h, page_access *a, pario_error *err) {
    cache_layer *c = layer_of(h);
    cache_slot s;
    int bypass = 0, rc = PARIO_OK;
    if (!owner_lock(c, a->owner))
        return mpi_failed(err, h->path, "locking a page's owner");
    owner_get(c, &s, a->owner, a->slot_disp, sizeof s);
    owner_flush(c, a->owner);
    if (s.page != a->page)
        rc = slot_fill(h, a, &s, &bypass, err);
    if (rc == PARIO_OK && bypass)
        rc = storage_access(h, a, err);
    else if (rc == PARIO_OK)
        slot_transfer(c, a, &s);
    owner_put(c, &s, a->owner, a->slot_disp, sizeof s);
    if (!owner_unlock(c, a->owner) && rc == PARIO_OK)
        rc = mpi_failed(err, h->path, "unlocking a page's owner");
    return rc;
}

static int cache_range(io_handle *h, char *buf, int64_t len, int64_t off, int write,
                       pario_error *err) {
    while (len > 0) {
        page_access a = page_locate(layer_of(h), off, len, buf, write);
        int64_t n = a.len;
        int rc = page_access_run(h, &a, err);
        if (rc != PARIO_OK)
            return rc;
        off += n;
        buf += n;
        len -= n;
    }
    return PARIO_OK;
}

/* ---- the driver ---- */

static int cache_pread(io_handle *h, void *buf, int64_t len, int64_t off, int64_t *done,
                       pario_error *err) {
    cache_layer *c = layer_of(h);
    int64_t size = c->size_floor;
    *done = 0;
    if (!size_reaches(c, off + len) && !size_fetch(c, &size))
        return mpi_failed(err, h->path, "reading the file's size");
    if (off >= size)
        return PARIO_OK;
    if (len > size - off)
        len = size - off;
    int rc = cache_range(h, buf, len, off, 0, err);
    if (rc == PARIO_OK)
        *done = len;
    return rc;
}

static int cache_pwrite(io_handle *h, const void *buf, int64_t len, int64_t off, pario_error *err) {
    if (len <= 0)
        return PARIO_OK;
    /* the size first: whoever writes the page back meanwhile sees its end */
    if (!size_reaches(layer_of(h), off + len) && !size_update(layer_of(h), off + len, MPI_MAX))
        return mpi_failed(err, h->path, "recording the file's size");
    return cache_range(h, (char *)buf, len, off, 1, err);
}

static int cache_pwritev(io_handle *h, const struct iovec *iov, int iovcnt, int64_t off,
                         pario_error *err) {
    for (int i = 0; i < iovcnt; i++) {
        int rc = cache_pwrite(h, iov[i].iov_base, (int64_t)iov[i].iov_len, off, err);
        if (rc != PARIO_OK)
            return rc;
        off += (int64_t)iov[i].iov_len;
    }
    return PARIO_OK;
}

/* The owner writes its dirty pages back, and reports a failed write-back of
 * one of them by another process since the last time. */
static int write_back_own(io_handle *h, pario_error *err) {
    cache_layer *c = layer_of(h);
    if (!owner_lock(c, c->rank))
        return mpi_failed(err, h->path, "locking the own pages");
    cache_slot *slots = own_slots(c);
    cache_head *head = (cache_head *)c->base;
    int rc = PARIO_OK;
    for (int64_t i = 0; i < c->npages; i++) {
        cache_slot *s = &slots[i];
        if (s->page < 0 || !s->dirty)
            continue;
        pario_error e;
        int wrc = h->below->pwrite(h, c->base + c->data_at + i * c->page_size, s->valid,
                                   s->page * c->page_size, &e);
        if (wrc == PARIO_OK)
            s->dirty = 0;
        else if (rc == PARIO_OK)
            rc = pario_fail(err, wrc, "cache %s: writing back page %lld failed: %.400s", h->path,
                            (long long)s->page, e.msg);
    }
    if (head->failure.code != PARIO_OK) {
        if (rc == PARIO_OK) {
            rc = head->failure.code;
            if (err)
                *err = head->failure;
        }
        pario_error_clear(&head->failure);
    }
    owner_unlock(c, c->rank);
    return rc;
}

/* Collective: every process's writes into this owner's pages are in before
 * it writes them back. */
static int cache_sync(io_handle *h, pario_error *err) {
    if (MPI_Barrier(layer_of(h)->comm) != MPI_SUCCESS)
        return mpi_failed(err, h->path, "a barrier");
    int rc = write_back_own(h, err);
    return rc == PARIO_OK ? h->below->sync(h, err) : rc;
}

static void layer_free(cache_layer *c) {
    if (c->win != MPI_WIN_NULL)
        MPI_Win_free(&c->win);
    if (c->comm != MPI_COMM_NULL)
        MPI_Comm_free(&c->comm);
    free(c->peers);
    free(c->bounce);
    free(c);
}

/* ---- the layer kept for the next file ----------------------------------------------
 * Making a window costs more than a small file's whole use of it: MPI's
 * allocation, the first touch and zeroing of every page, the unmapping at
 * free. A close parks its layer (window, communicator, peers, bounce page)
 * on the file's communicator, which later opens on the program's
 * communicator reuse (io/file/parked.c); the next file there with the same
 * page size and count takes it. Opens and closes are collective and the
 * hints agreed, so every rank parks and finds the same layer. One layer per
 * communicator: parking another frees the one there (collective, on every
 * rank alike); freeing the communicator frees it. */
typedef struct cache_parking {
    cache_layer *idle;
} cache_parking;

static pthread_once_t parking_once = PTHREAD_ONCE_INIT;
static int parking_keyval = MPI_KEYVAL_INVALID;

static int parking_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
    (void)comm;
    (void)keyval;
    (void)extra;
    cache_parking *p = value;
    if (p->idle)
        layer_free(p->idle);
    free(p);
    return MPI_SUCCESS;
}

static void parking_keyval_create(void) {
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, parking_delete, &parking_keyval, NULL);
}

/* The parking of comm, made when make; NULL without one. */
static cache_parking *parking_of(MPI_Comm comm, int make) {
    pthread_once(&parking_once, parking_keyval_create);
    if (parking_keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL)
        return NULL;
    void *v = NULL;
    int found = 0;
    if (MPI_Comm_get_attr(comm, parking_keyval, &v, &found) != MPI_SUCCESS)
        return NULL;
    if (found || !make)
        return found ? v : NULL;
    cache_parking *p = calloc(1, sizeof *p);
    if (p && MPI_Comm_set_attr(comm, parking_keyval, p) != MPI_SUCCESS) {
        free(p);
        p = NULL;
    }
    return p;
}

/* Collective over c->file_comm: keeps c for the next file, or frees it. */
static void layer_park(cache_layer *c) {
    cache_parking *p = parking_of(c->file_comm, 1);
    if (!p) {
        layer_free(c);
        return;
    }
    if (p->idle)
        layer_free(p->idle);
    p->idle = c;
}

/* The layer parked on comm for pages of page_size x npages, taken; NULL
 * when there is none (the same answer on every rank). */
static cache_layer *layer_take(MPI_Comm comm, int64_t page_size, int64_t npages) {
    cache_parking *p = parking_of(comm, 0);
    cache_layer *c = p ? p->idle : NULL;
    if (!c || c->page_size != page_size || c->npages != npages)
        return NULL;
    p->idle = NULL;
    return c;
}

/* Collective. */
static int cache_close(io_handle *h, pario_error *err) {
    cache_layer *c = layer_of(h);
    int rc = MPI_Barrier(c->comm) == MPI_SUCCESS ? write_back_own(h, err)
                                                 : mpi_failed(err, h->path, "a barrier");
    layer_park(c);
    h->layer = NULL;
    h->drv = h->below;
    h->below = NULL;
    int crc = h->drv->close(h, rc == PARIO_OK ? err : NULL);
    return rc == PARIO_OK ? crc : rc;
}

static int cache_get_size(io_handle *h, int64_t *size, pario_error *err) {
    return size_fetch(layer_of(h), size) ? PARIO_OK
                                         : mpi_failed(err, h->path, "reading the file's size");
}

/* Every dirty page of every owner to storage, and every slot emptied. */
static int write_back_owner(io_handle *h, int owner, cache_slot *slots, pario_error *err) {
    cache_layer *c = layer_of(h);
    int64_t n = c->npages * (int64_t)sizeof *slots;
    int rc = PARIO_OK;
    MPI_Aint at = (MPI_Aint)sizeof(cache_head);
    owner_lock(c, owner);
    owner_get(c, slots, owner, at, n);
    owner_flush(c, owner);
    for (int64_t i = 0; i < c->npages && rc == PARIO_OK; i++) {
        page_access a = {.owner = owner, .data_disp = c->data_at + (MPI_Aint)(i * c->page_size)};
        if (slots[i].page >= 0 && slots[i].dirty)
            rc = slot_write_back(h, &a, &slots[i], err);
        if (rc == PARIO_OK)
            slots[i].page = -1;
    }
    owner_put(c, slots, owner, at, n);
    owner_unlock(c, owner);
    return rc;
}

/* Called by process 0 alone while the others wait (set_size is collective
 * and agreed): the cache empties itself into storage first. */
static int cache_set_size(io_handle *h, int64_t size, pario_error *err) {
    cache_layer *c = layer_of(h);
    cache_slot *slots = malloc((size_t)c->npages * sizeof *slots);
    if (!slots)
        return pario_fail(err, PARIO_ERR_NO_MEM, "set_size %s: out of memory", h->path);
    int rc = PARIO_OK;
    for (int o = 0; o < c->nranks && rc == PARIO_OK; o++)
        rc = write_back_owner(h, o, slots, err);
    free(slots);
    if (rc == PARIO_OK)
        rc = h->below->set_size(h, size, err);
    if (rc == PARIO_OK && !size_update(c, size, MPI_REPLACE))
        rc = mpi_failed(err, h->path, "recording the file's size");
    return rc;
}

static int cache_preallocate(io_handle *h, int64_t size, pario_error *err) {
    int rc = h->below->preallocate(h, size, err);
    if (rc == PARIO_OK && !size_update(layer_of(h), size, MPI_MAX))
        rc = mpi_failed(err, h->path, "recording the file's size");
    return rc;
}

const io_driver io_driver_cache = {
    .name = "cache",
    .open = io_below_open,
    .close = cache_close,
    .pread = cache_pread,
    .pwrite = cache_pwrite,
    .pwritev = cache_pwritev,
    .sync = cache_sync,
    .get_size = cache_get_size,
    .set_size = cache_set_size,
    .preallocate = cache_preallocate,
    .lock = io_below_lock,
    .unlock = io_below_unlock,
    .drop_cached = io_below_drop_cached,
    .flush = io_below_flush,
    .remove = io_below_remove,
    .block_size = io_below_block_size,
};

/* ---- set-up ---- */

/* Whether every process of comm is on one node (common/node.h: with
 * PARIO_NODE_SIZE a machine stands for several, and the path between nodes
 * is taken). The same answer on every process. */
static int one_node(MPI_Comm comm) {
    MPI_Comm node;
    int size = 0, all = 0;
    if (pario_node_comm(comm, &node) != MPI_SUCCESS)
        return 0;
    MPI_Comm_size(node, &size);
    MPI_Comm_size(comm, &all);
    MPI_Comm_free(&node);
    int mine = size == all, every = 0;
    MPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_LAND, comm);
    return every;
}

/* On one node: where every process's window is in this address space. */
static int peers_find(cache_layer *c) {
    c->peers = calloc((size_t)c->nranks, sizeof *c->peers);
    if (!c->peers)
        return 0;
    for (int r = 0; r < c->nranks; r++) {
        MPI_Aint bytes = 0;
        int unit = 0;
        if (MPI_Win_shared_query(c->win, r, &bytes, &unit, &c->peers[r]) != MPI_SUCCESS)
            return 0;
    }
    return 1;
}

static int window_make(cache_layer *c) {
    MPI_Aint head = (MPI_Aint)(sizeof(cache_head) + c->npages * sizeof(cache_slot));
    c->data_at = (head + DATA_ALIGN - 1) / DATA_ALIGN * DATA_ALIGN;
    MPI_Aint bytes = c->data_at + (MPI_Aint)(c->npages * c->page_size);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "same_size", "true");
    int shared = one_node(c->comm);
    int ok = (shared ? MPI_Win_allocate_shared(bytes, 1, info, c->comm, &c->base, &c->win)
                     : MPI_Win_allocate(bytes, 1, info, c->comm, &c->base, &c->win)) == MPI_SUCCESS;
    MPI_Info_free(&info);
    if (!ok) {
        c->win = MPI_WIN_NULL;
        return 0;
    }
    MPI_Win_set_errhandler(c->win, MPI_ERRORS_RETURN);
    return !shared || peers_find(c);
}

/* Collective: empty slots, and on process 0 the file's size, before anyone
 * looks; every process's floor starts at that size (the reduction is the
 * barrier after which the windows may be reached). */
static int window_init(cache_layer *c, io_handle *h, pario_error *err) {
    int64_t size = 0;
    int rc = c->rank == 0 ? h->below->get_size(h, &size, err) : PARIO_OK;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c->rank, 0, c->win);
    cache_head *head = (cache_head *)c->base;
    memset(head, 0, sizeof *head);
    atomic_init(&head->size, size);
    atomic_init(&head->lock, 0);
    for (int64_t i = 0; i < c->npages; i++)
        own_slots(c)[i] = (cache_slot){-1, 0, 0};
    MPI_Win_unlock(c->rank, c->win);
    MPI_Allreduce(&size, &c->size_floor, 1, MPI_INT64_T, MPI_MAX, c->comm);
    return rc;
}

/* A new layer for pages of the hints' size and count: its window made on a
 * duplicate of comm; 0 when this rank could not make it (the caller agrees). */
static int layer_make(cache_layer **out, MPI_Comm comm, const io_hints *hints) {
    cache_layer *c = calloc(1, sizeof *c);
    *out = c;
    if (!c)
        return 0;
    c->comm = MPI_COMM_NULL;
    c->win = MPI_WIN_NULL;
    c->page_size = hints->cache_page_size;
    c->npages = hints->cache_pages;
    c->bounce = malloc((size_t)c->page_size);
    if (!c->bounce || MPI_Comm_dup(comm, &c->comm) != MPI_SUCCESS)
        return 0;
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->nranks);
    return window_make(c);
}

int io_cache_attach_global(io_handle *h, MPI_Comm comm, const io_hints *hints, pario_error *err) {
    cache_layer *c = layer_take(comm, hints->cache_page_size, hints->cache_pages);
    int ok = c != NULL || layer_make(&c, comm, hints);
    int mine = ok, all = 0; /* the window is collective: all or none */
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, comm);
    if (!all) {
        if (c)
            layer_free(c);
        return pario_fail(err, PARIO_ERR_NO_MEM,
                          "open %s: no memory for %lld cache pages of %lld bytes", h->path,
                          (long long)hints->cache_pages, (long long)hints->cache_page_size);
    }
    c->file_comm = comm;
    h->below = h->drv;
    h->drv = &io_driver_cache;
    h->layer = c;
    return window_init(c, h, err);
}

int io_cache_on(const io_handle *h) {
    return h->drv == &io_driver_cache;
}

void io_cache_size_forget(io_handle *h) {
    if (io_cache_on(h))
        layer_of(h)->size_floor = 0;
}

int io_cache_finalize(io_handle *h, pario_error *err) {
    return io_cache_on(h) ? write_back_own(h, err) : PARIO_OK;
}
