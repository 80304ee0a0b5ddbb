/* Shared driver for pario's I/O benchmark programs.
 *
 * Every program uses only the MPI API for the I/O it measures, so one binary runs on
 * any MPI-IO implementation (pario through LD_PRELOAD, OMPIO, ROMIO). A program
 * describes its variants (name, bytes moved per operation, a write and a read
 * function); the driver runs each variant in each mode on a fresh file and prints
 * one line per measurement on rank 0:
 *
 *   INFO      {"mpi_library": "...", "file_open_from": "/path/lib.so", "ranks": N}
 *   INFO-KEYS {"keys": [...]}   (MPI_File_get_info of the first file opened)
 *   PLAN      {"variant": "...", "bytes": N}
 *   RESULT    {"variant": "...", "op": "write", "mode": "cached", "bytes": N, "seconds": t}
 *
 * `seconds` is the time of the slowest rank (MPI_Reduce MAX of the per-rank times,
 * every rank enters the timed region after a barrier). Every read is checked against
 * the pattern that was written; a mismatch prints VERIFY-FAIL and the program exits
 * with status 3. MPI errors print MPI-ERROR and exit with status 4. */
#ifndef PARIO_IOBENCH_H
#define PARIO_IOBENCH_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

enum ib_mode { IB_CACHED = 0, IB_DURABLE = 1, IB_NMODES = 2 };

/* Longest variant name, including the terminating zero. */
#define IB_NAME_MAX 48
/* Longest path of a benchmark file, including the terminating zero. */
#define IB_PATH_MAX 4096

/* What a program's write/read function needs to know about the current run. */
typedef struct ib_ctx {
    MPI_Comm comm;
    int rank;
    int nranks;
    enum ib_mode mode;
    uint64_t salt;          /* changes with rep, variant and mode: stale data fails */
    char path[IB_PATH_MAX]; /* the variant's shared file (same on every rank) */
    char dir[IB_PATH_MAX];  /* directory for the files */
    const char *size;       /* the program's --size argument, or NULL */
    long long max_calls;    /* --max-calls: cap on I/O calls per rank and variant */
} ib_ctx;

/* Result of one timed operation on one rank. */
typedef struct ib_timing {
    double seconds; /* this rank's time inside the timed region */
    long long bad;  /* words that did not match the expected pattern (reads) */
    int skipped;    /* the variant has no measurement for this op */
} ib_timing;

typedef struct ib_variant {
    char name[IB_NAME_MAX];
    long long bytes; /* bytes moved per operation, summed over ranks */
    int param;       /* program-specific selector */
    int (*write)(const ib_ctx *c, const struct ib_variant *v, ib_timing *t);
    int (*read)(const ib_ctx *c, const struct ib_variant *v, ib_timing *t);
    int follows; /* runs right after the variant before it in the table, when both are
                    selected: it uses what that one measured */
} ib_variant;

/* Parses the common options, runs every selected variant and finalizes MPI.
 * `setup` fills the variant table from the context (size, nranks); returns the
 * process exit status. */
int ib_main(int argc, char **argv, const char *program,
            int (*setup)(const ib_ctx *c, ib_variant *vars, int max_vars, int *nvars));

/* Aborts the whole job with a message when an MPI call failed. */
void ib_mpi_check(int rc, const char *what);

/* sync() (untimed, so that the writeback of earlier runs stays out of the
 * region), barrier, then the start time of a timed region. */
double ib_start(MPI_Comm comm);

/* The 8-byte word stored at file offset `off` (a multiple of 8). */
static inline uint64_t ib_word(long long off, uint64_t salt) {
    return ((uint64_t)off / 8 + 1) * UINT64_C(0x9E3779B97F4A7C15) ^
           salt * UINT64_C(0xD1B54A32D192ED03);
}

/* Fills `len` bytes (multiple of 8) with the words of file offsets off, off+8, ... */
void ib_fill(void *buf, size_t len, long long off, uint64_t salt);
/* Counts the words of `buf` that differ from the pattern at file offset `off`. */
long long ib_check(const void *buf, size_t len, long long off, uint64_t salt);
/* Counts bytes of `buf` that are not `value` (untouched gaps in memory). */
long long ib_check_fill(const void *buf, size_t len, unsigned char value);

/* Parses "64k", "8m", "1g", "4096" into bytes; -1 on error. */
long long ib_parse_bytes(const char *s);

/* Drops the page cache of `path` on this node (posix_fadvise DONTNEED) after it was
 * synced; ignored when the file is not a plain local file. */
void ib_drop_cache(const char *path);

/* Info with the given key/value pairs (NULL-terminated list); MPI_INFO_NULL if none. */
MPI_Info ib_info(const char *const *kv);

/* Rank 0 prints the info keys of the first file it opens (INFO-KEYS, once). */
void ib_note_file(const ib_ctx *c, MPI_File fh);

/* Allocates or aborts the job (benchmark buffers are not optional). */
void *ib_alloc(size_t len);

#endif
