/* The global cache (src/io/cache/global.c): every io operation over it is
 * byte-exact against a model of the file, with pages small enough that
 * slots are taken over (write-back on eviction), with a page size that
 * aligns with nothing, and with the default pages; atomic mode never tears
 * a write spanning pages; an owner busy computing stalls no one who
 * accesses its pages. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "io_test.h"

#define FILE_CAP 65536
#define RECORD 700
#define RECORDS 8
#define BAND 300
#define BAND_AT 20000
#define ASYNC_AT 50000
#define ASYNC_LEN 100
#define CUT 30000

static int rank, nranks;

typedef struct model {
    unsigned char bytes[FILE_CAP];
    int64_t size;
} model;

static void model_write(model *m, int64_t off, const unsigned char *buf, int64_t len) {
    memcpy(m->bytes + off, buf, (size_t)len);
    if (off + len > m->size)
        m->size = off + len;
}

static pario_file *open_cached(const char *path, int amode, const char *page, const char *pages) {
    const char *kv[] = {"pario_cache", "enable", "pario_cache_page_size", page, "pario_cache_pages",
                        pages,         NULL};
    return iot_open(path, amode, kv);
}

/* Every rank reads the whole file independently and collectively. */
static void check_reads(pario_file *fh, const model *m) {
    static unsigned char got[FILE_CAP];
    MPI_Count n = 0;
    memset(got, 0xee, sizeof got);
    PT_EQ(pario_file_read_at(fh, 0, got, FILE_CAP, MPI_BYTE, &n), PARIO_OK);
    PT_EQ(n, m->size);
    PT_CHECK(memcmp(got, m->bytes, (size_t)m->size) == 0);
    memset(got, 0xee, sizeof got);
    PT_EQ(pario_file_read_at_all(fh, 0, got, FILE_CAP, MPI_BYTE, &n), PARIO_OK);
    PT_EQ(n, m->size);
    PT_CHECK(memcmp(got, m->bytes, (size_t)m->size) == 0);
}

/* A read that ends at old_end, where the file reached before it shrank to
 * m->size: it returns the bytes up to the new end only, on every rank (one
 * that saw the old size must not take it for the size still). */
static void check_tail(pario_file *fh, const model *m, int64_t old_end) {
    static unsigned char got[FILE_CAP];
    int64_t from = m->size - 10;
    MPI_Count n = 0;
    PT_EQ(pario_file_read_at(fh, from, got, (int)(old_end - from), MPI_BYTE, &n), PARIO_OK);
    PT_EQ(n, 10);
    PT_CHECK(memcmp(got, m->bytes + from, 10) == 0);
}

static void sync_barrier_sync(pario_file *fh) {
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    MPI_Barrier(MPI_COMM_WORLD);
    PT_EQ(pario_file_sync(fh), PARIO_OK);
}

/* Records interleaved among the ranks with independent explicit offsets. */
static void write_records(pario_file *fh, model *m) {
    unsigned char rec[RECORD];
    for (int i = 0; i < RECORDS; i++)
        for (int r = 0; r < nranks; r++) {
            int64_t off = (int64_t)(i * nranks + r) * RECORD;
            ptest_pattern_fill(rec, RECORD, off, 1 + r);
            if (r == rank)
                PT_EQ(pario_file_write_at(fh, off, rec, RECORD, MPI_BYTE, NULL), PARIO_OK);
            model_write(m, off, rec, RECORD);
        }
}

/* Blocks of BAND bytes interleaved through a view, written collectively,
 * then read back through the view. */
static void write_band_view(pario_file *fh, model *m) {
    MPI_Datatype ft = ptest_interleaved(BAND, MPI_BYTE);
    unsigned char buf[4 * BAND], back[4 * BAND];
    PT_EQ(pario_file_set_view(fh, BAND_AT, MPI_BYTE, ft, "native", MPI_INFO_NULL), PARIO_OK);
    for (int r = 0; r < nranks; r++)
        for (int b = 0; b < 4; b++) {
            int64_t off = BAND_AT + (int64_t)(b * nranks + r) * BAND;
            ptest_pattern_fill(buf + b * BAND, BAND, off, 50 + r);
            model_write(m, off, buf + b * BAND, BAND);
            if (r == rank)
                memcpy(back + b * BAND, buf + b * BAND, BAND);
        }
    memcpy(buf, back, sizeof buf);
    PT_EQ(pario_file_write_all(fh, buf, 4 * BAND, MPI_BYTE, NULL), PARIO_OK);
    sync_barrier_sync(fh);
    memset(back, 0, sizeof back);
    PT_EQ(pario_file_read_at_all(fh, 0, back, 4 * BAND, MPI_BYTE, NULL), PARIO_OK);
    PT_CHECK(memcmp(back, buf, sizeof buf) == 0);
    PT_EQ(pario_file_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), PARIO_OK);
    MPI_Type_free(&ft);
}

