/* Small collective writes through one aggregator (the funnel, rank 0).
 *
 * A collective write in which every rank moves little data costs mostly its
 * rounds of messages: an allgather of ranges, the writes, an agreement on
 * the outcome. Here every rank sends the funnel one header (its verdict on
 * the arguments, its range and, when its part is small, the file pieces of
 * that part) and the data of a small part. The funnel answers each rank with
 * one message, and the call takes one of three ways, the same on every rank:
 *
 *   done    every part was small and no two pieces overlap: the funnel
 *           wrote everything itself, one pwritev per run of adjacent pieces,
 *           and the answer carries the outcome (where write calls are round
 *           trips, the funnel may keep a run instead, to write it with the
 *           runs of the calls that follow: funnel_kept.c). Writes to one file take its
 *           lock in the kernel in turn anyway, so one writer loses no
 *           parallelism and saves the ranks from contending for it (on a
 *           local file system; where write calls are round trips, pieces
 *           apart are planned: funnel_writes);
 *   plan    some part was too large (or pieces overlap, or lie apart where
 *           write calls are request-bound): the answer carries
 *           every rank's range, as the allgather would, and the call goes on
 *           as before;
 *   failed  some verdict was bad: nothing was written and the ranks agree
 *           on the error as they do after the allgather.
 *
 * Two rounds of point-to-point messages thus replace the allgather, the
 * writes and the agreement. Only a failure of the funnel's own write costs
 * one more collective (io_agree, to share its message). The funnel holds at
 * most cb_buffer_size bytes of data: a rank's part is small only up to
 * cb_buffer_size / nranks bytes.
 *
 * Reads do not come here: they run in parallel in the kernel, and one rank
 * reading for all was measured slower than every rank reading its own part
 * (4 and 47,008-byte parts, 2 and 4 ranks). */
#include <stdlib.h>
#include <string.h>
#include "common/error.h"
#include "io/coll/coll_internal.h"
#include "io/indep/access.h"
#include "io/indep/cursor.h"

/* Data bytes of one rank's part above which the call is planned instead:
 * larger parts gain from parallel access and the pipelined exchange. IO500's
 * 47,008-byte ior-hard records fit. */
#define COLL_SMALL_BYTES ((int64_t)64 << 10)
/* Pieces (file extents after merging) one header carries. */
#define COLL_SMALL_PIECES 64
/* The funnel's rank. */
#define FUNNEL 0

/* Message tags, distinct from twophase.c's on the file's private communicator. */
enum { TAG_HEAD = 0x7a11, TAG_DATA = 0x7a12, TAG_REPLY = 0x7a13 };

/* A header: int64 entries, then npieces (offset, length) pairs. npieces is
 * -1 when the part is not small (its data then stays with the rank). */
enum { HEAD_RC, HEAD_FIRST, HEAD_END, HEAD_BYTES, HEAD_NPIECES, HEAD_FIXED };
#define HEAD_MAX (HEAD_FIXED + 2 * COLL_SMALL_PIECES)

/* An answer: the way taken, the funnel's outcome, whether it keeps writes
 * and the range it holds locked meanwhile, whether ranks going their own
 * ways keep their parts (funnel_kept.c), then for `plan` the (first, end,
 * bytes) range of every rank. */
enum { REPLY_WAY, REPLY_RC, REPLY_KEPT, REPLY_KEPT_LO, REPLY_KEPT_HI, REPLY_KEEP_OWN, REPLY_FIXED };
#define REPLY_MAX (REPLY_FIXED + 3 * COLL_SMALL_MAX_RANKS)
enum { WAY_DONE = 1, WAY_PLAN, WAY_FAILED };

/* This rank's side of the call. */
typedef struct small_call {
    pario_file *fh;
    int64_t total; /* data bytes of this rank */
    int64_t head[HEAD_MAX];
    char *data; /* the part's data: user memory or the packed stage */
    int64_t reply[REPLY_MAX];
} small_call;

/* The funnel's buffers, carved from fh->scratch.window. */
typedef struct funnel_bufs {
    int64_t *heads;     /* nranks headers of HEAD_MAX entries */
    char *data;         /* nranks data slots of cap bytes */
    coll_piece *pieces; /* every piece of every rank */
    int64_t cap;
} funnel_bufs;

/* Most data bytes a small part has. */
static int64_t small_cap(const pario_file *fh) {
    int64_t share = fh->hints.cb_buffer_size / fh->nranks;
    return share < COLL_SMALL_BYTES ? share : COLL_SMALL_BYTES;
}

/* The merged file pieces of data bytes [pos, pos + total) into pc; the
 * count, or -1 when there are more than COLL_SMALL_PIECES. */
