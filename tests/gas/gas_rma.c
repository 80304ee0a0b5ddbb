/* gas: teams, segments, put/get (blocking and non-blocking), atomics, errors. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptest.h"
#include "pario/gas.h"

/* Per-rank segment: a region per writer for put tests, then counters. */
#define SLOT_BYTES 4096 /* bytes each writer owns in every segment */
#define NB_PUTS 64      /* non-blocking puts per writer and target */
#define NB_PUT_BYTES (SLOT_BYTES / NB_PUTS)
#define ATOMIC_ROUNDS 50 /* fetch_adds per rank and target */

static size_t counters_offset(int nranks) {
    return (size_t)nranks * SLOT_BYTES;
}
/* Segments differ in size: rank r gets 64 extra bytes per rank number. */
static size_t segment_bytes(int nranks, int rank) {
    return counters_offset(nranks) + 64 + 64 * (size_t)rank;
}

static unsigned char pattern(int writer, int target, size_t i) {
    return (unsigned char)(writer * 31 + target * 7 + i * 13 + 1);
}

static void test_team_shape(pario_gas_team *team, int rank, int size) {
    PT_EQ(pario_gas_rank(team), rank);
    PT_EQ(pario_gas_size(team), size);
    PT_CHECK(pario_gas_is_local(team, rank));
    PT_CHECK(!pario_gas_is_local(team, size));
    const char *k = getenv("PARIO_NODE_SIZE");
    if (k && atoi(k) > 0) {
        int ks = atoi(k);
        int expect = size - (rank / ks) * ks < ks ? size - (rank / ks) * ks : ks;
        PT_EQ(pario_gas_node_size(team), expect);
        PT_EQ(pario_gas_node_rank(team), rank % ks);
        PT_EQ(pario_gas_node_count(team), (size + ks - 1) / ks);
        for (int r = 0; r < size; r++)
            PT_EQ(pario_gas_is_local(team, r), r / ks == rank / ks);
    }
}

static void test_segments(pario_gas_team *team, int rank, int size) {
    for (int r = 0; r < size; r++) {
        size_t bytes = 0;
        PT_EQ(pario_gas_segment_size(team, r, &bytes), PARIO_OK);
        PT_EQ(bytes, segment_bytes(size, r));
        void *p = NULL;
        int rc = pario_gas_segment_ptr(team, r, &p);
        PT_EQ(rc, pario_gas_is_local(team, r) ? PARIO_OK : PARIO_ERR_RANK);
    }
    unsigned char *mine = NULL;
    PT_EQ(pario_gas_segment_ptr(team, rank, (void **)&mine), PARIO_OK);
    size_t zeros = 0;
    for (size_t i = 0; i < segment_bytes(size, rank); i++)
        zeros += mine[i] == 0;
    PT_EQ(zeros, segment_bytes(size, rank));
    PT_EQ(pario_gas_segment_attach(team, 16), PARIO_ERR_REQUEST);
    PT_EQ(pario_gas_barrier(team), PARIO_OK); /* nobody writes before all checked */
}

/* Every rank writes its slot in every segment with blocking puts, reads back. */
static void test_blocking_put_get(pario_gas_team *team, int rank, int size) {
    unsigned char buf[SLOT_BYTES];
    for (int t = 0; t < size; t++) {
        for (size_t i = 0; i < SLOT_BYTES; i++)
            buf[i] = pattern(rank, t, i);
        PT_EQ(pario_gas_put(team, t, (size_t)rank * SLOT_BYTES, buf, SLOT_BYTES), PARIO_OK);
    }
    PT_EQ(pario_gas_barrier(team), PARIO_OK);
    int bad = 0;
    for (int t = 0; t < size; t++) {
        for (int w = 0; w < size; w++) {
            memset(buf, 0, sizeof buf);
            PT_EQ(pario_gas_get(team, buf, t, (size_t)w * SLOT_BYTES, SLOT_BYTES), PARIO_OK);
            for (size_t i = 0; i < SLOT_BYTES; i++)
                bad += buf[i] != pattern(w, t, i);
        }
    }
    PT_EQ(bad, 0);
    PT_EQ(pario_gas_barrier(team), PARIO_OK);
}

