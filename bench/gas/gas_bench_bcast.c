/* Broadcast completion time for every pario algorithm and MPI_Bcast, over all
 * ranks of the job (run with 2, 4, 8). A repetition times `iters` broadcasts
 * from rank 0 back to back; its value is the slowest rank's average. The
 * path is node-local unless PARIO_NODE_SIZE is set. */
#include <stdint.h>

#include "bench_common.h"
#include "pario/gas.h"

#define SMALL_ITERS 100 /* broadcasts per repetition for small messages */

static const size_t sizes[] = {2, 65536, 1 << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static double slowest(double mine) {
    double worst = 0;
    MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

static double pario_rep(pario_gas_team *team, int alg, unsigned char *buf, size_t n, int iters) {
    pario_gas_barrier(team);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        pario_gas_broadcast(team, buf, n, 0, (pario_gas_bcast_alg)alg);
    return slowest((MPI_Wtime() - t0) * 1e6 / iters);
}

static double mpi_rep(unsigned char *buf, size_t n, int iters) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Bcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
    return slowest((MPI_Wtime() - t0) * 1e6 / iters);
}

/* Repetitions of MPI_Bcast and every algorithm at one size are interleaved. */
static void run_size(pario_gas_team *team, const char *impl, int ranks, size_t n,
                     unsigned char *buf) {
    int iters = bench_iters(n * (size_t)ranks, SMALL_ITERS);
    double usec[PARIO_GAS_BCAST_COUNT + 1][BENCH_REPS];
    for (int r = 0; r < BENCH_REPS; r++) {
        usec[PARIO_GAS_BCAST_COUNT][r] = mpi_rep(buf, n, iters);
        for (int alg = 0; alg < PARIO_GAS_BCAST_COUNT; alg++)
            usec[alg][r] = pario_rep(team, alg, buf, n, iters);
    }
    bench_report("bcast", "mpi", "bcast_mpi", n, ranks, usec[PARIO_GAS_BCAST_COUNT], n);
    for (int alg = 0; alg < PARIO_GAS_BCAST_COUNT; alg++) {
        char op[64];
        snprintf(op, sizeof op, "bcast_%s", pario_gas_bcast_alg_name(alg));
        bench_report("bcast", impl, op, n, ranks, usec[alg], n);
    }
    if (pario_gas_rank(team) == 0)
        printf("{\"bench\":\"bcast\",\"impl\":\"%s\",\"op\":\"auto_choice\",\"bytes\":%zu,"
               "\"ranks\":%d,\"choice\":\"%s\"}\n",
               impl, n, ranks, pario_gas_bcast_alg_name(pario_gas_bcast_auto_choice(team, n)));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned char *buf = calloc(1, sizes[NSIZES - 1]);
    pario_gas_team *team = NULL;
    pario_error err;
    if (pario_gas_team_create(MPI_COMM_WORLD, &team, &err) != PARIO_OK) {
        fprintf(stderr, "gas_bench_bcast: %s\n", err.msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const char *impl = pario_gas_node_count(team) == 1 ? "pario-local" : "pario-mpi";
    for (size_t i = 0; i < NSIZES; i++)
        run_size(team, impl, size, sizes[i], buf);
    pario_gas_team_free(&team);
    free(buf);
    MPI_Finalize();
    return 0;
}
