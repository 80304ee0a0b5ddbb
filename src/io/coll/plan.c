/* Deciding whether to aggregate, choosing aggregators and file domains. */
#include <stdlib.h>
#include "io/coll/coll_internal.h"

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

void coll_plan_free(coll_plan *p) {
    free(p->aggr);
    free(p->dom_start);
    free(p->dom_end);
    *p = (coll_plan){0};
}

int coll_plan_make(coll_plan *p, const pario_file *fh, const coll_range *r, int pipelined) {
    int64_t lo = INT64_MAX, hi = 0;
    for (int i = 0; i < fh->nranks; i++)
        if (r[i].end > r[i].first) {
            lo = r[i].first < lo ? r[i].first : lo;
            hi = r[i].end > hi ? r[i].end : hi;
        }
    *p = (coll_plan){.my_aggr = -1};
    int naggr = io_coll_naggr(fh);
    p->aggr = malloc((size_t)naggr * sizeof *p->aggr);
    p->dom_start = malloc((size_t)naggr * sizeof *p->dom_start);
    p->dom_end = malloc((size_t)naggr * sizeof *p->dom_end);
    if (!p->aggr || !p->dom_start || !p->dom_end) {
        coll_plan_free(p);
        return PARIO_ERR_NO_MEM;
    }
    p->naggr = naggr;
    for (int i = 0; i < naggr; i++) {
        p->aggr[i] = io_coll_aggregator(fh, i, naggr);
        if (p->aggr[i] == fh->rank)
            p->my_aggr = i;
    }
    if (lo >= hi) {
        lo = hi = 0;
    }
    /* Domains of whole stripe units, so every aggregator request is aligned. */
    int64_t unit = fh->hints.striping_unit > 0 ? fh->hints.striping_unit : 1;
    int64_t base = align_down(lo, unit);
    int64_t size = align_up((hi - base + naggr - 1) / naggr, unit);
    int64_t longest = 0;
    p->unit = unit;
    for (int i = 0; i < naggr; i++) {
        int64_t s = base + i * size, e = s + size;
        p->dom_start[i] = s < lo ? lo : s > hi ? hi : s;
        p->dom_end[i] = e > hi ? hi : e < p->dom_start[i] ? p->dom_start[i] : e;
        int64_t reach = p->dom_end[i] - align_down(p->dom_start[i], unit);
        if (p->dom_end[i] > p->dom_start[i] && reach > longest)
            longest = reach;
    }
    /* The window of one cycle: at most pario_cb_cycle_size (small windows stay
     * in the CPU cache between the exchange and the file access), and when
     * several cycles are pipelined two windows must fit in cb_buffer_size. */
    int64_t cb = fh->hints.cb_buffer_size, cycle = fh->hints.cb_cycle_size;
    p->cycle_bytes = cycle < cb ? cycle : cb;
    p->ncycles = (longest + p->cycle_bytes - 1) / p->cycle_bytes;
    if (pipelined && p->ncycles > 1 && cb >= 2) {
        p->halved = 1;
        p->cycle_bytes = cycle < cb / 2 ? cycle : cb / 2;
        p->ncycles = (longest + p->cycle_bytes - 1) / p->cycle_bytes;
    }
    return PARIO_OK;
}

void coll_plan_window(const coll_plan *p, int a, int64_t k, int64_t *ws, int64_t *we) {
    int64_t base = align_down(p->dom_start[a], p->unit) + k * p->cycle_bytes;
    *ws = base > p->dom_start[a] ? base : p->dom_start[a];
    *we = base + p->cycle_bytes < p->dom_end[a] ? base + p->cycle_bytes : p->dom_end[a];
}
