/* Storage failures under the global cache, injected by the fault shim
 * (src/io/driver/sys.h):
 *   writeback: the owner's own write-back at a sync fails (disk full, and it
 *     stays full): the sync and then close fail alike on every rank, naming
 *     the file; what the first sync stored is intact.
 *   evict: the write-back of another owner's page, by a rank taking its
 *     slot, fails once: that rank's write still reaches storage, the page
 *     stays cached, and the owner's next sync reports the failure on every
 *     rank, once; no byte is lost. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "io_test.h"

#define PAGE 4096

static int rank, nranks;

static pario_file *open_cached(const char *path, const char *pages) {
    const char *kv[] = {
        "pario_cache", "enable", "pario_cache_page_size", "4096", "pario_cache_pages", pages, NULL};
    if (rank == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    return iot_open(path, MPI_MODE_CREATE | MPI_MODE_RDWR, kv);
}

static void write_page(pario_file *fh, int64_t page) {
    unsigned char buf[PAGE];
    ptest_pattern_fill(buf, PAGE, page * PAGE, 3);
    PT_EQ(pario_file_write_at(fh, page * PAGE, buf, PAGE, MPI_BYTE, NULL), PARIO_OK);
}

/* Whether the file holds page's pattern, read with POSIX by rank 0. */
static int page_stored(const char *path, int64_t page, int64_t pages) {
    static unsigned char img[64 * PAGE];
    unsigned char want[PAGE];
    if (ptest_file_image(path, img, pages * PAGE) < (page + 1) * PAGE)
        return 0;
    ptest_pattern_fill(want, PAGE, page * PAGE, 3);
    return memcmp(img + page * PAGE, want, PAGE) == 0;
}

static void reported(int rc, const char *msg, const char *path, int code, const char *what) {
    PT_EQ(rc, code);
    PT_CHECK(strstr(msg, path) != NULL);
    PT_CHECK(strstr(msg, what) != NULL);
}

static void writeback(void) {
    const char *path = ptest_path("cache-fault-writeback");
    pario_file *fh = open_cached(path, "4");
    if (!fh)
        return;
    write_page(fh, rank); /* each rank its own page: one write-back each */
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    write_page(fh, rank + nranks); /* rank 1's second write fails, and stays failing */
    reported(pario_file_sync(fh), pario_file_last_error(fh)->msg, path, PARIO_ERR_NO_SPACE,
             "writing back page");
    for (int r = 0; r < nranks; r++) {
        PT_CHECK(page_stored(path, r, 2 * nranks));
        PT_CHECK(r == 1 || page_stored(path, r + nranks, 2 * nranks));
    }
    pario_error err;
    reported(pario_file_close(&fh, &err), err.msg, path, PARIO_ERR_NO_SPACE, "writing back page");
}

static void evict(void) {
    const char *path = ptest_path("cache-fault-evict");
    pario_file *fh = open_cached(path, "1"); /* pages 1 and 1 + n share rank 1's one slot */
    if (!fh)
        return;
    if (rank == 1)
        write_page(fh, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) /* takes the slot: its write-back of page 1 fails once */
        write_page(fh, 1 + nranks);
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned char back[PAGE], want[PAGE];
    for (int64_t page = 1; page <= 1 + nranks; page += nranks) {
        ptest_pattern_fill(want, PAGE, page * PAGE, 3);
        PT_EQ(pario_file_read_at(fh, page * PAGE, back, PAGE, MPI_BYTE, NULL), PARIO_OK);
        PT_CHECK(memcmp(back, want, PAGE) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    reported(pario_file_sync(fh), pario_file_last_error(fh)->msg, path, PARIO_ERR_IO,
             "writing back page 1");
    PT_EQ(pario_file_sync(fh), PARIO_OK); /* reported once */
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    PT_CHECK(page_stored(path, 1, 2 + nranks));
    PT_CHECK(page_stored(path, 1 + nranks, 2 + nranks));
}

int main(int argc, char **argv) {
    int is_evict = argc > 1 && !strcmp(argv[1], "evict");
    setenv("PARIO_FAULT",
           is_evict ? "rank=0,call=1,op=write,error=EIO"
                    : "rank=1,call=2,op=write,error=ENOSPC,sticky",
           1);
    MPI_Init(&argc, &argv);
    ptest_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (is_evict)
        evict();
    else
        writeback();
    return ptest_finish();
}
