/* Helpers of the native io API's tests (they link pario; tests/common/ptest.h
 * serves MPI-only suites too, so these live here). */
#ifndef PARIO_TESTS_IO_TEST_H
#define PARIO_TESTS_IO_TEST_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "pario/io.h"
#include "ptest.h"

/* A test that counts its process's pread calls defines IOT_COUNT_PREADS
 * before including this header: pread and pread64 are then the test's own,
 * which the library's calls reach first, and count into iot_preads and the
 * bytes they return into iot_pread_bytes (atomic: pipelined reads call pread
 * from a thread). */
#ifdef IOT_COUNT_PREADS
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>
static _Atomic long long iot_preads, iot_pread_bytes;

ssize_t pread(int fd, void *buf, size_t len, off_t off) {
    atomic_fetch_add(&iot_preads, 1);
    ssize_t n = syscall(SYS_pread64, fd, buf, len, off);
    if (n > 0)
        atomic_fetch_add(&iot_pread_bytes, n);
    return n;
}

ssize_t pread64(int fd, void *buf, size_t len, off_t off) {
    return pread(fd, buf, len, off);
}
#endif

/* Collective over comm: path opened with amode and the hints kv (key,
 * value, ..., NULL); NULL, with a failed check, when it cannot be. */
static inline pario_file *iot_open_on(MPI_Comm comm, const char *path, int amode,
                                      const char *const *kv) {
    MPI_Info info;
    MPI_Info_create(&info);
    for (; kv[0]; kv += 2)
        MPI_Info_set(info, kv[0], kv[1]);
    pario_file *fh = NULL;
    pario_error err;
    int rc = pario_file_open(comm, path, amode, info, &fh, &err);
    MPI_Info_free(&info);
    PT_EQ(rc, PARIO_OK);
    return rc == PARIO_OK ? fh : NULL;
}

/* iot_open_on MPI_COMM_WORLD. */
static inline pario_file *iot_open(const char *path, int amode, const char *const *kv) {
    return iot_open_on(MPI_COMM_WORLD, path, amode, kv);
}

/* Whether get_info reports hint key with the value want. */
static inline int iot_hint_is(pario_file *fh, const char *key, const char *want) {
    MPI_Info info;
    char v[64] = "";
    int flag = 0;
    if (pario_file_get_info(fh, &info) != PARIO_OK)
        return 0;
    MPI_Info_get(info, key, sizeof v - 1, v, &flag);
    MPI_Info_free(&info);
    return flag && strcmp(v, want) == 0;
}

/* The pario_coll_routes value get_info reports (collective calls per
 * route, "kept:0,own_read:2,..."), into v; whether it was there. */
static inline int iot_coll_routes(pario_file *fh, char *v, int len) {
    MPI_Info info;
    int flag = 0;
    v[0] = '\0';
    if (pario_file_get_info(fh, &info) != PARIO_OK)
        return 0;
    MPI_Info_get(info, "pario_coll_routes", len - 1, v, &flag);
    MPI_Info_free(&info);
    return flag;
}

/* The count of route `name` in such a value; -1 when it is not named. */
static inline long long iot_route_count(const char *routes, const char *name) {
    const char *at = strstr(routes, name);
    return at ? atoll(at + strlen(name) + 1) : -1;
}

/* Collective: target directories PREFIX0 .. PREFIX<n-1> in the test's
 * directory, made by rank 0; out (cap bytes) gets their paths
 * comma-separated, a pario_stripe_targets value, on every rank. */
static inline void iot_stripe_targets(const char *prefix, int n, char *out, size_t cap) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s%d", prefix, i);
        const char *dir = ptest_path(name);
        if (rank == 0)
            PT_CHECK(mkdir(dir, 0755) == 0 || errno == EEXIST);
        size_t at = strlen(out);
        snprintf(out + at, cap - at, "%s%s", i ? "," : "", dir);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Collective over MPI_COMM_WORLD: whether every rank has the same message,
 * " (on rank N)" aside (the ranks that did not fail add where it came from). */
static inline int iot_same_message_everywhere(const char *msg) {
    char mine[PARIO_ERROR_MSG_MAX], first[PARIO_ERROR_MSG_MAX];
    snprintf(mine, sizeof mine, "%s", msg);
    char *from = strstr(mine, " (on rank ");
    if (from)
        *from = '\0';
    memcpy(first, mine, sizeof first);
    MPI_Bcast(first, (int)sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    int same = strcmp(mine, first) == 0, all = 0;
    MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

/* Collective: path holds `size` bytes of ptest_pattern_byte(offset, salt),
 * written by rank 0; want gets the same bytes on every rank. */
static inline void iot_pattern_file(const char *path, unsigned char *want, size_t size, int salt) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    ptest_pattern_fill(want, (int64_t)size, 0, salt);
    if (rank == 0) {
        FILE *f = fopen(path, "wb");
        PT_CHECK(f && fwrite(want, 1, size, f) == size);
        if (f)
            fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Whether all nranks ranks share one node (PARIO_NODE_SIZE unset, or at
 * least nranks). */
static inline int iot_one_node(int nranks) {
    const char *ns = getenv("PARIO_NODE_SIZE");
    return !ns || atoi(ns) <= 0 || atoi(ns) >= nranks;
}

#endif
