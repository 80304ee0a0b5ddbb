/* pgas io errors: every call with a bad argument on one rank (the last) fails
 * on every rank with the same code and that rank's message, nobody hangs, no
 * byte moves, and the file keeps what was written before; the file stays
 * usable afterwards. */
#include "pgas_io_test.h"

#include <errno.h>

static int last_rank(pario_pgas *ctx) {
    return pario_pgas_mythread(ctx) == pario_pgas_threads(ctx) - 1;
}

/* Every rank got code and a message containing text. */
static void expect(pario_pgas_file *fd, int rc, int code, const char *text) {
    PT_EQ(rc, code);
    const char *m = pario_pgas_file_last_error(fd)->msg;
    if (!strstr(m, text))
        fprintf(stderr, "message \"%s\" lacks \"%s\"\n", m, text);
    PT_CHECK(strstr(m, text) != NULL);
}

static void open_errors(pario_pgas *ctx) {
    const char *path = pio_test_path("pgas_io_errors.open");
    pario_pgas_file *fd = NULL;
    pario_error err = {0};
    if (pario_pgas_mythread(ctx) == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    int rc =
        pario_pgas_fopen(ctx, path, PARIO_PGAS_RDONLY | PARIO_PGAS_COMMON_FP, 0, NULL, &fd, &err);
    PT_EQ(rc, PARIO_ERR_NO_SUCH_FILE);
    PT_CHECK(fd == NULL && strstr(err.msg, path));
    PT_EQ(pario_pgas_io_errno(rc), ENOENT);
    fd = pio_test_open(ctx, path, PARIO_PGAS_WRONLY | PARIO_PGAS_CREATE | PARIO_PGAS_COMMON_FP);
    pio_test_close(&fd);
    rc = pario_pgas_fopen(
        ctx, path, PARIO_PGAS_WRONLY | PARIO_PGAS_CREATE | PARIO_PGAS_EXCL | PARIO_PGAS_COMMON_FP,
        0, NULL, &fd, &err);
    PT_EQ(rc, PARIO_ERR_FILE_EXISTS);
    PT_EQ(pario_pgas_io_errno(rc), EEXIST);
    /* Bad flags on the last rank only: its message on every rank. */
    int flags = PARIO_PGAS_RDWR | PARIO_PGAS_COMMON_FP;
    rc = pario_pgas_fopen(ctx, path, last_rank(ctx) ? flags | PARIO_PGAS_WRONLY : flags, 0, NULL,
                          &fd, &err);
    PT_EQ(rc, PARIO_ERR_AMODE);
    PT_CHECK(strstr(err.msg, "not exactly one of RDONLY") != NULL);
    PT_CHECK(fd == NULL);
    rc =
        pario_pgas_fopen(ctx, path, PARIO_PGAS_RDWR | PARIO_PGAS_INDIVIDUAL_FP, 0, NULL, &fd, &err);
    PT_EQ(rc, PARIO_OK);
    pio_test_close(&fd);
    if (pario_pgas_threads(ctx) > 1) {
        rc = pario_pgas_fopen(ctx, path,
                              last_rank(ctx) ? PARIO_PGAS_RDWR | PARIO_PGAS_INDIVIDUAL_FP : flags,
                              0, NULL, &fd, &err);
        PT_EQ(rc, PARIO_ERR_NOT_SAME);
        PT_CHECK(fd == NULL);
    }
    pario_pgas_hint bad = {"", "1"};
    rc = pario_pgas_fopen(ctx, path, flags, last_rank(ctx) ? 1 : 0, &bad, &fd, &err);
    PT_EQ(rc, PARIO_ERR_INFO);
    PT_CHECK(fd == NULL);
}

/* The file holds the array a (salt 7) in index order and nothing else. */
static void file_intact(pario_pgas *ctx, const char *path, uint64_t n, uint32_t es) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (pario_pgas_mythread(ctx) == 0)
        PT_EQ(pio_test_file_bad(path, 0, 0, n, es, 7, (long long)(n * es)), 0);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void shared_errors(pario_pgas *ctx) {
    const char *path = pio_test_path("pgas_io_errors.data");
    uint32_t es = 8;
    uint64_t n = 517;
    pario_pgas_array a, b;
    PT_EQ(pario_pgas_all_alloc(ctx, n, es, 3, &a), PARIO_OK);
    PT_EQ(pario_pgas_all_alloc(ctx, n, es, 1, &b), PARIO_OK);
    pio_test_fill_owned(ctx, &a, 7);
    pario_pgas_file *fd = pio_test_open(
        ctx, path, PARIO_PGAS_RDWR | PARIO_PGAS_CREATE | PARIO_PGAS_TRUNC | PARIO_PGAS_COMMON_FP);
    pario_pgas_off moved = 0;
    PT_EQ(pario_pgas_fwrite_shared(fd, a.base, 3, es, n, 0, &moved), PARIO_OK);
    PT_EQ(pario_pgas_fsync(fd), PARIO_OK);
    PT_EQ(pario_pgas_fseek(fd, 0, PARIO_PGAS_SEEK_SET, NULL), PARIO_OK);
    pio_test_fill_owned(ctx, &a, 8); /* what a refused write would put there */

    pario_pgas_ptr null_ptr = {0}, made_up = a.base;
    made_up.addr = 8; /* below every heap */
    int rc = pario_pgas_fwrite_shared(fd, last_rank(ctx) ? null_ptr : a.base, 3, es, n, 0, &moved);
    expect(fd, rc, PARIO_ERR_ARG, "not a pointer of this context");
    PT_EQ(moved, -1);
    rc = pario_pgas_fwrite_shared(fd, last_rank(ctx) ? made_up : a.base, 3, es, n, 0, &moved);
    expect(fd, rc, PARIO_ERR_ARG, "first byte of the shared buffer");
    if (pario_pgas_threads(ctx) > 1) { /* one rank always agrees with itself */
        rc = pario_pgas_fwrite_shared(fd, a.base, 3, es, last_rank(ctx) ? n - 1 : n, 0, NULL);
        expect(fd, rc, PARIO_ERR_NOT_SAME, "differs between ranks");
    }
    rc = pario_pgas_fwrite_shared(fd, a.base, 3, es, n, last_rank(ctx) ? 0x40 : 0, NULL);
    expect(fd, rc, PARIO_ERR_ARG, "synchronisation flags");
    if (pario_pgas_threads(ctx) > 1) { /* valid flags, but the barriers would differ */
        rc = pario_pgas_fwrite_shared(fd, a.base, 3, es, n,
                                      last_rank(ctx) ? PARIO_PGAS_IN_NOSYNC : 0, NULL);
        expect(fd, rc, PARIO_ERR_NOT_SAME, "argument 1 differs");
    }
    rc = pario_pgas_fwrite_shared(fd, a.base, 3, es, last_rank(ctx) ? SIZE_MAX / 2 : n, 0, NULL);
    expect(fd, rc, PARIO_ERR_COUNT_ARG, "too many");
    /* A buffer that runs past the array's heap on the last rank. */
    rc = pario_pgas_fwrite_shared(fd, a.base, 3, es, last_rank(ctx) ? n * 100000 : n, 0, NULL);
    expect(fd, rc, PARIO_ERR_ARG, "last byte of the shared buffer");
    rc = pario_pgas_fread_local(fd, &moved, 1, 1, 0, NULL);
    expect(fd, rc, PARIO_ERR_UNSUPPORTED_OPERATION, "individual file pointers");
    pario_pgas_off pos = -1;
    PT_EQ(pario_pgas_fseek(fd, 0, PARIO_PGAS_SEEK_CUR, &pos), PARIO_OK);
    PT_EQ(pos, 0); /* no refused call moved the pointer */
    file_intact(ctx, path, n, es);

    /* Reading is still possible and gives what the first write stored. */
    PT_EQ(pario_pgas_fread_shared(fd, b.base, 1, es, n + 10, 0, &moved), PARIO_OK);
    PT_EQ(moved, n * es);
    PT_EQ(pio_test_owned_bad(ctx, &b, 7, 0, 0, n), 0);
    pio_test_close(&fd);

    fd = pio_test_open(ctx, path, PARIO_PGAS_RDONLY | PARIO_PGAS_INDIVIDUAL_FP);
    rc = pario_pgas_fwrite_shared(fd, a.base, 3, es, n, 0, NULL);
    expect(fd, rc, PARIO_ERR_FILE, "not open for writing");
    PT_EQ(pario_pgas_io_errno(rc), EBADF);
    rc = pario_pgas_fset_size(fd, 0);
    expect(fd, rc, PARIO_ERR_FILE, "read-only");
    /* A seek before the start on one rank leaves every pointer where it was. */
    PT_EQ(pario_pgas_fseek(fd, 16, PARIO_PGAS_SEEK_SET, NULL), PARIO_OK);
    rc = pario_pgas_fseek(fd, last_rank(ctx) ? -17 : 8, PARIO_PGAS_SEEK_CUR, &pos);
    expect(fd, rc, PARIO_ERR_ARG, "before the start");
    PT_EQ(pario_pgas_fseek(fd, 0, PARIO_PGAS_SEEK_CUR, &pos), PARIO_OK);
    PT_EQ(pos, 16);
    rc = pario_pgas_fseek(fd, 0, last_rank(ctx) ? 99 : PARIO_PGAS_SEEK_SET, NULL);
    expect(fd, rc, PARIO_ERR_ARG, "unknown origin");
    pio_test_close(&fd);
    file_intact(ctx, path, n, es);
    PT_EQ(pario_pgas_all_free(ctx, &a), PARIO_OK);
    PT_EQ(pario_pgas_all_free(ctx, &b), PARIO_OK);
}

static void local_and_list_errors(pario_pgas *ctx) {
    const char *path = pio_test_path("pgas_io_errors.data");
    uint32_t es = 8;
    uint64_t n = 517;
    int rank = pario_pgas_mythread(ctx);
    unsigned char buf[64] = {0};
    pario_pgas_file *fd = pio_test_open(ctx, path, PARIO_PGAS_RDWR | PARIO_PGAS_INDIVIDUAL_FP);
    int rc = pario_pgas_fwrite_local(fd, last_rank(ctx) ? NULL : buf, 8, 8, 0, NULL);
    expect(fd, rc, PARIO_ERR_ARG, "NULL buffer");
    /* Overlapping file entries of a write on the last rank. */
    pario_pgas_local_memvec mv = {buf, 16};
    pario_pgas_filevec ok[2] = {{rank * 16, 8}, {rank * 16 + 8, 8}};
    pario_pgas_filevec overlap[2] = {{rank * 16, 8}, {rank * 16 + 4, 8}};
    rc = pario_pgas_fwrite_list_local(fd, 1, &mv, 2, last_rank(ctx) ? overlap : ok, 0, NULL);
    expect(fd, rc, PARIO_ERR_ARG, "before the previous one");
    pario_pgas_filevec short_list[1] = {{rank * 16, 15}};
    rc = pario_pgas_fwrite_list_local(fd, 1, &mv, last_rank(ctx) ? 1 : 2,
                                      last_rank(ctx) ? short_list : ok, 0, NULL);
    expect(fd, rc, PARIO_ERR_ARG, "memory list holds 16 bytes");
    pario_pgas_filevec negative[1] = {{-8, 16}};
    rc = pario_pgas_fwrite_list_local(fd, 1, &mv, last_rank(ctx) ? 1 : 2,
                                      last_rank(ctx) ? negative : ok, 0, NULL);
    expect(fd, rc, PARIO_ERR_ARG, "offset -8");
    /* Reads may overlap in the file (non-decreasing offsets). */
    unsigned char in[16];
    pario_pgas_local_memvec mv_in = {in, 16};
    pario_pgas_filevec twice[2] = {{0, 8}, {0, 8}};
    pario_pgas_off moved = 0;
    PT_EQ(pario_pgas_fread_list_local(fd, 1, &mv_in, 2, twice, 0, &moved), PARIO_OK);
    PT_EQ(moved, 16);
    PT_EQ(memcmp(in, in + 8, 8), 0);
    PT_EQ(test_mismatch(in, 0, 1, es, 7), 0);
    /* fcntl: an unknown command, a missing argument on one rank. */
    rc = pario_pgas_fcntl(fd, last_rank(ctx) ? 3 : PARIO_PGAS_GET_FP, NULL, NULL);
    expect(fd, rc, PARIO_ERR_ARG, "unknown command");
    const char *name = NULL;
    rc = pario_pgas_fcntl(fd, PARIO_PGAS_GET_FN, last_rank(ctx) ? NULL : (void *)&name, NULL);
    expect(fd, rc, PARIO_ERR_ARG, "needs an argument");
    pario_pgas_hint bad = {"cb_buffer_size", NULL}, good = {"cb_buffer_size", "1048576"};
    rc = pario_pgas_fcntl(fd, PARIO_PGAS_SET_HINT, last_rank(ctx) ? &bad : &good, NULL);
    expect(fd, rc, PARIO_ERR_INFO, "SET_HINT");
    if (pario_pgas_threads(ctx) > 1) {
        rc = pario_pgas_fset_size(fd, last_rank(ctx) ? 10 : 11);
        expect(fd, rc, PARIO_ERR_NOT_SAME, "differs between ranks");
    }
    rc = pario_pgas_fpreallocate(fd, -1);
    expect(fd, rc, PARIO_ERR_ARG, "negative size");
    rc = pario_pgas_fwait_async(fd, NULL);
    expect(fd, rc, PARIO_ERR_REQUEST, "no asynchronous call");
    pio_test_close(&fd);
    file_intact(ctx, path, n, es);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    pario_pgas *ctx = test_pgas_init();
    open_errors(ctx);
    shared_errors(ctx);
    local_and_list_errors(ctx);
    PT_EQ(pario_pgas_io_errno(PARIO_OK), 0);
    PT_EQ(pario_pgas_io_errno(PARIO_ERR_NO_SPACE), ENOSPC);
    PT_EQ(pario_pgas_io_errno(PARIO_ERR_NOT_SAME), EINVAL);
    PT_EQ(pario_pgas_finalize(&ctx), PARIO_OK);
    return ptest_finish();
}
