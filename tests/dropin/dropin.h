/* Helpers shared by the drop-in tests: scratch paths, POSIX access to the
 * files the MPI programs write, and error-string checks. The programs use
 * only the MPI API; checks of pario-only behaviour (messages naming the
 * file, unsupported operations) run when ptest_on_pario() is true. */
#ifndef PARIO_DROPIN_H
#define PARIO_DROPIN_H

#include "ptest.h"

#include <fcntl.h>
#include <unistd.h>

/* Longest scratch path built here (ptest_path's own buffer size). */
#define DROPIN_PATH_MAX 4400

static inline int dropin_rank(void) {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

static inline int dropin_size(void) {
    int n = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

/* Copies the scratch path for name into out (DROPIN_PATH_MAX bytes); rank 0
 * removes any old file of that name and every rank waits. */
static inline char *dropin_fresh_path(char *out, const char *name) {
    snprintf(out, DROPIN_PATH_MAX, "%s", ptest_path(name));
    if (dropin_rank() == 0)
        unlink(out);
    MPI_Barrier(MPI_COMM_WORLD);
    return out;
}

/* The size of path, or -1. */
static inline long long dropin_file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* The error string of rc (at most MPI_MAX_ERROR_STRING bytes in out). */
static inline const char *dropin_error_string(int rc, char *out) {
    int len = 0;
    out[0] = '\0';
    MPI_Error_string(rc, out, &len);
    return out;
}

/* Under pario, the error string of rc must contain want (a file name or a
 * cause); prints the string otherwise. */
static inline void dropin_string_has_at(int rc, const char *want, const char *file, int line) {
    if (!ptest_on_pario())
        return;
    char msg[MPI_MAX_ERROR_STRING];
    dropin_error_string(rc, msg);
    char text[MPI_MAX_ERROR_STRING + 256];
    snprintf(text, sizeof text, "error string \"%s\" contains \"%s\"", msg, want);
    ptest_check(rc != MPI_SUCCESS && strstr(msg, want) != NULL, text, file, line);
}
#define DROPIN_STRING_HAS(rc, want) dropin_string_has_at((rc), (want), __FILE__, __LINE__)

/* Fills buf with bytes that depend on seed and position. */
static inline void dropin_pattern(unsigned char *buf, size_t len, unsigned seed) {
    for (size_t i = 0; i < len; i++)
        buf[i] = (unsigned char)(seed * 37u + i * 11u + 3u);
}

#endif
