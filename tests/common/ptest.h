/* Minimal assertion helpers for pario's MPI test programs.
 *
 * A test program calls ptest_init() after MPI_Init, uses PT_CHECK / PT_EQ /
 * PT_MPI_OK, and returns ptest_finish() from main: it prints
 * "N passed, N failed" on rank 0 and every rank exits non-zero when any rank
 * failed. Failures print file:line, rank and the failing expression.
 * ptest_path(name) gives a per-test scratch path under $PARIO_TEST_DIR
 * (or /tmp), identical on every rank. */
#ifndef PARIO_PTEST_H
#define PARIO_PTEST_H

#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>
#include "stripe_image.h"

static int ptest_passed, ptest_failed;

static inline void ptest_check(int ok, const char *expr, const char *file, int line) {
    if (ok) {
        ptest_passed++;
        return;
    }
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    ptest_failed++;
    fprintf(stderr, "FAIL %s:%d rank %d: %s\n", file, line, rank, expr);
    fflush(stderr);
}

#define PT_CHECK(expr) ptest_check(!!(expr), #expr, __FILE__, __LINE__)
#define PT_EQ(a, b) ptest_check((long long)(a) == (long long)(b), #a " == " #b, __FILE__, __LINE__)

/* An MPI call that must succeed; prints the MPI error string otherwise. */
static inline int ptest_mpi_ok(int rc, const char *expr, const char *file, int line) {
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        char text[MPI_MAX_ERROR_STRING + 256];
        snprintf(text, sizeof text, "%s -> %s", expr, msg);
        ptest_check(0, text, file, line);
        return 0;
    }
    ptest_check(1, expr, file, line);
    return 1;
}
#define PT_MPI_OK(call) ptest_mpi_ok((call), #call, __FILE__, __LINE__)

/* An MPI call that must fail with the given error class. */
static inline void ptest_mpi_class(int rc, int want, const char *expr, const char *file,
                                   int line) {
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    char text[512];
    snprintf(text, sizeof text, "%s: error class %d, expected %d", expr, cls, want);
    ptest_check(cls == want, text, file, line);
}
#define PT_MPI_CLASS(call, cls) ptest_mpi_class((call), (cls), #call, __FILE__, __LINE__)

/* True when the MPI_File_* calls go to pario's drop-in (it exports
 * pario_mpiio_active). Lets a test check pario-specific behaviour, such as
 * error messages naming the file, that the system's MPI-IO does not promise. */
static inline int ptest_on_pario(void) {
    return dlsym(RTLD_DEFAULT, "pario_mpiio_active") != NULL;
}

static char ptest_dir[4096];

static inline void ptest_init(void) {
    const char *d = getenv("PARIO_TEST_DIR");
    snprintf(ptest_dir, sizeof ptest_dir, "%s", d && *d ? d : "/tmp/pario-test");
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "mkdir -p '%s'", ptest_dir);
        if (system(cmd) != 0)
            fprintf(stderr, "cannot create %s\n", ptest_dir);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Scratch file path; the same string on every rank. Not thread-safe. */
static inline const char *ptest_path(const char *name) {
    static char path[4400];
    snprintf(path, sizeof path, "%s/%s", ptest_dir, name);
    return path;
}

/* A committed filetype giving this rank of MPI_COMM_WORLD every nranks-th
 * block of `count` items of `type`: rank r sees blocks r, r + n, r + 2n, ...
 * of the file, the ranks' blocks interleaved. The caller frees it. */
static inline MPI_Datatype ptest_interleaved(int count, MPI_Datatype type) {
    int rank = 0, nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Aint lb = 0, extent = 0;
    MPI_Type_get_extent(type, &lb, &extent);
    MPI_Aint block = (MPI_Aint)count * extent, at = rank * block;
    MPI_Datatype one, t;
    MPI_Type_create_hindexed(1, &count, &at, type, &one);
    MPI_Type_create_resized(one, 0, nranks * block, &t);
    MPI_Type_commit(&t);
    MPI_Type_free(&one);
    return t;
}

/* Reads up to cap bytes of path at offset 0 with pread; the bytes read or
 * -1 (not collective). */
static inline long long ptest_read_file(const char *path, void *buf, size_t cap) {
    int striped = 0;
    long long logical = stripe_image_of(path, buf, cap, &striped);
    if (striped) /* a striped file: its logical bytes (stripe_image.h) */
        return logical < (long long)cap ? logical : (long long)cap;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    ssize_t n = pread(fd, buf, cap, 0);
    close(fd);
    return (long long)n;
}

/* Byte off of a file the write-behind tests fill: 7 off + off / 251 + salt
 * (the Python checkers of tests/common compute the same). */
static inline unsigned char ptest_pattern_byte(int64_t off, int salt) {
    return (unsigned char)(off * 7 + off / 251 + salt);
}

/* buf filled with the pattern's bytes off .. off + len - 1. */
static inline void ptest_pattern_fill(unsigned char *buf, int64_t len, int64_t off, int salt) {
    for (int64_t i = 0; i < len; i++)
        buf[i] = ptest_pattern_byte(off + i, salt);
}

/* Rank 0 reads the whole file (at most cap bytes) with POSIX; every rank
 * gets the bytes. Returns the count, -1 when the file cannot be opened. */
static inline int64_t ptest_file_image(const char *path, unsigned char *buf, int64_t cap) {
    int64_t n = 0;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        n = ptest_read_file(path, buf, (size_t)cap);
    MPI_Bcast(&n, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (n > 0)
        MPI_Bcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
    return n;
}

/* The value of key in fh's hints (MPI_File_get_info), or "" when absent or
 * when get_info fails; val holds MPI_MAX_INFO_VAL + 1 bytes. */
static inline const char *ptest_hint_of(MPI_File fh, const char *key, char *val) {
    MPI_Info info;
    int flag = 0;
    val[0] = '\0';
    if (MPI_File_get_info(fh, &info) != MPI_SUCCESS)
        return val;
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag);
    if (!flag)
        val[0] = '\0';
    MPI_Info_free(&info);
    return val;
}

/* Rank 0 writes text to path (a hints or costs file); every rank waits. */
static inline void ptest_put_text(const char *path, const char *text) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        FILE *f = fopen(path, "w");
        ptest_check(f != NULL, "fopen of a text file to write", __FILE__, __LINE__);
        if (f) {
            fputs(text, f);
            fclose(f);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static inline int ptest_finish(void) {
    int counts[2] = {ptest_passed, ptest_failed}, total[2];
    MPI_Allreduce(counts, total, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("%d passed, %d failed\n", total[0], total[1]);
    MPI_Finalize();
    return total[1] ? 1 : 0;
}

#endif
