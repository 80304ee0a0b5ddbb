/* pgas io: shared arrays to files and back, byte for byte.
 *   - every element size 1..16 and block factor 0, 1, 3, 128, [*] written with one
 *     layout (common pointer) and read with the next one; the file must hold the
 *     array in index order;
 *   - a buffer starting inside a block, at a pointer moved by fseek;
 *   - a file written by every rank read by half of them (another rank count);
 *   - individual pointers with shared and local buffers; lists of local and
 *     shared memory; asynchronous calls; fcntl, sizes and open flags. */
#include "pgas_io_test.h"

#include <unistd.h>

static const uint64_t blocks[] = {0, 1, 3, 128, PARIO_PGAS_BLOCK_FIT};
#define NBLOCKS (int)(sizeof blocks / sizeof blocks[0])

/* Elements of the round-trip arrays: no multiple of any block row. */
static uint64_t test_count(uint32_t es) {
    return 700 + 3 * es;
}

static pario_pgas_array alloc(pario_pgas *ctx, uint64_t n, uint32_t es, uint64_t b) {
    pario_pgas_array a;
    PT_EQ(pario_pgas_all_alloc(ctx, n, es, b, &a), PARIO_OK);
    return a;
}

static void round_trip(pario_pgas *ctx, uint32_t es, int wi, int ri) {
    const char *path = pio_test_path("pgas_io.rt");
    uint64_t n = test_count(es);
    pario_pgas_array a = alloc(ctx, n, es, blocks[wi]), b = alloc(ctx, n, es, blocks[ri]);
    pio_test_fill_owned(ctx, &a, (int)es);
    pario_pgas_off moved = 0;
    pario_pgas_file *fd = pio_test_open(
        ctx, path, PARIO_PGAS_WRONLY | PARIO_PGAS_CREATE | PARIO_PGAS_TRUNC | PARIO_PGAS_COMMON_FP);
    PT_EQ(pario_pgas_fwrite_shared(fd, a.base, a.base.block, es, n, 0, &moved), PARIO_OK);
    PT_EQ(moved, n * es);
    pio_test_close(&fd);
    if (pario_pgas_mythread(ctx) == 0)
        PT_EQ(pio_test_file_bad(path, 0, 0, n, es, (int)es, (long long)(n * es)), 0);
    fd = pio_test_open(ctx, path, PARIO_PGAS_RDONLY | PARIO_PGAS_COMMON_FP);
    PT_EQ(pario_pgas_fread_shared(fd, b.base, b.base.block, es, n, 0, &moved), PARIO_OK);
    PT_EQ(moved, n * es);
    pio_test_close(&fd);
    PT_EQ(pio_test_owned_bad(ctx, &b, (int)es, 0, 0, n), 0);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &b), PARIO_OK);
}

/* Elements 5 .. n-3 (the buffer starts inside a block) at file byte 24, read
 * into elements 2.. of an array of another layout. */
static void middle_range(pario_pgas *ctx, uint32_t es, uint64_t wb, uint64_t rb) {
    const char *path = pio_test_path("pgas_io.mid");
    uint64_t n = test_count(es), m = n - 7;
    pario_pgas_array a = alloc(ctx, n, es, wb), b = alloc(ctx, n, es, rb);
    pio_test_fill_owned(ctx, &a, 3);
    pario_pgas_off pos = 0, moved = 0;
    pario_pgas_file *fd = pio_test_open(
        ctx, path, PARIO_PGAS_RDWR | PARIO_PGAS_CREATE | PARIO_PGAS_TRUNC | PARIO_PGAS_COMMON_FP);
    PT_EQ(pario_pgas_fseek(fd, 24, PARIO_PGAS_SEEK_SET, &pos), PARIO_OK);
    PT_EQ(pos, 24);
    PT_EQ(pario_pgas_fwrite_shared(fd, pario_pgas_elem(&a, 5), a.base.block, es, m, 0, &moved),
          PARIO_OK);
    PT_EQ(moved, m * es);
    PT_EQ(pario_pgas_fseek(fd, 0, PARIO_PGAS_SEEK_CUR, &pos), PARIO_OK);
    PT_EQ(pos, 24 + (pario_pgas_off)(m * es));
    PT_EQ(pario_pgas_fsync(fd), PARIO_OK);
    if (pario_pgas_mythread(ctx) == 0)
        PT_EQ(pio_test_file_bad(path, 24, 5, m, es, 3, 24 + (long long)(m * es)), 0);
    PT_EQ(pario_pgas_fseek(fd, -(pario_pgas_off)(m * es), PARIO_PGAS_SEEK_END, &pos), PARIO_OK);
    PT_EQ(pos, 24);
    /* Ask for two more elements than the file holds: the read stops at its end. */
    PT_EQ(pario_pgas_fread_shared(fd, pario_pgas_elem(&b, 2), b.base.block, es, m + 2, 0, &moved),
          PARIO_OK);
    PT_EQ(moved, m * es);
    pio_test_close(&fd);
    PT_EQ(pio_test_owned_bad(ctx, &b, 3, 3, 2, 2 + m), 0);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &b), PARIO_OK);
}

