#include "io/indep/access.h"
#include "io/indep/cursor.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "common/error.h"
#include "io/trace/trace.h"

/* Bytes of noncontiguous user memory packed per step (at least a stripe
 * unit, so requests stay well-formed): small enough that the staged bytes are
 * still in the CPU cache when the system call copies them. Measured (pario
 * bench noncontig, 4 ranks on 2 cores, cached, medians of 5, MiB/s, 64 B and
 * 4 KiB blocks in memory): 4 MiB steps read 12314 and 15021 (memory only),
 * 3586 and 4285 (memory and file), 256 KiB steps 12623 and 16385, 7010 and
 * 10864; writes within noise of each other (3487 vs 3054, 1197 vs 1516). */
#define IO_PACK_CHUNK ((int64_t)256 << 10)
/* The step where requests are round trips (IO_REQUEST_BOUND_READ): each
 * system call then costs a request's latency, and larger calls let the
 * client keep several requests in flight. On the GlusterFS test bed (2 nodes
 * x 2 ranks over TCP, noncontig with a gap after every block in memory,
 * contiguous in the file, three alternated rounds, MiB/s), 256 KiB against
 * 4 MiB steps: 4 KiB blocks read independently 603-793 against 395-829
 * cached and 530-634 against 683-812 durable, written 328-418 against
 * 453-528 and 258-300 against 298-392; 512 B blocks read 533-782 against
 * 861-947 durable and written 271-339 against 364-394; 1 MiB steps fell in
 * between. ROMIO, whose independent buffer is 4 MiB, read 818-1035 and wrote
 * 352-543 in the same runs. */
#define IO_PACK_CHUNK_ROUND_TRIP ((int64_t)4 << 20)
/* Most runs of file blocks handled in one window (bounds the run list; a
 * run of equally spaced blocks counts once however many blocks it holds).
 * 16 Ki runs are 640 KiB: enough for windows of irregular blocks, and small
 * enough that a file's scratch buffers together stay below glibc's heap trim
 * threshold, so a fresh file's first access does not fault pages in again. */
#define IO_MAX_RUNS ((int64_t)1 << 14)

/* A window: runs of file blocks covering at most `win` bytes of file (the
 * run list is the file's scratch run buffer). */
typedef struct window {
    io_run *r;
    int64_t nruns;
    int64_t n; /* file blocks in all runs */
    int64_t start, end, data;
    bool overlap; /* some blocks overlap (views of read-only files): never covered */
} window;

/* How many whole blocks of run r, from its first, join window w without
 * passing `avail` stream bytes, `win` bytes of file span or end of file
 * `eof`. The first block of an empty window always fits the span. */
static int64_t run_blocks_fitting(const window *w, const flat_run *r, int64_t avail, int64_t win,
                                  int64_t eof) {
    int64_t k = (avail - w->data) / r->len;
    if (k > r->count)
        k = r->count;
    int64_t start = w->nruns == 0 ? r->off : w->start;
    int64_t span_room = win - (r->off + r->len - start); /* for blocks after the first */
    int64_t eof_room = eof - r->off - r->len;
    if (span_room < 0 && w->nruns > 0)
        return 0;
    if (eof_room < 0)
        return 0;
    if (k > 1 && r->stride > 0) { /* stride 0: one block read again (read-only views) */
        int64_t by_span = span_room < 0 ? 1 : span_room / r->stride + 1;
        int64_t by_eof = eof_room / r->stride + 1;
        k = k < by_span ? k : by_span;
        k = k < by_eof ? k : by_eof;
    }
    return k;
}

/* Append k blocks of run r (k <= r->count, each whole, or one block of
 * len bytes when k is 1) to the window. */
static void window_add(window *w, const flat_run *r, int64_t k, int64_t len, int64_t at) {
    int64_t end = r->off + (k - 1) * r->stride + len;
    if (w->nruns == 0) {
        w->start = r->off;
        w->end = end;
        w->overlap = false;
    }
    if ((w->nruns > 0 && r->off < w->end) || (k > 1 && r->stride < len))
        w->overlap = true;
    w->r[w->nruns++] =
        (io_run){.off = r->off, .len = len, .stride = r->stride, .count = k, .at = at + w->data};
    w->n += k;
    w->data += k * len;
    if (end > w->end)
        w->end = end;
}

/* Gather the file blocks of the next at most `avail` stream bytes that fit
 * in a window of `win` bytes of file, stopping at end of file `eof` (reads).
 * Whole runs of blocks are added at once; a block cut by avail or eof, or
 * one past the span, is handled alone. */
