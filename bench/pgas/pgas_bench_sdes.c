/* The S-DES differential-cryptanalysis simulator of seed 000 on pgas shared
 * arrays.
 *
 * 1. Known answers and every block under every key encrypted and decrypted
 *    (keys spread over the ranks by affinity).
 * 2. The difference pair tables (DPT) and difference distribution tables
 *    (DDT) of S0, S1 and of both side by side (the round function's S-box
 *    layer) built in parallel in shared arrays of 8-byte unsigned integers:
 *    every rank computes the entries with its affinity and stores them
 *      ptr   by index with the unchecked typed store (a[i] = v)
 *      walk  through a pointer-to-shared stepped along the block, the
 *            unchecked typed store (*p++ = v)
 *      cast  through one cast to a local pointer per owned block
 *    for block sizes 1, 8 and 128, next to sequential C (rank 0 alone, plain
 *    arrays). Every build is checked entry by entry against the sequential
 *    build (all tables poisoned before each build).
 * 3. The key search on known pairs under a secret key: the brute force over
 *    all 1024 keys, spread by affinity (upc_forall (k ...; k)), and the
 *    differential attack: candidate second-round subkeys tested against the
 *    shared layer DPT (read through pointers-to-shared, wherever it lives),
 *    then the keys with a surviving subkey tried on the pairs. Both must
 *    find the secret key.
 *
 * Output: one JSON object per measurement on rank 0; exit status 1 when any
 * check failed.
 *
 * Usage: pgas_bench_sdes [-r REPS] [-k KEY] */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_stats.h"
#include "pario/pgas.h"
#include "sdes.h"

#define DEFAULT_REPS 21
#define MAX_REPS 201
#define DEFAULT_KEY 0x2d5
/* Known pairs of the key search: enough that one key fits them all. */
#define NPAIRS 8
/* Stored in every entry before a build: no table holds this value. */
#define POISON UINT64_C(0xdeadbeefdeadbeef)

enum method { M_PTR, M_WALK, M_CAST, NMETHODS };
static const char *const method_name[NMETHODS] = {"ptr", "walk", "cast"};
static const uint64_t block_sizes[] = {1, 8, 128};
#define NBLOCKS (sizeof block_sizes / sizeof block_sizes[0])

typedef struct bench {
    pario_pgas *ctx;
    int rank, nranks, reps;
    pario_pgas_array tables[NBLOCKS][SDES_TABLES];
    uint64_t *serial[SDES_TABLES]; /* rank 0: the sequential build */
    int failures;
} bench;

static void fail(bench *bm, const char *what) {
    bm->failures++;
    if (bm->rank == 0)
        fprintf(stderr, "VERIFY-FAIL sdes: %s\n", what);
}

