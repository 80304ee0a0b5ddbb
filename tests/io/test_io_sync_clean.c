/* sync makes this process's writes durable, and a rank that wrote nothing
 * since its last sync has nothing to make durable: it skips the fsync (a
 * round trip per rank on a network file system). Run with PARIO_FAULT
 * failing every fsync of rank 1 (sticky, from its first):
 *
 * - rank 0 writes, everyone syncs: rank 1 makes no fsync, so the sync
 *   succeeds on every rank;
 * - rank 1 writes, everyone syncs: its fsync fails, every rank gets the
 *   error; a second sync with no write in between fails again (the write
 *   is still not durable, so rank 1 tries again);
 * - the bytes both ranks wrote are in the file (only the fsync failed);
 * - on a second file, rank 1's only write is nonblocking (it runs on a
 *   copy of the file's state in the background): the sync still knows
 *   rank 1 wrote, tries its fsync and fails on every rank. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "io_test.h"

int main(int argc, char **argv) {
    /* read by the storage layer at its first open */
    setenv("PARIO_FAULT", "rank=1,call=1,op=sync,error=EIO,sticky", 1);
    MPI_Init(&argc, &argv);
    ptest_init();
    int rank = 0, nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *path = ptest_path("sync_clean");
    if (rank == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    pario_file *fh = iot_open(path, MPI_MODE_RDWR | MPI_MODE_CREATE, (const char *const[]){NULL});
    unsigned char mine[8];
    memset(mine, 'a' + rank, sizeof mine);
    if (fh && rank == 0)
        PT_EQ(pario_file_write_at(fh, 0, mine, 8, MPI_BYTE, NULL), PARIO_OK);
    PT_EQ(pario_file_sync(fh), PARIO_OK); /* rank 1: clean, no fsync */
    PT_EQ(pario_file_sync(fh), PARIO_OK); /* everyone clean now */
    if (rank == 1)
        PT_EQ(pario_file_write_at(fh, 8, mine, 8, MPI_BYTE, NULL), PARIO_OK);
    int rc = pario_file_sync(fh);
    PT_EQ(rc, PARIO_ERR_IO); /* rank 1's fsync failed: every rank's sync fails */
    if (rank == 1)
        PT_CHECK(strstr(pario_file_last_error(fh)->msg, path) != NULL);
    PT_EQ(pario_file_sync(fh), PARIO_ERR_IO); /* not durable yet: tried again */
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    unsigned char img[16];
    PT_EQ(ptest_file_image(path, img, 16), 16);
    for (int i = 0; i < 8; i++) {
        PT_EQ(img[i], 'a');
        PT_EQ(img[8 + i], 'b');
    }
    const char *path2 = ptest_path("sync_clean_async");
    if (rank == 0)
        unlink(path2);
    MPI_Barrier(MPI_COMM_WORLD);
    fh = iot_open(path2, MPI_MODE_RDWR | MPI_MODE_CREATE, (const char *const[]){NULL});
    PT_EQ(pario_file_sync(fh), PARIO_OK); /* rank 0 made the new file durable */
    if (rank == 1) {
        pario_request *req = NULL;
        PT_EQ(pario_file_iwrite_at(fh, 0, mine, 8, MPI_BYTE, &req), PARIO_OK);
        PT_EQ(pario_request_wait(req, NULL, NULL), PARIO_OK);
    }
    PT_EQ(pario_file_sync(fh), PARIO_ERR_IO);
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    return ptest_finish();
}