static void window_fill(window *w, io_file_cursor *c, int64_t avail, int64_t win, int64_t eof,
                        int64_t at, int64_t max_runs) {
    w->nruns = w->n = w->data = 0;
    flat_run r;
    while (w->data < avail && w->nruns < max_runs && io_file_peek_run(c, avail - w->data, &r)) {
        if (r.off >= eof)
            break;
        int64_t k = run_blocks_fitting(w, &r, avail, win, eof);
        if (k > 0) {
            window_add(w, &r, k, r.len, at);
            io_file_take_run(c, k * r.len);
            continue;
        }
        int64_t len = r.len < avail - w->data ? r.len : avail - w->data;
        if (r.off + len > eof)
            len = eof - r.off;
        if (w->nruns > 0 && r.off + len - w->start > win)
            break;
        window_add(w, &r, 1, len, at);
        io_file_take_run(c, len);
        if (r.off + len == eof)
            break;
    }
}

/* Whether to sieve the window: the bytes sieving moves (the span; twice for
 * a write, read and written back) against the blocks' bytes plus a call per
 * block at the file's call cost (fh->write/read_call_bytes: its file
 * system's calibration record, a hint or the ext4 defaults, io/cost). */
static int want_sieve(io_switch sw, const window *w, int write, int64_t call_bytes) {
    if (w->n <= 1 || sw == IO_DISABLE)
        return 0;
    if (sw == IO_ENABLE)
        return 1;
    int64_t span = w->end - w->start;
    int64_t sieve_cost = write ? 2 * span : span;
    int64_t list_cost = io_calls_cost(w->n, call_bytes) + w->data;
    return sieve_cost < list_cost;
}

typedef struct xfer {
    pario_file *fh;
    int write;
    int lock;    /* take byte-range locks around writes */
    int held;    /* the call's whole span is locked already: no lock per window */
    int64_t eof; /* reads: file size at the start */
    window w;
} xfer;

/* Read file bytes [off, off + len) to buf; bytes past the end of file read
 * as zeros. */
static int read_zero_filled(pario_file *fh, char *buf, int64_t len, int64_t off) {
    int64_t got = 0;
    int rc = io_prefetch_pread(&fh->io, &fh->prefetch, buf, len, off, 0, &got, &fh->last);
    if (rc == PARIO_OK)
        memset(buf + got, 0, (size_t)(len - got));
    return rc;
}

/* The sieve buffer, large enough for the window. */
static int sieve_buffer(xfer *x, char **buf) {
    pario_file *fh = x->fh;
    int64_t span = x->w.end - x->w.start;
    int rc = io_scratch_reserve(&fh->scratch.window, &fh->scratch.window_len, span);
    if (rc != PARIO_OK)
        return pario_fail(&fh->last, rc, "%s %s: no memory for a %lld-byte sieve window",
                          x->write ? "write" : "read", fh->path, (long long)span);
    *buf = fh->scratch.window;
    return PARIO_OK;
}

/* Read the whole window [start, end) into the sieve buffer. */
static int sieve_load(xfer *x, char **buf) {
    int rc = sieve_buffer(x, buf);
    return rc != PARIO_OK ? rc : read_zero_filled(x->fh, *buf, x->w.end - x->w.start, x->w.start);
}

/* Read only the gaps between the window's blocks into the sieve buffer, one
 * call per gap: the blocks themselves are about to be overwritten. */
static int sieve_load_gaps(xfer *x, char **buf) {
    window *w = &x->w;
    int rc = sieve_buffer(x, buf);
    int64_t done = w->start; /* file bytes before this are in place */
    for (int64_t i = 0; i < w->nruns && rc == PARIO_OK; i++) {
        const io_run *r = &w->r[i];
        for (int64_t b = 0; b < r->count && rc == PARIO_OK; b++) {
            int64_t off = r->off + b * r->stride;
            if (off > done)
                rc = read_zero_filled(x->fh, *buf + (done - w->start), off - done, done);
            done = off + r->len > done ? off + r->len : done;
        }
    }
    return rc;
}

/* Whether reading the window's gaps one by one costs less than reading the
 * whole window: each extra call is weighed at the file's read call cost
 * against the block bytes it skips (a window of few large blocks, as a
 * block-distributed array with data sieving of a large buffer). */
static int gaps_cheaper(const window *w, int64_t read_call_bytes) {
    return io_calls_cost(w->n - 1, read_call_bytes) < w->data;
}