/* Written by every rank with block 3, read by the first half of the ranks
 * with block 128 (the array's layout on another rank count). */
static void other_rank_count(pario_pgas *ctx) {
    const char *path = pio_test_path("pgas_io.ranks");
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx), half = n > 1 ? n / 2 : 1;
    uint32_t es = 12;
    uint64_t count = test_count(es);
    pario_pgas_array a = alloc(ctx, count, es, 3);
    pio_test_fill_owned(ctx, &a, 11);
    pario_pgas_file *fd = pio_test_open(
        ctx, path, PARIO_PGAS_WRONLY | PARIO_PGAS_CREATE | PARIO_PGAS_TRUNC | PARIO_PGAS_COMMON_FP);
    PT_EQ(pario_pgas_fwrite_shared(fd, a.base, 3, es, count, 0, NULL), PARIO_OK);
    pio_test_close(&fd);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, rank < half, rank, &sub);
    if (rank < half) {
        pario_pgas_config cfg = {TEST_SHARED_HEAP, TEST_LOCAL_HEAP};
        pario_pgas *c2 = NULL;
        PT_EQ(pario_pgas_init(sub, &cfg, &c2, NULL), PARIO_OK);
        pario_pgas_array b = alloc(c2, count, es, 128);
        pario_pgas_off moved = 0;
        fd = pio_test_open(c2, path, PARIO_PGAS_RDONLY | PARIO_PGAS_COMMON_FP);
        PT_EQ(pario_pgas_fread_shared(fd, b.base, 128, es, count, 0, &moved), PARIO_OK);
        PT_EQ(moved, count * es);
        pio_test_close(&fd);
        PT_EQ(pio_test_owned_bad(c2, &b, 11, 0, 0, count), 0);
        PT_EQ(pario_pgas_all_free(c2, &b), PARIO_OK);
        PT_EQ(pario_pgas_finalize(&c2), PARIO_OK);
    }
    MPI_Comm_free(&sub);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Individual pointers: rank r writes slice r of a shared array (block 3) at
 * its own pointer, then reads slice r into an array of block 1. */
static void individual_shared(pario_pgas *ctx) {
    const char *path = pio_test_path("pgas_io.indiv");
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    uint32_t es = 5;
    uint64_t s = 37, count = s * (uint64_t)n;
    pario_pgas_array a = alloc(ctx, count, es, 3), b = alloc(ctx, count, es, 1);
    pio_test_fill_owned(ctx, &a, 21);
    pario_pgas_off moved = 0, at = (pario_pgas_off)(rank * s * es);
    pario_pgas_file *fd = pio_test_open(ctx, path,
                                        PARIO_PGAS_RDWR | PARIO_PGAS_CREATE | PARIO_PGAS_TRUNC |
                                            PARIO_PGAS_INDIVIDUAL_FP);
    PT_EQ(pario_pgas_fseek(fd, at, PARIO_PGAS_SEEK_SET, NULL), PARIO_OK);
    PT_EQ(pario_pgas_fwrite_shared(fd, pario_pgas_elem(&a, rank * s), 3, es, s, 0, &moved),
          PARIO_OK);
    PT_EQ(moved, s * es);
    PT_EQ(pario_pgas_fsync(fd), PARIO_OK);
    if (rank == 0)
        PT_EQ(pio_test_file_bad(path, 0, 0, count, es, 21, (long long)(count * es)), 0);
    PT_EQ(pario_pgas_fseek(fd, at, PARIO_PGAS_SEEK_SET, NULL), PARIO_OK);
    PT_EQ(pario_pgas_fread_shared(fd, pario_pgas_elem(&b, rank * s), 1, es, s, 0, &moved),
          PARIO_OK);
    PT_EQ(moved, s * es);
    pio_test_close(&fd);
    PT_EQ(pio_test_owned_bad(ctx, &b, 21, 0, 0, count), 0);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &b), PARIO_OK);
}

