/* On one machine, the ranks that wrote a file share one fsync at a sync:
 * the lowest writer's, which makes the inode's pages durable whoever wrote
 * them. Run with PARIO_FAULT failing every fsync of rank 1 (sticky), so an
 * fsync made by rank 1 shows as an error on every rank, and with
 * PARIO_NODE_SIZE=1 too (simulated nodes on one machine share its page
 * cache, so they share the fsync as well):
 *
 * - every rank writes, everyone syncs: rank 0 calls fsync for all, so the
 *   sync succeeds everywhere (rank 1 calling its own would fail it);
 * - ranks 1.. write, rank 0 does not: rank 1 is the lowest writer, its fsync
 *   fails, every rank gets the error, rank 1's message names the file; a
 *   second sync with no write in between fails again (rank 1 still holds
 *   writes not made durable and tries again);
 * - a file of rank 1's own (opened on MPI_COMM_SELF): its sync fails there
 *   alone, rank 0's own file syncs;
 * - the bytes every rank wrote are in the shared file (only fsyncs failed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "io_test.h"

enum { PIECE = 8 };

static void write_piece(pario_file *fh, int rank, int round) {
    unsigned char piece[PIECE];
    memset(piece, 'a' + 4 * round + rank, sizeof piece);
    if (fh)
        PT_EQ(pario_file_write_at(fh, (MPI_Offset)rank * PIECE, piece, PIECE, MPI_BYTE, NULL),
              PARIO_OK);
}

static void shared_file(int rank, int nranks) {
    const char *path = ptest_path("sync_shared");
    if (rank == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    pario_file *fh = iot_open(path, MPI_MODE_RDWR | MPI_MODE_CREATE, (const char *const[]){NULL});
    write_piece(fh, rank, 0);
    PT_EQ(pario_file_sync(fh), PARIO_OK); /* rank 0's fsync covers rank 1's writes */
    if (rank > 0)
        write_piece(fh, rank, 1);
    PT_EQ(pario_file_sync(fh), PARIO_ERR_IO); /* rank 1 is the lowest writer */
    if (rank == 1)
        PT_CHECK(strstr(pario_file_last_error(fh)->msg, path) != NULL);
    PT_EQ(pario_file_sync(fh), PARIO_ERR_IO); /* not durable yet: rank 1 tries again */
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    unsigned char img[4 * PIECE];
    PT_EQ(ptest_file_image(path, img, nranks * PIECE), nranks * PIECE);
    for (int r = 0; r < nranks; r++)
        for (int i = 0; i < PIECE; i++)
            PT_EQ(img[r * PIECE + i], 'a' + (r > 0 ? 4 : 0) + r);
}

static void own_file(int rank) {
    char name[32];
    snprintf(name, sizeof name, "sync_own.%d", rank);
    const char *path = ptest_path(name);
    unlink(path);
    pario_file *fh = iot_open_on(MPI_COMM_SELF, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                                 (const char *const[]){NULL});
    write_piece(fh, rank, 0);
    PT_EQ(pario_file_sync(fh), rank == 1 ? PARIO_ERR_IO : PARIO_OK);
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
}

int main(int argc, char **argv) {
    /* read by the storage layer at its first open */
    setenv("PARIO_FAULT", "rank=1,call=1,op=sync,error=EIO,sticky", 1);
    MPI_Init(&argc, &argv);
    ptest_init();
    int rank = 0, nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    shared_file(rank, nranks);
    own_file(rank);
    return ptest_finish();
}
