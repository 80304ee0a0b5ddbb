/* Helpers of the native io API's tests (they link pario; tests/common/ptest.h
 * serves MPI-only suites too, so these live here). */
#ifndef PARIO_TESTS_IO_TEST_H
#define PARIO_TESTS_IO_TEST_H

#include <stdlib.h>
#include <string.h>
#include "pario/io.h"
#include "ptest.h"

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

/* Whether all nranks ranks share one node (PARIO_NODE_SIZE unset, or at
 * least nranks). */
static inline int iot_one_node(int nranks) {
    const char *ns = getenv("PARIO_NODE_SIZE");
    return !ns || atoi(ns) <= 0 || atoi(ns) >= nranks;
}

#endif
