#include "io/indep/access.h"
#include "io/indep/cursor.h"

#include <stdint.h>
#include <string.h>
#include "common/error.h"

/* Bytes of noncontiguous user memory packed per step: bounds the staging
 * buffer while keeping file requests large. */
#define IO_PACK_CHUNK ((int64_t)4 << 20)
/* Most file extents handled in one window (bounds the piece list). */
#define IO_MAX_PIECES ((int64_t)1 << 16)
/* What one system call costs, in bytes of memory copy: the exchange rate the
 * automatic sieving decision uses to weigh extra bytes against extra calls. */
#define IO_SYSCALL_BYTES ((int64_t)16 << 10)

/* A window: pieces of file extents covering at most `win` bytes of file. */
typedef struct window {
    io_piece *p;
    int64_t n;
    int64_t start, end, data;
} window;

/* Gather the extents of the next at most `avail` stream bytes that fit in a
 * window of `win` bytes of file, stopping at end of file `eof` (reads). */
static void window_fill(window *w, io_file_cursor *c, int64_t avail, int64_t win, int64_t eof,
                        int64_t at, int64_t max_pieces) {
    w->n = w->data = 0;
    int64_t off, len;
    while (w->data < avail && w->n < max_pieces && io_file_peek(c, avail - w->data, &off, &len)) {
        if (off >= eof)
            break;
        if (off + len > eof)
            len = eof - off;
        if (w->n == 0)
            w->start = off;
        else if (off + len - w->start > win)
            break;
        w->p[w->n++] = (io_piece){.off = off, .len = len, .at = at + w->data};
        w->data += len;
        w->end = off + len;
        io_file_take(c, len);
        if (off + len == eof)
            break;
    }
}

static int want_sieve(io_switch sw, const window *w, int write) {
    if (w->n <= 1 || sw == IO_DISABLE)
        return 0;
    if (sw == IO_ENABLE)
        return 1;
    int64_t span = w->end - w->start;
    int64_t sieve_cost = write ? 2 * span : span;
    int64_t list_cost = w->n * IO_SYSCALL_BYTES + w->data;
    return sieve_cost < list_cost;
}

typedef struct xfer {
    pario_file *fh;
    int write;
    int lock;    /* take byte-range locks around writes */
    int64_t eof; /* reads: file size at the start */
    window w;
} xfer;

/* Read the whole window [start, end) into the sieve buffer; bytes past the
 * end of file read as zeros. */
static int sieve_load(xfer *x, char **buf) {
    pario_file *fh = x->fh;
    window *w = &x->w;
    int64_t span = w->end - w->start, got = 0;
    int rc = io_scratch_reserve(&fh->scratch.window, &fh->scratch.window_len, span);
    if (rc != PARIO_OK)
        return pario_fail(&fh->last, rc, "%s %s: no memory for a %lld-byte sieve window",
                          x->write ? "write" : "read", fh->path, (long long)span);
    *buf = fh->scratch.window;
    rc = fh->io.drv->pread(&fh->io, *buf, span, w->start, &got, &fh->last);
    if (rc == PARIO_OK)
        memset(*buf + got, 0, (size_t)(span - got));
    return rc;
}

/* Read-modify-write of the window [start, end): gaps keep the file's bytes. */
static int sieve_write(xfer *x, const char *data) {
    window *w = &x->w;
    char *buf = NULL;
    int rc = sieve_load(x, &buf);
    if (rc != PARIO_OK)
        return rc;
    for (int64_t i = 0; i < w->n; i++)
        memcpy(buf + (w->p[i].off - w->start), data + w->p[i].at, (size_t)w->p[i].len);
    return x->fh->io.drv->pwrite(&x->fh->io, buf, w->end - w->start, w->start, &x->fh->last);
}

static int list_write(xfer *x, const char *data) {
    for (int64_t i = 0; i < x->w.n; i++) {
        const io_piece *p = &x->w.p[i];
        int rc = x->fh->io.drv->pwrite(&x->fh->io, data + p->at, p->len, p->off, &x->fh->last);
        if (rc != PARIO_OK)
            return rc;
    }
    return PARIO_OK;
}