/* NB_PUTS outstanding puts per target, then local verification of my segment. */
static void test_nonblocking(pario_gas_team *team, int rank, int size) {
    unsigned char *src = malloc((size_t)size * SLOT_BYTES);
    pario_gas_event *ev = malloc(sizeof *ev * (size_t)size * NB_PUTS);
    for (int t = 0; t < size; t++)
        for (size_t i = 0; i < SLOT_BYTES; i++)
            src[(size_t)t * SLOT_BYTES + i] = pattern(rank + 5, t, i);
    for (int k = 0; k < NB_PUTS; k++)
        for (int t = 0; t < size; t++) {
            size_t off = (size_t)k * NB_PUT_BYTES;
            PT_EQ(pario_gas_put_nb(team, t, (size_t)rank * SLOT_BYTES + off,
                                   src + (size_t)t * SLOT_BYTES + off, NB_PUT_BYTES,
                                   &ev[k * size + t]),
                  PARIO_OK);
        }
    /* Half by test loops, half by wait_all. */
    for (int i = 0; i < size * NB_PUTS / 2; i++) {
        int done = 0;
        while (!done)
            PT_EQ(pario_gas_test(team, &ev[i], &done), PARIO_OK);
    }
    PT_EQ(pario_gas_wait_all(team, ev + size * NB_PUTS / 2, (size_t)size * NB_PUTS / 2), PARIO_OK);
    PT_EQ(pario_gas_barrier(team), PARIO_OK);
    unsigned char *mine = NULL;
    pario_gas_segment_ptr(team, rank, (void **)&mine);
    int bad = 0;
    for (int w = 0; w < size; w++)
        for (size_t i = 0; i < SLOT_BYTES; i++)
            bad += mine[(size_t)w * SLOT_BYTES + i] != pattern(w + 5, rank, i);
    PT_EQ(bad, 0);
    /* Non-blocking gets of every slot of every rank. */
    unsigned char *dst = calloc((size_t)size * size, SLOT_BYTES);
    for (int t = 0; t < size; t++)
        for (int w = 0; w < size; w++)
            PT_EQ(pario_gas_get_nb(team, dst + ((size_t)t * size + w) * SLOT_BYTES, t,
                                   (size_t)w * SLOT_BYTES, SLOT_BYTES, &ev[t * size + w]),
                  PARIO_OK);
    PT_EQ(pario_gas_wait_all(team, ev, (size_t)size * size), PARIO_OK);
    bad = 0;
    for (int t = 0; t < size; t++)
        for (int w = 0; w < size; w++)
            for (size_t i = 0; i < SLOT_BYTES; i++)
                bad += dst[((size_t)t * size + w) * SLOT_BYTES + i] != pattern(w + 5, t, i);
    PT_EQ(bad, 0);
    free(dst);
    free(src);
    free(ev);
    PT_EQ(pario_gas_barrier(team), PARIO_OK);
}

static void test_atomics(pario_gas_team *team, int rank, int size) {
    size_t add_off = counters_offset(size), cas_off = add_off + 8, swap_off = add_off + 16;
    int64_t old = 0, seen_max = -1;
    for (int k = 0; k < ATOMIC_ROUNDS; k++)
        for (int t = 0; t < size; t++) {
            PT_EQ(pario_gas_fetch_add(team, t, add_off, 3, &old), PARIO_OK);
            if (t == 0 && old > seen_max)
                seen_max = old;
        }
    /* Compare-and-swap increments: retry until our value lands. */
    for (int k = 0; k < ATOMIC_ROUNDS; k++)
        for (int t = 0; t < size; t++) {
            int64_t cur = 0, prev = 0;
            int lrc = pario_gas_atomic_load(team, t, cas_off, &cur);
            PT_EQ(lrc, PARIO_OK);
            if (lrc != PARIO_OK) {
                fprintf(stderr, "load: %s\n", pario_gas_last_error(team)->msg);
                return;
            }
            for (;;) {
                pario_gas_compare_swap(team, t, cas_off, cur, cur + 1, &prev);
                if (prev == cur)
                    break;
                cur = prev;
            }
        }
    PT_EQ(pario_gas_swap(team, (rank + 1) % size, swap_off, rank + 100, &old), PARIO_OK);
    PT_EQ(pario_gas_barrier(team), PARIO_OK);
    int64_t v = 0;
    PT_EQ(pario_gas_atomic_load(team, rank, add_off, &v), PARIO_OK);
    PT_EQ(v, 3LL * ATOMIC_ROUNDS * size);
    PT_EQ(pario_gas_atomic_load(team, rank, cas_off, &v), PARIO_OK);
    PT_EQ(v, (long long)ATOMIC_ROUNDS * size);
    PT_EQ(pario_gas_atomic_load(team, rank, swap_off, &v), PARIO_OK);
    PT_EQ(v, (rank + size - 1) % size + 100);
    /* Direct load after the barrier agrees with the atomic load. */
    int64_t *mine = NULL;
    pario_gas_segment_ptr(team, rank, (void **)&mine);
    PT_EQ(mine[add_off / 8], 3LL * ATOMIC_ROUNDS * size);
    PT_CHECK(seen_max >= 0 && seen_max < 3LL * ATOMIC_ROUNDS * size);
    PT_EQ(pario_gas_barrier(team), PARIO_OK);
}

