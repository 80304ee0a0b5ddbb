/* The test bed round trip's MPI program (see roundtrip.sh).
 *
 *   tb_roundtrip write PATH BYTES    collective write: the file is cut into
 *                                    BLOCK-byte blocks dealt to the ranks in
 *                                    turn (a vector file view), each rank
 *                                    writes its blocks with one
 *                                    MPI_File_write_all
 *   tb_roundtrip indep PATH BYTES    the same blocks, each rank with one
 *                                    independent MPI_File_write (sieved:
 *                                    read-modify-write under byte-range locks)
 *   tb_roundtrip overwrite PATH BYTES  a new file: a rank of node 0 other
 *                                    than the creating rank 0 writes BYTES,
 *                                    then the first rank of node 1 writes
 *                                    over the middle half; every rank reads
 *                                    it all back (another node's bytes must
 *                                    reach every client, the creator's too)
 *   tb_roundtrip check PATH BYTES    every rank reads the whole file with
 *                                    MPI_File_read_at and compares it with the
 *                                    pattern; prints the device of PATH's
 *                                    directory per rank ("DEV rank r d"), so
 *                                    the caller can see which client served it
 *   tb_roundtrip expect PATH BYTES   writes the expected bytes with plain POSIX
 *                                    calls, without MPI (for cmp)
 *
 * Under MPI, rank 0 first prints "OPEN-FROM object" naming the shared object
 * that provides MPI_File_open (libpario-mpiio.so when pario serves the I/O).
 *
 * BYTES must be a multiple of 8. Exit 0 on success, 3 on a mismatch, 4 on an
 * MPI error, 2 on a usage error. */
#include <mpi.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Odd-sized blocks, so no block boundary falls on a page or a stripe. */
#define BLOCK 3000

static unsigned char pattern_byte(long long off) {
    uint64_t x = (uint64_t)off * 0x9E3779B97F4A7C15ull;
    return (unsigned char)(x >> 56);
}

static void fill(unsigned char *buf, long long len, long long off) {
    for (long long i = 0; i < len; i++)
        buf[i] = pattern_byte(off + i);
}

static void mpi_ok(int rc, const char *what) {
    if (rc == MPI_SUCCESS)
        return;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "tb_roundtrip: %s: %s\n", what, msg);
    MPI_Abort(MPI_COMM_WORLD, 4);
}

static int expect(const char *path, long long bytes) {
    unsigned char *buf = malloc((size_t)bytes);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!buf || fd < 0) {
        perror(path);
        return 2;
    }
    fill(buf, bytes, 0);
    int ok = write(fd, buf, (size_t)bytes) == (ssize_t)bytes;
    ok = close(fd) == 0 && ok;
    free(buf);
    return ok ? 0 : 2;
}

/* Rank r's blocks: r, r + n, r + 2n, ... of the file; the last may be short.
 * Collective (write_all) or independent (write). */
static int write_file(const char *path, long long bytes, int rank, int nranks, int collective) {
    long long nblocks = (bytes + BLOCK - 1) / BLOCK, mine = 0;
    for (long long b = rank; b < nblocks; b += nranks)
        mine += b == nblocks - 1 ? bytes - b * BLOCK : BLOCK;
    unsigned char *buf = malloc((size_t)(mine > 0 ? mine : 1));
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 4);
    long long at = 0;
    for (long long b = rank; b < nblocks; b += nranks) {
        long long len = b == nblocks - 1 ? bytes - b * BLOCK : BLOCK;
        fill(buf + at, len, b * BLOCK);
        at += len;
    }
    MPI_Datatype block, tiled;
    mpi_ok(MPI_Type_contiguous(BLOCK, MPI_BYTE, &block), "MPI_Type_contiguous");
    mpi_ok(MPI_Type_create_resized(block, 0, (MPI_Aint)BLOCK * nranks, &tiled),
           "MPI_Type_create_resized");
    mpi_ok(MPI_Type_commit(&tiled), "MPI_Type_commit");
    MPI_File fh;
    mpi_ok(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
        "MPI_File_open");
    mpi_ok(MPI_File_set_size(fh, 0), "MPI_File_set_size");
    mpi_ok(
        MPI_File_set_view(fh, (MPI_Offset)rank * BLOCK, MPI_BYTE, tiled, "native", MPI_INFO_NULL),
        "MPI_File_set_view");
    if (collective)
        mpi_ok(MPI_File_write_all(fh, buf, (int)mine, MPI_BYTE, MPI_STATUS_IGNORE),
               "MPI_File_write_all");
    else
        mpi_ok(MPI_File_write(fh, buf, (int)mine, MPI_BYTE, MPI_STATUS_IGNORE), "MPI_File_write");
    mpi_ok(MPI_File_close(&fh), "MPI_File_close");
    MPI_Type_free(&tiled);
    MPI_Type_free(&block);
    free(buf);
    return 0;
}