static int sieve_read(xfer *x, char *data) {
    window *w = &x->w;
    char *buf = NULL;
    int rc = sieve_load(x, &buf);
    if (rc != PARIO_OK)
        return rc;
    for (int64_t i = 0; i < w->n; i++)
        memcpy(data + w->p[i].at, buf + (w->p[i].off - w->start), (size_t)w->p[i].len);
    return PARIO_OK;
}

static int list_read(xfer *x, char *data) {
    for (int64_t i = 0; i < x->w.n; i++) {
        const io_piece *p = &x->w.p[i];
        int64_t got = 0;
        int rc = x->fh->io.drv->pread(&x->fh->io, data + p->at, p->len, p->off, &got, &x->fh->last);
        if (rc != PARIO_OK)
            return rc;
        if (got < p->len) /* the file shrank meanwhile: what is missing reads as zeros */
            memset(data + p->at + got, 0, (size_t)(p->len - got));
    }
    return PARIO_OK;
}

/* Write the window's pieces under the byte-range lock the write needs. */
static int window_write(xfer *x, char *data, int covered) {
    pario_file *fh = x->fh;
    window *w = &x->w;
    int sieve = !covered && fh->io.readable && want_sieve(fh->hints.ds_write, w, 1);
    int locking = x->lock || sieve; /* a read-modify-write must exclude other writers */
    int rc =
        locking ? fh->io.drv->lock(&fh->io, w->start, w->end - w->start, 1, &fh->last) : PARIO_OK;
    if (rc != PARIO_OK)
        return rc;
    if (covered)
        rc = fh->io.drv->pwrite(&fh->io, data + w->p[0].at, w->data, w->start, &fh->last);
    else
        rc = sieve ? sieve_write(x, data) : list_write(x, data);
    int urc =
        locking ? fh->io.drv->unlock(&fh->io, w->start, w->end - w->start, &fh->last) : PARIO_OK;
    return rc != PARIO_OK ? rc : urc;
}

/* Transfer the window's pieces: one call when they cover the window,
 * otherwise data sieving or one call per piece, as hints and cost decide. */
static int window_move(xfer *x, char *data) {
    pario_file *fh = x->fh;
    window *w = &x->w;
    int covered = w->data == w->end - w->start;
    if (x->write)
        return window_write(x, data, covered);
    if (covered) {
        int64_t got = 0;
        return fh->io.drv->pread(&fh->io, data + w->p[0].at, w->data, w->start, &got, &fh->last);
    }
    return want_sieve(fh->hints.ds_read, w, 0) ? sieve_read(x, data) : list_read(x, data);
}

/* Move n stream bytes of `data` (staged or user memory) through the view.
 * *moved: bytes moved, fewer than n only when a read reaches end of file. */
static int move_chunk(xfer *x, io_file_cursor *c, char *data, int64_t n, int64_t *moved) {
    pario_file *fh = x->fh;
    int64_t win = x->write ? fh->hints.ind_wr_buffer_size : fh->hints.ind_rd_buffer_size;
    int64_t done = 0;
    *moved = 0;
    while (done < n) {
        window_fill(&x->w, c, n - done, win, x->eof, done, fh->scratch.pieces_len);
        if (x->w.n == 0)
            break; /* end of file */
        int rc = window_move(x, data);
        if (rc != PARIO_OK)
            return rc;
        done += x->w.data;
        *moved = done;
        if (x->w.end >= x->eof && !x->write)
            break;
    }
    return PARIO_OK;
}

static int reserve_pieces(pario_file *fh) {
    int64_t bytes = fh->scratch.pieces_len * (int64_t)sizeof(io_piece);
    char *p = (char *)fh->scratch.pieces;
    if (fh->scratch.pieces_len >= IO_MAX_PIECES)
        return PARIO_OK;
    int rc = io_scratch_reserve(&p, &bytes, IO_MAX_PIECES * (int64_t)sizeof(io_piece));
    fh->scratch.pieces = (io_piece *)p;
    if (rc == PARIO_OK)
        fh->scratch.pieces_len = IO_MAX_PIECES;
    return rc;
}

