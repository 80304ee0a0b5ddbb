/* The stripe driver through the native API: where the bytes land (read back
 * from the objects with plain POSIX), the layout found again without hints,
 * sizes, holes, sieving, atomic mode, the shared pointer, delete, and clear
 * errors for bad layouts. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "io_test.h"

enum { UNIT = 1000, FACTOR = 3, PER_RANK = 3500, BIG = 1 << 16 };
static int rank, nranks;
static char targets[3 * 4400];

static unsigned char byte_at(int64_t off) {
    return ptest_pattern_byte(off, 5);
}

/* Rank 0: the logical image through the tests' own reader (stripe_image.h). */
static long long logical_image(const char *path, unsigned char *buf, size_t cap, int *striped) {
    return stripe_image_of(path, buf, cap, striped);
}

/* Every rank writes its PER_RANK bytes collectively; rank 0 checks where they went. */
static void test_placement(const char *path) {
    char unit[16], factor[16];
    snprintf(unit, sizeof unit, "%d", UNIT);
    snprintf(factor, sizeof factor, "%d", FACTOR);
    const char *kv[] = {"striping_unit", unit, "striping_factor", factor, "pario_stripe_targets",
                        targets,         NULL};
    pario_file *fh = iot_open(path, MPI_MODE_CREATE | MPI_MODE_RDWR, kv);
    if (!fh)
        return;
    static unsigned char mine[PER_RANK];
    int64_t at = (int64_t)rank * PER_RANK;
    ptest_pattern_fill(mine, PER_RANK, at, 5);
    MPI_Count st = 0;
    PT_EQ(pario_file_write_at_all(fh, at, mine, PER_RANK, MPI_BYTE, &st), PARIO_OK);
    PT_CHECK(iot_hint_is(fh, "striping_unit", unit));
    PT_CHECK(iot_hint_is(fh, "striping_factor", factor));
    PT_EQ(pario_file_close(&fh, NULL), PARIO_OK);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0)
        return;
    /* Each object holds exactly the stripes s with s % FACTOR == its index, in order. */
    stripe_image s;
    PT_CHECK(stripe_image_layout(path, &s));
    PT_EQ(s.unit, UNIT);
    PT_EQ(s.factor, FACTOR);
    int64_t total = (int64_t)nranks * PER_RANK;
    for (int i = 0; i < FACTOR; i++) {
        static unsigned char obj[BIG];
        int fd = open(s.paths[i], O_RDONLY);
        PT_CHECK(fd >= 0);
        ssize_t n = fd >= 0 ? pread(fd, obj, sizeof obj, 0) : -1;
        if (fd >= 0)
            close(fd);
        int64_t want = 0, bad = 0;
        for (int64_t b = 0; b < total; b++)
            if (b / UNIT % FACTOR == i) {
                bad += want >= n || obj[want] != byte_at(b);
                want++;
            }
        PT_EQ(n, want);
        PT_EQ(bad, 0);
    }
}

