/* Deciding whether to aggregate, choosing aggregators and file domains. */
#include <stdlib.h>
#include "io/coll/coll_internal.h"
#include "io/coll/route.h"
#include "io/driver/stripe.h"

static int cmp_range(const void *a, const void *b) {
    const coll_range *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first;
}

coll_shape coll_ranges_shape(const coll_range *r, int n) {
    coll_shape sh = {0};
    coll_range few[COLL_SMALL_MAX_RANKS]; /* no allocation for up to this many ranks */
    coll_range *s = n <= COLL_SMALL_MAX_RANKS ? few : malloc((size_t)n * sizeof *s);
    if (!s) {
        sh.interleaved = 1; /* when in doubt, aggregate */
        return sh;
    }
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (r[i].end <= r[i].first)
            continue;
        sh.holes |= r[i].bytes < r[i].end - r[i].first;
        sh.largest = r[i].bytes > sh.largest ? r[i].bytes : sh.largest;
        s[m++] = r[i];
    }
    qsort(s, (size_t)m, sizeof *s, cmp_range);
    sh.adjacent = m > 1;
    for (int i = 1; i < m; i++) {
        sh.interleaved |= s[i].first < s[i - 1].end;
        sh.adjacent &= s[i].first == s[i - 1].end;
    }
    if (s != few)
        free(s);
    return sh;
}

static int64_t align_down(int64_t x, int64_t a) {
    return x / a * a;
}
static int64_t align_up(int64_t x, int64_t a) {
    return (x + a - 1) / a * a;
}

/* Whether every rank's data fills its range (no holes). */
static int ranges_whole(const coll_range *r, int n) {
    for (int i = 0; i < n; i++)
        if (r[i].end > r[i].first && r[i].bytes != r[i].end - r[i].first)
            return 0;
    return 1;
}

/* This rank's data range limits of the call: [*lo, *hi), empty as 0, 0. */
static void union_of(const pario_file *fh, const coll_range *r, int64_t *lo, int64_t *hi) {
    *lo = INT64_MAX;
    *hi = 0;
    for (int i = 0; i < fh->nranks; i++)
        if (r[i].end > r[i].first) {
            *lo = r[i].first < *lo ? r[i].first : *lo;
            *hi = r[i].end > *hi ? r[i].end : *hi;
        }
    if (*lo >= *hi)
        *lo = *hi = 0;
}

/* The plan's arrays are the file's (io/coll/place.c): naggr <= nranks. */
static void plan_arrays(coll_plan *p, const pario_file *fh) {
    p->aggr = fh->coll_aggr;
    p->dom_start = fh->coll_domains;
    p->dom_end = fh->coll_domains + fh->nranks;
}

/* Contiguous domains of whole stripe units, so every aggregator request is
 * aligned; returns the longest domain's reach from its first unit. */
static int64_t contiguous_domains(coll_plan *p, int64_t lo, int64_t hi) {
    int64_t unit = p->unit, naggr = p->naggr;
    int64_t base = align_down(lo, unit);
    int64_t size = align_up((hi - base + naggr - 1) / naggr, unit);
    int64_t longest = 0;
    for (int i = 0; i < naggr; i++) {
        int64_t s = base + i * size, e = s + size;
        p->dom_start[i] = s < lo ? lo : s > hi ? hi : s;
        p->dom_end[i] = e > hi ? hi : e < p->dom_start[i] ? p->dom_start[i] : e;
        int64_t reach = p->dom_end[i] - align_down(p->dom_start[i], unit);
        if (p->dom_end[i] > p->dom_start[i] && reach > longest)
            longest = reach;
    }
    return longest;
}

/* Cycles of contiguous domains: windows of cycle_bytes. */
static void contiguous_cycles(coll_plan *p, int64_t longest) {
    p->ncycles = (longest + p->cycle_bytes - 1) / p->cycle_bytes;
}

/* Per-target windows of `parts` whole stripes fitting cycle_bytes; 0 when
 * one stripe does not fit (the contiguous plan is kept then). */