/* Walk the user data in chunks: pack/unpack noncontiguous memory around
 * move_chunk; contiguous memory goes to the file without a copy. */
static int run_chunks(xfer *x, io_mem_cursor *m, io_file_cursor *c, int64_t total, int64_t *moved) {
    pario_file *fh = x->fh;
    *moved = 0;
    if (m->contig)
        return move_chunk(x, c, m->contig, total, moved);
    int64_t step = total < IO_PACK_CHUNK ? total : IO_PACK_CHUNK;
    int rc = io_scratch_reserve(&fh->scratch.stage, &fh->scratch.stage_len, step);
    if (rc != PARIO_OK)
        return pario_fail(&fh->last, rc, "access %s: no memory for staging", fh->path);
    while (*moved < total) {
        int64_t n = total - *moved < step ? total - *moved : step, got = 0;
        if (x->write)
            io_mem_copy(m, fh->scratch.stage, n, 1);
        rc = move_chunk(x, c, fh->scratch.stage, n, &got);
        if (rc != PARIO_OK)
            return rc;
        if (!x->write)
            io_mem_copy(m, fh->scratch.stage, got, 0);
        *moved += got;
        if (got < n)
            break;
    }
    return PARIO_OK;
}

/* The first and one-past-last file bytes of stream range [pos, pos + n). */
static int access_span(pario_file *fh, int64_t pos, int64_t n, int64_t *first, int64_t *end) {
    int rc = view_byte_of_pos(&fh->view, pos, first);
    if (rc == PARIO_OK)
        rc = view_byte_of_pos(&fh->view, pos + n - 1, end);
    *end += 1;
    return rc;
}

int io_access(pario_file *fh, int write, int64_t pos, void *buf, MPI_Count count, MPI_Datatype type,
              int64_t *moved) {
    const flat_type *mt = NULL;
    *moved = 0;
    int rc = flat_get(type, &mt);
    if (rc != PARIO_OK)
        return pario_fail(&fh->last, rc, "%s %s: cannot decode the memory datatype",
                          write ? "write" : "read", fh->path);
    return io_access_flat(fh, write, pos, buf, count, mt, moved);
}

int io_access_flat(pario_file *fh, int write, int64_t pos, void *buf, MPI_Count count,
                   const flat_type *mt, int64_t *moved) {
    int rc = PARIO_OK;
    *moved = 0;
    int64_t total = (int64_t)count * mt->size;
    if (total == 0)
        return PARIO_OK;
    xfer x = {.fh = fh, .write = write, .lock = write && fh->nranks > 1, .eof = INT64_MAX};
    if ((rc = reserve_pieces(fh)) != PARIO_OK)
        return pario_fail(&fh->last, rc, "access %s: out of memory", fh->path);
    x.w.p = fh->scratch.pieces;
    if (!write && (rc = fh->io.drv->get_size(&fh->io, &x.eof, &fh->last)) != PARIO_OK)
        return rc;
    int64_t first = 0, end = 0;
    if (fh->atomic) {
        if ((rc = access_span(fh, pos, total, &first, &end)) != PARIO_OK)
            return rc;
        if ((rc = fh->io.drv->lock(&fh->io, first, end - first, write, &fh->last)) != PARIO_OK)
            return rc;
        x.lock = 0; /* the whole span is held already */
    }
    io_mem_cursor m;
    io_file_cursor c;
    rc = io_mem_open(&m, mt, buf, count, 0);
    if (rc == PARIO_OK) {
        rc = io_file_open(&c, &fh->view, pos);
        if (rc == PARIO_OK) {
            rc = run_chunks(&x, &m, &c, total, moved);
            io_file_close(&c);
        }
        io_mem_close(&m);
    }
    if (rc != PARIO_OK && fh->last.code == PARIO_OK)
        pario_fail(&fh->last, rc, "access %s: out of memory", fh->path);
    if (fh->atomic) {
        int urc = fh->io.drv->unlock(&fh->io, first, end - first, &fh->last);
        if (rc == PARIO_OK)
            rc = urc;
    }
    return rc;
}
