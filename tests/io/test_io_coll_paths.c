/* Collective paths that depend on hints or on the machine:
 * - two-phase reads with the next cycle prefetched in the background
 *   (pario_cb_read_pipeline=enable) and without, over many small cycles,
 *   1 to n aggregators, through an interleaved view of odd-sized blocks:
 *   every byte read equals the file's;
 * - two-phase writes and reads of 1-byte blocks interleaved, with a window
 *   of 4 KiB: an aggregator's piece list from one rank is longer than its
 *   window, so the lists go in several messages (rounds); the file and the
 *   bytes read are exact;
 * - a collective write that fails in the file system (ENOSPC on /dev/full)
 *   on the small-write funnel, the forced two-phase path and the interleaved
 *   two-phase path: every rank returns PARIO_ERR_NO_SPACE with the failing
 *   rank's message, which names the file. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "io_test.h"

/* Bytes of one block of the interleaved view (not a power of two). */
#define BLOCK 1000
/* Blocks each rank reads. */
#define BLOCKS 64
/* Bytes each rank writes in the large-part /dev/full cases. */
#define LARGE_PART (256 * 1024)

static int rank, nranks;

static unsigned char file_byte(int64_t off) {
    return (unsigned char)(off * 7 + 3);
}

static void write_pattern(const char *path, int64_t size) {
    if (rank == 0) {
        static unsigned char buf[BLOCK * BLOCKS * 8];
        for (int64_t i = 0; i < size; i++)
            buf[i] = file_byte(i);
        int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        PT_CHECK(fd >= 0 && write(fd, buf, (size_t)size) == (ssize_t)size);
        if (fd >= 0)
            close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void read_interleaved(const char *path, const char *pipeline, const char *aggregators) {
    const char *kv[] = {"romio_cb_read",
                        "enable",
                        "cb_buffer_size",
                        "8192",
                        "cb_nodes",
                        aggregators,
                        "pario_cb_read_pipeline",
                        pipeline,
                        NULL};
    pario_file *fh = iot_open(path, MPI_MODE_RDONLY, kv);
    if (!fh)
        return;
    PT_CHECK(iot_hint_is(fh, "pario_cb_read_pipeline", pipeline));
    MPI_Datatype ft = ptest_interleaved(BLOCK, MPI_BYTE);
    PT_EQ(pario_file_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL), PARIO_OK);
    static unsigned char got[BLOCK * BLOCKS];
    memset(got, 0, sizeof got);
    MPI_Count bytes = -1;
    PT_EQ(pario_file_read_all(fh, got, sizeof got, MPI_BYTE, &bytes), PARIO_OK);
    PT_EQ(bytes, (MPI_Count)sizeof got);
    int64_t bad = 0;
    for (int b = 0; b < BLOCKS; b++)
        for (int i = 0; i < BLOCK; i++)
            bad += got[b * BLOCK + i] != file_byte(((int64_t)b * nranks + rank) * BLOCK + i);
    PT_EQ(bad, 0);
    MPI_Type_free(&ft);
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
}

static void test_pipelined_reads(void) {
    const char *path = ptest_path("coll-paths-read");
    write_pattern(path, (int64_t)BLOCK * BLOCKS * nranks);
    char aggr[16];
    for (int a = 1; a <= nranks; a++) {
        snprintf(aggr, sizeof aggr, "%d", a);
        read_interleaved(path, "enable", aggr);
        read_interleaved(path, "disable", aggr);
    }
}

/* Bytes each rank writes in 1-byte blocks (TINY_BYTES * nranks in the file). */
#define TINY_BYTES 5000

static unsigned char tiny_byte(int r, int64_t i) {
    return (unsigned char)(i * 13 + r * 61 + 5);
}

static void tiny_pass(const char *path, const char *pipeline) {
    const char *kv[] = {"romio_cb_write",
                        "enable",
                        "romio_cb_read",
                        "enable",
                        "cb_buffer_size",
                        "4096",
                        "cb_nodes",
                        "2",
                        "pario_cb_read_pipeline",
                        pipeline,
                        NULL};
    pario_file *fh = iot_open(path, MPI_MODE_RDWR | MPI_MODE_CREATE, kv);
    if (!fh)
        return;
    MPI_Datatype ft = ptest_interleaved(1, MPI_BYTE);
    PT_EQ(pario_file_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL), PARIO_OK);
    static unsigned char mine[TINY_BYTES], got[TINY_BYTES];
    for (int64_t i = 0; i < TINY_BYTES; i++)
        mine[i] = tiny_byte(rank, i);
    memset(got, 0, sizeof got);
    MPI_Count bytes = -1;
    PT_EQ(pario_file_write_all(fh, mine, TINY_BYTES, MPI_BYTE, &bytes), PARIO_OK);
    PT_EQ(bytes, (MPI_Count)TINY_BYTES);
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    PT_EQ(pario_file_seek(fh, 0, MPI_SEEK_SET), PARIO_OK);
    PT_EQ(pario_file_read_all(fh, got, TINY_BYTES, MPI_BYTE, &bytes), PARIO_OK);
    PT_EQ(bytes, (MPI_Count)TINY_BYTES);
    PT_EQ(memcmp(got, mine, sizeof got), 0);
    MPI_Type_free(&ft);
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    if (rank == 0) { /* the file itself: byte k*nranks + r is rank r's byte k */
        static unsigned char file[TINY_BYTES * 8];
        int fd = open(path, O_RDONLY);
        PT_CHECK(fd >= 0 && read(fd, file, sizeof file) == (ssize_t)TINY_BYTES * nranks);
        int64_t bad = 0;
        for (int64_t o = 0; o < (int64_t)TINY_BYTES * nranks; o++)
            bad += file[o] != tiny_byte((int)(o % nranks), o / nranks);
        PT_EQ(bad, 0);
        if (fd >= 0)
            close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_tiny_pieces(void) {
    const char *path = ptest_path("coll-paths-tiny");
    if (rank == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    tiny_pass(path, "enable");
    tiny_pass(path, "disable");
}

/* Every rank failed with ENOSPC and holds the message of the rank that
 * failed (rank 0 here: the only writer or the first aggregator). */
static void check_same_no_space(int rc, pario_file *fh) {
    PT_EQ(rc, PARIO_ERR_NO_SPACE);
    char msg[sizeof(pario_error){0}.msg];
    snprintf(msg, sizeof msg, "%s", pario_file_last_error(fh)->msg);
    PT_CHECK(strstr(msg, "/dev/full") != NULL);
    char root[sizeof msg];
    memcpy(root, msg, sizeof msg);
    MPI_Bcast(root, (int)sizeof root, MPI_CHAR, 0, MPI_COMM_WORLD);
    PT_CHECK(strncmp(msg, root, strlen(root)) == 0); /* others add "(on rank 0)" */
}

static void full_write(const char *const *kv, int interleave, int64_t part) {
    pario_file *fh = iot_open("/dev/full", MPI_MODE_WRONLY, kv);
    if (!fh)
        return;
    MPI_Datatype ft = ptest_interleaved(BLOCK, MPI_BYTE);
    if (interleave)
        PT_EQ(pario_file_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL), PARIO_OK);
    static unsigned char data[LARGE_PART];
    memset(data, rank + 1, sizeof data);
    MPI_Offset at = interleave ? 0 : rank * part;
    check_same_no_space(pario_file_write_at_all(fh, at, data, part, MPI_BYTE, NULL), fh);
    MPI_Type_free(&ft);
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
}

static void test_write_failures(void) {
    const char *none[] = {NULL};
    const char *two_phase[] = {"romio_cb_write", "enable", NULL};
    full_write(none, 0, 100);             /* small parts: the funnel */
    full_write(two_phase, 0, LARGE_PART); /* forced two-phase */
    full_write(none, 1, BLOCK * BLOCKS);  /* interleaved: two-phase */
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    ptest_init();
    PT_CHECK(nranks <= 8); /* write_pattern's buffer holds 8 ranks' blocks */
    if (nranks <= 8)
        test_pipelined_reads();
    if (nranks <= 8)
        test_tiny_pieces();
    test_write_failures();
    return ptest_finish();
}
