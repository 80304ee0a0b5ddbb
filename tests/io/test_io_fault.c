/* Storage failures of collective calls that send no message, injected with
 * the driver's fault shim (src/io/driver/sys.h), which reads PARIO_FAULT at
 * the first open of the process: set here before it.
 *
 * Every pread of rank 1 fails with EIO (sticky). A collective read of
 * contiguous views on one node is each rank's own: rank 1 alone fails at
 * once, and every rank gets the failure, with rank 1's message, from the
 * next sync; the sync after that succeeds. A second failed read is reported
 * by close on every rank. The bytes the others read are right. */
#include <stdlib.h>
#include <string.h>
#include "io_test.h"

#define PART 1000

static int rank, nranks;

static unsigned char byte_at(int64_t off) {
    return (unsigned char)(off * 13 + 5);
}

/* Every rank writes its part with an independent write (no read). */
static pario_file *written_file(const char *path) {
    static const char *const none[] = {NULL};
    if (rank == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    pario_file *fh = iot_open(path, MPI_MODE_RDWR | MPI_MODE_CREATE, none);
    unsigned char out[PART];
    for (int i = 0; i < PART; i++)
        out[i] = byte_at((int64_t)rank * PART + i);
    PT_EQ(pario_file_write_at(fh, (int64_t)rank * PART, out, PART, MPI_BYTE, NULL), PARIO_OK);
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    MPI_Barrier(MPI_COMM_WORLD);
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    return fh;
}

/* Rank r reads rank (r+1)'s part collectively; only rank 1 fails. */
static void own_read(pario_file *fh) {
    unsigned char in[PART];
    int64_t at = (int64_t)((rank + 1) % nranks) * PART;
    int rc = pario_file_read_at_all(fh, at, in, PART, MPI_BYTE, NULL);
    PT_EQ(rc, rank == 1 ? PARIO_ERR_IO : PARIO_OK);
    int ok = 1;
    for (int i = 0; rc == PARIO_OK && i < PART; i++)
        ok &= in[i] == byte_at(at + i);
    PT_CHECK(ok);
}

/* Every rank reports rank 1's read failure, naming the file. */
static void check_reported(int rc, const char *msg, const char *path) {
    PT_EQ(rc, PARIO_ERR_IO);
    PT_CHECK(strstr(msg, path) != NULL);
    PT_CHECK(strstr(msg, "read") != NULL);
    PT_CHECK(rank == 1 || strstr(msg, "(on rank 1)") != NULL);
}

int main(int argc, char **argv) {
    setenv("PARIO_FAULT", "rank=1,call=1,op=read,error=EIO,sticky", 1);
    MPI_Init(&argc, &argv);
    ptest_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *path = ptest_path("fault-own-read");
    pario_file *fh = written_file(path);
    own_read(fh);
    check_reported(pario_file_sync(fh), pario_file_last_error(fh)->msg, path);
    PT_EQ(pario_file_sync(fh), PARIO_OK); /* reported once */
    own_read(fh);
    pario_error err;
    check_reported(pario_file_close(&fh, &err), err.msg, path);
    return ptest_finish();
}
