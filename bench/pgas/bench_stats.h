/* Median, minimum and maximum of repeated timings (the pgas benchmarks). */
#ifndef PARIO_BENCH_PGAS_STATS_H
#define PARIO_BENCH_PGAS_STATS_H

#include <stdlib.h>

typedef struct bench_stats {
    double median, min, max;
} bench_stats;

static int bench_stats_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v[0 .. n-1] in place; n >= 1. The median of an even count is the
 * mean of the middle two. */
static inline bench_stats bench_stats_of(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_stats_cmp);
    double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return (bench_stats){med, v[0], v[n - 1]};
}

#endif