/* Read-modify-write of the window [start, end): gaps keep the file's bytes. */
static int sieve_write(xfer *x, const char *data) {
    window *w = &x->w;
    char *buf = NULL;
    int rc =
        gaps_cheaper(w, x->fh->read_call_bytes) ? sieve_load_gaps(x, &buf) : sieve_load(x, &buf);
    if (rc != PARIO_OK)
        return rc;
    for (int64_t i = 0; i < w->nruns; i++) {
        const io_run *r = &w->r[i];
        io_copy_blocks(buf + (r->off - w->start), r->stride, data + r->at, r->len, r->len,
                       r->count);
    }
    return x->fh->io.drv->pwrite(&x->fh->io, buf, w->end - w->start, w->start, &x->fh->last);
}

/* One write call per file block. */
static int list_write(xfer *x, const char *data) {
    pario_file *fh = x->fh;
    for (int64_t i = 0; i < x->w.nruns; i++) {
        const io_run *r = &x->w.r[i];
        for (int64_t b = 0; b < r->count; b++) {
            int64_t at = r->at + b * r->len, off = r->off + b * r->stride;
            int rc = fh->io.drv->pwrite(&fh->io, data + at, r->len, off, &fh->last);
            if (rc != PARIO_OK)
                return rc;
        }
    }
    return PARIO_OK;
}

static int sieve_read(xfer *x, char *data) {
    window *w = &x->w;
    char *buf = NULL;
    int rc = sieve_load(x, &buf);
    if (rc != PARIO_OK)
        return rc;
    for (int64_t i = 0; i < w->nruns; i++) {
        const io_run *r = &w->r[i];
        io_copy_blocks(data + r->at, r->len, buf + (r->off - w->start), r->stride, r->len,
                       r->count);
    }
    return PARIO_OK;
}

/* One read call per file block. */
static int list_read(xfer *x, char *data) {
    pario_file *fh = x->fh;
    for (int64_t i = 0; i < x->w.nruns; i++) {
        const io_run *r = &x->w.r[i];
        for (int64_t b = 0; b < r->count; b++) {
            int64_t at = r->at + b * r->len, off = r->off + b * r->stride, got = 0;
            int rc = io_prefetch_pread(&fh->io, &fh->prefetch, data + at, r->len, off, 0, &got,
                                       &fh->last);
            if (rc != PARIO_OK)
                return rc;
            if (got < r->len) /* the file shrank meanwhile: what is missing reads as zeros */
                memset(data + at + got, 0, (size_t)(r->len - got));
        }
    }
    return PARIO_OK;
}

/* Whether a plain write must take the byte-range lock: while another rank
 * may sieve a write over its bytes. */
static int plain_writes_lock(const pario_file *fh) {
    return fh->nranks > 1 && fh->sieve_writers;
}

int io_write_iov(pario_file *fh, const struct iovec *iov, int niov, int64_t off, int64_t len,
                 pario_error *err) {
    int locking = plain_writes_lock(fh);
    int rc = locking ? fh->io.drv->lock(&fh->io, off, len, 1, err) : PARIO_OK;
    if (rc != PARIO_OK)
        return rc;
    rc = fh->io.drv->pwritev(&fh->io, iov, niov, off, err);
    int urc = locking ? fh->io.drv->unlock(&fh->io, off, len, err) : PARIO_OK;
    return rc != PARIO_OK ? rc : urc;
}

/* Write the window's runs under the byte-range lock the write needs. */
static int window_write(xfer *x, char *data, int covered) {
    pario_file *fh = x->fh;
    window *w = &x->w;
    int sieve =
        !covered && fh->io.readable && want_sieve(fh->hints.ds_write, w, 1, fh->write_call_bytes);
    /* a read-modify-write must exclude other writers; under a held span a
     * window's unlock would release that part of the span */
    int locking = !x->held && (x->lock || sieve);
    if (sieve)
        io_trace_sieve(fh->trace, 1, w->end - w->start, w->data);
    int rc =
        locking ? fh->io.drv->lock(&fh->io, w->start, w->end - w->start, 1, &fh->last) : PARIO_OK;
    if (rc != PARIO_OK)
        return rc;
    if (covered)
        rc = fh->io.drv->pwrite(&fh->io, data + w->r[0].at, w->data, w->start, &fh->last);
    else
        rc = sieve ? sieve_write(x, data) : list_write(x, data);
    int urc =
        locking ? fh->io.drv->unlock(&fh->io, w->start, w->end - w->start, &fh->last) : PARIO_OK;
    return rc != PARIO_OK ? rc : urc;
}