/* 1 on every rank when ok is 1 on every rank. */
static int all_ok(int ok) {
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

/* ---- 1. the cipher ---- */

static int known_answers(void) {
    sdes_subkeys k = sdes_schedule(0x282); /* 1010000010 */
    return k.k1 == 0xa4 && k.k2 == 0x43 && sdes_encrypt(0x282, 0x97) == 0x38 &&
           sdes_decrypt(0x282, 0x38) == 0x97;
}

/* Every block under every key with this rank's affinity round-trips. */
static int round_trips(bench *bm) {
    long bad = 0;
    for (int64_t key = 0; key < SDES_KEYS; key++) {
        if (!pario_pgas_has_affinity_int(bm->ctx, key))
            continue;
        sdes_subkeys k = sdes_schedule((uint16_t)key);
        for (unsigned p = 0; p < SDES_BLOCKS; p++)
            bad += sdes_decrypt_with(k, sdes_encrypt_with(k, (uint8_t)p)) != p;
    }
    return bad == 0;
}

/* ---- 2. tables ---- */

/* table[i] = entry: the unchecked typed store by index (UPC's a[i] = v) */
static void build_ptr(bench *bm, const pario_pgas_array *a, int t, pario_pgas_range r, int *bad) {
    int rc = PARIO_OK;
    for (uint64_t i = r.first; i < r.first + r.count; i++)
        rc |= pario_pgas_store_u64_at(bm->ctx, a, i, sdes_table_entry(t, i));
    *bad |= rc;
}

/* *p = entry; p++ */
static void build_walk(bench *bm, const pario_pgas_array *a, int t, pario_pgas_range r, int *bad) {
    pario_pgas_ptr p = pario_pgas_elem(a, r.first);
    int rc = PARIO_OK;
    for (uint64_t i = r.first; i < r.first + r.count; i++) {
        rc |= pario_pgas_store_u64(bm->ctx, p, sdes_table_entry(t, i));
        p = pario_pgas_ptr_inc(p);
    }
    *bad |= rc;
}

static void build_cast(bench *bm, const pario_pgas_array *a, int t, pario_pgas_range r, int *bad) {
    uint64_t *d = pario_pgas_cast(bm->ctx, pario_pgas_elem(a, r.first));
    if (!d) {
        *bad = 1;
        return;
    }
    for (uint64_t j = 0; j < r.count; j++)
        d[j] = sdes_table_entry(t, r.first + j);
}

typedef void (*build_fn)(bench *, const pario_pgas_array *, int, pario_pgas_range, int *);
static const build_fn builders[NMETHODS] = {build_ptr, build_walk, build_cast};

/* upc_forall (i ...; &table[i]) table[i] = entry(i), for every table. */
static int build_shared(bench *bm, int method, int b) {
    int bad = 0;
    for (int t = 0; t < SDES_TABLES; t++) {
        uint64_t cursor = 0;
        pario_pgas_range r;
        while (pario_pgas_owned_next(&bm->tables[b][t], bm->rank, &cursor, &r))
            builders[method](bm, &bm->tables[b][t], t, r, &bad);
    }
    return bad == 0;
}

static void build_serial(uint64_t *const out[SDES_TABLES]) {
    for (int t = 0; t < SDES_TABLES; t++)
        for (uint64_t i = 0; i < sdes_table_count(t); i++)
            out[t][i] = sdes_table_entry(t, i);
}

/* Every owned entry set to POISON through the owner's memory. */
static void poison(bench *bm, int b) {
    for (int t = 0; t < SDES_TABLES; t++) {
        uint64_t cursor = 0;
        pario_pgas_range r;
        while (pario_pgas_owned_next(&bm->tables[b][t], bm->rank, &cursor, &r)) {
            uint64_t *d = pario_pgas_cast(bm->ctx, pario_pgas_elem(&bm->tables[b][t], r.first));
            for (uint64_t j = 0; d && j < r.count; j++)
                d[j] = POISON;
        }
    }
}

/* Rank 0 reads every table and compares it with the sequential build. */
static int same_as_serial(bench *bm, int b) {
    int ok = 1;
    if (bm->rank == 0) {
        uint64_t *got = malloc(sizeof(uint64_t) * SDES_LAYER_IN * SDES_LAYER_IN);
        for (int t = 0; t < SDES_TABLES && got; t++) {
            uint64_t n = sdes_table_count(t);
            ok &= pario_pgas_memget(bm->ctx, got, &bm->tables[b][t], 0, n) == PARIO_OK &&
                  memcmp(got, bm->serial[t], n * sizeof(uint64_t)) == 0;
        }
        ok &= got != NULL;
        free(got);
    }
    return all_ok(ok);
}

/* Times of one configuration over the repetitions (slowest rank each). */
typedef struct timing {
    double usec[MAX_REPS];
} timing;

/* One parallel build, timed as a UPC program would: rank 0's clock from the
 * barrier before the build to the barrier after it (the slowest rank's end,
 * including ranks that left the first barrier late). */
static double timed_build(bench *bm, int method, int b, int *ok) {
    poison(bm, b);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int built = build_shared(bm, method, b);
    MPI_Barrier(MPI_COMM_WORLD);
    double usec = (MPI_Wtime() - t0) * 1e6;
    *ok &= all_ok(built) && same_as_serial(bm, b);
    return usec;
}

/* Waits for rank 0 without taking a processor from it: a non-blocking
 * barrier tested every 50 us (a blocking MPI call may spin). */
static void wait_quietly(void) {
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    int done = 0;
    while (!done) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (!done)
            nanosleep(&(struct timespec){0, 50000}, NULL);
    }
}

