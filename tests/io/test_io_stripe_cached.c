/* A striped file where the client caches between opens
 * (pario_client_cache=enable): the objects follow the logical file's hints,
 * and a byte-range lock drops the objects' cached pages of the stripe rows
 * the range touches and no others (seen with mincore on the objects, whose
 * pages were all resident before the lock). Without the hint nothing is
 * dropped. The bytes read back are exact either way. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "io/driver/stripe.h"
#include "io/file/file.h"
#include "io_test.h"

enum { FACTOR = 3, ROWS = 4, PAGE = 4096, UNIT = 2 * PAGE };
enum { ROW = UNIT * FACTOR, SIZE = ROW * ROWS, UNIT_PAGES = UNIT / PAGE };
static char targets[FACTOR * 4400];

/* Which of object i's pages are in the page cache: resident[p] for page p. */
static void resident_pages(const char *object, unsigned char *resident, int npages) {
    memset(resident, 0xff, (size_t)npages);
    int fd = open(object, O_RDONLY);
    PT_CHECK(fd >= 0);
    if (fd < 0)
        return;
    void *map = mmap(NULL, (size_t)npages * PAGE, PROT_READ, MAP_SHARED, fd, 0);
    PT_CHECK(map != MAP_FAILED);
    if (map != MAP_FAILED) {
        PT_EQ(mincore(map, (size_t)npages * PAGE, resident), 0);
        munmap(map, (size_t)npages * PAGE);
    }
    close(fd);
}

/* Every object's pages resident: the file synced (every object fsynced:
 * clean pages can be dropped), then read whole. */
static void cache_everything(pario_file *fh, unsigned char *buf) {
    MPI_Count got = 0;
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    PT_EQ(pario_file_read_at(fh, 0, buf, SIZE, MPI_BYTE, &got), PARIO_OK);
    PT_EQ(got, SIZE);
    for (int i = 0; i < SIZE; i++)
        if (buf[i] != ptest_pattern_byte(i, 11)) {
            PT_CHECK(!"striped bytes read back exact");
            break;
        }
}

/* Locks logical [off, off + len) for writing and checks which object pages
 * stayed: those of rows first_row..last_row are dropped where `cached`. */
static void lock_and_check(pario_file *fh, int cached, int64_t off, int64_t len, int first_row,
                           int last_row) {
    unsigned char *buf = malloc(SIZE);
    cache_everything(fh, buf);
    pario_error err = {0};
    PT_EQ(fh->io.drv->lock(&fh->io, off, len, 1, &err), PARIO_OK);
    for (int i = 0; i < FACTOR; i++) {
        unsigned char resident[ROWS * UNIT_PAGES];
        resident_pages(fh->io.stripe->layout.objects[i], resident, ROWS * UNIT_PAGES);
        for (int p = 0; p < ROWS * UNIT_PAGES; p++) {
            int row = p / UNIT_PAGES;
            int want = !(cached && row >= first_row && row <= last_row);
            if ((resident[p] & 1) != want) {
                PT_CHECK(!"object page resident as the lock leaves it");
                fprintf(stderr, "lock [%lld, +%lld) %s: object %d page %d (row %d) %s\n",
                        (long long)off, (long long)len, cached ? "cached" : "uncached", i, p, row,
                        want ? "dropped" : "kept");
            }
        }
    }
    PT_EQ(fh->io.drv->unlock(&fh->io, off, len, &err), PARIO_OK);
    free(buf);
}

static void run(int cached) {
    char unit[16], factor[16];
    snprintf(unit, sizeof unit, "%d", UNIT);
    snprintf(factor, sizeof factor, "%d", FACTOR);
    const char *kv[] = {"striping_unit",
                        unit,
                        "striping_factor",
                        factor,
                        "pario_stripe_targets",
                        targets,
                        "pario_client_cache",
                        cached ? "enable" : "disable",
                        NULL};
    const char *path = ptest_path(cached ? "cached.dat" : "uncached.dat");
    pario_file *fh = iot_open(path, MPI_MODE_CREATE | MPI_MODE_RDWR, kv);
    if (!fh)
        return;
    for (int i = 0; i < FACTOR; i++)
        PT_EQ(fh->io.stripe->objects[i].cache_wish, cached ? 1 : -1);
    unsigned char *data = malloc(SIZE);
    ptest_pattern_fill(data, SIZE, 0, 11);
    MPI_Count st = 0;
    PT_EQ(pario_file_write_at(fh, 0, data, SIZE, MPI_BYTE, &st), PARIO_OK);
    free(data);
    /* mid-row 1 to mid-row 2; one byte of row 3; row 2 to the end (len 0) */
    lock_and_check(fh, cached, ROW + 100, ROW, 1, 2);
    lock_and_check(fh, cached, 3 * ROW + UNIT + 5, 1, 3, 3);
    lock_and_check(fh, cached, 2 * ROW, 0, 2, ROWS - 1);
    PT_EQ(pario_file_close(&fh, NULL), PARIO_OK);
    PT_EQ(pario_file_delete(path, MPI_INFO_NULL, NULL), PARIO_OK);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    iot_stripe_targets("cached-t", FACTOR, targets, sizeof targets);
    run(1);
    run(0);
    return ptest_finish();
}