/* Transfer the window's runs: one call when they cover the window,
 * otherwise data sieving or one call per piece, as hints and cost decide. */
static int window_move(xfer *x, char *data) {
    pario_file *fh = x->fh;
    window *w = &x->w;
    int covered = !w->overlap && w->data == w->end - w->start;
    if (x->write)
        return window_write(x, data, covered);
    if (covered) {
        int64_t got = 0;
        return io_prefetch_pread(&fh->io, &fh->prefetch, data + w->r[0].at, w->data, w->start, 0,
                                 &got, &fh->last);
    }
    int sieve = want_sieve(fh->hints.ds_read, w, 0, fh->read_call_bytes);
    if (sieve)
        io_trace_sieve(fh->trace, 0, w->end - w->start, w->data);
    return sieve ? sieve_read(x, data) : list_read(x, data);
}

/* Move n stream bytes of `data` (staged or user memory) through the view.
 * *moved: bytes moved, fewer than n only when a read reaches end of file. */
static int move_chunk(xfer *x, io_file_cursor *c, char *data, int64_t n, int64_t *moved) {
    pario_file *fh = x->fh;
    int64_t win = x->write ? fh->hints.ind_wr_buffer_size : fh->hints.ind_rd_buffer_size;
    if (fh->view.linear && win < n) /* no holes to sieve: the chunk is one request */
        win = n;
    int64_t done = 0;
    *moved = 0;
    while (done < n) {
        window_fill(&x->w, c, n - done, win, x->eof, done, fh->scratch.runs_len);
        if (x->w.nruns == 0)
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

/* The scratch run buffer, grown to hold IO_MAX_RUNS runs. */
static int reserve_runs(pario_file *fh) {
    if (fh->scratch.runs_len >= IO_MAX_RUNS)
        return PARIO_OK;
    io_run *r = realloc(fh->scratch.runs, (size_t)IO_MAX_RUNS * sizeof *r);
    if (!r)
        return PARIO_ERR_NO_MEM;
    fh->scratch.runs = r;
    fh->scratch.runs_len = IO_MAX_RUNS;
    return PARIO_OK;
}

/* Stream bytes of noncontiguous memory staged per step: IO_PACK_CHUNK, or
 * IO_PACK_CHUNK_ROUND_TRIP where this rank's read calls are request-bound;
 * at least a stripe unit. */
static int64_t stage_step(const pario_file *fh) {
    int64_t step =
        fh->read_call_bytes >= IO_REQUEST_BOUND_READ ? IO_PACK_CHUNK_ROUND_TRIP : IO_PACK_CHUNK;
    return fh->hints.striping_unit > step ? fh->hints.striping_unit : step;
}

/* Walk the user data in chunks: pack/unpack noncontiguous memory around
 * move_chunk; contiguous memory goes to the file without a copy. */
static int run_chunks(xfer *x, io_mem_cursor *m, io_file_cursor *c, int64_t total, int64_t *moved) {
    pario_file *fh = x->fh;
    *moved = 0;
    if (m->contig)
        return move_chunk(x, c, m->contig, total, moved);
    int64_t step = stage_step(fh);
    step = total < step ? total : step;
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
    int rc = flat_get_committed(type, fh->comm, &mt);
    if (rc != PARIO_OK)
        return pario_fail(&fh->last, rc, "%s %s: cannot decode the memory datatype",
                          write ? "write" : "read", fh->path);
    return io_access_flat(fh, write, pos, buf, count, mt, moved);
}

/* Contiguous memory through a linear view: one call at the stream's file
 * offset, no cursor and no window (a read stops short at end of file). */
static int move_direct(xfer *x, char *data, int64_t pos, int64_t total, int64_t *moved) {
    pario_file *fh = x->fh;
    int64_t off = fh->view.disp + fh->view.linear_base + pos;
    if (!x->write) {
        int rc = io_prefetch_pread(&fh->io, &fh->prefetch, data, total, off, 0, moved, &fh->last);
        if (rc != PARIO_OK)
            *moved = 0;
        return rc;
    }
    int rc = x->lock ? fh->io.drv->lock(&fh->io, off, total, 1, &fh->last) : PARIO_OK;
    if (rc == PARIO_OK)
        rc = fh->io.drv->pwrite(&fh->io, data, total, off, &fh->last);
    int urc = x->lock ? fh->io.drv->unlock(&fh->io, off, total, &fh->last) : PARIO_OK;
    rc = rc != PARIO_OK ? rc : urc;
    *moved = rc == PARIO_OK ? total : 0;
    return rc;
}

/* Any memory through any view: windows of file blocks, sieved or not,
 * with noncontiguous memory staged. */
static int move_through_view(xfer *x, io_mem_cursor *m, int64_t pos, int64_t total,
                             int64_t *moved) {
    pario_file *fh = x->fh;
    int rc = reserve_runs(fh);
    if (rc != PARIO_OK)
        return pario_fail(&fh->last, rc, "access %s: out of memory", fh->path);
    x->w.r = fh->scratch.runs;
    int64_t last = 0;
    if (!x->write && total > 0 &&
        (rc = view_byte_of_pos(&fh->view, pos + total - 1, &last)) == PARIO_OK)
        rc = io_file_size_for_read(fh, last + 1, &x->eof);
    if (rc != PARIO_OK)
        return rc;
    io_file_cursor c;
    rc = io_file_open(&c, &fh->view, pos);
    if (rc == PARIO_OK) {
        rc = run_chunks(x, m, &c, total, moved);
        io_file_close(&c);
    }
    return rc;
}

/* Whether a write through fh's view may lock byte ranges: it may sieve (a
 * view with holes, a readable file, sieving not disabled) or must lock its
 * plain writes. */
static int write_may_lock(const pario_file *fh, const xfer *x) {
    return x->lock || (!fh->view.linear && fh->io.readable && fh->hints.ds_write != IO_DISABLE);
}

/* Whether the call locks its whole span once instead of each window: in
 * atomic mode (the call is one indivisible access), and for a write that
 * may lock on a file system other than a local disk or with
 * pario_lock_span=enable. On a network file system, locking window
 * by window lost bytes: on the GlusterFS test bed (2 clients, 4 ranks,
 * 512-byte blocks interleaved, independent sieved writes) 10 of 200 runs
 * ended with a 32 KiB run of zeros where every rank had written, always at
 * the start of a window another client had just extended the file with;
 * with the span locked once, as ROMIO does, 0 of 180 (ROMIO 0 of 60, OMPIO 0
 * of 30; on ext4 window locks 0 of 60). The cause was the new file's
 * descriptors served from the client's page cache (io/driver/posix.c,
 * reopen_created); with that mended window locks lost nothing in 100 runs
 * and wrote at 0.90-1.11x the span lock's speed, so the span lock, ROMIO's
 * choice, stays (docs/architecture.md). */
static int lock_span(const pario_file *fh, const xfer *x) {
    int span_writes = !fh->io.local_disk || fh->hints.lock_span == IO_ENABLE;
    return fh->atomic || (x->write && span_writes && write_may_lock(fh, x));
}

int io_access_flat(pario_file *fh, int write, int64_t pos, void *buf, MPI_Count count,
                   const flat_type *mt, int64_t *moved) {
    int rc = PARIO_OK;
    *moved = 0;
    int64_t total = (int64_t)count * mt->size;
    if (total == 0 || fh->view.empty) /* an empty view reads nothing (writes were refused) */
        return PARIO_OK;
    xfer x = {.fh = fh, .write = write, .lock = write && plain_writes_lock(fh), .eof = INT64_MAX};
    int64_t first = 0, end = 0;
    int span = lock_span(fh, &x);
    if (span) {
        if ((rc = access_span(fh, pos, total, &first, &end)) != PARIO_OK)
            return rc;
        if ((rc = fh->io.drv->lock(&fh->io, first, end - first, write, &fh->last)) != PARIO_OK)
            return rc;
        x.lock = 0; /* the whole span is held already */
        x.held = 1;
    }
    io_mem_cursor m;
    rc = io_mem_open(&m, mt, buf, count, 0);
    if (rc == PARIO_OK) {
        rc = m.contig && fh->view.linear ? move_direct(&x, m.contig, pos, total, moved)
                                         : move_through_view(&x, &m, pos, total, moved);
        io_mem_close(&m);
    }
    if (rc != PARIO_OK && fh->last.code == PARIO_OK)
        pario_fail(&fh->last, rc, "access %s: out of memory", fh->path);
    if (span) {
        int urc = fh->io.drv->unlock(&fh->io, first, end - first, &fh->last);
        if (rc == PARIO_OK)
            rc = urc;
    }
    return rc;
}
