/* gas: active messages. Every rank sends Short, Medium and Long requests to
 * every rank (itself included) while polling; every request is answered with
 * a reply of the same kind. Checks payload bytes, per-sender order, reply
 * counts, misuse from handlers and argument errors.
 * Argument "small" runs fewer rounds (for 8 ranks on 2 cores). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptest.h"
#include "pario/gas.h"

#define MAX_RANKS 8
#define LONG_SLOTS 4                /* Long requests per sender and target */
#define LONG_SLOT_BYTES (72 * 1024) /* > 64 KiB: the last Long takes the RMA path */

static const size_t long_sizes[LONG_SLOTS] = {8, 1000, 33000, 70000};

enum {
    H_SHORT_REQ,
    H_SHORT_REP,
    H_MED_REQ,
    H_MED_REP,
    H_LONG_REQ,
    H_LONG_REP,
    H_MISUSE,
    H_MISUSE_REP,
    H_COUNT
};

static int base; /* index of the first handler */
static int nranks, me;
static int rounds;                    /* Short and Medium requests per target */
static long expect_seq[3][MAX_RANKS]; /* next sequence number per kind and sender */
static long replies[3];               /* replies received per kind */
static long bad_bytes, bad_order, bad_args;
static int misuse_codes[6];
static int misuse_done;

static unsigned char pattern(int src, long seq, size_t i) {
    return (unsigned char)(src * 59 + seq * 17 + i * 7 + 3);
}

static size_t medium_len(long seq, size_t max) {
    if (seq % 50 == 7)
        return max; /* exactly the maximum */
    return (size_t)(seq * 997) % 9000;
}

/* Segment layout: [request slots: sender x LONG_SLOTS][reply slots: replier x LONG_SLOTS] */
static size_t req_slot(int sender, int k) {
    return ((size_t)sender * LONG_SLOTS + (size_t)k) * LONG_SLOT_BYTES;
}
static size_t rep_slot(int replier, int k) {
    return ((size_t)(nranks + replier) * LONG_SLOTS + (size_t)k) * LONG_SLOT_BYTES;
}

static void check_order(int kind, int src, uint64_t seq) {
    if ((long)seq != expect_seq[kind][src])
        bad_order++;
    expect_seq[kind][src] = (long)seq + 1;
}

static void short_req(pario_gas_token *t, void *p, size_t n, const uint64_t *a, int na) {
    (void)p;
    int src = pario_gas_token_source(t);
    if (na != 3 || n != 0 || a[2] != (uint64_t)src * 1000 + 1)
        bad_args++;
    check_order(0, src, a[0]);
    uint64_t r[PARIO_GAS_MAX_ARGS];
    for (int i = 0; i < PARIO_GAS_MAX_ARGS; i++)
        r[i] = a[1] * 2 + (uint64_t)i;
    pario_gas_reply_short(t, base + H_SHORT_REP, r, PARIO_GAS_MAX_ARGS);
}

static void short_rep(pario_gas_token *t, void *p, size_t n, const uint64_t *a, int na) {
    (void)t, (void)p, (void)n;
    if (na != PARIO_GAS_MAX_ARGS || a[15] != a[0] + 15 || a[0] % 2 != 0)
        bad_args++;
    replies[0]++;
}

static void med_req(pario_gas_token *t, void *p, size_t n, const uint64_t *a, int na) {
    int src = pario_gas_token_source(t);
    const unsigned char *b = p;
    if (na != 1 || n != medium_len((long)a[0], pario_gas_medium_max(pario_gas_token_team(t))))
        bad_args++;
    check_order(1, src, a[0]);
    unsigned char *out = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        bad_bytes += b[i] != pattern(src, (long)a[0], i);
        out[i] = b[i] ^ 0x5a;
    }
    pario_gas_reply_medium(t, base + H_MED_REP, out, n, a, 1);
    free(out);
}

static void med_rep(pario_gas_token *t, void *p, size_t n, const uint64_t *a, int na) {
    (void)na;
    (void)t;
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        bad_bytes += b[i] != (pattern(me, (long)a[0], i) ^ 0x5a);
    replies[1]++;
}