/* Private buffers at individual pointers: rank r writes slice r, reads slice r + 1. */
static void individual_local(pario_pgas *ctx) {
    const char *path = pio_test_path("pgas_io.local");
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    uint32_t es = 7;
    uint64_t s = 53;
    unsigned char *buf = malloc(s * es), *in = malloc(s * es);
    test_fill(buf, (uint64_t)rank * s, s, es, 31);
    pario_pgas_off moved = 0;
    pario_pgas_file *fd = pio_test_open(ctx, path,
                                        PARIO_PGAS_RDWR | PARIO_PGAS_CREATE | PARIO_PGAS_TRUNC |
                                            PARIO_PGAS_INDIVIDUAL_FP);
    PT_EQ(pario_pgas_fseek(fd, (pario_pgas_off)(rank * s * es), PARIO_PGAS_SEEK_SET, NULL),
          PARIO_OK);
    PT_EQ(pario_pgas_fwrite_local(fd, buf, es, s, 0, &moved), PARIO_OK);
    PT_EQ(moved, s * es);
    PT_EQ(pario_pgas_fsync(fd), PARIO_OK);
    if (rank == 0)
        PT_EQ(pio_test_file_bad(path, 0, 0, s * (uint64_t)n, es, 31, (long long)(s * es * n)), 0);
    int next = (rank + 1) % n;
    PT_EQ(pario_pgas_fseek(fd, (pario_pgas_off)(next * s * es), PARIO_PGAS_SEEK_SET, NULL),
          PARIO_OK);
    PT_EQ(
        pario_pgas_fread_local(fd, in, es, s, PARIO_PGAS_IN_NOSYNC | PARIO_PGAS_OUT_NOSYNC, &moved),
        PARIO_OK);
    PT_EQ(moved, s * es);
    PT_EQ(test_mismatch(in, (uint64_t)next * s, s, es, 31), 0);
    pio_test_close(&fd);
    free(buf);
    free(in);
}

/* Lists of private memory: rank r holds elements of runs j * n + r (K elements
 * each, three runs) in one buffer cut in two, written to three file entries. */
static void list_local(pario_pgas *ctx) {
    const char *path = pio_test_path("pgas_io.llist");
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    uint32_t es = 3;
    uint64_t k = 41, runs = 3, total = runs * k * (uint64_t)n;
    unsigned char *buf = malloc(runs * k * es), *in = malloc(runs * k * es);
    pario_pgas_filevec fv[3];
    for (uint64_t j = 0; j < runs; j++) {
        uint64_t first = (j * (uint64_t)n + (uint64_t)rank) * k;
        test_fill(buf + j * k * es, first, k, es, 41);
        fv[j] = (pario_pgas_filevec){(pario_pgas_off)(first * es), k * es};
    }
    size_t cut = k * es + 5;
    pario_pgas_local_memvec mv[2] = {{buf, cut}, {buf + cut, runs * k * es - cut}};
    pario_pgas_off moved = 0;
    pario_pgas_file *fd = pio_test_open(
        ctx, path, PARIO_PGAS_RDWR | PARIO_PGAS_CREATE | PARIO_PGAS_TRUNC | PARIO_PGAS_COMMON_FP);
    PT_EQ(pario_pgas_fwrite_list_local(fd, 2, mv, 3, fv, 0, &moved), PARIO_OK);
    PT_EQ(moved, runs * k * es);
    PT_EQ(pario_pgas_fsync(fd), PARIO_OK);
    if (rank == 0)
        PT_EQ(pio_test_file_bad(path, 0, 0, total, es, 41, (long long)(total * es)), 0);
    pario_pgas_local_memvec mv_in[3] = {
        {in, 1}, {in + 1, 2 * k * es}, {in + 1 + 2 * k * es, k * es - 1}};
    PT_EQ(pario_pgas_fread_list_local(fd, 3, mv_in, 3, fv, 0, &moved), PARIO_OK);
    PT_EQ(moved, runs * k * es);
    PT_EQ(memcmp(in, buf, runs * k * es), 0);
    pario_pgas_off pos = -1;
    PT_EQ(pario_pgas_fseek(fd, 0, PARIO_PGAS_SEEK_CUR, &pos), PARIO_OK);
    PT_EQ(pos, 0); /* lists leave the pointer alone */
    pio_test_close(&fd);
    free(buf);
    free(in);
}

