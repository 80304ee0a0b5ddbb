/* I/O characterization: what a program asked of a file (the logical layer:
 * every read and write call) and what reached the operating system (the
 * physical layer: every storage system call of src/io/driver/sys.c and
 * every byte-range lock), with the collective route, the aggregators'
 * domains, the sieving windows, the bytes exchanged and where the time
 * went.
 *
 * One switch: $PARIO_TRACE=PATH, or the hint `pario_trace` (in the
 * program's info, or $PARIO_HINT_pario_trace). A file is traced when its
 * rank 0 asks: the wish travels with the hints open agrees on anyway, so
 * tracing costs open no message of its own. Untraced files carry
 * fh->trace == NULL and every hook returns after one test; the storage
 * calls test one process-wide counter of traced files (the registry below).
 *
 * Memory is bounded per file and rank: counters, log2 size histograms and
 * an event log of IO_TRACE_EVENTS entries that counts what it dropped.
 * Close makes no call of its own: the closed file's trace waits with the
 * file's private communicator (io_trace_pending), and the ranks' records
 * are merged on the file's rank 0, which appends the file's entry to the
 * run's JSON document (trace_json.c), when pario frees that communicator
 * (io/file/parked.c: at the latest at MPI_Finalize), or when
 * IO_TRACE_PENDING closed files wait. A
 * program that ends normally leaves the same document as one that merged
 * at every close; one killed between a close and MPI_Finalize loses the
 * traces still waiting (as a Darshan log is written at MPI_Finalize). */
#ifndef PARIO_IO_TRACE_H
#define PARIO_IO_TRACE_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include "io/trace/clock.h"

struct pario_file;
struct rw_call;

/* Log2 size classes: class 0 holds 0-byte requests, class b bytes in
 * [2^(b-1), 2^b); the last one everything larger (>= 2^46). */
#define IO_TRACE_HIST 48
/* Events kept per file and rank (48 bytes each: at most 192 KiB, the log
 * grows from IO_TRACE_EVENTS_FIRST as events come); later ones are
 * counted as dropped. Enough for every call of the test programs and the
 * first seconds of a large run, which is what a timeline shows anyway. */
#define IO_TRACE_EVENTS 4096
#define IO_TRACE_EVENTS_FIRST 64
/* Distinct views remembered per file and rank. */
#define IO_TRACE_VIEWS 4
/* Descriptors the physical layer can attribute to a traced file. */
#define IO_TRACE_FDS 4096

/* Physical operations (one per storage system call kind). */
enum io_trace_phys {
    IO_TRACE_PREAD,
    IO_TRACE_PWRITE,
    IO_TRACE_SYNC,
    IO_TRACE_TRUNC,
    IO_TRACE_ALLOC,
    IO_TRACE_LOCK,
    IO_TRACE_PHYS_OPS
};

/* The kinds of a logical call (bits of io_trace_event.flags). */
enum {
    IO_TRACE_WRITE = 1 << 0,
    IO_TRACE_COLL = 1 << 1,
    IO_TRACE_NONBLOCKING = 1 << 2,
    IO_TRACE_NONCONTIG = 1 << 3, /* the view has holes */
    IO_TRACE_VECTORED = 1 << 4,  /* physical: a pwritev */
    IO_TRACE_FAILED = 1 << 5,
    /* logical: the call's one physical request, at the call's offset and of
     * its bytes, is in the same event (phys_lag, phys_dur), not one of its own */
    IO_TRACE_FOLDED = 1 << 6,
};

/* Calls, bytes and time of one kind of request, with its size histogram
 * and how many were well-formed (offset and length multiples of the stripe
 * unit, and of a 4 KiB page). */
typedef struct io_trace_stat {
    int64_t calls, bytes, failed;
    int64_t aligned_unit, aligned_page;
    int64_t first, end; /* lowest offset and highest end touched (first < 0: none) */
    int64_t hist[IO_TRACE_HIST];
    double time;
} io_trace_stat;

/* A view as the trace summarises it. */
typedef struct io_trace_view {
    int64_t disp, size, extent; /* filetype's data bytes and extent */
    int64_t blocks;             /* contiguous blocks in one filetype instance */
    int64_t block_min, block_max;
    int64_t contiguous; /* the data stream maps to the file without holes */
    int64_t calls;      /* logical calls made through it */
} io_trace_view;

/* One logical or physical request (layer 0 logical, 1 physical). A blocking
 * call that made exactly one pread/pwrite at its own offset and of its own
 * bytes (an independent contiguous access) is one event: the logical one,
 * flagged IO_TRACE_FOLDED, carrying the physical request's times. */
typedef struct io_trace_event {
    double t; /* seconds since IO_TRACE_EPOCH (clock.h), comparable across ranks */
    int64_t off, bytes;
    float dur;      /* seconds */
    float phys_lag; /* IO_TRACE_FOLDED: the physical request started this long after t */
    float phys_dur; /* IO_TRACE_FOLDED: and took this long */
    int16_t flags;
    int8_t layer; /* 0 logical, 1 physical */
    int8_t op;    /* logical: 0 read, 1 write; physical: enum io_trace_phys */
    int8_t view;  /* logical: index into the rank's views (-1: none) */
} io_trace_event;

/* Everything one rank records about one file. Only int64_t and double, so
 * ranks' records travel as bytes to rank 0 (the same machine type). */