/* Sequential C: rank 0 alone, the other ranks asleep. */
static double timed_serial(bench *bm) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = 0;
    if (bm->rank == 0) {
        double t0 = MPI_Wtime();
        build_serial(bm->serial);
        t = (MPI_Wtime() - t0) * 1e6;
    }
    wait_quietly();
    return t;
}

static void report_build(bench *bm, const char *method, uint64_t block, timing *tm, int ok) {
    if (bm->rank != 0)
        return;
    bench_stats s = bench_stats_of(tm->usec, bm->reps);
    printf("{\"bench\":\"sdes\",\"op\":\"tables\",\"method\":\"%s\",\"block\":%llu,\"ranks\":%d,"
           "\"reps\":%d,\"usec_median\":%.1f,\"usec_min\":%.1f,\"usec_max\":%.1f,"
           "\"validated\":%s}\n",
           method, (unsigned long long)block, bm->nranks, bm->reps, s.median, s.min, s.max,
           ok ? "true" : "false");
    fflush(stdout);
}

/* Sequential C, then every (block size, method), repetition by repetition. */
static void tables(bench *bm) {
    timing *tm = calloc(1 + NBLOCKS * NMETHODS, sizeof *tm);
    int ok[1 + NBLOCKS * NMETHODS];
    for (size_t c = 0; c <= NBLOCKS * NMETHODS; c++)
        ok[c] = 1;
    for (int r = 0; r < bm->reps; r++) {
        tm[0].usec[r] = timed_serial(bm);
        for (size_t b = 0; b < NBLOCKS; b++)
            for (int m = 0; m < NMETHODS; m++)
                tm[1 + b * NMETHODS + (size_t)m].usec[r] =
                    timed_build(bm, m, (int)b, &ok[1 + b * NMETHODS + (size_t)m]);
    }
    report_build(bm, "seq", 0, &tm[0], 1);
    for (size_t b = 0; b < NBLOCKS; b++)
        for (int m = 0; m < NMETHODS; m++) {
            size_t c = 1 + b * NMETHODS + (size_t)m;
            if (!ok[c]) {
                char what[96];
                snprintf(what, sizeof what,
                         "tables built by %s with block %llu differ from "
                         "the sequential build",
                         method_name[m], (unsigned long long)block_sizes[b]);
                fail(bm, what);
            }
            report_build(bm, method_name[m], block_sizes[b], &tm[c], ok[c]);
        }
    free(tm);
}

/* ---- 3. key search ---- */

/* A shared array of n flags, element k on rank k % nranks (affinity k). */
static int flags_alloc(bench *bm, uint64_t n, pario_pgas_array *a) {
    return pario_pgas_all_alloc(bm->ctx, n, sizeof(uint64_t), 1, a);
}