/* Lists of shared memory: rank r gives slice r of an array (block 3) and
 * two file entries for it; another array (block [*]) reads the file back with
 * rank r asking for slice n - 1 - r, so the data crosses ranks. */
static void list_shared(pario_pgas *ctx) {
    const char *path = pio_test_path("pgas_io.slist");
    int rank = pario_pgas_mythread(ctx), n = pario_pgas_threads(ctx);
    uint32_t es = 9;
    uint64_t s = 29, h = 11, count = s * (uint64_t)n;
    pario_pgas_array a = alloc(ctx, count, es, 3);
    pario_pgas_array b = alloc(ctx, count, es, PARIO_PGAS_BLOCK_FIT);
    pio_test_fill_owned(ctx, &a, 51);
    pario_pgas_shared_memvec mv = {pario_pgas_elem(&a, rank * s), 3 * es, s * es};
    pario_pgas_off at = (pario_pgas_off)(rank * s * es);
    pario_pgas_filevec fv[2] = {{at, h * es}, {at + (pario_pgas_off)(h * es), (s - h) * es}};
    pario_pgas_off moved = 0;
    pario_pgas_file *fd = pio_test_open(
        ctx, path, PARIO_PGAS_RDWR | PARIO_PGAS_CREATE | PARIO_PGAS_TRUNC | PARIO_PGAS_COMMON_FP);
    PT_EQ(pario_pgas_fwrite_list_shared(fd, 1, &mv, 2, fv, 0, &moved), PARIO_OK);
    PT_EQ(moved, s * es);
    PT_EQ(pario_pgas_fsync(fd), PARIO_OK);
    if (rank == 0)
        PT_EQ(pio_test_file_bad(path, 0, 0, count, es, 51, (long long)(count * es)), 0);
    int other = n - 1 - rank;
    pario_pgas_shared_memvec mv_in = {pario_pgas_elem(&b, other * s), b.base.block * es, s * es};
    pario_pgas_filevec fv_in = {(pario_pgas_off)(other * s * es), s * es};
    PT_EQ(pario_pgas_fread_list_shared(fd, 1, &mv_in, 1, &fv_in, 0, &moved), PARIO_OK);
    PT_EQ(moved, s * es);
    pio_test_close(&fd);
    PT_EQ(pio_test_owned_bad(ctx, &b, 51, 0, 0, count), 0);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &b), PARIO_OK);
}

