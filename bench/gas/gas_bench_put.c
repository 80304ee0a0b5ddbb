/* Put/get latency and bandwidth from rank 0 to rank 1, next to
 * MPI_Put + MPI_Win_flush and MPI_Get + MPI_Win_flush on an MPI_Win_allocate
 * window, and memcpy of the same bytes (the node-local limit). Run with 2
 * ranks on one node. Two teams are measured in the same run: one as the
 * environment gives it and one created with PARIO_NODE_SIZE=1 (the MPI path).
 * Each operation is complete (flushed) before the next starts. */
#include <stdint.h>

#include "bench_common.h"
#include "pario/gas.h"

#define SMALL_ITERS 500             /* inner iterations for small transfers */
#define SEG_BYTES ((size_t)4 << 20) /* largest transfer */

static const size_t sizes[] = {8, 64, 512, 4096, 32768, 262144, 1 << 20, 4 << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])

enum op_kind { OP_PUT, OP_GET };

static double pario_rep(pario_gas_team *team, int kind, unsigned char *buf, size_t n, int iters) {
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (kind == OP_PUT)
            pario_gas_put(team, 1, 0, buf, n);
        else
            pario_gas_get(team, buf, 1, 0, n);
    }
    return (MPI_Wtime() - t0) * 1e6 / iters;
}

static double mpi_rep(MPI_Win win, int kind, unsigned char *buf, size_t n, int iters) {
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (kind == OP_PUT)
            MPI_Put(buf, (int)n, MPI_BYTE, 1, 0, (int)n, MPI_BYTE, win);
        else
            MPI_Get(buf, (int)n, MPI_BYTE, 1, 0, (int)n, MPI_BYTE, win);
        MPI_Win_flush(1, win);
    }
    return (MPI_Wtime() - t0) * 1e6 / iters;
}

static double memcpy_rep(unsigned char *dst, const unsigned char *src, size_t n, int iters) {
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        memcpy(dst, src, n);
        __asm__ __volatile__("" ::: "memory"); /* keep every copy */
    }
    return (MPI_Wtime() - t0) * 1e6 / iters;
}

/* Rank 0 only. Repetitions of the five measurements at one size are
 * interleaved so that load from other processes hits all of them alike. */
static void run_size(pario_gas_team **teams, int nteams, MPI_Win win, MPI_Win cwin, size_t n,
                     unsigned char *buf, unsigned char *other) {
    int iters = bench_iters(n, SMALL_ITERS);
    double usec[5][BENCH_REPS], pario[2][2][BENCH_REPS];
    for (int r = 0; r < BENCH_REPS; r++) {
        usec[0][r] = mpi_rep(win, OP_PUT, buf, n, iters);
        usec[1][r] = mpi_rep(win, OP_GET, buf, n, iters);
        usec[2][r] = memcpy_rep(other, buf, n, iters);
        usec[3][r] = mpi_rep(cwin, OP_PUT, buf, n, iters);
        usec[4][r] = mpi_rep(cwin, OP_GET, buf, n, iters);
        for (int t = 0; t < nteams; t++) {
            pario[t][OP_PUT][r] = pario_rep(teams[t], OP_PUT, buf, n, iters);
            pario[t][OP_GET][r] = pario_rep(teams[t], OP_GET, buf, n, iters);
        }
    }
    /* MPI_Win_allocate lets Open MPI pick its shared-memory RMA component on
     * one node; MPI_Win_create over private memory takes the component used
     * between nodes (the one pario's off-node path runs on). */
    bench_report("put", "mpi", "put_flush", n, 2, usec[0], n);
    bench_report("put", "mpi", "get_flush", n, 2, usec[1], n);
    bench_report("put", "memcpy", "memcpy", n, 1, usec[2], n);
    bench_report("put", "mpi", "put_flush_wincreate", n, 2, usec[3], n);
    bench_report("put", "mpi", "get_flush_wincreate", n, 2, usec[4], n);
    for (int t = 0; t < nteams; t++) {
        const char *impl = pario_gas_is_local(teams[t], 1) ? "pario-local" : "pario-mpi";
        bench_report("put", impl, "put", n, 2, pario[t][OP_PUT], n);
        bench_report("put", impl, "get", n, 2, pario[t][OP_GET], n);
    }
}

static pario_gas_team *make_team(void) {
    pario_gas_team *team = NULL;
    pario_error err;
    if (pario_gas_team_create(MPI_COMM_WORLD, &team, &err) != PARIO_OK ||
        pario_gas_segment_attach(team, SEG_BYTES) != PARIO_OK) {
        fprintf(stderr, "gas_bench_put: %s\n", err.msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return team;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "gas_bench_put: run with 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    unsigned char *buf = malloc(SEG_BYTES), *other = malloc(SEG_BYTES);
    memset(buf, 1, SEG_BYTES);
    memset(other, 2, SEG_BYTES);
    void *wbase = NULL;
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)SEG_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &wbase, &win);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    unsigned char *cmem = calloc(1, SEG_BYTES);
    MPI_Win cwin;
    MPI_Win_create(cmem, (MPI_Aint)SEG_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &cwin);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, cwin);
    pario_gas_team *teams[2];
    int nteams = 1;
    teams[0] = make_team();
    if (pario_gas_is_local(teams[0], 1 - rank)) {
        setenv("PARIO_NODE_SIZE", "1", 1);
        teams[nteams++] = make_team();
    }
    if (rank == 0)
        for (size_t i = 0; i < NSIZES; i++)
            run_size(teams, nteams, win, cwin, sizes[i], buf, other);
    /* Rank 1 waits in a gas call, which keeps MPI progressing for the
     * off-node team. */
    for (int t = 0; t < nteams; t++)
        pario_gas_barrier(teams[t]);
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Win_unlock_all(cwin);
    MPI_Win_free(&cwin);
    free(cmem);
    for (int t = 0; t < nteams; t++)
        pario_gas_team_free(&teams[t]);
    free(buf);
    free(other);
    MPI_Finalize();
    return 0;
}
