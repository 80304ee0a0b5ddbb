/* Reading once per node (src/io/cache/once.c): a read-only file opened with
 * pario_read_once=enable is read from storage by one process per node. The
 * fault shim makes every storage read of the last rank fail (it never loads:
 * the first rank of its node reads first), so its reads succeed only if
 * they come from the node's copy. Every read is byte-exact: independent,
 * collective, through a view, nonblocking, past the end. */
#include <stdlib.h>
#include <string.h>
#include "io_test.h"
#include "common/node.h"

#define SIZE 300001
#define BAND 1000

static int rank, nranks;
static unsigned char want[SIZE], got[SIZE];

static void read_whole(pario_file *fh) {
    MPI_Count n = 0;
    memset(got, 0, SIZE);
    PT_EQ(pario_file_read_at(fh, 0, got, SIZE + 100, MPI_BYTE, &n), PARIO_OK);
    PT_EQ(n, SIZE);
    PT_CHECK(memcmp(got, want, SIZE) == 0);
}

static void read_view(pario_file *fh) {
    MPI_Datatype ft = ptest_interleaved(BAND, MPI_BYTE);
    PT_EQ(pario_file_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL), PARIO_OK);
    int blocks = 3;
    MPI_Count n = 0;
    PT_EQ(pario_file_read_all(fh, got, blocks * BAND, MPI_BYTE, &n), PARIO_OK);
    PT_EQ(n, blocks * BAND);
    for (int b = 0; b < blocks; b++)
        PT_CHECK(memcmp(got + b * BAND, want + (b * nranks + rank) * BAND, BAND) == 0);
    PT_EQ(pario_file_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), PARIO_OK);
    MPI_Type_free(&ft);
}

static void read_nonblocking(pario_file *fh) {
    pario_request *req = NULL;
    pario_error err;
    MPI_Count n = 0;
    PT_EQ(pario_file_iread_at(fh, SIZE - 500, got, 1000, MPI_BYTE, &req), PARIO_OK);
    PT_EQ(pario_request_wait(req, &n, &err), PARIO_OK);
    PT_EQ(n, 500);
    PT_CHECK(memcmp(got, want + SIZE - 500, 500) == 0);
}

/* The last rank reads first on its node now: every piece fails to load
 * (its storage reads all fail), and every reader of its node gets the
 * failure, naming the file; the other nodes read as before. */
static void load_fails(const char *path, MPI_Comm node) {
    const char *kv[] = {"pario_read_once", "enable", NULL};
    pario_file *fh = iot_open(path, MPI_MODE_RDONLY, kv);
    if (!fh)
        return;
    int last_node = 0, flag = rank == nranks - 1;
    MPI_Allreduce(&flag, &last_node, 1, MPI_INT, MPI_MAX, node);
    MPI_Count n = 0;
    if (rank == nranks - 1)
        PT_EQ(pario_file_read_at(fh, 0, got, SIZE, MPI_BYTE, &n), PARIO_ERR_IO);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != nranks - 1) {
        int rc = pario_file_read_at(fh, 0, got, SIZE, MPI_BYTE, &n);
        PT_EQ(rc, last_node ? PARIO_ERR_IO : PARIO_OK);
    }
    if (last_node) {
        const char *msg = pario_file_last_error(fh)->msg;
        PT_CHECK(strstr(msg, path) != NULL);
        PT_CHECK(strstr(msg, "the node's one read of the file failed") != NULL);
    }
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
}

int main(int argc, char **argv) {
    char fault[64];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    /* before the first open, where the shim reads it */
    snprintf(fault, sizeof fault, "rank=%d,call=1,op=read,error=EIO,sticky", nranks - 1);
    setenv("PARIO_FAULT", fault, 1);
    ptest_init();
    const char *path = ptest_path("once");
    iot_pattern_file(path, want, SIZE, 11);
    MPI_Comm node;
    int node_rank = 0;
    PT_MPI_OK(pario_node_comm(MPI_COMM_WORLD, &node));
    MPI_Comm_rank(node, &node_rank);
    const char *kv[] = {"pario_read_once", "enable", NULL};
    pario_file *fh = iot_open(path, MPI_MODE_RDONLY, kv);
    if (fh) {
        PT_CHECK(iot_hint_is(fh, "pario_read_once", "enable"));
        if (node_rank == 0) /* the node's first reader loads the copy */
            read_whole(fh);
        MPI_Barrier(MPI_COMM_WORLD);
        if (node_rank != 0)
            read_whole(fh);
        read_view(fh);
        read_nonblocking(fh);
        MPI_Offset size = 0;
        PT_EQ(pario_file_get_size(fh, &size), PARIO_OK);
        PT_EQ(size, SIZE);
        pario_error err;
        PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    }
    load_fails(path, node);
    MPI_Comm_free(&node);
    return ptest_finish();
}
