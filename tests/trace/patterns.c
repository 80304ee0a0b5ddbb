/* Seeded bad I/O patterns, each one a trace's advice should recognise.
 *
 *   patterns MODE DIR
 *
 *   nosieve     independent writes and reads through an interleaved view of
 *               8-byte blocks, with data sieving disabled by the program's
 *               hints: one system call per block
 *   readsame    rank 0 writes 1 MiB, then every rank reads all of it
 *   misaligned  each rank writes records of 800,000 B (not a multiple of any
 *               block size) at its own offsets, independently
 *   smallcb     collective writes with cb_buffer_size 64 KiB, smaller than one
 *               aggregator's domain
 *   unclosed    each rank writes 64 KiB of its own and ends without closing
 *               the file (its trace is written at MPI_Finalize)
 *
 * Every mode reads back or checks what it wrote and exits non-zero on a
 * mismatch, so a faster configuration cannot be a wrong one. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* nosieve: 8-byte blocks, 8192 of them per rank (64 KiB). */
#define NOSIEVE_BLOCK 8
#define NOSIEVE_BLOCKS 8192
/* readsame: the shared input. */
#define READSAME_BYTES (1 << 20)
/* misaligned: IO500's sort of record, 4 per rank. */
#define MISALIGNED_RECORD 800000
#define MISALIGNED_RECORDS 4
/* smallcb: 1 MiB per rank in one collective call. */
#define SMALLCB_BYTES (1 << 20)
#define SMALLCB_BUFFER "65536"

static int rank, nranks;

static void die(const char *what) {
    fprintf(stderr, "patterns: rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void ok(int rc, const char *what) {
    if (rc != MPI_SUCCESS)
        die(what);
}

static char byte_at(long long off) {
    return (char)(off * 7 + 3);
}

static void fill(char *buf, long long n, long long off) {
    for (long long i = 0; i < n; i++)
        buf[i] = byte_at(off + i);
}

static void expect(const char *buf, long long n, long long off) {
    for (long long i = 0; i < n; i++)
        if (buf[i] != byte_at(off + i))
            die("read back a wrong byte");
}

static MPI_File open_file(const char *dir, const char *name, int amode, MPI_Info info) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    MPI_File fh;
    ok(MPI_File_open(MPI_COMM_WORLD, path, amode, info, &fh), "open");
    return fh;
}

/* Rank r's blocks interleaved: block k of rank r at (k * nranks + r) * B. */
static void nosieve(const char *dir) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_write", "disable");
    MPI_Info_set(info, "romio_ds_read", "disable");
    MPI_File fh = open_file(dir, "nosieve.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    MPI_Datatype block, view;
    MPI_Type_contiguous(NOSIEVE_BLOCK, MPI_BYTE, &block);
    MPI_Type_create_resized(block, 0, (MPI_Aint)NOSIEVE_BLOCK * nranks, &view);
    MPI_Type_commit(&view);
    ok(MPI_File_set_view(fh, (MPI_Offset)rank * NOSIEVE_BLOCK, MPI_BYTE, view, "native", info),
       "set_view");
    long long n = (long long)NOSIEVE_BLOCK * NOSIEVE_BLOCKS;
    char *buf = malloc((size_t)n), *back = malloc((size_t)n);
    for (long long k = 0; k < NOSIEVE_BLOCKS; k++)
        fill(buf + k * NOSIEVE_BLOCK, NOSIEVE_BLOCK, (k * nranks + rank) * NOSIEVE_BLOCK);
    ok(MPI_File_write_at(fh, 0, buf, (int)n, MPI_BYTE, MPI_STATUS_IGNORE), "write");
    ok(MPI_File_sync(fh), "sync");
    MPI_Barrier(MPI_COMM_WORLD);
    ok(MPI_File_sync(fh), "sync");
    ok(MPI_File_read_at(fh, 0, back, (int)n, MPI_BYTE, MPI_STATUS_IGNORE), "read");
    if (memcmp(buf, back, (size_t)n) != 0)
        die("read back other bytes than written");
    ok(MPI_File_close(&fh), "close");
    MPI_Type_free(&view);
    MPI_Type_free(&block);
    MPI_Info_free(&info);
    free(buf);
    free(back);
}

