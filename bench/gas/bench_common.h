/* Shared helpers of the gas benchmarks: repetition statistics and one JSON
 * object per line on rank 0. */
#ifndef PARIO_BENCH_GAS_COMMON_H
#define PARIO_BENCH_GAS_COMMON_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Repetitions per measurement; each repetition times an inner loop and keeps
 * its per-operation average, the report gives median, min and max of those. */
#define BENCH_REPS 15

static int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Inner-loop iterations for a transfer of `bytes`: fewer for big messages so
 * that one repetition moves at most about 16 MiB. */
static inline int bench_iters(size_t bytes, int small_iters) {
    size_t cap = bytes ? (16u << 20) / bytes : (size_t)small_iters;
    if (cap < 2)
        cap = 2;
    return (int)(cap < (size_t)small_iters ? cap : (size_t)small_iters);
}

/* Prints one line on rank 0. usec[] holds BENCH_REPS per-op times in µs;
 * `payload` is the bytes one operation moves, for the bandwidth column. */
static inline void bench_report(const char *bench, const char *impl, const char *op, size_t bytes,
                                int ranks, double *usec, size_t payload) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0)
        return;
    qsort(usec, BENCH_REPS, sizeof(double), bench_cmp_double);
    double med = usec[BENCH_REPS / 2];
    double mib = med > 0 ? (double)payload / med * 1e6 / (1024.0 * 1024.0) : 0;
    printf("{\"bench\":\"%s\",\"impl\":\"%s\",\"op\":\"%s\",\"bytes\":%zu,\"ranks\":%d,"
           "\"usec_median\":%.3f,\"usec_min\":%.3f,\"usec_max\":%.3f,\"mib_s_median\":%.1f,"
           "\"reps\":%d}\n",
           bench, impl, op, bytes, ranks, med, usec[0], usec[BENCH_REPS - 1], mib, BENCH_REPS);
    fflush(stdout);
}

#endif
