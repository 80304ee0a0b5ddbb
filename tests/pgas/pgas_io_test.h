/* Helpers of the pgas io tests. */
#ifndef PARIO_PGAS_IO_TEST_H
#define PARIO_PGAS_IO_TEST_H

#include "pgas_test.h"
#include "pario/pgas_io.h"

#include <stdlib.h>

/* A scratch file name unique to this program, rank count and node split (ctest
 * runs the registrations of one program side by side). */
static inline const char *pio_test_path(const char *name) {
    static char file[256];
    int n = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *node = getenv("PARIO_NODE_SIZE");
    snprintf(file, sizeof file, "%s.np%d.node%s", name, n, node && *node ? node : "all");
    return ptest_path(file);
}

static inline pario_pgas_file *pio_test_open(pario_pgas *ctx, const char *path, int flags) {
    pario_pgas_file *fd = NULL;
    pario_error err = {0};
    int rc = pario_pgas_fopen(ctx, path, flags, 0, NULL, &fd, &err);
    if (rc != PARIO_OK)
        fprintf(stderr, "pario_pgas_fopen %s: %s\n", path, err.msg);
    PT_EQ(rc, PARIO_OK);
    return fd;
}

static inline void pio_test_close(pario_pgas_file **fd) {
    pario_error err = {0};
    int rc = pario_pgas_fclose(fd, &err);
    if (rc != PARIO_OK)
        fprintf(stderr, "pario_pgas_fclose: %s\n", err.msg);
    PT_EQ(rc, PARIO_OK);
}

/* Fills this rank's elements of a (element i holds test_byte(i, k, salt)). */
static inline void pio_test_fill_owned(pario_pgas *ctx, const pario_pgas_array *a, int salt) {
    uint64_t cursor = 0;
    pario_pgas_range r;
    while (pario_pgas_owned_next(a, pario_pgas_mythread(ctx), &cursor, &r)) {
        void *local = NULL;
        PT_EQ(pario_pgas_cast_range(ctx, a, r.first, r.count, &local), PARIO_OK);
        if (local)
            test_fill(local, r.first, r.count, a->base.elem_size, salt);
    }
}

/* Elements of this rank's part of a that do not hold element (i + shift)'s bytes
 * (elements outside [lo, hi) are not checked). */
static inline uint64_t pio_test_owned_bad(pario_pgas *ctx, const pario_pgas_array *a, int salt,
                                          uint64_t shift, uint64_t lo, uint64_t hi) {
    uint64_t cursor = 0, bad = 0;
    pario_pgas_range r;
    uint32_t es = a->base.elem_size;
    while (pario_pgas_owned_next(a, pario_pgas_mythread(ctx), &cursor, &r)) {
        unsigned char *local = NULL;
        PT_EQ(pario_pgas_cast_range(ctx, a, r.first, r.count, (void **)&local), PARIO_OK);
        for (uint64_t i = r.first; local && i < r.first + r.count; i++)
            if (i >= lo && i < hi)
                bad += test_mismatch(local + (i - r.first) * es, i + shift, 1, es, salt);
    }
    return bad;
}

/* Rank 0: the file holds exactly `count` elements of es bytes, element j being
 * test element first + j, from byte `at` on, and is `size` bytes long. */
static inline uint64_t pio_test_file_bad(const char *path, uint64_t at, uint64_t first,
                                         uint64_t count, uint32_t es, int salt, long long size) {
    size_t cap = (size_t)(at + count * es) + 64;
    unsigned char *buf = malloc(cap);
    long long got = ptest_read_file(path, buf, cap);
    uint64_t bad = got == size ? 0 : 1;
    if (got != size)
        fprintf(stderr, "%s: %lld bytes, expected %lld\n", path, got, size);
    else
        bad = test_mismatch(buf + at, first, count, es, salt);
    free(buf);
    return bad;
}

#endif
