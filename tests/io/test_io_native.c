/* The native io API: open errors and their messages, views, sieving and
 * list I/O giving identical bytes, short reads, hints, damage-free errors,
 * writes whose blocks are reserved first. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "io_test.h"

static int rank, nranks;

static void test_open_errors(void) {
    pario_file *fh = NULL;
    pario_error err;
    const char *missing = ptest_path("no-such-file");
    int rc = pario_file_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh, &err);
    PT_EQ(rc, PARIO_ERR_NO_SUCH_FILE);
    PT_CHECK(fh == NULL);
    PT_CHECK(strstr(err.msg, missing) != NULL);
    rc = pario_file_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL,
                         &fh, &err);
    PT_EQ(rc, PARIO_ERR_AMODE);
    rc = pario_file_open(MPI_COMM_WORLD, missing, MPI_MODE_RDWR | MPI_MODE_WRONLY, MPI_INFO_NULL,
                         &fh, &err);
    PT_EQ(rc, PARIO_ERR_AMODE);
    /* A mode that differs on one rank fails everywhere. */
    int amode = rank == nranks - 1 && nranks > 1 ? MPI_MODE_RDWR : MPI_MODE_WRONLY;
    rc =
        pario_file_open(MPI_COMM_WORLD, missing, amode | MPI_MODE_CREATE, MPI_INFO_NULL, &fh, &err);
    PT_EQ(rc, nranks > 1 ? PARIO_ERR_NOT_SAME : PARIO_OK);
    if (rc == PARIO_OK)
        pario_file_close(&fh, &err);
    /* Rank 0 creates before the ranks agree (open's steps): a refused open
     * may leave the file, empty. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        pario_file_delete(missing, MPI_INFO_NULL, &err);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Each rank writes blocks of `blk` ints interleaved with the others through a
 * vector view; the file must hold rank r's values at block slots r, r+n, ... */
static void write_interleaved(const char *path, const char *ds, int collective, const char *cb,
                              int cb_nodes) {
    enum { NBLK = 64 };
    const int blk = 3;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_write", ds);
    MPI_Info_set(info, "romio_ds_read", ds);
    MPI_Info_set(info, "ind_wr_buffer_size", "256");
    MPI_Info_set(info, "romio_cb_write", collective ? "enable" : "automatic");
    MPI_Info_set(info, "romio_cb_read", collective ? "enable" : "automatic");
    MPI_Info_set(info, "cb_buffer_size", cb);
    char nodes[16];
    snprintf(nodes, sizeof nodes, "%d", cb_nodes);
    MPI_Info_set(info, "cb_nodes", nodes);
    pario_file *fh = NULL;
    pario_error err;
    PT_EQ(pario_file_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, info, &fh, &err),
          PARIO_OK);
    MPI_Info_free(&info);
    MPI_Datatype vec, ftype;
    MPI_Type_vector(NBLK, blk, blk * nranks, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)(NBLK * blk * nranks * sizeof(int)), &ftype);
    MPI_Type_commit(&ftype);
    MPI_Type_free(&vec);
    PT_EQ(pario_file_set_view(fh, (MPI_Offset)(rank * blk * sizeof(int)), MPI_INT, ftype, "native",
                              MPI_INFO_NULL),
          PARIO_OK);
    MPI_Type_free(&ftype); /* the view keeps its own reference */
    int data[NBLK * 3];
    for (int i = 0; i < NBLK * blk; i++)
        data[i] = rank * 100000 + i;
    MPI_Count bytes = 0;
    int rc = collective ? pario_file_write_all(fh, data, NBLK * blk, MPI_INT, &bytes)
                        : pario_file_write(fh, data, NBLK * blk, MPI_INT, &bytes);
    PT_EQ(rc, PARIO_OK);
    PT_EQ(bytes, (MPI_Count)sizeof data);
    MPI_Offset pos = -1;
    pario_file_get_position(fh, &pos);
    PT_EQ(pos, NBLK * blk);
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    MPI_Barrier(MPI_COMM_WORLD);
    int back[NBLK * 3] = {0};
    PT_EQ(pario_file_read_at_all(fh, 0, back, NBLK * blk, MPI_INT, &bytes), PARIO_OK);
    PT_CHECK(memcmp(back, data, sizeof data) == 0);
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);

    static unsigned char img[1 << 16];
    int64_t n = ptest_file_image(path, img, sizeof img);
    PT_EQ(n, (int64_t)(NBLK * blk * nranks * sizeof(int)));
    int ok = 1;
    const int *v = (const int *)img;
    for (int64_t i = 0; i < n / (int64_t)sizeof(int); i++) {
        int64_t slot = i / blk, owner = slot % nranks, k = (slot / nranks) * blk + i % blk;
        ok &= v[i] == owner * 100000 + k;
    }
    PT_CHECK(ok);
}

