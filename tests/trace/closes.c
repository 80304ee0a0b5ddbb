/* Traced files closed in every way the trace's merge must follow (a file's
 * trace is merged when its communicator is freed or parked at
 * MPI_Finalize, or when IO_TRACE_PENDING closed files wait):
 *
 *   closes DIR [leave-open]
 *
 *   world.KK   20 files on MPI_COMM_WORLD, one after another (more than
 *              wait at once); file k: every rank writes k + 1 blocks
 *   splitG.K   3 files on a split communicator (group G = rank % 2),
 *              which is freed before MPI_Finalize, then 2 files on a
 *              second split kept to the end (splitG.1K)
 *   selfR.K    2 files of each rank alone (MPI_COMM_SELF), 3 blocks each
 *   pairA/B    two files open at once on MPI_COMM_WORLD, 2 blocks each
 *   open       with leave-open: one file written (1 block) and not closed;
 *              the world files still waiting are then written by each rank
 *              alone at MPI_Finalize
 *
 * Block j of rank r in a file of n blocks per rank is at (r * n + j) * BLOCK.
 * The program checks every file's size and exits non-zero on a mismatch. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 1024
#define WORLD_FILES 20

static int rank;

static void ok(int rc, const char *what) {
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "closes: rank %d: %s failed\n", rank, what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static MPI_File open_file(MPI_Comm comm, const char *dir, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    MPI_File fh;
    ok(MPI_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh), "open");
    return fh;
}

/* This rank's n blocks at their places in comm's file. */
static void write_blocks(MPI_File fh, MPI_Comm comm, int n) {
    int r = 0;
    MPI_Comm_rank(comm, &r);
    char buf[BLOCK];
    memset(buf, 'a' + r % 26, sizeof buf);
    for (int j = 0; j < n; j++)
        ok(MPI_File_write_at(fh, (MPI_Offset)(r * n + j) * BLOCK, buf, BLOCK, MPI_BYTE,
                             MPI_STATUS_IGNORE),
           "write_at");
}

static void close_checked(MPI_File *fh, MPI_Comm comm, int n) {
    int size = 0;
    MPI_Comm_size(comm, &size);
    MPI_Offset bytes = 0;
    ok(MPI_File_sync(*fh), "sync");
    ok(MPI_File_get_size(*fh, &bytes), "get_size");
    if (bytes != (MPI_Offset)size * n * BLOCK) {
        fprintf(stderr, "closes: rank %d: size %lld\n", rank, (long long)bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    ok(MPI_File_close(fh), "close");
}

static void one_file(MPI_Comm comm, const char *dir, const char *name, int n) {
    MPI_File fh = open_file(comm, dir, name);
    write_blocks(fh, comm, n);
    close_checked(&fh, comm, n);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2) {
        fprintf(stderr, "usage: closes DIR [leave-open]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *dir = argv[1];
    char name[64];
    for (int k = 0; k < WORLD_FILES; k++) {
        snprintf(name, sizeof name, "world.%02d", k);
        one_file(MPI_COMM_WORLD, dir, name, k + 1);
    }
    MPI_Comm split, kept;
    ok(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &split), "split");
    ok(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &kept), "split");
    for (int k = 0; k < 3; k++) {
        snprintf(name, sizeof name, "split%d.%d", rank % 2, k);
        one_file(split, dir, name, 2);
    }
    ok(MPI_Comm_free(&split), "comm_free");
    for (int k = 0; k < 2; k++) {
        snprintf(name, sizeof name, "split%d.1%d", rank % 2, k);
        one_file(kept, dir, name, 2);
    }
    for (int k = 0; k < 2; k++) {
        snprintf(name, sizeof name, "self%d.%d", rank, k);
        one_file(MPI_COMM_SELF, dir, name, 3);
    }
    MPI_File a = open_file(MPI_COMM_WORLD, dir, "pairA");
    MPI_File b = open_file(MPI_COMM_WORLD, dir, "pairB");
    write_blocks(a, MPI_COMM_WORLD, 2);
    write_blocks(b, MPI_COMM_WORLD, 2);
    close_checked(&a, MPI_COMM_WORLD, 2);
    close_checked(&b, MPI_COMM_WORLD, 2);
    if (argc > 2 && strcmp(argv[2], "leave-open") == 0) {
        MPI_File left = open_file(MPI_COMM_WORLD, dir, "open");
        write_blocks(left, MPI_COMM_WORLD, 1);
    }
    MPI_Finalize(); /* `kept` and the files' traces still waiting go here */
    return 0;
}
