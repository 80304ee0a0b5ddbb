/* Collective writes kept behind (io/coll/kept.c): with contiguous views on
 * one node, small collective writes wait in each rank's log until a
 * collective point writes them. Checked here, byte for byte:
 *   - interleaved 4 KiB and odd-sized parts from every rank, with contiguous
 *     and noncontiguous memory, land exactly after close;
 *   - a rank's own independent read, get_size and seek from the end see its
 *     kept bytes before any sync;
 *   - a collective read, and another rank's read after sync-barrier-sync,
 *     see every rank's kept bytes;
 *   - a later call's bytes win over an earlier call's at the same offset,
 *     also across ranks;
 *   - slices that overflow (cb_buffer_size 4 KiB, also with one rank lagging
 *     behind so that the others wait for its calls) and parts too large to
 *     keep (written at once by their rank) keep every rank's order: a large
 *     part lands over a smaller earlier one, a later small one over it;
 *   - a bad argument on one rank fails that rank only (no hang); the others'
 *     parts land. With pario_cb_write_behind=disable every rank fails;
 *   - collective reads are each rank's own (no message): the bytes and the
 *     count at end of file are right, with romio_cb_read=enable (two-phase)
 *     alike; a bad argument fails only its rank;
 *   - get_info reports the hints (pario_cb_write_behind and its delay). */
#include <string.h>
#include <unistd.h>
#include "io_test.h"

/* Calls each rank makes in the interleaved pattern. */
#define CALLS 64
/* Largest part of one call. */
#define PART_MAX 4096

static int rank, nranks;
/* This rank sleeps a little before every call (it falls behind the others). */
static int lagging;

/* Whether the file holds ptest_pattern_byte(i, salt) for every i < len and has that size. */
static int file_is(const char *path, int64_t len, int salt) {
    static unsigned char img[CALLS * PART_MAX * 8];
    int64_t n = ptest_file_image(path, img, sizeof img);
    int ok = n == len;
    for (int64_t i = 0; ok && i < n; i++)
        ok = img[i] == ptest_pattern_byte(i, salt);
    return ok;
}

/* path opened read-write with one hint (none when key is NULL). */
static pario_file *open_with(const char *path, const char *key, const char *val) {
    const char *kv[] = {key, val, NULL};
    return iot_open(path, MPI_MODE_RDWR | MPI_MODE_CREATE, kv);
}

