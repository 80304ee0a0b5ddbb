/* The trace of one file on one rank, shared by trace.c and trace_json.c. */
#ifndef PARIO_IO_TRACE_INTERNAL_H
#define PARIO_IO_TRACE_INTERNAL_H

#include <sched.h>
#include <stdatomic.h>
#include "io/flat/flat.h"
#include "io/trace/trace.h"

/* What a file's entry says of the file besides the ranks' records, taken
 * when it closes (its entry may be written later, after the file is gone:
 * io_trace_pending). */
typedef struct io_trace_facts {
    char *path; /* the name opened (owned) */
    int nnodes;
    int read_only;           /* opened MPI_MODE_RDONLY */
    int request_bound_reads; /* a read call costs a round trip (io/cost) */
    int read_once;           /* read through the node's copy (io/cache/once.c) */
    char routes[256]; /* collective calls per route (io_coll_routes_text) */
    int64_t cb_buffer_size, cb_nodes, cb_cycle_size, ind_wr_buffer_size, ind_rd_buffer_size,
        striping_unit;
} io_trace_facts;

struct io_trace {
    atomic_flag lock; /* every field below (trace_lock) */
    io_trace_rec rec;
    io_trace_event *events;                     /* room for cap events */
    int64_t cap;                                /* grows to IO_TRACE_EVENTS on demand */
    const flat_type *view_flat[IO_TRACE_VIEWS]; /* the views of rec.views, to know them again */
    int64_t unit;                               /* the stripe unit requests are judged against */
    int64_t unit_mask;                          /* unit - 1 when unit is a power of two, else -1 */
    char *doc_path;                             /* where the run's document goes */
    io_trace_facts facts;                       /* the file's, filled at close (or finalize) */
};

/* The trace's lock is held for a few hundred instructions while recording
 * (and while io_trace_finalize writes, when nothing else records), so
 * taking it is one atomic exchange and releasing it one store (a mutex
 * costs two atomic operations and two calls on every request); a waiter
 * yields the CPU, since with more ranks than cores the holder may be off it. */
static inline void trace_lock(io_trace *t) {
    while (atomic_flag_test_and_set_explicit(&t->lock, memory_order_acquire))
        sched_yield();
}

static inline void trace_unlock(io_trace *t) {
    atomic_flag_clear_explicit(&t->lock, memory_order_release);
}

/* Text that grows as it is written (trace_json.c); `failed` once memory ran out. */
typedef struct io_trace_text {
    char *s;
    size_t len, cap;
    int failed;
} io_trace_text;

/* What a rank sends rank 0 at close, besides its formatted events. */
typedef struct io_trace_part {
    io_trace_rec rec;
    int64_t events_len; /* bytes of its formatted events */
} io_trace_part;

/* This rank's events as JSON arrays separated by commas, times in seconds
 * since t0 (the file's earliest open), into out (t->lock held or the file
 * closing). Each rank formats its own, so close costs rank 0 only its part. */
void io_trace_format_events(const io_trace *t, int rank, double t0, io_trace_text *out);
void io_trace_text_free(io_trace_text *b);
/* Room for n more bytes in b; 0 when memory runs out. */
int io_trace_text_reserve(io_trace_text *b, size_t n);

/* The file's rank 0 when its trace is merged: the file's entry joins the
 * run's document. parts holds the nranks ranks' records; events every
 * rank's formatted events, back to back (parts[r].events_len bytes from
 * rank r). */
void io_trace_write_file(const io_trace *t, const io_trace_part *parts, const char *events,
                         int nranks);
/* Where no collective call is possible (MPI_Finalize with the file's
 * communicator in use by a file still open): this rank's own part of t,
 * unmerged, into PATH.open.<world rank>; rank is its rank in the file. */
void io_trace_write_unclosed(const io_trace *t, int rank);

#endif