/* Rank 0 lists the set flags (at most cap of them) and broadcasts the list. */
static int flags_collect(bench *bm, const pario_pgas_array *a, uint64_t *found, int cap) {
    int n = 0;
    if (bm->rank == 0) {
        uint64_t *all = malloc(sizeof(uint64_t) * a->count);
        if (all && pario_pgas_memget(bm->ctx, all, a, 0, a->count) == PARIO_OK)
            for (uint64_t k = 0; k < a->count; k++)
                if (all[k] && n < cap)
                    found[n++] = k;
        free(all);
    }
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(found, n, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    return n;
}

/* upc_forall (k = 0; k < 1024; k++; k) hit[k] = key k fits every pair. */
static int brute_force(bench *bm, const sdes_pair *pairs, uint64_t *found, int cap) {
    pario_pgas_array hit;
    if (flags_alloc(bm, SDES_KEYS, &hit) != PARIO_OK)
        return -1;
    int bad = 0;
    for (int64_t k = 0; k < SDES_KEYS; k++) {
        if (!pario_pgas_has_affinity_int(bm->ctx, k))
            continue;
        uint64_t v = (uint64_t)sdes_key_fits((uint16_t)k, pairs, NPAIRS);
        bad |= pario_pgas_put(bm->ctx, pario_pgas_elem(&hit, (uint64_t)k), &v);
    }
    pario_pgas_barrier(bm->ctx, PARIO_PGAS_ANY);
    int n = all_ok(bad == 0) ? flags_collect(bm, &hit, found, cap) : -1;
    pario_pgas_all_free(bm->ctx, &hit);
    return n;
}

/* The attack's view of the shared layer DPT: one relaxed get per entry. */
typedef struct dpt_view {
    bench *bm;
    const pario_pgas_array *dpt;
    int bad;
} dpt_view;

static uint64_t dpt_lookup(void *arg, uint64_t i) {
    dpt_view *v = arg;
    uint64_t x = POISON;
    v->bad |= pario_pgas_get(v->bm->ctx, pario_pgas_elem(v->dpt, i), &x);
    return x;
}

/* Candidate subkeys K2 by affinity, then keys whose K2 survived (read from
 * the shared flags, wherever they live) tried on the pairs. */
static int differential(bench *bm, const pario_pgas_array *dpt, const sdes_pair *pairs,
                        uint64_t *found, int cap, int *k2_candidates) {
    pario_pgas_array k2ok, hit;
    if (flags_alloc(bm, 256, &k2ok) != PARIO_OK || flags_alloc(bm, SDES_KEYS, &hit) != PARIO_OK)
        return -1;
    dpt_view view = {bm, dpt, 0};
    for (int64_t c = 0; c < 256; c++) {
        if (!pario_pgas_has_affinity_int(bm->ctx, c))
            continue;
        uint64_t v = (uint64_t)sdes_k2_consistent((uint8_t)c, pairs, NPAIRS, dpt_lookup, &view);
        view.bad |= pario_pgas_put(bm->ctx, pario_pgas_elem(&k2ok, (uint64_t)c), &v);
    }
    pario_pgas_barrier(bm->ctx, PARIO_PGAS_ANY);
    for (int64_t k = 0; k < SDES_KEYS; k++) {
        if (!pario_pgas_has_affinity_int(bm->ctx, k))
            continue;
        uint64_t survived = 0, v = 0;
        view.bad |= pario_pgas_get(bm->ctx, pario_pgas_elem(&k2ok, sdes_schedule((uint16_t)k).k2),
                                   &survived);
        v = survived && sdes_key_fits((uint16_t)k, pairs, NPAIRS);
        view.bad |= pario_pgas_put(bm->ctx, pario_pgas_elem(&hit, (uint64_t)k), &v);
    }
    pario_pgas_barrier(bm->ctx, PARIO_PGAS_ANY);
    int n = -1;
    if (all_ok(view.bad == 0)) {
        uint64_t cands[256];
        *k2_candidates = flags_collect(bm, &k2ok, cands, 256);
        n = flags_collect(bm, &hit, found, cap);
    }
    pario_pgas_all_free(bm->ctx, &hit);
    pario_pgas_all_free(bm->ctx, &k2ok);
    return n;
}

static void report_search(bench *bm, const char *op, double usec, int nfound, const uint64_t *found,
                          uint16_t key, int extra) {
    int recovered = nfound == 1 && found[0] == key;
    if (!recovered) {
        char what[96];
        snprintf(what, sizeof what, "%s found %d keys, not just the secret key", op, nfound);
        fail(bm, what);
    }
    if (bm->rank == 0)
        printf("{\"bench\":\"sdes\",\"op\":\"%s\",\"ranks\":%d,\"usec\":%.1f,\"keys_found\":%d,"
               "\"key\":%u,\"recovered\":%s,\"k2_candidates\":%d}\n",
               op, bm->nranks, usec, nfound, key, recovered ? "true" : "false", extra);
    fflush(stdout);
}

static void key_search(bench *bm, uint16_t key) {
    sdes_pair pairs[NPAIRS];
    for (int j = 0; j < NPAIRS; j++) {
        pairs[j].plain = (uint8_t)(j * 37 + 11);
        pairs[j].cipher = sdes_encrypt(key, pairs[j].plain);
    }
    uint64_t found[8] = {0};
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int n = brute_force(bm, pairs, found, 8);
    report_search(bm, "brute_force", (MPI_Wtime() - t0) * 1e6, n, found, key, -1);
    /* The layer DPT of the last table build (block 128, cast). */
    int cands = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    n = differential(bm, &bm->tables[NBLOCKS - 1][SDES_DPT_LAYER], pairs, found, 8, &cands);
    report_search(bm, "differential", (MPI_Wtime() - t0) * 1e6, n, found, key, cands);
}

/* ---- set-up ---- */

static int alloc_tables(bench *bm) {
    for (size_t b = 0; b < NBLOCKS; b++)
        for (int t = 0; t < SDES_TABLES; t++)
            if (pario_pgas_all_alloc(bm->ctx, sdes_table_count(t), sizeof(uint64_t), block_sizes[b],
                                     &bm->tables[b][t]) != PARIO_OK) {
                fprintf(stderr, "pgas_bench_sdes: %s\n", pario_pgas_last_error(bm->ctx)->msg);
                return 0;
            }
    for (int t = 0; t < SDES_TABLES; t++)
        if (!(bm->serial[t] = malloc(sizeof(uint64_t) * sdes_table_count(t))))
            return 0;
    build_serial(bm->serial);
    return 1;
}

static void free_tables(bench *bm) {
    for (size_t b = 0; b < NBLOCKS; b++)
        for (int t = 0; t < SDES_TABLES; t++)
            pario_pgas_all_free(bm->ctx, &bm->tables[b][t]);
    for (int t = 0; t < SDES_TABLES; t++)
        free(bm->serial[t]);
}

static int parse_options(int argc, char **argv, int *reps, unsigned *key) {
    *reps = DEFAULT_REPS;
    *key = DEFAULT_KEY;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-r"))
            *reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-k"))
            *key = (unsigned)strtoul(argv[i + 1], NULL, 0);
        else
            return 0;
    }
    return argc % 2 == 1 && *reps >= 1 && *reps <= MAX_REPS && *key < SDES_KEYS;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    bench bm = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &bm.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &bm.nranks);
    unsigned key = 0;
    if (!parse_options(argc, argv, &bm.reps, &key)) {
        if (bm.rank == 0)
            fprintf(stderr, "usage: pgas_bench_sdes [-r REPS (1..%d)] [-k KEY (0..1023)]\n",
                    MAX_REPS);
        MPI_Finalize();
        return 2;
    }
    pario_error err;
    if (pario_pgas_init(MPI_COMM_WORLD, NULL, &bm.ctx, &err) != PARIO_OK) {
        fprintf(stderr, "pgas_bench_sdes: %s\n", err.msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int kat = all_ok(known_answers()), trips = all_ok(round_trips(&bm));
    if (!kat)
        fail(&bm, "known answers wrong");
    if (!trips)
        fail(&bm, "a block does not round-trip");
    if (bm.rank == 0)
        printf("{\"bench\":\"sdes\",\"op\":\"cipher\",\"ranks\":%d,\"known_answers\":%s,"
               "\"round_trips\":%s,\"keys\":%d,\"blocks\":%d}\n",
               bm.nranks, kat ? "true" : "false", trips ? "true" : "false", SDES_KEYS, SDES_BLOCKS);
    if (alloc_tables(&bm)) {
        tables(&bm);
        key_search(&bm, (uint16_t)key);
    } else {
        fail(&bm, "no memory for the tables");
    }
    free_tables(&bm);
    pario_pgas_finalize(&bm.ctx);
    MPI_Finalize();
    return bm.failures != 0;
}