static int64_t part_pieces(const pario_file *fh, int64_t pos, int64_t total, int64_t *pc) {
    io_file_cursor c;
    if (io_file_open(&c, &fh->view, pos) != PARIO_OK)
        return -1;
    int64_t n = 0, left = total, off, len;
    while (left > 0 && io_file_peek(&c, left, &off, &len)) {
        int joins = n > 0 && pc[2 * n - 2] + pc[2 * n - 1] == off;
        if (len > 0 && !joins && n == COLL_SMALL_PIECES)
            break; /* one piece too many: left stays above 0 */
        io_file_take(&c, len);
        left -= len;
        if (joins) {
            pc[2 * n - 1] += len;
        } else if (len > 0) {
            pc[2 * n] = off;
            pc[2 * n + 1] = len;
            n++;
        }
    }
    io_file_close(&c);
    return left == 0 ? n : -1;
}

/* This rank's data: in place in contiguous user memory, else packed into
 * the stage. */
static int part_data(small_call *s, const void *buf, MPI_Count count, const flat_type *mt) {
    io_mem_cursor m;
    int rc = io_mem_open(&m, mt, (void *)buf, count, 0);
    if (rc != PARIO_OK)
        return rc;
    if (m.contig) {
        s->data = m.contig;
    } else {
        pario_file *fh = s->fh;
        rc = io_scratch_reserve(&fh->scratch.stage, &fh->scratch.stage_len, s->total);
        if (rc == PARIO_OK)
            io_mem_copy(&m, fh->scratch.stage, s->total, 1);
        s->data = fh->scratch.stage;
    }
    io_mem_close(&m);
    return rc;
}

/* Fill this rank's header; its part is small only when the verdict is good,
 * the data fits and its pieces are few. */
static void describe_part(small_call *s, int rc, int64_t pos, const void *buf, MPI_Count count,
                          const flat_type *mt, const coll_range *mine) {
    int64_t *h = s->head;
    h[HEAD_RC] = rc;
    h[HEAD_FIRST] = mine->first;
    h[HEAD_END] = mine->end;
    h[HEAD_BYTES] = mine->bytes;
    h[HEAD_NPIECES] = -1;
    if (rc != PARIO_OK || s->total > small_cap(s->fh))
        return;
    int64_t n = part_pieces(s->fh, pos, s->total, h + HEAD_FIXED);
    if (n >= 0 && part_data(s, buf, count, mt) == PARIO_OK)
        h[HEAD_NPIECES] = n;
}

static int64_t head_len(const int64_t *h) {
    return HEAD_FIXED + 2 * (h[HEAD_NPIECES] > 0 ? h[HEAD_NPIECES] : 0);
}

/* Bytes of a part's data that travel: all of it when the part is small. */
static int64_t part_bytes(const int64_t *h) {
    return h[HEAD_NPIECES] >= 0 ? h[HEAD_BYTES] : 0;
}

static int wait_all(MPI_Request *reqs, int n) {
    return MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE) == MPI_SUCCESS ? PARIO_OK : PARIO_ERR_COMM;
}

/* ---- every rank but the funnel ----------------------------------------------------- */

static int send_part(small_call *s) {
    MPI_Comm comm = s->fh->comm;
    MPI_Request reqs[3];
    int bytes = (int)part_bytes(s->head);
    char *data = bytes > 0 ? s->data : (char *)s->head; /* any address for no bytes */
    MPI_Irecv(s->reply, REPLY_MAX, MPI_INT64_T, FUNNEL, TAG_REPLY, comm, &reqs[0]);
    MPI_Isend(s->head, (int)head_len(s->head), MPI_INT64_T, FUNNEL, TAG_HEAD, comm, &reqs[1]);
    MPI_Isend(data, bytes, MPI_BYTE, FUNNEL, TAG_DATA, comm, &reqs[2]);
    return wait_all(reqs, 3);
}

/* ---- the funnel ---------------------------------------------------------------------- */

static int funnel_reserve(pario_file *fh, funnel_bufs *b) {
    int n = fh->nranks;
    b->cap = small_cap(fh);
    int64_t heads = (int64_t)n * HEAD_MAX * (int64_t)sizeof(int64_t);
    int64_t pieces = (int64_t)n * COLL_SMALL_PIECES * (int64_t)sizeof(coll_piece);
    int64_t data = n * b->cap;
    int rc =
        io_scratch_reserve(&fh->scratch.window, &fh->scratch.window_len, heads + pieces + data);
    if (rc != PARIO_OK)
        return rc;
    char *p = fh->scratch.window; /* the aligned parts first, the bytes last */
    b->heads = (int64_t *)p;
    b->pieces = (coll_piece *)(p + heads);
    b->data = p + heads + pieces;
    return PARIO_OK;
}