static void async_calls(pario_pgas *ctx) {
    const char *path = pio_test_path("pgas_io.async");
    uint32_t es = 8;
    uint64_t count = test_count(es);
    pario_pgas_array a = alloc(ctx, count, es, 128), b = alloc(ctx, count, es, 1);
    pio_test_fill_owned(ctx, &a, 61);
    pario_pgas_file *fd = pio_test_open(
        ctx, path, PARIO_PGAS_RDWR | PARIO_PGAS_CREATE | PARIO_PGAS_TRUNC | PARIO_PGAS_COMMON_FP);
    int flag = -1, out = -1;
    pario_pgas_off moved = 0;
    PT_EQ(pario_pgas_fwrite_shared_async(fd, a.base, 128, es, count, 0), PARIO_OK);
    PT_EQ(pario_pgas_fcntl(fd, PARIO_PGAS_ASYNC_OUTSTANDING, NULL, &out), PARIO_OK);
    PT_EQ(out, 1);
    /* One outstanding per file: a second call and a seek are refused. */
    PT_EQ(pario_pgas_fread_shared_async(fd, b.base, 1, es, count, 0), PARIO_ERR_REQUEST);
    PT_EQ(pario_pgas_fseek(fd, 0, PARIO_PGAS_SEEK_SET, NULL), PARIO_ERR_REQUEST);
    while (flag != 1) /* collective: the same flag on every rank, 1 once all are done */
        PT_EQ(pario_pgas_ftest_async(fd, &flag, &moved), PARIO_OK);
    PT_EQ(moved, count * es);
    PT_EQ(pario_pgas_fcntl(fd, PARIO_PGAS_ASYNC_OUTSTANDING, NULL, &out), PARIO_OK);
    PT_EQ(out, 0);
    PT_EQ(pario_pgas_fwait_async(fd, &moved), PARIO_ERR_REQUEST);
    PT_EQ(pario_pgas_fseek(fd, 0, PARIO_PGAS_SEEK_SET, NULL), PARIO_OK);
    PT_EQ(pario_pgas_fread_shared_async(fd, b.base, 1, es, count, 0), PARIO_OK);
    PT_EQ(pario_pgas_fwait_async(fd, &moved), PARIO_OK);
    PT_EQ(moved, count * es);
    PT_EQ(pio_test_owned_bad(ctx, &b, 61, 0, 0, count), 0);
    /* An argument error of an asynchronous call comes back from the wait. */
    PT_EQ(pario_pgas_fwrite_local_async(fd, NULL, 1, 1, 0), PARIO_OK);
    PT_EQ(pario_pgas_fwait_async(fd, &moved), PARIO_ERR_UNSUPPORTED_OPERATION);
    PT_EQ(moved, -1);
    pio_test_close(&fd);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &b), PARIO_OK);
}

static const char *hint_value(const pario_pgas_hint *h, int n, const char *key) {
    for (int i = 0; i < n; i++)
        if (!strcmp(h[i].key, key))
            return h[i].value;
    return "";
}