static void long_req(pario_gas_token *t, void *p, size_t n, const uint64_t *a, int na) {
    int src = pario_gas_token_source(t);
    int k = (int)a[0];
    const unsigned char *b = p;
    if (na != 1 || n != long_sizes[k] || pario_gas_token_offset(t) != req_slot(src, k))
        bad_args++;
    check_order(2, src, a[0]);
    for (size_t i = 0; i < n; i++)
        bad_bytes += b[i] != pattern(src, k, i);
    /* Echo the payload back into the requester's reply slot for us. */
    pario_gas_reply_long(t, base + H_LONG_REP, p, n, rep_slot(me, k), a, 1);
}

static void long_rep(pario_gas_token *t, void *p, size_t n, const uint64_t *a, int na) {
    (void)na;
    int src = pario_gas_token_source(t);
    const unsigned char *b = p;
    if (pario_gas_token_offset(t) != rep_slot(src, (int)a[0]))
        bad_args++;
    for (size_t i = 0; i < n; i++)
        bad_bytes += b[i] != pattern(me, a[0], i);
    replies[2]++;
}

/* Calls that are not allowed inside a handler, and a second reply. */
static void misuse(pario_gas_token *t, void *p, size_t n, const uint64_t *a, int na) {
    (void)p, (void)n, (void)a, (void)na;
    pario_gas_team *team = pario_gas_token_team(t);
    misuse_codes[0] = pario_gas_poll(team);
    misuse_codes[1] = pario_gas_request_short(team, 0, base + H_SHORT_REQ, NULL, 0);
    misuse_codes[2] = pario_gas_barrier(team);
    misuse_codes[3] = pario_gas_reply_short(t, base + H_MISUSE_REP, NULL, 0);
    misuse_codes[4] = pario_gas_reply_short(t, base + H_MISUSE_REP, NULL, 0);
}

static void misuse_rep(pario_gas_token *t, void *p, size_t n, const uint64_t *a, int na) {
    (void)p, (void)n, (void)a, (void)na;
    misuse_codes[5] = pario_gas_reply_short(t, base + H_MISUSE_REP, NULL, 0);
    misuse_done = 1;
}

static void send_all(pario_gas_team *team) {
    size_t max = pario_gas_medium_max(team);
    unsigned char *buf = malloc(max > LONG_SLOT_BYTES ? max : LONG_SLOT_BYTES);
    for (long s = 0; s < rounds; s++) {
        for (int t = 0; t < nranks; t++) {
            uint64_t a[3] = {(uint64_t)s, (uint64_t)(s + t), (uint64_t)me * 1000 + 1};
            PT_EQ(pario_gas_request_short(team, t, base + H_SHORT_REQ, a, 3), PARIO_OK);
            size_t len = medium_len(s, max);
            for (size_t i = 0; i < len; i++)
                buf[i] = pattern(me, s, i);
            uint64_t sa = (uint64_t)s;
            PT_EQ(pario_gas_request_medium(team, t, base + H_MED_REQ, buf, len, &sa, 1), PARIO_OK);
            if (s < LONG_SLOTS) {
                size_t ln = long_sizes[s];
                for (size_t i = 0; i < ln; i++)
                    buf[i] = pattern(me, s, i);
                PT_EQ(pario_gas_request_long(team, t, base + H_LONG_REQ, buf, ln,
                                             req_slot(me, (int)s), &sa, 1),
                      PARIO_OK);
            }
            pario_gas_poll(team);
        }
    }
    free(buf);
}

static void wait_replies(pario_gas_team *team) {
    long want_long = (rounds < LONG_SLOTS ? rounds : LONG_SLOTS) * (long)nranks;
    while (replies[0] < (long)rounds * nranks || replies[1] < (long)rounds * nranks ||
           replies[2] < want_long)
        pario_gas_poll(team);
    PT_EQ(replies[0], (long)rounds * nranks);
    PT_EQ(replies[1], (long)rounds * nranks);
    PT_EQ(replies[2], want_long);
}

static void test_traffic(pario_gas_team *team) {
    send_all(team);
    wait_replies(team);
    PT_EQ(pario_gas_barrier(team), PARIO_OK);
    PT_EQ(bad_bytes, 0);
    PT_EQ(bad_order, 0);
    PT_EQ(bad_args, 0);
    for (int s = 0; s < nranks; s++) {
        PT_EQ(expect_seq[0][s], rounds);
        PT_EQ(expect_seq[1][s], rounds);
        PT_EQ(expect_seq[2][s], rounds < LONG_SLOTS ? rounds : LONG_SLOTS);
    }
}