/* Opened again without hints: the record gives the layout; sizes and holes. */
static void test_reopen_and_sizes(const char *path) {
    const char *none[] = {NULL};
    pario_file *fh = iot_open(path, MPI_MODE_RDWR, none);
    if (!fh)
        return;
    PT_CHECK(iot_hint_is(fh, "striping_unit", "1000"));
    PT_CHECK(iot_hint_is(fh, "striping_factor", "3"));
    MPI_Offset size = 0;
    PT_EQ(pario_file_get_size(fh, &size), PARIO_OK);
    PT_EQ(size, (MPI_Offset)nranks * PER_RANK);
    static unsigned char got[BIG];
    MPI_Count st = 0;
    PT_EQ(pario_file_read_at_all(fh, 0, got, (int)size, MPI_BYTE, &st), PARIO_OK);
    PT_EQ(st, size);
    int bad = 0;
    for (MPI_Offset b = 0; b < size; b++)
        bad += got[b] != byte_at(b);
    PT_EQ(bad, 0);
    /* Cut inside a stripe, then grown: the cut bytes read as zeros. */
    PT_EQ(pario_file_set_size(fh, 2500), PARIO_OK);
    PT_EQ(pario_file_get_size(fh, &size), PARIO_OK);
    PT_EQ(size, 2500);
    PT_EQ(pario_file_set_size(fh, 7777), PARIO_OK);
    PT_EQ(pario_file_get_size(fh, &size), PARIO_OK);
    PT_EQ(size, 7777);
    PT_EQ(pario_file_read_at(fh, 0, got, 8000, MPI_BYTE, &st), PARIO_OK);
    PT_EQ(st, 7777);
    bad = 0;
    for (int b = 0; b < 7777; b++)
        bad += got[b] != (b < 2500 ? byte_at(b) : 0);
    PT_EQ(bad, 0);
    /* preallocate grows, keeps the bytes. */
    PT_EQ(pario_file_preallocate(fh, 20001), PARIO_OK);
    PT_EQ(pario_file_get_size(fh, &size), PARIO_OK);
    PT_EQ(size, 20001);
    MPI_Barrier(MPI_COMM_WORLD); /* every rank asked before rank 0 writes on */
    /* A write far past the end leaves a hole that reads as zeros. */
    if (rank == 0)
        PT_EQ(pario_file_write_at(fh, 50000, "tail", 4, MPI_BYTE, &st), PARIO_OK);
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    PT_EQ(pario_file_get_size(fh, &size), PARIO_OK);
    PT_EQ(size, 50004);
    PT_EQ(pario_file_read_at(fh, 49000, got, 2000, MPI_BYTE, &st), PARIO_OK);
    PT_EQ(st, 1004);
    bad = memcmp(got + 1000, "tail", 4) != 0;
    for (int b = 0; b < 1000; b++)
        bad += got[b] != 0;
    PT_EQ(bad, 0);
    PT_EQ(pario_file_close(&fh, NULL), PARIO_OK);
    if (rank == 0) {
        int striped = 0;
        PT_EQ(logical_image(path, got, sizeof got, &striped), 50004);
        PT_CHECK(striped && memcmp(got + 50000, "tail", 4) == 0 && got[2500] == 0);
    }
}

/* Interleaved views of 7-byte blocks: sieved independent writes (locks on
 * the record) and collective ones, then atomic mode and the shared pointer. */
static void test_views_atomic_shared(const char *path) {
    char unit[16];
    snprintf(unit, sizeof unit, "%d", 4096);
    const char *kv[] = {"striping_unit", unit, "pario_stripe_targets", targets, "romio_ds_write",
                        "enable",        NULL};
    pario_file *fh = iot_open(path, MPI_MODE_CREATE | MPI_MODE_RDWR, kv);
    if (!fh)
        return;
    PT_CHECK(iot_hint_is(fh, "striping_factor", "3")); /* one object per target */
    MPI_Datatype ft = ptest_interleaved(7, MPI_BYTE);
    PT_EQ(pario_file_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL), PARIO_OK);
    enum { N = 7 * 900 };
    static unsigned char buf[N], got[N * 8];
    memset(buf, 'a' + rank, N);
    MPI_Count st = 0;
    PT_EQ(pario_file_write_at(fh, 0, buf, N / 2, MPI_BYTE, &st), PARIO_OK);
    PT_EQ(pario_file_write_at_all(fh, N / 2, buf, N - N / 2, MPI_BYTE, &st), PARIO_OK);
    PT_EQ(pario_file_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), PARIO_OK);
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    PT_EQ(pario_file_read_at_all(fh, 0, got, N * nranks, MPI_BYTE, &st), PARIO_OK);
    int bad = 0;
    for (int b = 0; b < N * nranks; b++)
        bad += got[b] != 'a' + b / 7 % nranks;
    PT_EQ(bad, 0);
    /* Atomic mode and ordered writes through the shared pointer, after the data. */
    PT_EQ(pario_file_set_atomicity(fh, 1), PARIO_OK);
    PT_EQ(pario_file_seek_shared(fh, (MPI_Offset)N * nranks, MPI_SEEK_SET), PARIO_OK);
    char rec[10];
    memset(rec, '0' + rank, sizeof rec);
    PT_EQ(pario_file_write_ordered(fh, rec, sizeof rec, MPI_BYTE, &st), PARIO_OK);
    PT_EQ(pario_file_set_atomicity(fh, 0), PARIO_OK);
    PT_EQ(pario_file_close(&fh, NULL), PARIO_OK);
    MPI_Type_free(&ft);
    if (rank == 0) {
        int striped = 0;
        long long n = logical_image(path, got, sizeof got, &striped);
        PT_CHECK(striped);
        PT_EQ(n, (long long)N * nranks + 10 * nranks);
        bad = 0;
        for (int r = 0; r < nranks; r++)
            for (int k = 0; k < 10; k++)
                bad += got[N * nranks + 10 * r + k] != '0' + r;
        PT_EQ(bad, 0);
    }
}