static void test_views(void) {
    const char *modes[] = {"enable", "disable", "automatic"};
    for (int m = 0; m < 3; m++) {
        char name[64];
        snprintf(name, sizeof name, "interleaved-%s", modes[m]);
        write_interleaved(ptest_path(name), modes[m], 0, "16777216", 1);
    }
    /* Two-phase with windows down to 4 bytes and 1 to all aggregators. */
    const char *cbs[] = {"4", "100", "4096", "16777216"};
    for (int c = 0; c < 4; c++)
        for (int nodes = 1; nodes <= nranks; nodes++) {
            char name[64];
            snprintf(name, sizeof name, "twophase-%s-%d", cbs[c], nodes);
            write_interleaved(ptest_path(name), "automatic", 1, cbs[c], nodes);
        }
}

static void test_short_read_and_bad_input(void) {
    const char *path = ptest_path("short");
    pario_file *fh = NULL;
    pario_error err;
    MPI_Info agreed; /* collective writes not kept behind: argument errors are agreed */
    MPI_Info_create(&agreed);
    MPI_Info_set(agreed, "pario_cb_write_behind", "disable");
    PT_EQ(pario_file_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, agreed, &fh, &err),
          PARIO_OK);
    MPI_Info_free(&agreed);
    char data[100];
    memset(data, 'a' + rank, sizeof data);
    MPI_Count bytes = 0;
    PT_EQ(pario_file_write_at(fh, rank * 100, data, 100, MPI_CHAR, &bytes), PARIO_OK);
    pario_file_sync(fh);
    char buf[200];
    PT_EQ(pario_file_read_at(fh, nranks * 100 - 50, buf, 200, MPI_CHAR, &bytes), PARIO_OK);
    PT_EQ(bytes, 50);
    PT_EQ(pario_file_read_at(fh, -1, buf, 1, MPI_CHAR, &bytes), PARIO_ERR_ARG);
    PT_CHECK(strstr(pario_file_last_error(fh)->msg, path) != NULL);
    PT_EQ(pario_file_write_at_all(fh, rank == 0 ? -5 : 0, data, 1, MPI_CHAR, &bytes),
          PARIO_ERR_ARG);
    PT_EQ(pario_file_write_at(fh, 0, data, -1, MPI_CHAR, &bytes), PARIO_ERR_COUNT_ARG);
    PT_EQ(pario_file_write_at(fh, 0, data, 1, MPI_DATATYPE_NULL, &bytes), PARIO_ERR_TYPE);
    MPI_Datatype uncommitted;
    MPI_Type_contiguous(2, MPI_INT, &uncommitted);
    PT_EQ(pario_file_write_at(fh, 0, data, 1, uncommitted, &bytes), PARIO_ERR_TYPE);
    MPI_Type_free(&uncommitted);
    PT_EQ(pario_file_set_view(fh, 0, MPI_INT, MPI_CHAR, "native", MPI_INFO_NULL), PARIO_ERR_ARG);
    PT_EQ(pario_file_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "no-such-datarep", MPI_INFO_NULL),
          PARIO_ERR_UNSUPPORTED_DATAREP);
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    /* Nothing above changed the file. */
    static unsigned char img[4096];
    int64_t n = ptest_file_image(path, img, sizeof img);
    PT_EQ(n, nranks * 100);
    int ok = 1;
    for (int64_t i = 0; i < n; i++)
        ok &= img[i] == 'a' + i / 100;
    PT_CHECK(ok);
    PT_EQ(pario_file_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh, &err),
          PARIO_OK);
    PT_EQ(pario_file_write_at(fh, 0, data, 1, MPI_CHAR, &bytes), PARIO_ERR_READ_ONLY);
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
}