static void readsame(const char *dir) {
    char *buf = malloc(READSAME_BYTES);
    MPI_File fh = open_file(dir, "readsame.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL);
    if (rank == 0) {
        fill(buf, READSAME_BYTES, 0);
        ok(MPI_File_write_at(fh, 0, buf, READSAME_BYTES, MPI_BYTE, MPI_STATUS_IGNORE), "write");
    }
    ok(MPI_File_close(&fh), "close");
    fh = open_file(dir, "readsame.dat", MPI_MODE_RDONLY, MPI_INFO_NULL);
    memset(buf, 0, READSAME_BYTES);
    ok(MPI_File_read_at(fh, 0, buf, READSAME_BYTES, MPI_BYTE, MPI_STATUS_IGNORE), "read");
    expect(buf, READSAME_BYTES, 0);
    ok(MPI_File_close(&fh), "close");
    free(buf);
}

static void misaligned(const char *dir) {
    MPI_File fh = open_file(dir, "misaligned.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL);
    char *buf = malloc(MISALIGNED_RECORD);
    for (int k = 0; k < MISALIGNED_RECORDS; k++) {
        long long off = ((long long)k * nranks + rank) * MISALIGNED_RECORD;
        fill(buf, MISALIGNED_RECORD, off);
        ok(MPI_File_write_at(fh, off, buf, MISALIGNED_RECORD, MPI_BYTE, MPI_STATUS_IGNORE),
           "write");
    }
    ok(MPI_File_sync(fh), "sync");
    long long off = (long long)rank * MISALIGNED_RECORD;
    ok(MPI_File_read_at(fh, off, buf, MISALIGNED_RECORD, MPI_BYTE, MPI_STATUS_IGNORE), "read");
    expect(buf, MISALIGNED_RECORD, off);
    ok(MPI_File_close(&fh), "close");
    free(buf);
}

static void smallcb(const char *dir) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", SMALLCB_BUFFER);
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_File fh = open_file(dir, "smallcb.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    char *buf = malloc(SMALLCB_BYTES);
    long long off = (long long)rank * SMALLCB_BYTES;
    fill(buf, SMALLCB_BYTES, off);
    ok(MPI_File_write_at_all(fh, off, buf, SMALLCB_BYTES, MPI_BYTE, MPI_STATUS_IGNORE),
       "write_all");
    memset(buf, 0, SMALLCB_BYTES);
    ok(MPI_File_read_at_all(fh, off, buf, SMALLCB_BYTES, MPI_BYTE, MPI_STATUS_IGNORE), "read_all");
    expect(buf, SMALLCB_BYTES, off);
    ok(MPI_File_close(&fh), "close");
    MPI_Info_free(&info);
    free(buf);
}

static void unclosed(const char *dir) {
    MPI_File fh = open_file(dir, "unclosed.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL);
    long long n = (long long)NOSIEVE_BLOCK * NOSIEVE_BLOCKS, off = rank * n;
    char *buf = malloc((size_t)n);
    fill(buf, n, off);
    ok(MPI_File_write_at(fh, off, buf, (int)n, MPI_BYTE, MPI_STATUS_IGNORE), "write");
    free(buf); /* the file stays open: MPI_Finalize finishes it */
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc != 3)
        die("usage: patterns nosieve|readsame|misaligned|smallcb|unclosed DIR");
    if (strcmp(argv[1], "nosieve") == 0)
        nosieve(argv[2]);
    else if (strcmp(argv[1], "readsame") == 0)
        readsame(argv[2]);
    else if (strcmp(argv[1], "misaligned") == 0)
        misaligned(argv[2]);
    else if (strcmp(argv[1], "smallcb") == 0)
        smallcb(argv[2]);
    else if (strcmp(argv[1], "unclosed") == 0)
        unclosed(argv[2]);
    else
        die("unknown mode");
    MPI_Finalize();
    return 0;
}