/* delete removes the objects and the record. */
static void test_delete(const char *path) {
    stripe_image s;
    int had = rank == 0 && stripe_image_layout(path, &s);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        PT_CHECK(had);
        PT_EQ(pario_file_delete(path, MPI_INFO_NULL, NULL), PARIO_OK);
        PT_CHECK(access(path, F_OK) != 0);
        for (int i = 0; had && i < s.factor; i++)
            PT_CHECK(access(s.paths[i], F_OK) != 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* The path of object i in the layout record at path (rank 0 reads it). */
static void object_path(const char *path, int i, char *out, size_t cap) {
    char rec[16384] = "";
    int fd = open(path, O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, rec, sizeof rec - 1) : -1;
    if (fd >= 0)
        close(fd);
    rec[n > 0 ? n : 0] = '\0';
    out[0] = '\0';
    const char *at = rec;
    for (int k = 0; (at = strstr(at, "object ")) != NULL; k++, at++)
        if (k == i) {
            size_t len = strcspn(at + 7, "\n");
            snprintf(out, cap, "%.*s", (int)(len < cap ? len : cap - 1), at + 7);
        }
}

/* A striped open that fails at its second object (a directory stands where
 * it goes): the first object and the record it made go again. */
static void test_failed_open_leaves_nothing(void) {
    const char *path = ptest_path("half-made");
    const char *kv[] = {"striping_factor", "2", "pario_stripe_targets", targets, NULL};
    char first[4400] = "", second[4400] = "";
    pario_file *fh = iot_open(path, MPI_MODE_CREATE | MPI_MODE_WRONLY, kv);
    if (fh)
        PT_EQ(pario_file_close(&fh, NULL), PARIO_OK);
    if (rank == 0) {
        object_path(path, 0, first, sizeof first);
        object_path(path, 1, second, sizeof second);
        PT_CHECK(first[0] && second[0]);
        pario_error derr;
        PT_EQ(pario_file_delete(path, MPI_INFO_NULL, &derr), PARIO_OK);
        PT_EQ(mkdir(second, 0755), 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Info info;
    MPI_Info_create(&info);
    for (const char *const *k = kv; k[0]; k += 2)
        MPI_Info_set(info, k[0], k[1]);
    pario_error err;
    int rc =
        pario_file_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh, &err);
    MPI_Info_free(&info);
    PT_CHECK(rc != PARIO_OK);
    if (rank == 0) {
        PT_CHECK(access(path, F_OK) != 0);
        PT_CHECK(access(first, F_OK) != 0);
        rmdir(second);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* A new striped file without targets, and a target that is no directory:
 * every rank gets the error naming the file and the cause; nothing stays. */
static void test_bad_layouts(void) {
    char named[4500];
    snprintf(named, sizeof named, "stripe:%s", ptest_path("no-targets"));
    pario_file *fh = NULL;
    pario_error err;
    int rc = pario_file_open(MPI_COMM_WORLD, named, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                             &fh, &err);
    PT_EQ(rc, PARIO_ERR_ARG);
    PT_CHECK(strstr(err.msg, ptest_path("no-targets")) && strstr(err.msg, "stripe targets"));
    PT_CHECK(access(ptest_path("no-targets"), F_OK) != 0);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "pario_stripe_targets", ptest_path("missing-dir"));
    rc = pario_file_open(MPI_COMM_WORLD, ptest_path("bad-target"), MPI_MODE_CREATE | MPI_MODE_RDWR,
                         info, &fh, &err);
    MPI_Info_free(&info);
    PT_EQ(rc, PARIO_ERR_NO_SUCH_FILE);
    PT_CHECK(strstr(err.msg, "missing-dir") && strstr(err.msg, "stripe target"));
    PT_CHECK(access(ptest_path("bad-target"), F_OK) != 0);
    test_failed_open_leaves_nothing();
}

/* An existing plain file stays plain whatever the hints: its bytes unchanged. */
static void test_plain_stays_plain(void) {
    const char *path = ptest_path("plain");
    if (rank == 0) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        PT_CHECK(fd >= 0 && write(fd, "plain bytes", 11) == 11);
        if (fd >= 0)
            close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const char *kv[] = {"pario_stripe_targets", targets, NULL};
    pario_file *fh = iot_open(path, MPI_MODE_CREATE | MPI_MODE_RDWR, kv);
    if (fh)
        PT_EQ(pario_file_close(&fh, NULL), PARIO_OK);
    if (rank == 0) {
        char got[32] = "";
        int fd = open(path, O_RDONLY);
        PT_EQ(fd >= 0 ? read(fd, got, sizeof got) : -1, 11);
        PT_CHECK(memcmp(got, "plain bytes", 11) == 0);
        if (fd >= 0)
            close(fd);
    }
}

/* A target list longer than an info value may be (MPI_MAX_INFO_VAL, 256 in
 * Open MPI; given by $PARIO_STRIPE_TARGETS, which pario takes up to 1023
 * characters): the file is striped over it, get_info leaves the list out
 * instead of failing inside MPI (an MPI_Info_set of a longer value is fatal
 * in Open MPI), and a reopen finds the layout. Where an info value may be
 * as long as the list (MPICH: 1024), get_info reports it whole. The list
 * names the same directories with "/." repeated. */
static void test_long_target_list(void) {
    const char *path = ptest_path("longlist");
    if (rank == 0)
        unlink(path);
    size_t want = MPI_MAX_INFO_VAL + 64 < 1000 ? MPI_MAX_INFO_VAL + 64 : 1000;
    size_t base = strlen(targets);
    int pad = base < want ? (int)((want - base) / (2 * FACTOR)) + 1 : 0;
    static char list[3 * 4400 + 1024];
    list[0] = '\0';
    const char *from = targets;
    for (int i = 0; i < FACTOR; i++) {
        const char *comma = strchr(from, ',');
        size_t len = comma ? (size_t)(comma - from) : strlen(from);
        size_t at = strlen(list);
        memcpy(list + at, from, len);
        list[at + len] = '\0';
        for (int k = 0; k < pad; k++)
            strcat(list, "/.");
        if (comma)
            strcat(list, ",");
        from = comma ? comma + 1 : from + len;
    }
    int fits = strlen(list) < MPI_MAX_INFO_VAL;
    PT_CHECK(strlen(list) < 1024 && (fits || strlen(list) > MPI_MAX_INFO_VAL));
    setenv("PARIO_STRIPE_TARGETS", list, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    const char *kv[] = {"striping_factor", "3", "striping_unit", "1000", NULL};
    pario_file *fh = iot_open(path, MPI_MODE_CREATE | MPI_MODE_RDWR, kv);
    unsetenv("PARIO_STRIPE_TARGETS");
    if (!fh)
        return;
    MPI_Info info;
    PT_EQ(pario_file_get_info(fh, &info), PARIO_OK);
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = !fits;
    MPI_Info_get(info, "pario_stripe_targets", MPI_MAX_INFO_VAL, v, &flag);
    PT_EQ(flag, fits);
    if (fits && flag)
        PT_CHECK(strcmp(v, list) == 0);
    MPI_Info_get(info, "striping_factor", MPI_MAX_INFO_VAL, v, &flag);
    PT_CHECK(flag && strcmp(v, "3") == 0);
    MPI_Info_free(&info);
    static unsigned char mine[PER_RANK], back[PER_RANK];
    int64_t at = (int64_t)rank * PER_RANK;
    ptest_pattern_fill(mine, PER_RANK, at, 5);
    PT_EQ(pario_file_write_at_all(fh, at, mine, PER_RANK, MPI_BYTE, NULL), PARIO_OK);
    PT_EQ(pario_file_close(&fh, NULL), PARIO_OK);
    fh = iot_open(path, MPI_MODE_RDONLY, (const char *const[]){NULL});
    if (!fh)
        return;
    PT_CHECK(iot_hint_is(fh, "striping_factor", "3"));
    PT_EQ(pario_file_read_at_all(fh, at, back, PER_RANK, MPI_BYTE, NULL), PARIO_OK);
    PT_CHECK(memcmp(mine, back, PER_RANK) == 0);
    PT_EQ(pario_file_close(&fh, NULL), PARIO_OK);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    iot_stripe_targets("t", FACTOR, targets, sizeof targets);
    char path[4400];
    snprintf(path, sizeof path, "%s", ptest_path("striped"));
    if (rank == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    test_placement(path);
    test_reopen_and_sizes(path);
    test_delete(path);
    snprintf(path, sizeof path, "%s", ptest_path("views"));
    test_views_atomic_shared(path);
    test_delete(path);
    test_bad_layouts();
    test_plain_stays_plain();
    test_long_target_list();
    return ptest_finish();
}
