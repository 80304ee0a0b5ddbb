/* Two-phase collective I/O: internal pieces shared by the coll folder. */
#ifndef PARIO_IO_COLL_INTERNAL_H
#define PARIO_IO_COLL_INTERNAL_H

#include "io/coll/coll.h"

/* What one rank accesses in a collective call: file bytes [first, end)
 * holding `bytes` data bytes (first == end when it accesses nothing). */
typedef struct coll_range {
    int64_t first, end, bytes;
} coll_range;

/* One collective call as every path sees it. */
typedef struct coll_call {
    pario_file *fh;
    int write;
    int64_t pos; /* stream byte of the view where the access starts */
    void *buf;
    MPI_Count count;
    MPI_Datatype type;
    const flat_type *mt; /* the memory type, decoded (NULL when this rank's check failed) */
    int64_t total;       /* this rank's data bytes (reads: clipped at end of file) */
    coll_range mine;     /* the file bytes it accesses */
    int64_t moved;       /* bytes moved, for the status */
    int plain;           /* every rank's view is linear in the file and its memory one
                            block (agreed in the allgather of ranges) */
    int keep_own;        /* the funnel's answer: where each rank writes its own part,
                            it keeps it (funnel_kept.c) */
} coll_call;

/* The aggregators and the file domain each one owns. */
typedef struct coll_plan {
    int naggr;
    int *aggr;          /* rank of aggregator i */
    int64_t *dom_start; /* domain i is [dom_start[i], dom_end[i]) */
    int64_t *dom_end;
    int64_t unit;        /* stripe unit: windows start at multiples of it */
    int64_t cycle_bytes; /* window of one aggregator per cycle */
    int halved;          /* pipelined cycles: two windows of cb_buffer_size / 2, one
                            exchanged while the file is accessed through the other */
    int64_t ncycles;
    int my_aggr; /* index of this rank among aggregators, or -1 */
    /* Per target (a striped file with at least as many aggregators as
     * targets): aggregator a serves target a % factor only, as member
     * a / factor of that target's group of `group`. The target's stripes,
     * numbered by row (stripe / factor) from row0, go to the members in
     * turn, `parts` rows each, one member's rows per cycle: a window is
     * `parts` stripes of one target, consecutive in its object. */
    int per_target;
    int64_t factor, group, parts, row0;
    /* Every rank's range when each is whole (its data fills it: no holes)
     * and the domains are contiguous, else NULL: an aggregator then knows
     * each rank's piece of its window, the range cut at the window, and
     * needs no list of pieces (twophase.c). */
    const struct coll_range *whole;
} coll_plan;

/* The ranks' ranges with data, in file order: whether some range has holes,
 * some starts before the previous one ends (overlap or interleave), each
 * starts where the previous one ends (at least two), and the largest
 * range's bytes. */
typedef struct coll_shape {
    int holes, interleaved, adjacent;
    int64_t largest;
} coll_shape;
coll_shape coll_ranges_shape(const coll_range *r, int n);
/* Choose aggregators (cb_nodes spread over ranks, fewer for request-bound
 * reads: route.c) and aligned domains; pipelined: the cycles may be halved
 * and overlap file access with the exchange (the same on every rank). The
 * plan's arrays are the file's (io/coll/place.c), so it cannot fail. */
void coll_plan_make(coll_plan *p, const pario_file *fh, const coll_range *r, int write,
                    int pipelined);
/* Window [*ws, *we) of aggregator a in cycle k (empty when *ws >= *we):
 * the span from its first part to its last. */
void coll_plan_window(const coll_plan *p, int a, int64_t k, int64_t *ws, int64_t *we);
/* The window's parts: 1, or `parts` per target. */
static inline int64_t coll_plan_nparts(const coll_plan *p) {
    return p->per_target ? p->parts : 1;
}
/* Part i of aggregator a's window in cycle k: file bytes [*ps, *pe), in
 * file order (empty when *ps >= *pe). */
void coll_plan_part(const coll_plan *p, int a, int64_t k, int64_t i, int64_t *ps, int64_t *pe);
/* Where file byte x of a window starting at ws lies in its buffer. */
static inline int64_t coll_plan_place(const coll_plan *p, int64_t ws, int64_t x) {
    if (!p->per_target)
        return x - ws;
    return (x / p->unit / p->factor - ws / p->unit / p->factor) * p->unit + x % p->unit;
}