static int check_file(const char *path, long long bytes, int rank) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    struct stat st;
    long long dev = stat(dirname(dir), &st) == 0 ? (long long)st.st_dev : -1;
    printf("DEV rank %d %lld\n", rank, dev);
    MPI_Comm node; /* the ranks MPI itself places on this rank's host */
    int node_size = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    printf("MPI-NODE rank %d %d\n", rank, node_size);
    fflush(stdout);

    MPI_File fh;
    mpi_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
           "MPI_File_open");
    MPI_Offset size = 0;
    mpi_ok(MPI_File_get_size(fh, &size), "MPI_File_get_size");
    unsigned char *buf = malloc((size_t)bytes), *want = malloc((size_t)bytes);
    if (!buf || !want)
        MPI_Abort(MPI_COMM_WORLD, 4);
    MPI_Status status;
    int got = 0;
    mpi_ok(MPI_File_read_at(fh, 0, buf, (int)bytes, MPI_BYTE, &status), "MPI_File_read_at");
    mpi_ok(MPI_Get_count(&status, MPI_BYTE, &got), "MPI_Get_count");
    mpi_ok(MPI_File_close(&fh), "MPI_File_close");
    fill(want, bytes, 0);
    int bad = 0;
    if (size != bytes || got != bytes) {
        fprintf(stderr, "tb_roundtrip: rank %d: %s has %lld bytes, read %d, %lld expected\n", rank,
                path, (long long)size, got, bytes);
        bad = 1;
    } else {
        for (long long i = 0; i < bytes; i++)
            if (buf[i] != want[i]) {
                fprintf(stderr, "tb_roundtrip: rank %d: %s differs first at byte %lld\n", rank,
                        path, i);
                bad = 1;
                break;
            }
    }
    free(buf);
    free(want);
    return bad ? 3 : 0;
}

/* The bytes of overwrite(): the pattern, its complement in the middle half. */
static unsigned char overwritten_byte(long long off, long long bytes) {
    int middle = off >= bytes / 4 && off < bytes / 4 + bytes / 2;
    return middle ? (unsigned char)~pattern_byte(off) : pattern_byte(off);
}

/* MPI's sync-barrier-sync: what one rank wrote, every rank reads after it. */
static void settle(MPI_File fh) {
    mpi_ok(MPI_File_sync(fh), "MPI_File_sync");
    mpi_ok(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    mpi_ok(MPI_File_sync(fh), "MPI_File_sync");
}

/* Two nodes of nranks / 2 ranks (at least 2 ranks): see the usage above. */
static int overwrite(const char *path, long long bytes, int rank, int nranks) {
    int first = nranks >= 4 ? 1 : 0, second = nranks / 2;
    long long lo = bytes / 4, mid = bytes / 2;
    unsigned char *buf = malloc((size_t)bytes);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 4);
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL); /* absent already: nothing to do */
    mpi_ok(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    MPI_File fh;
    mpi_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
           "MPI_File_open");
    if (rank == first) {
        fill(buf, bytes, 0);
        mpi_ok(MPI_File_write_at(fh, 0, buf, (int)bytes, MPI_BYTE, MPI_STATUS_IGNORE),
               "MPI_File_write_at");
    }
    settle(fh);
    if (rank == second) {
        for (long long i = 0; i < mid; i++)
            buf[i] = overwritten_byte(lo + i, bytes);
        mpi_ok(MPI_File_write_at(fh, lo, buf, (int)mid, MPI_BYTE, MPI_STATUS_IGNORE),
               "MPI_File_write_at");
    }
    settle(fh);
    mpi_ok(MPI_File_read_at(fh, 0, buf, (int)bytes, MPI_BYTE, MPI_STATUS_IGNORE),
           "MPI_File_read_at");
    mpi_ok(MPI_File_close(&fh), "MPI_File_close");
    int bad = 0;
    for (long long i = 0; i < bytes && !bad; i++)
        if (buf[i] != overwritten_byte(i, bytes)) {
            fprintf(stderr, "tb_roundtrip: rank %d: %s differs first at byte %lld\n", rank, path,
                    i);
            bad = 1;
        }
    free(buf);
    return bad ? 3 : 0;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s write|indep|overwrite|check|expect PATH BYTES\n", argv[0]);
        return 2;
    }
    const char *verb = argv[1], *path = argv[2];
    long long bytes = atoll(argv[3]);
    if (bytes <= 0 || bytes % 8 || bytes > (1LL << 30)) {
        fprintf(stderr, "tb_roundtrip: BYTES must be a positive multiple of 8 up to 1 GiB\n");
        return 2;
    }
    if (!strcmp(verb, "expect"))
        return expect(path, bytes);
    if (strcmp(verb, "write") && strcmp(verb, "indep") && strcmp(verb, "overwrite") &&
        strcmp(verb, "check")) {
        fprintf(stderr, "tb_roundtrip: unknown verb %s\n", verb);
        return 2;
    }
    MPI_Init(&argc, &argv);
    int rank = 0, nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (rank == 0) {
        Dl_info where;
        printf("OPEN-FROM %s\n", dladdr((void *)MPI_File_open, &where) && where.dli_fname
                                     ? where.dli_fname
                                     : "unknown");
        fflush(stdout);
    }
    int rc = !strcmp(verb, "check") ? check_file(path, bytes, rank)
             : !strcmp(verb, "overwrite")
                 ? overwrite(path, bytes, rank, nranks)
                 : write_file(path, bytes, rank, nranks, !strcmp(verb, "write"));
    int worst = 0;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return worst;
}