static void fcntl_and_sizes(pario_pgas *ctx) {
    const char *path = pio_test_path("pgas_io.fcntl");
    int flags = PARIO_PGAS_RDWR | PARIO_PGAS_CREATE | PARIO_PGAS_TRUNC | PARIO_PGAS_COMMON_FP;
    pario_pgas_hint hint = {"cb_buffer_size", "1048576"};
    pario_pgas_file *fd = NULL;
    PT_EQ(pario_pgas_fopen(ctx, path, flags, 1, &hint, &fd, NULL), PARIO_OK);
    int out = -1;
    const char *name = NULL;
    const pario_pgas_hint *hints = NULL;
    PT_EQ(pario_pgas_fcntl(fd, PARIO_PGAS_GET_FN, &name, NULL), PARIO_OK);
    PT_CHECK(name && !strcmp(name, path));
    PT_EQ(pario_pgas_fcntl(fd, PARIO_PGAS_GET_FL, NULL, &out), PARIO_OK);
    PT_EQ(out, flags);
    PT_EQ(pario_pgas_fcntl(fd, PARIO_PGAS_GET_HINTS, &hints, &out), PARIO_OK);
    PT_CHECK(!strcmp(hint_value(hints, out, "cb_buffer_size"), "1048576"));
    pario_pgas_hint other = {"cb_buffer_size", "2097152"};
    PT_EQ(pario_pgas_fcntl(fd, PARIO_PGAS_SET_HINT, &other, NULL), PARIO_OK);
    PT_EQ(pario_pgas_fcntl(fd, PARIO_PGAS_GET_HINTS, &hints, &out), PARIO_OK);
    PT_CHECK(!strcmp(hint_value(hints, out, "cb_buffer_size"), "2097152"));
    PT_EQ(pario_pgas_fcntl(fd, PARIO_PGAS_GET_CA_SEMANTICS, NULL, &out), PARIO_OK);
    PT_EQ(out, 0);
    PT_EQ(pario_pgas_fcntl(fd, PARIO_PGAS_SET_STRONG_CA_SEMANTICS, NULL, NULL), PARIO_OK);
    PT_EQ(pario_pgas_fcntl(fd, PARIO_PGAS_GET_CA_SEMANTICS, NULL, &out), PARIO_OK);
    PT_EQ(out, PARIO_PGAS_STRONG_CA);
    /* A strong-consistency write: atomic in the io layer. */
    char c = (char)('a' + pario_pgas_mythread(ctx));
    pario_pgas_filevec fv = {pario_pgas_mythread(ctx), 1};
    pario_pgas_local_memvec mv = {&c, 1};
    PT_EQ(pario_pgas_fwrite_list_local(fd, 1, &mv, 1, &fv, 0, NULL), PARIO_OK);
    PT_EQ(pario_pgas_fcntl(fd, PARIO_PGAS_SET_WEAK_CA_SEMANTICS, NULL, NULL), PARIO_OK);
    PT_EQ(pario_pgas_fcntl(fd, PARIO_PGAS_GET_FP, NULL, &out), PARIO_OK);
    PT_EQ(out, PARIO_PGAS_COMMON_FP);
    pario_pgas_off pos = -1, size = -1;
    PT_EQ(pario_pgas_fseek(fd, 10, PARIO_PGAS_SEEK_SET, NULL), PARIO_OK);
    PT_EQ(pario_pgas_fcntl(fd, PARIO_PGAS_SET_INDIVIDUAL_FP, NULL, NULL), PARIO_OK);
    PT_EQ(pario_pgas_fcntl(fd, PARIO_PGAS_GET_FP, NULL, &out), PARIO_OK);
    PT_EQ(out, PARIO_PGAS_INDIVIDUAL_FP);
    PT_EQ(pario_pgas_fseek(fd, 0, PARIO_PGAS_SEEK_CUR, &pos), PARIO_OK);
    PT_EQ(pos, 0);
    PT_EQ(pario_pgas_fget_size(fd, &size), PARIO_OK);
    PT_EQ(size, pario_pgas_threads(ctx));
    PT_EQ(pario_pgas_fset_size(fd, 100), PARIO_OK);
    PT_EQ(pario_pgas_fget_size(fd, &size), PARIO_OK);
    PT_EQ(size, 100);
    PT_EQ(pario_pgas_fpreallocate(fd, 4096), PARIO_OK);
    PT_EQ(pario_pgas_fget_size(fd, &size), PARIO_OK);
    PT_EQ(size, 4096);
    pio_test_close(&fd);
    if (pario_pgas_mythread(ctx) == 0) {
        char back[8] = {0};
        PT_EQ(ptest_read_file(path, back, 2), 2);
        PT_EQ(back[0], 'a');
        PT_EQ(back[1], pario_pgas_threads(ctx) > 1 ? 'b' : 0);
    }
    /* APPEND: pointers start at the end; TRUNC empties; DELETE_ON_CLOSE removes. */
    fd = pio_test_open(ctx, path, PARIO_PGAS_WRONLY | PARIO_PGAS_APPEND | PARIO_PGAS_INDIVIDUAL_FP);
    PT_EQ(pario_pgas_fseek(fd, 0, PARIO_PGAS_SEEK_CUR, &pos), PARIO_OK);
    PT_EQ(pos, 4096);
    pio_test_close(&fd);
    fd = pio_test_open(ctx, path,
                       PARIO_PGAS_RDWR | PARIO_PGAS_TRUNC | PARIO_PGAS_DELETE_ON_CLOSE |
                           PARIO_PGAS_COMMON_FP);
    PT_EQ(pario_pgas_fget_size(fd, &size), PARIO_OK);
    PT_EQ(size, 0);
    pio_test_close(&fd);
    MPI_Barrier(MPI_COMM_WORLD);
    PT_EQ(access(path, F_OK), -1);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    pario_pgas *ctx = test_pgas_init();
    for (uint32_t es = 1; es <= 16; es++)
        for (int wi = 0; wi < NBLOCKS; wi++)
            round_trip(ctx, es, wi, (wi + 1 + (int)es % 3) % NBLOCKS);
    middle_range(ctx, 8, 3, 1);
    middle_range(ctx, 5, 128, 0);
    middle_range(ctx, 16, 1, PARIO_PGAS_BLOCK_FIT);
    other_rank_count(ctx);
    individual_shared(ctx);
    individual_local(ctx);
    list_local(ctx);
    list_shared(ctx);
    async_calls(ctx);
    fcntl_and_sizes(ctx);
    PT_EQ(pario_pgas_finalize(&ctx), PARIO_OK);
    return ptest_finish();
}