/* Nonblocking writes, then reads. */
static void write_nonblocking(pario_file *fh, model *m) {
    unsigned char buf[ASYNC_LEN];
    for (int r = 0; r < nranks; r++) {
        int64_t off = ASYNC_AT + (int64_t)r * ASYNC_LEN;
        ptest_pattern_fill(buf, ASYNC_LEN, off, 90 + r);
        model_write(m, off, buf, ASYNC_LEN);
    }
    int64_t mine = ASYNC_AT + (int64_t)rank * ASYNC_LEN;
    ptest_pattern_fill(buf, ASYNC_LEN, mine, 90 + rank);
    pario_request *req = NULL;
    pario_error err;
    PT_EQ(pario_file_iwrite_at(fh, mine, buf, ASYNC_LEN, MPI_BYTE, &req), PARIO_OK);
    PT_EQ(pario_request_wait(req, NULL, &err), PARIO_OK);
}

static void check_image(const char *path, const model *m) {
    static unsigned char img[FILE_CAP];
    PT_EQ(ptest_file_image(path, img, FILE_CAP), m->size);
    PT_CHECK(memcmp(img, m->bytes, (size_t)m->size) == 0);
}

/* Every operation over the cache with pages of `page` bytes, `pages` per
 * process. */
static void every_operation(const char *page, const char *pages) {
    static model m;
    memset(&m, 0, sizeof m);
    char name[64];
    snprintf(name, sizeof name, "cache-%s-%s", page, pages);
    const char *path = ptest_path(name);
    if (rank == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    pario_file *fh = open_cached(path, MPI_MODE_CREATE | MPI_MODE_RDWR, page, pages);
    if (!fh)
        return;
    PT_CHECK(iot_hint_is(fh, "pario_cache", "enable"));
    write_records(fh, &m);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset size = 0; /* every rank's writes count, before any sync */
    PT_EQ(pario_file_get_size(fh, &size), PARIO_OK);
    PT_EQ(size, m.size);
    sync_barrier_sync(fh);
    check_reads(fh, &m);
    write_band_view(fh, &m);
    write_nonblocking(fh, &m);
    sync_barrier_sync(fh);
    check_reads(fh, &m);
    int64_t old_end = m.size;
    PT_EQ(pario_file_set_size(fh, CUT), PARIO_OK);
    m.size = CUT;
    check_tail(fh, &m, old_end);
    PT_EQ(pario_file_get_size(fh, &size), PARIO_OK);
    PT_EQ(size, CUT);
    check_reads(fh, &m);
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    check_image(path, &m);
    fh = open_cached(path, MPI_MODE_RDONLY, page, pages);
    if (fh) {
        check_reads(fh, &m);
        PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    }
}

/* Each rank writes the same 3000 bytes (three 1000-byte pages) with its own
 * value, all at once: in atomic mode the result is one rank's write whole. */
static void atomic_mode(void) {
    enum { SPAN = 3000, ROUNDS = 20 };
    const char *path = ptest_path("cache-atomic");
    pario_file *fh = open_cached(path, MPI_MODE_CREATE | MPI_MODE_RDWR, "1000", "2");
    if (!fh)
        return;
    PT_EQ(pario_file_set_atomicity(fh, 1), PARIO_OK);
    unsigned char buf[SPAN], back[SPAN];
    int torn = 0;
    for (int round = 0; round < ROUNDS; round++) {
        memset(buf, 1 + rank + round, sizeof buf);
        MPI_Barrier(MPI_COMM_WORLD);
        PT_EQ(pario_file_write_at(fh, 0, buf, SPAN, MPI_BYTE, NULL), PARIO_OK);
        PT_EQ(pario_file_read_at(fh, 0, back, SPAN, MPI_BYTE, NULL), PARIO_OK);
        for (int i = 1; i < SPAN; i++)
            torn += back[i] != back[0];
    }
    PT_EQ(torn, 0);
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
}

/* The last rank computes for 3 s without calling MPI while the others write
 * and read pages it owns: they must be done long before it is. */
static void busy_owner(void) {
    enum { PAGE = 4096, BUSY_S = 3 };
    const char *path = ptest_path("cache-busy");
    int busy = nranks - 1;
    pario_file *fh = open_cached(path, MPI_MODE_CREATE | MPI_MODE_RDWR, "4096", "8");
    if (!fh)
        return;
    unsigned char page[PAGE], back[PAGE];
    double took = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    if (rank == busy) {
        volatile double x = 0;
        while (MPI_Wtime() - start < BUSY_S)
            x += 1e-9;
    } else {
        for (int i = 0; i < 4; i++) { /* pages busy, busy + n, ...: all the busy rank's */
            int64_t off = (int64_t)(busy + (i * nranks + rank) * nranks) * PAGE;
            ptest_pattern_fill(page, PAGE, off, 7);
            PT_EQ(pario_file_write_at(fh, off, page, PAGE, MPI_BYTE, NULL), PARIO_OK);
            PT_EQ(pario_file_read_at(fh, off, back, PAGE, MPI_BYTE, NULL), PARIO_OK);
            PT_CHECK(memcmp(page, back, PAGE) == 0);
        }
        took = MPI_Wtime() - start;
        PT_CHECK(took < BUSY_S / 2.0);
    }
    if (rank == 0 && nranks > 1)
        printf("busy owner: the others were done after %.3f s of its %d s\n", took, BUSY_S);
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    every_operation("4096", "2");    /* slots taken over all the time */
    every_operation("1000", "3");    /* pages aligned with nothing */
    every_operation("1048576", "4"); /* the whole file in one page */
    atomic_mode();
    if (nranks > 1)
        busy_owner();
    return ptest_finish();
}
