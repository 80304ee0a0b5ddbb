/* How much of a non-blocking memget hides behind computation. Rank 0 reads
 * rank 1's block of an array (run it with PARIO_NODE_SIZE=1 for the MPI
 * path) and computes for about as long as the read takes, four ways, each
 * repetition interleaved and the medians printed:
 *   get      blocking memget alone
 *   compute  the computation alone
 *   blocking memget, then compute
 *   nb       memget_nb, compute, sync
 * overlap = (blocking - nb) / min(get, compute): 1 when the read is hidden
 * completely, 0 when memget_nb were a blocking call in disguise. Rank 1
 * meanwhile either waits in a barrier (target in MPI) or computes without
 * any MPI call (target busy; argument "busy"), which shows whether the
 * transfer progresses without the target. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pario/pgas.h"

#define REPS 15
static const size_t sizes[] = {(size_t)64 << 10, (size_t)1 << 20, (size_t)4 << 20};

static volatile double sink;

/* About iters units of floating-point work, no memory traffic. */
static void compute(long iters) {
    double x = 1.0;
    for (long i = 0; i < iters; i++)
        x = x * 1.0000001 + 1e-9;
    sink = x;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double median(double *v) {
    qsort(v, REPS, sizeof *v, cmp);
    return v[REPS / 2];
}

/* Iterations of compute() that take about usec microseconds (the fastest
 * of five timings of 2 ms or more: a loaded machine only makes runs slower). */
static long calibrate(double usec) {
    long iters = 1000;
    double t = 0;
    do {
        iters *= 2;
        double t0 = MPI_Wtime();
        compute(iters);
        t = (MPI_Wtime() - t0) * 1e6;
    } while (t < 2000);
    for (int k = 0; k < 4; k++) {
        double t0 = MPI_Wtime();
        compute(iters);
        double tk = (MPI_Wtime() - t0) * 1e6;
        t = tk < t ? tk : t;
    }
    return (long)((double)iters * usec / t) + 1;
}

typedef struct times {
    double get, comp, blocking, nb;
} times;

/* One repetition of the four measurements on rank 0. */
static void measure(pario_pgas *ctx, const pario_pgas_array *a, uint64_t first, uint64_t count,
                    void *buf, long iters, times *t) {
    double t0 = MPI_Wtime();
    pario_pgas_memget(ctx, buf, a, first, count);
    t->get = MPI_Wtime() - t0;
    t0 = MPI_Wtime();
    compute(iters);
    t->comp = MPI_Wtime() - t0;
    t0 = MPI_Wtime();
    pario_pgas_memget(ctx, buf, a, first, count);
    compute(iters);
    t->blocking = MPI_Wtime() - t0;
    pario_pgas_handle h = PARIO_PGAS_COMPLETE_HANDLE;
    t0 = MPI_Wtime();
    pario_pgas_memget_nb(ctx, buf, a, first, count, &h);
    compute(iters);
    pario_pgas_sync(ctx, h);
    t->nb = MPI_Wtime() - t0;
}

static void run_size(pario_pgas *ctx, size_t bytes, int busy_target) {
    int rank = pario_pgas_mythread(ctx);
    uint64_t count = bytes / 8;
    pario_pgas_array a;
    if (pario_pgas_all_alloc(ctx, 2 * count, 8, count, &a) != PARIO_OK) {
        if (rank == 0)
            fprintf(stderr, "all_alloc: %s\n", pario_pgas_last_error(ctx)->msg);
        return;
    }
    void *buf = malloc(bytes);
    memset(buf, 1, bytes);
    double get = 0;
    if (rank == 0) { /* the read's median time, for the computation's length */
        double g[REPS];
        for (int i = 0; i < REPS; i++) {
            double t0 = MPI_Wtime();
            pario_pgas_memget(ctx, buf, &a, count, count);
            g[i] = MPI_Wtime() - t0;
        }
        get = median(g);
    }
    MPI_Bcast(&get, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    long iters = calibrate(get * 1e6);
    double v[4][REPS];
    for (int r = 0; r < REPS; r++) {
        pario_pgas_barrier(ctx, PARIO_PGAS_ANY);
        if (rank == 0) {
            times t;
            measure(ctx, &a, count, count, buf, iters, &t);
            v[0][r] = t.get, v[1][r] = t.comp, v[2][r] = t.blocking, v[3][r] = t.nb;
        } else if (busy_target) {
            compute(iters * 5); /* longer than rank 0's four measurements */
        }
    }
    pario_pgas_barrier(ctx, PARIO_PGAS_ANY);
    if (rank == 0) {
        double g = median(v[0]), c = median(v[1]), b = median(v[2]), n = median(v[3]);
        double lo = g < c ? g : c;
        printf("| %zu KiB | %s | %.0f | %.0f | %.0f | %.0f | %.2f |\n", bytes >> 10,
               busy_target ? "computing" : "in barrier", g * 1e6, c * 1e6, b * 1e6, n * 1e6,
               (b - n) / lo);
    }
    free(buf);
    pario_pgas_all_free(ctx, &a);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pario_pgas_config cfg = {(size_t)8 << 20, 0};
    pario_pgas *ctx = NULL;
    pario_error err;
    if (size != 2 || pario_pgas_init(MPI_COMM_WORLD, &cfg, &ctx, &err) != PARIO_OK) {
        fprintf(stderr, "pgas_bench_overlap: needs 2 ranks (and pgas init)\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int busy = argc > 1 && strcmp(argv[1], "busy") == 0;
    if (pario_pgas_mythread(ctx) == 0) {
        printf("| read | target | get µs | compute µs | blocking µs | nb µs | overlap |\n");
        printf("|---|---|---|---|---|---|---|\n");
    }
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        run_size(ctx, sizes[s], busy);
    pario_pgas_finalize(&ctx);
    MPI_Finalize();
    return 0;
}