/* Receive every other rank's header and data. */
static int receive_parts(small_call *s, funnel_bufs *b, char **data) {
    pario_file *fh = s->fh;
    int nreq = 0;
    MPI_Request reqs[2 * COLL_SMALL_MAX_RANKS];
    for (int r = 0; r < fh->nranks; r++) {
        if (r == fh->rank)
            continue;
        data[r] = b->data + r * b->cap;
        MPI_Irecv(b->heads + (int64_t)r * HEAD_MAX, HEAD_MAX, MPI_INT64_T, r, TAG_HEAD, fh->comm,
                  &reqs[nreq++]);
        MPI_Irecv(data[r], (int)b->cap, MPI_BYTE, r, TAG_DATA, fh->comm, &reqs[nreq++]);
    }
    return wait_all(reqs, nreq);
}

/* Without buffers the funnel still takes every rank's header and data, one
 * rank at a time into this frame (a part that travels is at most
 * COLL_SMALL_BYTES), and drops them: the call fails with its out-of-memory
 * verdict and no rank waits for a message. */
static int drop_parts(small_call *s) {
    pario_file *fh = s->fh;
    union {
        int64_t head[HEAD_MAX];
        char data[COLL_SMALL_BYTES];
    } sink;
    int rc = MPI_SUCCESS;
    for (int r = 0; r < fh->nranks && rc == MPI_SUCCESS; r++)
        if (r != fh->rank && (rc = MPI_Recv(sink.head, HEAD_MAX, MPI_INT64_T, r, TAG_HEAD, fh->comm,
                                            MPI_STATUS_IGNORE)) == MPI_SUCCESS)
            rc = MPI_Recv(sink.data, (int)sizeof sink.data, MPI_BYTE, r, TAG_DATA, fh->comm,
                          MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? PARIO_OK : PARIO_ERR_COMM;
}

/* Every rank's pieces with their data, sorted by offset; the count, or -1
 * when two pieces overlap (the call is then planned, which orders
 * overlapping writes as it always has). */
static int64_t sorted_pieces(const funnel_bufs *b, char **data, int n) {
    int64_t m = 0;
    for (int r = 0; r < n; r++) {
        const int64_t *h = b->heads + (int64_t)r * HEAD_MAX, *pc = h + HEAD_FIXED;
        char *at = data[r];
        for (int64_t i = 0; i < h[HEAD_NPIECES]; i++) {
            b->pieces[m++] = (coll_piece){pc[2 * i], pc[2 * i + 1], 0, at};
            at += pc[2 * i + 1];
        }
    }
    return coll_pieces_sort(b->pieces, m) ? -1 : m;
}

/* Whether the m sorted pieces make more than one run of adjacent ones. */
static int apart(const coll_piece *p, int64_t m) {
    for (int64_t i = 1; i < m; i++)
        if (p[i].off != p[i - 1].off + p[i - 1].len)
            return 1;
    return 0;
}

/* Where write calls are request-bound (a network file system: each is a
 * round trip to a server, and the ranks' writes proceed side by side
 * there), pieces apart would be one round trip after another at the
 * funnel: the call is planned instead, and the ranks' parts, neither
 * interleaved nor adjacent, go each its own way at once. IOR's segmented
 * 4 KiB collective writes on the GlusterFS test bed with 200 µs per request
 * (2 nodes x 2 ranks over TCP): 9 MiB/s through the funnel against ROMIO's
 * 13-14, each rank writing its own (docs/benchmarks.md, "The small-write
 * funnel hands parts apart back"). */
static int funnel_writes(const pario_file *fh, const coll_piece *p, int64_t m) {
    return m >= 0 && !(fh->write_call_bytes >= IO_REQUEST_BOUND_WRITE && apart(p, m));
}

/* Choose the way from everyone's header and, when done, write. */
static void settle(small_call *s, const funnel_bufs *b, char **data) {
    int n = s->fh->nranks, failed = 0, small = 1;
    for (int r = 0; r < n; r++) {
        const int64_t *h = b->heads + (int64_t)r * HEAD_MAX;
        failed |= h[HEAD_RC] != PARIO_OK;
        small &= h[HEAD_NPIECES] >= 0;
    }
    int64_t *reply = s->reply, m = failed || !small ? -1 : sorted_pieces(b, data, n);
    int one_run = m > 0 && !apart(b->pieces, m);
    if (!funnel_writes(s->fh, b->pieces, m))
        m = -1;
    reply[REPLY_WAY] = failed ? WAY_FAILED : m >= 0 ? WAY_DONE : WAY_PLAN;
    if (m >= 0) /* written, or kept */
        reply[REPLY_RC] = coll_funnel_write(s->fh, b->pieces, m, one_run);
    else if (!failed) /* planned: what the funnel keeps reaches the file first */
        reply[REPLY_RC] = coll_funnel_kept_write(s->fh, 1);
    else
        reply[REPLY_RC] = PARIO_OK;
    /* planned, the ranks keep their own parts where they go their own ways */
    reply[REPLY_KEEP_OWN] = reply[REPLY_WAY] == WAY_PLAN && coll_own_keep_wanted(s->fh);
    for (int r = 0; reply[REPLY_WAY] == WAY_PLAN && r < n; r++)
        memcpy(reply + REPLY_FIXED + 3 * r, b->heads + (int64_t)r * HEAD_MAX + HEAD_FIRST,
               3 * sizeof(int64_t));
}

/* Send every other rank the answer. */
static int answer_parts(small_call *s) {
    pario_file *fh = s->fh;
    int nreq = 0, len = REPLY_FIXED + (s->reply[REPLY_WAY] == WAY_PLAN ? 3 * fh->nranks : 0);
    MPI_Request reqs[COLL_SMALL_MAX_RANKS];
    for (int r = 0; r < fh->nranks; r++)
        if (r != fh->rank)
            MPI_Isend(s->reply, len, MPI_INT64_T, r, TAG_REPLY, fh->comm, &reqs[nreq++]);
    return wait_all(reqs, nreq);
}

static int run_funnel(small_call *s) {
    pario_file *fh = s->fh;
    funnel_bufs b = {0};
    char *data[COLL_SMALL_MAX_RANKS];
    int nobuf = funnel_reserve(fh, &b) != PARIO_OK;
    if (nobuf && s->head[HEAD_RC] == PARIO_OK)
        s->head[HEAD_RC] =
            pario_fail(&fh->last, PARIO_ERR_NO_MEM,
                       "write_all %s: out of memory for the collective call", fh->path);
    int rc = nobuf ? drop_parts(s) : receive_parts(s, &b, data);
    if (nobuf) {
        s->reply[REPLY_WAY] = WAY_FAILED;
        s->reply[REPLY_RC] = PARIO_OK;
    } else {
        memcpy(b.heads + (int64_t)fh->rank * HEAD_MAX, s->head,
               (size_t)head_len(s->head) * sizeof(int64_t));
        data[fh->rank] = s->data;
        settle(s, &b, data);
    }
    s->reply[REPLY_KEPT] =
        coll_funnel_kept_state(fh, &s->reply[REPLY_KEPT_LO], &s->reply[REPLY_KEPT_HI]);
    return rc == PARIO_OK ? answer_parts(s) : rc;
}

/* ---- the call ----------------------------------------------------------------------- */

int coll_small_write(coll_call *c, int rc, coll_range *all, int *done) {
    pario_file *fh = c->fh;
    small_call s = {.fh = fh, .total = c->total};
    rc = coll_own_kept_before(fh, rc, &c->mine); /* this rank's kept parts come first */
    describe_part(&s, rc, c->pos, c->buf, c->count, c->mt, &c->mine);
    if ((fh->rank == FUNNEL ? run_funnel(&s) : send_part(&s)) != PARIO_OK) {
        *done = 1;
        return io_agree(
            fh->comm,
            pario_fail(&fh->last, PARIO_ERR_COMM, "write_all %s: exchange failed", fh->path),
            &fh->last);
    }
    *done = s.reply[REPLY_WAY] != WAY_PLAN;
    coll_funnel_kept_heard(fh, (int)s.reply[REPLY_KEPT], s.reply[REPLY_KEPT_LO],
                           s.reply[REPLY_KEPT_HI]);
    c->keep_own = (int)s.reply[REPLY_KEEP_OWN];
    if (s.reply[REPLY_WAY] == WAY_FAILED)
        return io_agree(fh->comm, (int)s.head[HEAD_RC], &fh->last);
    if (s.reply[REPLY_RC] != PARIO_OK) /* the funnel's write failed: share its message */
        return io_agree(fh->comm, fh->rank == FUNNEL ? (int)s.reply[REPLY_RC] : PARIO_OK,
                        &fh->last);
    for (int r = 0; !*done && r < fh->nranks; r++) {
        const int64_t *x = s.reply + REPLY_FIXED + 3 * r;
        all[r] = (coll_range){x[0], x[1], x[2]};
    }
    return PARIO_OK;
}
