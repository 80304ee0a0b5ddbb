/* Prefetch: a rank reads the streams of its small reads of a read-only file
 * ahead of them.
 *
 * Where every read call is a round trip to a server (request-bound reads, a
 * network file system), a program that reads a file in small calls pays a
 * request per call: at the aggregator of collective calls, which gathers a
 * call's pieces into one read (IOR's strided 4 KiB reads: 16 KiB per call
 * on 4 ranks), or at every rank where each reads a segment of its own
 * (IOR's segmented reads, collective or not: 4 KiB per rank and call).
 * Read-only, the file's bytes cannot change through this handle, and under
 * MPI's rules another client's writes need only show after this handle's
 * sync: so a rank follows up to IO_PREFETCH_STREAMS streams of its reads,
 * reads each ahead in growing reads and serves the reads that follow from
 * them, until the next sync (io_file_drop_cached). The bytes a stream holds
 * are those its last prefetch returned, served only when a read lies wholly
 * within them. */
#include <stdlib.h>
#include <string.h>
#include "io/file/file.h"

/* A read at most this many of its lengths past where a stream's last read
 * ended still follows on from it (strided reads skip the holes between
 * their windows). */
#define PREFETCH_GAP_READS 1

static int held_covers(const io_prefetch_stream *s, int64_t len, int64_t off) {
    return s->held > 0 && off >= s->start && off + len <= s->start + s->held;
}

static int follows_on(const io_prefetch_stream *s, int64_t len, int64_t off) {
    return s->next >= 0 && off >= s->next && off - s->next <= PREFETCH_GAP_READS * len;
}

/* The stream holding the read, else the one it follows on from, else NULL. */
static io_prefetch_stream *stream_of(io_prefetch *a, int64_t len, int64_t off) {
    for (int i = 0; i < IO_PREFETCH_STREAMS; i++)
        if (held_covers(&a->s[i], len, off))
            return &a->s[i];
    for (int i = 0; i < IO_PREFETCH_STREAMS; i++)
        if (follows_on(&a->s[i], len, off))
            return &a->s[i];
    return NULL;
}

/* The stream used longest ago, for a read that starts a new one. */
static io_prefetch_stream *oldest(io_prefetch *a) {
    io_prefetch_stream *o = &a->s[0];
    for (int i = 1; i < IO_PREFETCH_STREAMS; i++)
        if (a->s[i].used < o->used)
            o = &a->s[i];
    return o;
}

/* Room for size bytes in the stream's buffer. Not a scratch reservation
 * (io_scratch_reserve, which the fault shim's op=mem fails): without room
 * the read is made without prefetching, and nothing fails. */
static int room_for(io_prefetch_stream *s, int64_t size) {
    if (s->cap >= size)
        return 1;
    char *p = realloc(s->buf, (size_t)size);
    if (!p)
        return 0;
    s->buf = p;
    s->cap = size;
    return 1;
}

/* An aggregator's prefetch of at least PREFETCH_PARTS x PREFETCH_PART_MIN
 * bytes is read in PREFETCH_PARTS parts side by side, one thread each: a
 * client that cuts a read into requests of its own size (FUSE: 128 KiB)
 * makes them one after the other, and several reads of one client are
 * served at once. A rank's own reads are not split: every rank reads then,
 * and four threads each made IOR's segmented 4 KiB reads 0.78-0.86x as fast
 * on the test bed with 200 µs per request, while the aggregator's ior-hard
 * reads went 1.66-1.74x as fast. */
#define PREFETCH_PARTS 4
#define PREFETCH_PART_MIN ((int64_t)256 << 10)

typedef struct part_read {
    pthread_t thread;
    io_handle *io;
    char *buf;
    int64_t len, off, got;
    int rc, started;
    pario_error err;
} part_read;

static void *part_main(void *arg) {
    part_read *p = arg;
    p->rc = p->io->drv->pread(p->io, p->buf, p->len, p->off, &p->got, &p->err);
    return NULL;
}

/* s->size bytes at off into the stream's buffer (in parts where split); it
 * holds the bytes up to the first short part (the end of the file). A
 * part's failure fails the fill, with that part's message. */