static void test_hints(void) {
    const char *path = ptest_path("hints");
    MPI_Info info, got;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "4096");
    MPI_Info_set(info, "romio_ds_write", "disable");
    pario_file *fh = NULL;
    pario_error err;
    PT_EQ(pario_file_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, info, &fh, &err),
          PARIO_OK);
    MPI_Info_free(&info);
    PT_EQ(pario_file_get_info(fh, &got), PARIO_OK);
    char val[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_Info_get(got, "cb_buffer_size", MPI_MAX_INFO_VAL, val, &flag);
    PT_CHECK(flag && !strcmp(val, "4096"));
    MPI_Info_get(got, "romio_ds_write", MPI_MAX_INFO_VAL, val, &flag);
    PT_CHECK(flag && !strcmp(val, "disable"));
    MPI_Info_free(&got);
    /* An operator's $PARIO_HINT_ variable stays on top of the program's
     * hints at set_info and set_view too, not only at open. */
    setenv("PARIO_HINT_romio_ds_read", "disable", 1);
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_read", "enable");
    PT_EQ(pario_file_set_info(fh, info), PARIO_OK);
    PT_CHECK(iot_hint_is(fh, "romio_ds_read", "disable"));
    PT_EQ(pario_file_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info), PARIO_OK);
    PT_CHECK(iot_hint_is(fh, "romio_ds_read", "disable"));
    unsetenv("PARIO_HINT_romio_ds_read");
    MPI_Info_free(&info);
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
}

/* Under every pario_prealloc_writes value a large write past the end of an
 * empty file and a small one before it give the same bytes and size, the
 * hint is reported, and only the written ranges take blocks (the hole in
 * between stays a hole: reservation covers exactly what is written). */
static void test_reserved_writes(void) {
    enum { BIG = (1 << 20) + 3, BIG_AT = (2 << 20) + 1, SMALL_AT = 100 };
    static const char *const values[] = {"automatic", "enable", "disable"};
    const char *path = ptest_path("reserved");
    unsigned char *big = malloc(BIG), *back = malloc(BIG);
    PT_CHECK(big && back);
    if (!big || !back) {
        free(big);
        free(back);
        return;
    }
    for (int i = 0; i < BIG; i++)
        big[i] = (unsigned char)(i * 7 + 1);
    for (int v = 0; v < 3; v++) {
        const char *kv[] = {"pario_prealloc_writes", values[v], NULL};
        pario_file *fh = iot_open(path, MPI_MODE_RDWR | MPI_MODE_CREATE, kv);
        pario_error err;
        if (!fh)
            break;
        PT_CHECK(iot_hint_is(fh, "pario_prealloc_writes", values[v]));
        PT_EQ(pario_file_set_size(fh, 0), PARIO_OK);
        if (rank == 0) {
            PT_EQ(pario_file_write_at(fh, BIG_AT, big, BIG, MPI_BYTE, NULL), PARIO_OK);
            PT_EQ(pario_file_write_at(fh, SMALL_AT, "pario", 5, MPI_BYTE, NULL), PARIO_OK);
        }
        PT_EQ(pario_file_sync(fh), PARIO_OK);
        MPI_Offset size = 0;
        PT_EQ(pario_file_get_size(fh, &size), PARIO_OK);
        PT_EQ((int64_t)size, (int64_t)BIG_AT + BIG);
        memset(back, 0xee, BIG);
        PT_EQ(pario_file_read_at(fh, BIG_AT, back, BIG, MPI_BYTE, NULL), PARIO_OK);
        PT_EQ(memcmp(back, big, BIG), 0);
        unsigned char hole[64];
        PT_EQ(pario_file_read_at(fh, SMALL_AT + 5, hole, sizeof hole, MPI_BYTE, NULL), PARIO_OK);
        int nonzero = 0;
        for (size_t i = 0; i < sizeof hole; i++)
            nonzero += hole[i] != 0;
        PT_EQ(nonzero, 0);
        PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
        struct stat st;
        PT_EQ(stat(path, &st), 0);
        PT_CHECK((int64_t)st.st_blocks * 512 < (int64_t)BIG_AT + BIG); /* the hole stays */
    }
    free(big);
    free(back);
}

