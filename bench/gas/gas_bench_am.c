/* Active-message latency and flood bandwidth between ranks 0 and 1, next to
 * MPI_Send/MPI_Recv doing the same. Run with 2 ranks on one node. Two teams
 * are measured in the same run: one as the environment gives it (node-local
 * unless PARIO_NODE_SIZE=1 is set) and one created with PARIO_NODE_SIZE=1
 * (the MPI path), so the two paths see the same machine load.
 *
 *   round trip : rank 0 sends a request of n bytes, rank 1's handler replies
 *                with n bytes, rank 0 polls for the reply; reported as half
 *                the round trip (op *_rtt_half).
 *   flood      : rank 0 sends a stream of requests of n bytes without replies,
 *                then one Short whose reply marks the end (op *_flood). */
#include <stdint.h>

#include "bench_common.h"
#include "pario/gas.h"

#define SMALL_ITERS 200             /* inner iterations for small messages */
#define FLOOD_MSGS 200              /* messages per flood repetition (fewer when large) */
#define SEG_BYTES ((size_t)4 << 20) /* largest Long payload */

static const size_t sizes[] = {8, 64, 512, 4096, 32768, 65536, 262144, 1 << 20, 4 << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])

enum { H_SHORT, H_MED, H_LONG, H_REPLY, H_SINK, H_COUNT };
static int base;
static volatile int got_reply;

static void on_short(pario_gas_token *t, void *p, size_t n, const uint64_t *a, int na) {
    (void)p, (void)n;
    pario_gas_reply_short(t, base + H_REPLY, a, na);
}
static void on_medium(pario_gas_token *t, void *p, size_t n, const uint64_t *a, int na) {
    pario_gas_reply_medium(t, base + H_REPLY, p, n, a, na);
}
static void on_long(pario_gas_token *t, void *p, size_t n, const uint64_t *a, int na) {
    pario_gas_reply_long(t, base + H_REPLY, p, n, 0, a, na);
}
static void on_reply(pario_gas_token *t, void *p, size_t n, const uint64_t *a, int na) {
    (void)t, (void)p, (void)n, (void)a, (void)na;
    got_reply = 1;
}
static void on_sink(pario_gas_token *t, void *p, size_t n, const uint64_t *a, int na) {
    (void)t, (void)p, (void)n, (void)a, (void)na;
}

static int send_kind(pario_gas_team *team, int kind, int handler, const void *buf, size_t n) {
    uint64_t arg = n;
    if (kind == H_SHORT)
        return pario_gas_request_short(team, 1, handler, &arg, 1);
    if (kind == H_MED)
        return pario_gas_request_medium(team, 1, handler, buf, n, &arg, 1);
    return pario_gas_request_long(team, 1, handler, buf, n, 0, &arg, 1);
}

static void wait_reply(pario_gas_team *team) {
    while (!got_reply)
        pario_gas_poll(team);
    got_reply = 0;
}

/* Rank 1 serves until rank 0 says stop (a zero-byte MPI message). */
static void serve(pario_gas_team *team) {
    MPI_Request stop;
    int done = 0;
    MPI_Irecv(NULL, 0, MPI_BYTE, 0, 99, MPI_COMM_WORLD, &stop);
    while (!done) {
        pario_gas_poll(team);
        MPI_Test(&stop, &done, MPI_STATUS_IGNORE);
    }
}

/* One repetition of a pario measurement: rank 0 times `iters` operations,
 * rank 1 serves requests until told to stop. Per-operation µs on rank 0. */
static double pario_rep(pario_gas_team *team, int rank, int flood, int kind, unsigned char *buf,
                        size_t n, int iters) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) {
        serve(team);
        return 0;
    }
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        send_kind(team, kind, base + (flood ? H_SINK : kind), buf, n);
        if (!flood)
            wait_reply(team);
    }
    if (flood) {
        send_kind(team, H_SHORT, base + H_SHORT, buf, 8);
        wait_reply(team);
    }
    double usec = (MPI_Wtime() - t0) * 1e6 / iters / (flood ? 1 : 2);
    MPI_Send(NULL, 0, MPI_BYTE, 1, 99, MPI_COMM_WORLD);
    return usec;
}