static int per_target_cycles(coll_plan *p, int64_t lo, int64_t hi) {
    if (p->unit > p->cycle_bytes)
        return 0;
    p->parts = p->cycle_bytes / p->unit;
    p->row0 = lo / p->unit / p->factor;
    int64_t last = hi > lo ? (hi - 1) / p->unit / p->factor : p->row0 - 1;
    int64_t rows = p->group * p->parts;
    p->ncycles = hi > lo ? (last - p->row0) / rows + 1 : 0;
    return 1;
}

/* Each per-target aggregator's domain as the span from its first stripe
 * in [lo, hi) to the end (for the trace and the start of each rank's walk). */
static void per_target_domains(coll_plan *p, int64_t lo, int64_t hi) {
    for (int a = 0; a < p->naggr; a++) {
        int64_t first = (p->row0 + (a / p->factor) * p->parts) * p->factor + a % p->factor;
        int64_t s = first * p->unit;
        p->dom_start[a] = s < lo ? lo : s > hi ? hi : s;
        p->dom_end[a] = hi;
    }
}

/* The layout's factor when the file is striped over at least two targets
 * and there are aggregators enough for one target each; else 0. */
static int64_t targets_to_serve(const pario_file *fh, int naggr) {
    const io_stripe_file *s = fh->io.stripe;
    if (!s || s->layout.factor < 2 || naggr < s->layout.factor)
        return 0;
    return s->layout.factor;
}

/* Per-target windows of whole stripes (halved when pipelined, as contiguous
 * cycles are) over whole groups of aggregators, the ones past them resting;
 * 0 when a window cannot hold a stripe, with p left for contiguous domains. */
static int per_target_plan(coll_plan *p, int64_t factor, int naggr, int64_t lo, int64_t hi,
                           int64_t cb, int64_t cycle, int pipelined) {
    p->factor = factor;
    p->group = naggr / factor;
    p->per_target = per_target_cycles(p, lo, hi);
    if (p->per_target && pipelined && p->ncycles > 1 && cb >= 2) {
        p->halved = 1;
        p->cycle_bytes = cycle < cb / 2 ? cycle : cb / 2;
        p->per_target = per_target_cycles(p, lo, hi);
    }
    if (!p->per_target) {
        p->halved = 0;
        p->cycle_bytes = cycle < cb ? cycle : cb;
        return 0;
    }
    p->naggr = (int)(naggr / factor * factor);
    per_target_domains(p, lo, hi);
    return 1;
}

/* Contiguous domains of whole units, in cycles (halved when pipelined). */
static void contiguous_plan(coll_plan *p, int64_t lo, int64_t hi, int64_t cb, int64_t cycle,
                            int pipelined) {
    int64_t longest = contiguous_domains(p, lo, hi);
    contiguous_cycles(p, longest);
    if (pipelined && p->ncycles > 1 && cb >= 2) {
        p->halved = 1;
        p->cycle_bytes = cycle < cb / 2 ? cycle : cb / 2;
        contiguous_cycles(p, longest);
    }
}

/* Data bytes of the call, every rank's. */
static int64_t data_of(const coll_range *r, int n) {
    int64_t data = 0;
    for (int i = 0; i < n; i++)
        data += r[i].end > r[i].first ? r[i].bytes : 0;
    return data;
}

/* The file bytes one cycle spans: pario_cb_cycle_size, and more where the
 * call's data is sparse in its span, so that a cycle carries about that
 * much data on average, up to cb_buffer_size. Every cycle costs every rank
 * a step of the exchange, whatever it carries: HDF5's hyperslab writes in
 * t_shapesame (5 KiB per rank in pieces of 24 B over about 256 MiB) took
 * about 128 nearly empty cycles of 512 KiB per aggregator, 2.6 ms per call,
 * against OMPIO's one pass over its buffer; with windows of cb_buffer_size,
 * 4 cycles and 1.0 ms. The aggregator's window is addressed by file offset
 * and only the pages data lands in are touched, so a sparse window costs
 * address space, not memory; dense calls keep the small cache-sized
 * windows. */
