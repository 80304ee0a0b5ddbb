/* gas: barrier, broadcast (every algorithm, sizes 0 B .. 8 MiB, every root),
 * reductions. Argument "small" stops at 70 KiB (for 8 ranks on 2 cores). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptest.h"
#include "pario/gas.h"

static const size_t sizes[] = {
    0, 1, 2, 7, 1000, 16 * 1024, 70001, 512 * 1024 + 3, 1024 * 1024, 8 * 1024 * 1024};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define SMALL_LIMIT ((size_t)70001)

static unsigned char byte_of(int root, size_t bytes, size_t i) {
    return (unsigned char)(root * 101 + bytes * 3 + i * 131 + (i >> 8) + 1);
}

static void test_broadcast(pario_gas_team *team, int rank, int size, size_t limit) {
    unsigned char *buf = malloc(sizes[NSIZES - 1] + 1);
    for (int alg = 0; alg < PARIO_GAS_BCAST_COUNT; alg++) {
        for (size_t s = 0; s < NSIZES && sizes[s] <= limit; s++) {
            size_t n = sizes[s];
            for (int root = 0; root < size; root++) {
                for (size_t i = 0; i <= n; i++)
                    buf[i] = rank == root ? byte_of(root, n, i) : 0xee;
                int rc = pario_gas_broadcast(team, buf, n, root, (pario_gas_bcast_alg)alg);
                PT_EQ(rc, PARIO_OK);
                size_t bad = 0;
                for (size_t i = 0; i < n; i++)
                    bad += buf[i] != byte_of(root, n, i);
                /* The byte after the message is untouched. */
                bad += buf[n] != (rank == root ? byte_of(root, n, n) : 0xee);
                if (bad)
                    fprintf(stderr, "rank %d: %s bytes %zu root %d: %zu bad\n", rank,
                            pario_gas_bcast_alg_name(alg), n, root, bad);
                PT_EQ(bad, 0);
            }
        }
    }
    free(buf);
    PT_CHECK(pario_gas_bcast_alg_name(PARIO_GAS_BCAST_COUNT) == NULL);
    PT_CHECK(strcmp(pario_gas_bcast_alg_name(PARIO_GAS_BCAST_BINOMIAL), "binomial") == 0);
    pario_gas_bcast_alg pick = pario_gas_bcast_auto_choice(team, 1 << 20);
    PT_CHECK(pick > PARIO_GAS_BCAST_AUTO && pick < PARIO_GAS_BCAST_COUNT);
}

static void test_reductions(pario_gas_team *team, int rank, int size) {
    enum { N = 5 };
    int64_t in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = (int64_t)(rank + 1) * (i + 1) - (i == 2 ? 1000000000000LL : 0);
    PT_EQ(pario_gas_allreduce_i64(team, in, out, N, PARIO_GAS_SUM), PARIO_OK);
    int64_t tri = (int64_t)size * (size + 1) / 2;
    for (int i = 0; i < N; i++)
        PT_EQ(out[i], tri * (i + 1) - (i == 2 ? 1000000000000LL * size : 0));
    PT_EQ(pario_gas_allreduce_i64(team, in, out, N, PARIO_GAS_MAX), PARIO_OK);
    PT_EQ(out[0], size);
    PT_EQ(pario_gas_allreduce_i64(team, in, out, N, PARIO_GAS_MIN), PARIO_OK);
    PT_EQ(out[1], 2);
    /* In place. */
    int64_t v[1] = {rank};
    PT_EQ(pario_gas_allreduce_i64(team, v, v, 1, PARIO_GAS_MAX), PARIO_OK);
    PT_EQ(v[0], size - 1);
    double d[2] = {0.5 * rank, -1.0 * rank}, dout[2] = {0, 0};
    PT_EQ(pario_gas_allreduce_double(team, d, dout, 2, PARIO_GAS_SUM), PARIO_OK);
    PT_CHECK(dout[0] == 0.5 * (size * (size - 1) / 2));
    PT_EQ(pario_gas_allreduce_double(team, d, dout, 2, PARIO_GAS_MIN), PARIO_OK);
    PT_CHECK(dout[1] == -1.0 * (size - 1));
    int root = size - 1;
    dout[0] = -7;
    PT_EQ(pario_gas_reduce_double(team, d, dout, 1, PARIO_GAS_MAX, root), PARIO_OK);
    PT_CHECK(rank == root ? dout[0] == 0.5 * (size - 1) : dout[0] == -7);
    PT_EQ(pario_gas_reduce_i64(team, in, out, 1, PARIO_GAS_SUM, 0), PARIO_OK);
    if (rank == 0)
        PT_EQ(out[0], tri);
    PT_EQ(pario_gas_reduce_i64(team, in, out, 1, PARIO_GAS_SUM, size), PARIO_ERR_RANK);
    PT_EQ(pario_gas_allreduce_i64(team, in, out, 1, (pario_gas_op)9), PARIO_ERR_ARG);
}

/* After a barrier every rank sees the put every other rank made before it. */
static void test_barrier_visibility(pario_gas_team *team, int rank, int size) {
    PT_EQ(pario_gas_segment_attach(team, sizeof(int64_t) * (size_t)size), PARIO_OK);
    int64_t mine = 1000 + rank;
    for (int t = 0; t < size; t++)
        PT_EQ(pario_gas_put(team, t, sizeof(int64_t) * (size_t)rank, &mine, sizeof mine), PARIO_OK);
    PT_EQ(pario_gas_barrier(team), PARIO_OK);
    int64_t *seg = NULL;
    PT_EQ(pario_gas_segment_ptr(team, rank, (void **)&seg), PARIO_OK);
    int bad = 0;
    for (int r = 0; r < size; r++)
        bad += seg[r] != 1000 + r;
    PT_EQ(bad, 0);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t limit = argc > 1 && strcmp(argv[1], "small") == 0 ? SMALL_LIMIT : (size_t)-1;
    pario_gas_team *team = NULL;
    pario_error err;
    PT_EQ(pario_gas_team_create(MPI_COMM_WORLD, &team, &err), PARIO_OK);
    PT_EQ(pario_gas_barrier(team), PARIO_OK);
    test_broadcast(team, rank, size, limit);
    test_reductions(team, rank, size);
    test_barrier_visibility(team, rank, size);
    PT_EQ(pario_gas_team_free(&team), PARIO_OK);
    return ptest_finish();
}