typedef struct io_trace_rec {
    io_trace_stat logical[2]; /* [0] reads, [1] writes */
    int64_t kinds[2][4];      /* [dir][coll + 2 * nonblocking] calls */
    int64_t noncontig[2];     /* calls through a view with holes */
    io_trace_stat phys[IO_TRACE_PHYS_OPS];
    int64_t vectored;                                       /* pwritev calls among the writes */
    int64_t sieve_windows[2], sieve_span[2], sieve_data[2]; /* data sieving, [dir] */
    int64_t tp_calls, tp_domains, tp_domain_bytes, tp_domain_max, tp_cycle_bytes, tp_cycles;
    int64_t exchange_bytes;
    double exchange_time;
    double t_open, t_close, storage_time_in_calls;
    int64_t nviews, nevents, dropped;
    io_trace_view views[IO_TRACE_VIEWS];
} io_trace_rec;

typedef struct io_trace io_trace;

/* The registry of traced files (trace.c; process-wide, documented there):
 * how many are open, for the storage calls' one test. */
extern atomic_int io_trace_open_files;

static inline int io_trace_any(void) {
    return __builtin_expect(atomic_load_explicit(&io_trace_open_files, memory_order_relaxed), 0);
}

/* At open, before the hints are agreed: this rank's wish ($PARIO_TRACE or
 * the hint pario_trace in info) into fh->hints.trace. */
void io_trace_wish(struct pario_file *fh, MPI_Info info);
/* At the end of a successful open: starts tracing fh when the agreed hints
 * say so (rank 0's wish; rank 0 writes to its path). */
void io_trace_open(struct pario_file *fh, MPI_Info info);
/* Closed files' traces not merged yet, in the order closed, with the
 * communicator they are to be merged on: in the file (pario_file) while
 * it is open and in its parked set (io/file/parked.c) while the
 * communicator waits for the next open. Every rank of the communicator
 * holds as many (a rank without a trace of its own holds a placeholder),
 * so every rank merges the same ones at the same call. */
#define IO_TRACE_PENDING 16
typedef struct io_trace_pending {
    int n;
    io_trace *items[IO_TRACE_PENDING];
} io_trace_pending;

/* At close (collective), after the file's last traced request: fh's trace
 * joins fh->trace_pending; when that is full, all of them are merged at
 * once. */
void io_trace_close(struct pario_file *fh);
/* Collective on comm (the communicator q waited with): merges every trace
 * of q, in order, and empties it. */
void io_trace_flush(io_trace_pending *q, MPI_Comm comm);

/* At MPI_Finalize, for a file still open (no collective call possible):
 * this rank writes its own part of the file's trace, and of the closed
 * files' traces waiting with it, unmerged (trace_json.c). */
void io_trace_finalize(struct pario_file *fh);

/* A blocking call being traced on this thread. Its first plain pread or
 * pwrite is kept here instead of taking the trace's lock on its own, and is
 * recorded with the call, in the call's event when it is at the call's
 * offset and of its bytes (IO_TRACE_FOLDED).
 *
 * In an independent call (`lazy_end`) the kept request's end is not read
 * when it returns: it is the thread's next clock reading in the call (the
 * next storage call's start, or the call's end), which comes after a few
 * returns, so a folded call reads the clock three times, not four. A
 * collective call reads it at once (exchange steps follow, unread here). */
typedef struct io_trace_inflight {
    io_trace *t;
    struct io_trace_inflight *outer; /* the call this thread was in before (none: NULL) */
    int has;                         /* a request is kept */
    int lazy_end;                    /* its end is the next reading (see above) */
    int end_open;                    /* kept, its end not read yet */
    int op;                          /* IO_TRACE_PREAD or IO_TRACE_PWRITE */
    int64_t off, bytes;
    double start, dur;
} io_trace_inflight;

/* Starts tracing a blocking call (independent or not) on a file whose
 * trace is t: its start time, 0 when the file is not traced (t NULL: one
 * test, nothing else to do). Otherwise io_trace_call(..., in) must follow
 * on this thread. */
double io_trace_enter(io_trace *t, io_trace_inflight *in, int independent);
static inline double io_trace_begin(io_trace *t, io_trace_inflight *in, int independent) {
    return __builtin_expect(t != 0, 0) ? io_trace_enter(t, in, independent) : 0.0;
}

/* Logical layer: a read or write call that started at t0 moved `bytes`
 * from stream position pos; in is its io_trace_begin's (NULL for a call
 * recorded when it is posted, before its storage requests). */
void io_trace_call(struct pario_file *fh, const struct rw_call *c, int coll, int nonblocking,
                   int64_t pos, int64_t bytes, int rc, double t0, io_trace_inflight *in);

/* Physical layer, from sys.c and the driver's locks: one call on fd. */
void io_trace_sys(int fd, int op, int flags, int64_t off, int64_t bytes, double t0);
static inline double io_trace_sys_begin(void) {
    return io_trace_any() ? io_trace_now() : 0.0;
}
static inline void io_trace_sys_end(int fd, int op, int flags, int64_t off, int64_t bytes,
                                    double t0) {
    if (__builtin_expect(t0 != 0.0, 0))
        io_trace_sys(fd, op, flags, off, bytes, t0);
}

/* A sieving window of `span` file bytes carrying `data` bytes. */
void io_trace_sieve(io_trace *t, int write, int64_t span, int64_t data);
/* A two-phase call: aggregators, this rank's domain [first, end) when it
 * aggregates (first >= end otherwise), cycle window and cycles. */
void io_trace_plan(io_trace *t, int naggr, int64_t first, int64_t end, int64_t cycle_bytes,
                   int64_t cycles);
/* One cycle's data exchange: bytes this rank sent or received, since t0. */
void io_trace_exchange(io_trace *t, int64_t bytes, double t0);
/* The start time of a traced step (0 when t is NULL: nothing to time). */
static inline double io_trace_clock(const io_trace *t) {
    return __builtin_expect(t != 0, 0) ? io_trace_now() : 0.0;
}

#endif