static void fresh(const char *path) {
    if (rank == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Every rank writes CALLS parts of `part` bytes, call j of rank r at
 * (j * nranks + r) * part, from contiguous memory or through a vector type
 * that skips every other 16 bytes (noncontig). */
static void interleaved(pario_file *fh, int64_t part, int salt, int noncontig) {
    static unsigned char mem[2 * PART_MAX];
    MPI_Datatype every_other;
    MPI_Type_vector((int)(part / 16), 16, 32, MPI_BYTE, &every_other);
    MPI_Type_commit(&every_other);
    for (int64_t j = 0; j < CALLS; j++) {
        int64_t off = (j * nranks + rank) * part;
        if (lagging)
            usleep(300);
        MPI_Count bytes = 0;
        int rc;
        if (noncontig) {
            unsigned char packed[PART_MAX];
            ptest_pattern_fill(packed, part, off, salt);
            memset(mem, 0xee, sizeof mem);
            for (int64_t b = 0; b < part / 16; b++)
                memcpy(mem + 32 * b, packed + 16 * b, 16);
            rc = pario_file_write_at_all(fh, off, mem, 1, every_other, &bytes);
        } else {
            ptest_pattern_fill(mem, part, off, salt);
            rc = pario_file_write_at_all(fh, off, mem, (MPI_Count)part, MPI_BYTE, &bytes);
        }
        PT_EQ(rc, PARIO_OK);
        PT_EQ(bytes, part);
    }
    MPI_Type_free(&every_other);
}

static void test_interleaved_parts(void) {
    const char *path = ptest_path("behind-parts");
    int64_t parts[] = {4096, 4000, 48, 4096};
    for (int k = 0; k < 4; k++) {
        fresh(path);
        pario_file *fh = open_with(path, NULL, NULL);
        interleaved(fh, parts[k], 11 + k, k == 3);
        pario_error err;
        PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
        PT_CHECK(file_is(path, CALLS * nranks * parts[k], 11 + k));
    }
}

/* Kept bytes are seen by the rank's own independent read, get_size and a
 * seek from the end; by a collective read; by other ranks after sync. */
static void test_visibility(void) {
    const char *path = ptest_path("behind-visible");
    fresh(path);
    pario_file *fh = open_with(path, NULL, NULL);
    unsigned char out[100], in[100];
    int64_t off = (int64_t)rank * 100;
    ptest_pattern_fill(out, 100, off, 3);
    PT_EQ(pario_file_write_at_all(fh, off, out, 100, MPI_BYTE, NULL), PARIO_OK);
    MPI_Offset size = 0;
    PT_EQ(pario_file_get_size(fh, &size), PARIO_OK);
    PT_CHECK(size >= off + 100);
    PT_EQ(pario_file_write_at_all(fh, off + 50, out + 50, 50, MPI_BYTE, NULL), PARIO_OK);
    memset(in, 0, sizeof in);
    PT_EQ(pario_file_read_at(fh, off, in, 100, MPI_BYTE, NULL), PARIO_OK);
    PT_CHECK(memcmp(in, out, 100) == 0);
    PT_EQ(pario_file_write_at_all(fh, off, out, 100, MPI_BYTE, NULL), PARIO_OK);
    PT_EQ(pario_file_seek(fh, 0, MPI_SEEK_END), PARIO_OK);
    MPI_Offset end = 0;
    pario_file_get_position(fh, &end);
    PT_CHECK(end >= off + 100);
    /* a collective read sees every rank's kept bytes */
    static unsigned char all[8 * 100];
    PT_EQ(pario_file_write_at_all(fh, off, out, 100, MPI_BYTE, NULL), PARIO_OK);
    PT_EQ(pario_file_read_at_all(fh, 0, all, 100 * nranks, MPI_BYTE, NULL), PARIO_OK);
    int ok = 1;
    for (int64_t i = 0; i < 100 * nranks; i++)
        ok &= all[i] == ptest_pattern_byte(i, 3);
    PT_CHECK(ok);
    /* sync-barrier-sync: the next rank's part, read independently */
    PT_EQ(pario_file_write_at_all(fh, off, out, 100, MPI_BYTE, NULL), PARIO_OK);
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    MPI_Barrier(MPI_COMM_WORLD);
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    int64_t next = (int64_t)((rank + 1) % nranks) * 100;
    PT_EQ(pario_file_read_at(fh, next, in, 100, MPI_BYTE, NULL), PARIO_OK);
    ok = 1;
    for (int i = 0; i < 100; i++)
        ok &= in[i] == ptest_pattern_byte(next + i, 3);
    PT_CHECK(ok);
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    PT_CHECK(file_is(path, 100 * nranks, 3));
}

/* Call 1: rank r writes salt 1 over the part of rank r + 1; call 2: every
 * rank writes salt 2 over its own part. The later call wins everywhere. */
static void test_later_call_wins(void) {
    const char *path = ptest_path("behind-order");
    fresh(path);
    pario_file *fh = open_with(path, NULL, NULL);
    unsigned char out[64];
    int64_t mine = (int64_t)rank * 64, theirs = (int64_t)((rank + 1) % nranks) * 64;
    ptest_pattern_fill(out, 64, theirs, 1);
    PT_EQ(pario_file_write_at_all(fh, theirs, out, 64, MPI_BYTE, NULL), PARIO_OK);
    ptest_pattern_fill(out, 64, mine, 2);
    PT_EQ(pario_file_write_at_all(fh, mine, out, 64, MPI_BYTE, NULL), PARIO_OK);
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    PT_CHECK(file_is(path, 64 * nranks, 2));
}

/* A 4 KiB cb_buffer_size: logs of 4096 / nranks bytes overflow every few
 * calls and 4 KiB parts never fit; the file must still come out exact. */
static void test_small_log(void) {
    const char *path = ptest_path("behind-small");
    int64_t parts[] = {4096, 200, 200};
    for (int k = 0; k < 3; k++) {
        fresh(path);
        pario_file *fh = open_with(path, "cb_buffer_size", "4096");
        lagging = k == 2 && rank == nranks - 1; /* the others wait for it to finish calls */
        interleaved(fh, parts[k], 21 + k, 0);
        lagging = 0;
        pario_error err;
        PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
        PT_CHECK(file_is(path, CALLS * nranks * parts[k], 21 + k));
    }
}

/* Rank r's region of LARGE bytes: a small kept part, a large part over all
 * of it (written at once), then a small kept part again; the later wins. */
#define LARGE 40000
static void test_large_after_small(void) {
    const char *path = ptest_path("behind-large");
    fresh(path);
    pario_file *fh = open_with(path, NULL, NULL);
    static unsigned char out[LARGE], want[LARGE];
    int64_t at = (int64_t)rank * LARGE;
    ptest_pattern_fill(out, 100, at + 500, 1);
    PT_EQ(pario_file_write_at_all(fh, at + 500, out, 100, MPI_BYTE, NULL), PARIO_OK);
    ptest_pattern_fill(out, LARGE, at, 2);
    PT_EQ(pario_file_write_at_all(fh, at, out, LARGE, MPI_BYTE, NULL), PARIO_OK);
    memcpy(want, out, LARGE);
    ptest_pattern_fill(out, 100, at + 900, 3);
    PT_EQ(pario_file_write_at_all(fh, at + 900, out, 100, MPI_BYTE, NULL), PARIO_OK);
    memcpy(want + 900, out, 100);
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    static unsigned char img[8 * LARGE];
    PT_EQ(ptest_file_image(path, img, sizeof img), (int64_t)nranks * LARGE);
    PT_CHECK(memcmp(img + at, want, LARGE) == 0);
}

/* A negative offset on the last rank: kept, only that rank fails and names
 * the file; disabled, every rank fails. Nobody hangs either way. */
static void test_bad_argument(void) {
    const char *path = ptest_path("behind-bad");
    unsigned char out[32];
    for (int disabled = 0; disabled < 2; disabled++) {
        fresh(path);
        pario_file *fh =
            open_with(path, "pario_cb_write_behind", disabled ? "disable" : "automatic");
        int bad = nranks > 1 && rank == nranks - 1;
        int64_t off = (int64_t)rank * 32;
        ptest_pattern_fill(out, 32, off, 5);
        int rc = pario_file_write_at_all(fh, bad ? -1 : off, out, 32, MPI_BYTE, NULL);
        PT_EQ(rc, bad || (disabled && nranks > 1) ? PARIO_ERR_ARG : PARIO_OK);
        if (rc != PARIO_OK)
            PT_CHECK(strstr(pario_file_last_error(fh)->msg, path) != NULL);
        pario_error err;
        PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
        int64_t expect = disabled && nranks > 1 ? 0 : 32 * (nranks > 1 ? nranks - 1 : 1);
        PT_CHECK(file_is(path, expect, 5));
    }
}

/* Rank r reads 100 bytes at r * 60 of a file of 100 * nranks - 30 bytes:
 * every read but the last rank's is whole, the last one's stops at the end.
 * Then a negative offset on the last rank fails that rank only. */
static void test_direct_reads(void) {
    const char *path = ptest_path("behind-read");
    int64_t size = 100 * (int64_t)nranks - 30;
    static unsigned char out[800], in[100];
    for (int cb = 0; cb < 2; cb++) {
        fresh(path);
        pario_file *fh = open_with(path, "romio_cb_read", cb ? "enable" : "automatic");
        if (rank == 0) {
            ptest_pattern_fill(out, size, 0, 9);
            PT_EQ(pario_file_write_at(fh, 0, out, size, MPI_BYTE, NULL), PARIO_OK);
        }
        PT_EQ(pario_file_sync(fh), PARIO_OK);
        MPI_Barrier(MPI_COMM_WORLD);
        PT_EQ(pario_file_sync(fh), PARIO_OK);
        int64_t at = (int64_t)rank * 60, want = size - at < 100 ? size - at : 100;
        MPI_Count got = -1;
        memset(in, 0, sizeof in);
        PT_EQ(pario_file_read_at_all(fh, at, in, 100, MPI_BYTE, &got), PARIO_OK);
        PT_EQ(got, want);
        int ok = 1;
        for (int64_t i = 0; i < want; i++)
            ok &= in[i] == ptest_pattern_byte(at + i, 9);
        PT_CHECK(ok);
        /* a negative offset on the last rank: only it fails on its own read,
         * every rank fails when two-phase agrees on the arguments */
        int last = nranks > 1 && rank == nranks - 1;
        int rc = pario_file_read_at_all(fh, last ? -1 : 0, in, 10, MPI_BYTE, &got);
        PT_EQ(rc, last || (cb && nranks > 1) ? PARIO_ERR_ARG : PARIO_OK);
        pario_error err;
        PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    }
}

static void test_hint_reported(void) {
    pario_file *fh = open_with(ptest_path("behind-hint"), "pario_cb_write_behind", "disable");
    PT_CHECK(iot_hint_is(fh, "pario_cb_write_behind", "disable"));
    PT_CHECK(iot_hint_is(fh, "pario_cb_write_behind_delay", "1000"));
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    fh = open_with(ptest_path("behind-hint"), "pario_cb_write_behind_delay", "250");
    PT_CHECK(iot_hint_is(fh, "pario_cb_write_behind_delay", "250"));
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    test_interleaved_parts();
    test_visibility();
    test_later_call_wins();
    test_small_log();
    test_large_after_small();
    test_bad_argument();
    test_direct_reads();
    test_hint_reported();
    return ptest_finish();
}