static int fill(io_handle *io, io_prefetch_stream *s, int64_t off, int split, pario_error *err) {
    int n = split && s->size >= PREFETCH_PARTS * PREFETCH_PART_MIN ? PREFETCH_PARTS : 1;
    int64_t each = (s->size / n + 4095) / 4096 * 4096;
    part_read parts[PREFETCH_PARTS];
    for (int i = 0; i < n; i++) {
        int64_t at = i * each < s->size ? i * each : s->size;
        int64_t len = s->size - at < each ? s->size - at : each;
        parts[i] = (part_read){.io = io, .buf = s->buf + at, .len = len, .off = off + at};
    }
    for (int i = 1; i < n; i++)
        parts[i].started = pthread_create(&parts[i].thread, NULL, part_main, &parts[i]) == 0;
    for (int i = 0; i < n; i++)
        if (!parts[i].started) /* this thread's part, or one no thread could take */
            part_main(&parts[i]);
    for (int i = 1; i < n; i++)
        if (parts[i].started)
            pthread_join(parts[i].thread, NULL);
    s->held = 0;
    s->start = off;
    for (int i = 0; i < n; i++) {
        if (parts[i].rc != PARIO_OK) {
            s->held = 0;
            *err = parts[i].err;
            return parts[i].rc;
        }
        s->held += parts[i].got;
        if (parts[i].got < parts[i].len)
            break;
    }
    return PARIO_OK;
}

/* Four times the read's length at first, then twice the last prefetch, but
 * never more than the stream has run so far (from its first read to this
 * one) nor a stream's share of a->max (which holds twice the read:
 * stream_read). A stream ends where the program's reads jump elsewhere,
 * and what its last prefetch holds past that is read for nothing; a stream
 * is taken to run on about as far as it has run, so at most about half of
 * what it reads is wasted. Growing to the share regardless read up to twice
 * the bytes of blocks of a few MiB: IOR's segmented 64 KiB reads (4 MiB
 * blocks) on the GlusterFS test bed were 0.5-0.75x the peers, and 0.59-0.82x
 * pario without the prefetch (docs/benchmarks.md, "Prefetch: streams that
 * end"). */
static int64_t next_size(const io_prefetch *a, const io_prefetch_stream *s, int64_t len,
                         int64_t off) {
    int64_t size = s->size >= 2 * len ? 2 * s->size : 4 * len;
    int64_t run = off - s->origin;
    int64_t most = run > 4 * len ? run : 4 * len;
    int64_t share = a->max / IO_PREFETCH_STREAMS;
    most = most < share ? most : share;
    return size < most ? size : most;
}

static int stream_read(io_handle *io, io_prefetch *a, char *dst, int64_t len, int64_t off,
                       int aggregator, int64_t *got, pario_error *err) {
    io_prefetch_stream *s = stream_of(a, len, off);
    int small = len <= a->small && 2 * len <= a->max / IO_PREFETCH_STREAMS;
    int covered = s && held_covers(s, len, off);
    if (s && !covered && small) { /* prefetch where there is room for it */
        int64_t size = next_size(a, s, len, off);
        if (room_for(s, size)) {
            s->size = size;
            int rc = fill(io, s, off, aggregator, err);
            if (rc != PARIO_OK)
                return rc;
            covered = 1;
        }
    }
    if (!covered) { /* a new stream, a read too large to prefetch, or no room */
        s = s ? s : oldest(a);
        *s = (io_prefetch_stream){
            .buf = s->buf, .cap = s->cap, .next = off + len, .origin = off, .used = ++a->clock};
        return io->drv->pread(io, dst, len, off, got, err);
    }
    int64_t n = s->start + s->held - off; /* the bytes held from off: short at end of file */
    n = n < len ? n : len;
    memcpy(dst, s->buf + (off - s->start), (size_t)n);
    *got = n;
    s->next = off + len;
    s->used = ++a->clock;
    return PARIO_OK;
}

int io_prefetch_pread(io_handle *io, io_prefetch *a, char *dst, int64_t len, int64_t off,
                      int aggregator, int64_t *got, pario_error *err) {
    if (!a || a->max <= 0 || len <= 0)
        return io->drv->pread(io, dst, len, off, got, err);
    pthread_mutex_lock(&a->lock);
    int rc = stream_read(io, a, dst, len, off, aggregator, got, err);
    pthread_mutex_unlock(&a->lock);
    return rc;
}

void io_prefetch_drop(io_prefetch *a) {
    for (int i = 0; i < IO_PREFETCH_STREAMS; i++)
        a->s[i] = (io_prefetch_stream){.buf = a->s[i].buf, .cap = a->s[i].cap, .next = -1};
}

void io_prefetch_init(io_prefetch *a) {
    pthread_mutex_init(&a->lock, NULL);
    io_prefetch_drop(a);
}

void io_prefetch_free(io_prefetch *a) {
    for (int i = 0; i < IO_PREFETCH_STREAMS; i++) {
        free(a->s[i].buf);
        a->s[i].buf = NULL;
        a->s[i].cap = 0;
    }
    io_prefetch_drop(a);
    pthread_mutex_destroy(&a->lock);
}