static double mpi_rep(int rank, int flood, unsigned char *buf, size_t n, int iters) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            MPI_Send(buf, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            if (!flood)
                MPI_Recv(buf, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (!flood)
                MPI_Send(buf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
    if (flood && rank == 0)
        MPI_Recv(NULL, 0, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else if (flood)
        MPI_Send(NULL, 0, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
    return (MPI_Wtime() - t0) * 1e6 / iters / (flood ? 1 : 2);
}

/* Which measurements exist at size n: MPI always, Short only at 8 bytes,
 * Medium up to its maximum, Long always; each pario one on both teams. */
enum { M_MPI, M_SHORT, M_MEDIUM, M_LONG, M_COUNT };
static const int m_kind[M_COUNT] = {-1, H_SHORT, H_MED, H_LONG};
static const char *const m_op[2][M_COUNT] = {
    {"pingpong_rtt_half", "short_rtt_half", "medium_rtt_half", "long_rtt_half"},
    {"send_flood", "short_flood", "medium_flood", "long_flood"}};

static int measured(pario_gas_team *team, int m, size_t n) {
    if (m == M_SHORT)
        return n == 8;
    if (m == M_MEDIUM)
        return n <= pario_gas_medium_max(team);
    return 1;
}

static const char *impl_of(pario_gas_team *team, int rank) {
    return pario_gas_is_local(team, 1 - rank) ? "pario-local" : "pario-mpi";
}

/* Repetitions of every measurement at one size are interleaved, so that
 * load from other processes on the machine hits all of them alike. */
static void run_size(pario_gas_team **teams, int nteams, int rank, int flood, size_t n,
                     unsigned char *buf) {
    int iters = bench_iters(n, flood ? FLOOD_MSGS : SMALL_ITERS);
    double usec[2][M_COUNT][BENCH_REPS];
    for (int r = 0; r < BENCH_REPS; r++)
        for (int t = 0; t < nteams; t++)
            for (int m = 0; m < M_COUNT; m++) {
                if (!measured(teams[t], m, n) || (m == M_MPI && t > 0))
                    continue;
                usec[t][m][r] = m == M_MPI
                                    ? mpi_rep(rank, flood, buf, n, iters)
                                    : pario_rep(teams[t], rank, flood, m_kind[m], buf, n, iters);
            }
    bench_report("am", "mpi", m_op[flood][M_MPI], n, 2, usec[0][M_MPI], n);
    for (int t = 0; t < nteams; t++)
        for (int m = M_SHORT; m < M_COUNT; m++)
            if (measured(teams[t], m, n))
                bench_report("am", impl_of(teams[t], rank), m_op[flood][m], n, 2, usec[t][m], n);
}

static pario_gas_team *make_team(void) {
    pario_gas_team *team = NULL;
    pario_error err;
    if (pario_gas_team_create(MPI_COMM_WORLD, &team, &err) != PARIO_OK ||
        pario_gas_segment_attach(team, SEG_BYTES) != PARIO_OK) {
        fprintf(stderr, "gas_bench_am: %s\n", err.msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    pario_gas_handler fns[H_COUNT] = {on_short, on_medium, on_long, on_reply, on_sink};
    pario_gas_register_handlers(team, fns, H_COUNT, &base); /* same base on both teams */
    return team;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "gas_bench_am: run with 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    unsigned char *buf = calloc(1, SEG_BYTES);
    pario_gas_team *teams[2];
    int nteams = 1;
    teams[0] = make_team();
    if (pario_gas_is_local(teams[0], 1 - rank)) {
        setenv("PARIO_NODE_SIZE", "1", 1);
        teams[nteams++] = make_team();
    }
    for (int flood = 0; flood <= 1; flood++)
        for (size_t i = 0; i < NSIZES; i++)
            run_size(teams, nteams, rank, flood, sizes[i], buf);
    for (int t = 0; t < nteams; t++)
        pario_gas_team_free(&teams[t]);
    free(buf);
    MPI_Finalize();
    return 0;
}