static void test_misuse(pario_gas_team *team) {
    PT_EQ(pario_gas_request_short(team, (me + 1) % nranks, base + H_MISUSE, NULL, 0), PARIO_OK);
    while (!misuse_done)
        pario_gas_poll(team);
    PT_EQ(pario_gas_barrier(team), PARIO_OK);
    PT_EQ(misuse_codes[0], PARIO_ERR_REQUEST);
    PT_EQ(misuse_codes[1], PARIO_ERR_REQUEST);
    PT_EQ(misuse_codes[2], PARIO_ERR_REQUEST);
    PT_EQ(misuse_codes[3], PARIO_OK);
    PT_EQ(misuse_codes[4], PARIO_ERR_REQUEST);
    PT_EQ(misuse_codes[5], PARIO_ERR_REQUEST);
}

static void test_errors(pario_gas_team *team) {
    size_t max = pario_gas_medium_max(team), seg = 0;
    int other = (me + 1) % nranks;
    pario_gas_segment_size(team, other, &seg);
    unsigned char *big = calloc(1, max + 1);
    uint64_t args[PARIO_GAS_MAX_ARGS + 1] = {0};
    PT_CHECK(max >= 64 * 1024);
    PT_EQ(pario_gas_request_short(team, other, base + H_COUNT, NULL, 0), PARIO_ERR_ARG);
    PT_CHECK(strstr(pario_gas_last_error(team)->msg, "not registered") != NULL);
    PT_EQ(pario_gas_request_short(team, other, 0, NULL, 0), PARIO_ERR_ARG);
    PT_EQ(pario_gas_request_short(team, other, -1, NULL, 0), PARIO_ERR_ARG);
    PT_EQ(pario_gas_request_medium(team, other, base + H_MED_REQ, big, max + 1, args, 1),
          PARIO_ERR_COUNT_ARG);
    PT_CHECK(strstr(pario_gas_last_error(team)->msg, "exceeds") != NULL);
    PT_EQ(pario_gas_request_short(team, other, base + H_SHORT_REQ, args, PARIO_GAS_MAX_ARGS + 1),
          PARIO_ERR_COUNT_ARG);
    PT_EQ(pario_gas_request_long(team, other, base + H_LONG_REQ, big, 16, seg - 8, args, 1),
          PARIO_ERR_ARG);
    PT_EQ(pario_gas_request_short(team, nranks, base + H_SHORT_REQ, args, 3), PARIO_ERR_RANK);
    PT_EQ(pario_gas_request_medium(team, other, base + H_MED_REQ, NULL, 10, args, 1),
          PARIO_ERR_ARG);
    PT_EQ(pario_gas_request_medium(team, -2, base + H_MED_REQ, big, 1, args, 1), PARIO_ERR_RANK);
    /* Different handler counts on different ranks. */
    pario_gas_handler extra[2] = {short_rep, short_rep};
    int b2 = -1;
    int rc = pario_gas_register_handlers(team, extra, nranks > 1 && me == 0 ? 1 : 2, &b2);
    PT_EQ(rc, nranks > 1 ? PARIO_ERR_NOT_SAME : PARIO_OK);
    PT_EQ(pario_gas_poll(team), PARIO_OK);
    free(big);
    PT_EQ(pario_gas_barrier(team), PARIO_OK);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    rounds = argc > 1 && strcmp(argv[1], "small") == 0 ? 20 : 150;
    pario_gas_team *team = NULL;
    pario_error err;
    PT_EQ(pario_gas_team_create(MPI_COMM_WORLD, &team, &err), PARIO_OK);
    PT_EQ(pario_gas_segment_attach(team, rep_slot(nranks, 0)), PARIO_OK);
    pario_gas_handler fns[H_COUNT] = {short_req, short_rep, med_req, med_rep,
                                      long_req,  long_rep,  misuse,  misuse_rep};
    PT_EQ(pario_gas_register_handlers(team, fns, H_COUNT, &base), PARIO_OK);
    test_traffic(team);
    test_misuse(team);
    test_errors(team);
    PT_EQ(pario_gas_team_free(&team), PARIO_OK);
    return ptest_finish();
}