static void test_errors(pario_gas_team *team, int rank, int size) {
    unsigned char buf[16] = {0};
    size_t seg = segment_bytes(size, (rank + 1) % size);
    int other = (rank + 1) % size;
    PT_EQ(pario_gas_put(team, size, 0, buf, 1), PARIO_ERR_RANK);
    PT_CHECK(strstr(pario_gas_last_error(team)->msg, "outside the team") != NULL);
    PT_EQ(pario_gas_get(team, buf, -1, 0, 1), PARIO_ERR_RANK);
    PT_EQ(pario_gas_put(team, other, seg - 8, buf, 16), PARIO_ERR_ARG);
    PT_CHECK(strstr(pario_gas_last_error(team)->msg, "outside the segment") != NULL);
    PT_EQ(pario_gas_get(team, buf, other, seg + 1, 0), PARIO_ERR_ARG);
    PT_EQ(pario_gas_put(team, other, seg, buf, 0), PARIO_OK); /* empty at the end: fine */
    int64_t old;
    PT_EQ(pario_gas_fetch_add(team, other, 4, 1, &old), PARIO_ERR_ARG);
    PT_EQ(pario_gas_fetch_add(team, other, seg - 4, 1, &old), PARIO_ERR_ARG);
    PT_EQ(pario_gas_compare_swap(team, size + 3, 0, 0, 1, &old), PARIO_ERR_RANK);
    pario_gas_event ev;
    PT_EQ(pario_gas_put_nb(team, other, (size_t)-1, buf, 2, &ev), PARIO_ERR_ARG);
    PT_EQ(pario_gas_broadcast(team, buf, 1, size, PARIO_GAS_BCAST_FLAT), PARIO_ERR_RANK);
    PT_EQ(pario_gas_broadcast(team, buf, 1, 0, (pario_gas_bcast_alg)99), PARIO_ERR_ARG);
    /* Nothing was written by the failed calls: my counters region is intact. */
    PT_EQ(pario_gas_barrier(team), PARIO_OK);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pario_gas_team *team = NULL;
    pario_error err;
    PT_EQ(pario_gas_team_create(MPI_COMM_WORLD, &team, &err), PARIO_OK);
    test_team_shape(team, rank, size);
    unsigned char early[8];
    PT_EQ(pario_gas_put(team, 0, 0, early, 8), PARIO_ERR_REQUEST); /* no segment yet */
    int arc = pario_gas_segment_attach(team, segment_bytes(size, rank));
    PT_EQ(arc, PARIO_OK);
    if (arc != PARIO_OK) {
        fprintf(stderr, "attach: %s\n", pario_gas_last_error(team)->msg);
        return ptest_finish();
    }
    test_segments(team, rank, size);
    test_blocking_put_get(team, rank, size);
    test_nonblocking(team, rank, size);
    test_atomics(team, rank, size);
    test_errors(team, rank, size);
    PT_EQ(pario_gas_team_free(&team), PARIO_OK);
    PT_CHECK(team == NULL);
    return ptest_finish();
}