static int64_t cycle_span(int64_t cycle, int64_t cb, int64_t data, int64_t span) {
    if (data <= 0 || span <= data || cycle >= cb)
        return cycle;
    double grown = (double)cycle * ((double)span / (double)data);
    return grown >= (double)cb ? cb : (int64_t)grown;
}

void coll_plan_make(coll_plan *p, const pario_file *fh, const coll_range *r, int write,
                    int pipelined) {
    int64_t lo, hi;
    union_of(fh, r, &lo, &hi);
    *p = (coll_plan){.my_aggr = -1};
    int64_t cb = fh->hints.cb_buffer_size, cycle = io_coll_cycle_size(fh);
    int64_t window = cycle < cb ? cycle : cb;
    int64_t hinted = fh->hints.cb_cycle_size < cb ? fh->hints.cb_cycle_size : cb;
    cycle = cycle_span(cycle, cb, data_of(r, fh->nranks), hi - lo);
    if (cycle >= cb && window < cb) /* so sparse that a whole buffer carries less than */
        pipelined = 0;              /* a cycle's data: one window, nothing to overlap */
    int naggr = coll_route_aggregators(fh, write, hi - lo, hinted, io_coll_naggr(fh));
    int64_t factor = targets_to_serve(fh, naggr);
    plan_arrays(p, fh);
    p->naggr = naggr;
    p->unit = factor > 0                    ? fh->io.stripe->layout.unit
              : fh->hints.striping_unit > 0 ? fh->hints.striping_unit
                                            : 1;
    /* The window of one cycle: pario_cb_cycle_size of data (small windows stay
     * in the CPU cache between the exchange and the file access; cycle_span),
     * and when several cycles are pipelined two windows must fit in
     * cb_buffer_size. */
    p->cycle_bytes = cycle < cb ? cycle : cb;
    if (!(factor > 0 && per_target_plan(p, factor, naggr, lo, hi, cb, cycle, pipelined)))
        contiguous_plan(p, lo, hi, cb, cycle, pipelined);
    p->whole = !p->per_target && ranges_whole(r, fh->nranks) ? r : NULL;
    for (int i = 0; i < p->naggr; i++)
        if ((p->aggr[i] = io_coll_aggregator(fh, i, naggr)) == fh->rank)
            p->my_aggr = i;
}

void coll_plan_part(const coll_plan *p, int a, int64_t k, int64_t i, int64_t *ps, int64_t *pe) {
    if (!p->per_target) {
        coll_plan_window(p, a, k, ps, pe);
        return;
    }
    int64_t row = p->row0 + (k * p->group + a / p->factor) * p->parts + i;
    int64_t s = (row * p->factor + a % p->factor) * p->unit;
    int64_t lo = p->dom_start[a] < s ? s : p->dom_start[a]; /* never before the union */
    *ps = lo;
    *pe = s + p->unit < p->dom_end[a] ? s + p->unit : p->dom_end[a];
}

void coll_plan_window(const coll_plan *p, int a, int64_t k, int64_t *ws, int64_t *we) {
    if (p->per_target) {
        int64_t row = p->row0 + (k * p->group + a / p->factor) * p->parts;
        int64_t ps, pe;
        *ws = (row * p->factor + a % p->factor) * p->unit;
        *we = *ws;
        for (int64_t i = p->parts - 1; i >= 0 && *we <= *ws; i--) {
            coll_plan_part(p, a, k, i, &ps, &pe);
            if (ps < pe)
                *we = pe;
        }
        return;
    }
    int64_t base = align_down(p->dom_start[a], p->unit) + k * p->cycle_bytes;
    *ws = base > p->dom_start[a] ? base : p->dom_start[a];
    *we = base + p->cycle_bytes < p->dom_end[a] ? base + p->cycle_bytes : p->dom_end[a];
}