/* Most ranks for which small writes go through one aggregator (small.c):
 * it answers every rank itself, so its cost grows linearly with them. */
#define COLL_SMALL_MAX_RANKS 16
/* Most ranks that keep collective writes (kept.c: each has a slice of the
 * shared window, and whoever writes them gathers every slice's pieces). */
#define COLL_KEPT_MAX_RANKS 64

/* Writes: every rank's verdict (rc) and range reach the funnel, with the
 * data of small parts. *done = 1: the call is over (every part was small and
 * the funnel wrote it, or a verdict was bad) and the agreed outcome is
 * returned. *done = 0: all[] holds every rank's range, as after an
 * allgather, and the call goes on. c->mt may be NULL when rc is a failure. */
int coll_small_write(coll_call *c, int rc, coll_range *all, int *done);

/* A piece of the file to write: extent, the collective call it belongs to
 * (orders overlapping pieces; 0 when there is one call), its bytes. */
typedef struct coll_piece {
    int64_t off, len, seq;
    char *data;
} coll_piece;
/* Sort n pieces by offset (then call); 1 when two of them overlap. */
int coll_pieces_sort(coll_piece *p, int64_t n);
/* Write n pieces in their order (under the byte-range lock while some rank
 * may sieve); with join, one pwritev per run of adjacent pieces. Failures
 * are recorded in err. */
int coll_pieces_write(pario_file *fh, const coll_piece *p, int64_t n, int join, pario_error *err);

/* A write the route keeps (route.c, rule 1): this rank's part (rc: its
 * verdict on the arguments, not shared) goes into its slice of the shared
 * window, or is written now when it does not fit. No communication; returns
 * rc only: a failure to store the part is reported by the next collective
 * point, on every rank. (When no window can be made, on every rank alike,
 * the part is written now and the outcome agreed.) */
int coll_kept_write(coll_call *c, int rc);

/* A monotonic clock, ns (kept.c): the flusher's ticks and kept runs' ages. */
int64_t coll_now_ns(void);

/* The funnel's writes (funnel_kept.c). m sorted pieces, one run of adjacent
 * ones when one_run: kept when the funnel may keep them (appended to its
 * run when they follow on), written otherwise, after what it keeps. The
 * outcome, with a failure to write a kept run recorded since (then
 * reported). */
typedef struct funnel_kept funnel_kept;
int coll_funnel_write(pario_file *fh, const coll_piece *p, int64_t m, int one_run);
/* This rank writes its kept run (only a funnel's when funnel_only); the
 * failure recorded since, taken (the caller reports it on every rank). */
int coll_funnel_kept_write(pario_file *fh, int funnel_only);
/* The funnel: whether ranks writing their own parts should keep them. */
int coll_own_keep_wanted(const pario_file *fh);
/* Whether the funnel keeps a run (or a failure to report), and the range
 * it holds locked: [lo, hi). */
int coll_funnel_kept_state(pario_file *fh, int64_t *lo, int64_t *hi);
/* Every rank: what the funnel's answer said. */
void coll_funnel_kept_heard(pario_file *fh, int kept, int64_t lo, int64_t hi);
/* Each rank's own part, where the funnel planned the call and the ranges
 * send each rank its own way (c->keep_own): kept in this rank's run when
 * one extent that follows on it (or starts it), written otherwise. A
 * failure is recorded, for the next answer or collective point; every rank
 * notes how far the kept parts reach (all: the call's ranges). */
void coll_own_keep(coll_call *c, const coll_range *all);
/* Before this rank's part goes to the funnel: its own run is written unless
 * the part follows on it; its recorded failure becomes its verdict. */
int coll_own_kept_before(pario_file *fh, int rc, const coll_range *mine);
/* This rank's own run, written (a failure recorded). */
void coll_own_kept_write(pario_file *fh);
/* The flusher: write a run FUNNEL_KEPT_MS old; when the next is due (ns). */
int64_t coll_funnel_kept_tick(pario_file *fh, int64_t now, pario_error *err);

/* Run the exchange-and-I/O cycles of call c by plan p. */
int coll_twophase(coll_call *c, const coll_plan *p);

#endif
