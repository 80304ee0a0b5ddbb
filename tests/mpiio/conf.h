/* Shared helpers for the MPI-IO conformance programs (MPI 3.1, chapter 13).
 *
 * The programs use only the MPI API; these helpers add what the checks need
 * on top of ptest.h: rank and size, scratch paths kept in caller buffers,
 * rank 0 preparing and reading back files with plain POSIX calls, and the
 * checks that every rank saw the same error class and that pario's error
 * strings name the file. */
#ifndef PARIO_CONF_H
#define PARIO_CONF_H

#include "ptest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

/* Longest scratch path the programs build (ptest_path's own buffer size). */
#define CONF_PATH_MAX 4400
/* Largest file image a conformance program reads back: every file here is small. */
#define CONF_IMAGE_MAX 65536

static inline int conf_rank(void) {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

static inline int conf_size(void) {
    int n = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

/* Copies the scratch path for name into out (CONF_PATH_MAX bytes). */
static inline char *conf_path(char *out, const char *name) {
    snprintf(out, CONF_PATH_MAX, "%s", ptest_path(name));
    return out;
}

/* Rank 0 removes path (if present); every rank waits for it. */
static inline void conf_remove(const char *path) {
    if (conf_rank() == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Rank 0 replaces path with exactly len bytes of data; every rank waits. */
static inline void conf_put_file(const char *path, const void *data, size_t len) {
    if (conf_rank() == 0) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        PT_CHECK(fd >= 0);
        if (fd >= 0) {
            PT_EQ(pwrite(fd, data, len, 0), (long long)len);
            close(fd);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* True (on every rank) when path exists, as seen by rank 0. */
static inline int conf_exists(const char *path) {
    int there = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (conf_rank() == 0)
        there = access(path, F_OK) == 0;
    MPI_Bcast(&there, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return there;
}

/* Reads the whole of path into buf (at most cap bytes) with pread.
 * Returns the file's size, or -1 when it cannot be opened. */
static inline long long conf_read_image(const char *path, unsigned char *buf, size_t cap) {
    int striped = 0;
    long long logical = stripe_image_of(path, buf, cap, &striped);
    if (striped) /* a striped file (the stripe driver's variants): its logical bytes */
        return logical;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    struct stat st;
    long long size = fstat(fd, &st) == 0 ? (long long)st.st_size : -1;
    size_t want = size > 0 && (size_t)size < cap ? (size_t)size : cap;
    size_t got = 0;
    while (size > 0 && got < want) {
        ssize_t n = pread(fd, buf + got, want - got, (off_t)got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    return size;
}

/* After a barrier, rank 0 checks that path holds exactly the len bytes of
 * want (size and every byte). Reports the first differing offset. */
static inline void conf_expect_image_at(const char *path, const void *want, size_t len,
                                        const char *file, int line) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (conf_rank() == 0) {
        static unsigned char got[CONF_IMAGE_MAX];
        memset(got, 0, sizeof got);
        long long size = conf_read_image(path, got, sizeof got);
        char text[256];
        snprintf(text, sizeof text, "file size %lld, expected %zu", size, len);
        ptest_check(size == (long long)len, text, file, line);
        size_t cmp = len < sizeof got ? len : sizeof got;
        size_t bad = cmp;
        for (size_t i = 0; i < cmp && size >= 0; i++) {
            if (got[i] != ((const unsigned char *)want)[i]) {
                bad = i;
                break;
            }
        }
        snprintf(text, sizeof text, "file bytes differ from offset %zu (got 0x%02x)", bad,
                 bad < cmp ? got[bad] : 0);
        ptest_check(size >= 0 && bad == cmp, text, file, line);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}
#define CONF_EXPECT_IMAGE(path, want, len)                                                         \
    conf_expect_image_at((path), (want), (len), __FILE__, __LINE__)

/* The error class of rc (MPI_SUCCESS for success). */
static inline int conf_class(int rc) {
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

/* Checks that every rank of comm got the same error class for a call. */
static inline void conf_same_class_at(int rc, MPI_Comm comm, const char *file, int line) {
    int cls = conf_class(rc), lo = 0, hi = 0;
    MPI_Allreduce(&cls, &lo, 1, MPI_INT, MPI_MIN, comm);
    MPI_Allreduce(&cls, &hi, 1, MPI_INT, MPI_MAX, comm);
    ptest_check(lo == hi, "same error class on every rank", file, line);
}
#define CONF_SAME_CLASS(rc) conf_same_class_at((rc), MPI_COMM_WORLD, __FILE__, __LINE__)

/* Under pario, the error string of a failure on a named file must name it:
 * checks that the string of rc contains the last component of path. */
static inline void conf_names_file_at(int rc, const char *path, const char *file, int line) {
    if (!ptest_on_pario() || rc == MPI_SUCCESS)
        return;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    msg[0] = '\0';
    MPI_Error_string(rc, msg, &len);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char text[MPI_MAX_ERROR_STRING + CONF_PATH_MAX + 64];
    snprintf(text, sizeof text, "error string \"%s\" names %s", msg, base);
    ptest_check(strstr(msg, base) != NULL, text, file, line);
}
#define CONF_NAMES_FILE(rc, path) conf_names_file_at((rc), (path), __FILE__, __LINE__)

/* An open that must fail with class cls on every rank, naming the file under
 * pario; closes the handle should the open wrongly succeed. */
static inline void conf_open_fails_at(const char *path, int amode, int cls, const char *file,
                                      int line) {
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh);
    char text[256];
    snprintf(text, sizeof text, "open amode 0x%x: class %d, expected %d", amode, conf_class(rc),
             cls);
    ptest_check(conf_class(rc) == cls, text, file, line);
    conf_same_class_at(rc, MPI_COMM_WORLD, file, line);
    conf_names_file_at(rc, path, file, line);
    if (rc == MPI_SUCCESS)
        MPI_File_close(&fh);
}
#define CONF_OPEN_FAILS(path, amode, cls)                                                          \
    conf_open_fails_at((path), (amode), (cls), __FILE__, __LINE__)

/* Checks of behaviour the standard requires but a system MPI-IO gets
 * wrong are skipped when that MPI-IO is the oracle, and run under pario.
 * Setting PARIO_CONF_STRICT=1 runs them on the system MPI-IO as well, which
 * lists its deviations. The comment at each such check names the deviation. */
static inline int conf_strict(void) {
    const char *s = getenv("PARIO_CONF_STRICT");
    return ptest_on_pario() || (s && *s && strcmp(s, "0") != 0);
}

/* True when Open MPI's OMPIO is the oracle and it deviates from the
 * standard at the check that asks (so the check is skipped). */
static inline int conf_ompio_deviates(void) {
#ifdef OPEN_MPI
    return !conf_strict();
#else
    return 0;
#endif
}

/* True when MPICH's ROMIO is the oracle and it deviates from the standard
 * at the check that asks (so the check is skipped). */
static inline int conf_romio_deviates(void) {
#ifdef MPICH_VERSION
    return !conf_strict();
#else
    return 0;
#endif
}

/* Fills buf with a recognisable pattern that depends on seed. */
static inline void conf_pattern(unsigned char *buf, size_t len, unsigned seed) {
    for (size_t i = 0; i < len; i++)
        buf[i] = (unsigned char)(seed * 31u + i * 7u + 1u);
}

#endif