static void test_seek_end_with_view(void) {
    const char *path = ptest_path("seek");
    pario_file *fh = NULL;
    pario_error err;
    PT_EQ(pario_file_open(MPI_COMM_WORLD, path,
                          MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                          &fh, &err),
          PARIO_OK);
    PT_EQ(pario_file_set_size(fh, 40), PARIO_OK);
    /* View: 2 ints of every 4, from byte 8: data at 8..15, 24..31, 40.. */
    MPI_Datatype vec, ft;
    MPI_Type_vector(1, 2, 4, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 16, &ft);
    MPI_Type_commit(&ft);
    PT_EQ(pario_file_set_view(fh, 8, MPI_INT, ft, "native", MPI_INFO_NULL), PARIO_OK);
    PT_EQ(pario_file_seek(fh, 0, MPI_SEEK_END), PARIO_OK);
    MPI_Offset pos = 0, byte = 0;
    pario_file_get_position(fh, &pos);
    PT_EQ(pos, 4);
    PT_EQ(pario_file_get_byte_offset(fh, 3, &byte), PARIO_OK);
    PT_EQ(byte, 28);
    PT_EQ(pario_file_seek(fh, -5, MPI_SEEK_CUR), PARIO_ERR_ARG);
    MPI_Type_free(&ft);
    MPI_Type_free(&vec);
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    PT_CHECK(access(path, F_OK) != 0);
}

/* A filetype whose extent is smaller than the span of its data (as HDF5
 * builds for chunked datasets): two 100-byte blocks 5000 bytes apart,
 * resized to a 16-byte extent. Written collectively through several
 * aggregators whose domain boundaries fall between the blocks, every byte
 * must land (regression: a rank's entry point into a domain was computed
 * from the extent and skipped data). */
static void test_short_extent_filetype(void) {
    enum { BLK = 100, GAP = 5000 };
    const char *path = ptest_path("short-extent");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "striping_unit", "512");
    MPI_Info_set(info, "cb_buffer_size", "1024");
    char nodes[16];
    snprintf(nodes, sizeof nodes, "%d", nranks);
    MPI_Info_set(info, "cb_nodes", nodes);
    pario_file *fh = NULL;
    pario_error err;
    PT_EQ(pario_file_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, info, &fh, &err),
          PARIO_OK);
    MPI_Info_free(&info);
    int lens[2] = {BLK, BLK};
    MPI_Aint disps[2] = {0, GAP};
    MPI_Datatype blocks, ftype;
    MPI_Type_create_hindexed(2, lens, disps, MPI_BYTE, &blocks);
    MPI_Type_create_resized(blocks, 0, 16, &ftype);
    MPI_Type_commit(&ftype);
    MPI_Type_free(&blocks);
    PT_EQ(pario_file_set_view(fh, (MPI_Offset)rank * BLK, MPI_BYTE, ftype, "native", MPI_INFO_NULL),
          PARIO_OK);
    MPI_Type_free(&ftype);
    unsigned char data[2 * BLK];
    for (int i = 0; i < 2 * BLK; i++)
        data[i] = (unsigned char)(rank * 7 + i + 1);
    MPI_Count bytes = 0;
    PT_EQ(pario_file_write_at_all(fh, 0, data, 2 * BLK, MPI_BYTE, &bytes), PARIO_OK);
    PT_EQ(bytes, 2 * BLK);
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    static unsigned char img[GAP + 64 * BLK];
    int64_t n = ptest_file_image(path, img, sizeof img);
    PT_EQ(n, GAP + (int64_t)nranks * BLK);
    int ok = 1;
    for (int r = 0; r < nranks; r++)
        for (int i = 0; i < BLK; i++) {
            ok &= img[r * BLK + i] == (unsigned char)(r * 7 + i + 1);
            ok &= img[GAP + r * BLK + i] == (unsigned char)(r * 7 + BLK + i + 1);
        }
    PT_CHECK(ok);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    ptest_init();
    test_open_errors();
    test_views();
    test_short_read_and_bad_input();
    test_hints();
    test_reserved_writes();
    test_seek_end_with_view();
    test_short_extent_filetype();
    return ptest_finish();
}
