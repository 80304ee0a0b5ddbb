/* Kept collective writes (io/coll/kept.c) when storing them fails or a
 * rank is elsewhere. Checked here:
 *   - storage fails on one rank only (RLIMIT_FSIZE, SIGXFSZ ignored: its
 *     writes past the limit fail with EFBIG, a real failing pwrite, which
 *     pario reports as PARIO_ERR_NO_SPACE), in the pieces it happens to
 *     write and in its own large part written at once: every write_all
 *     still succeeds on every rank, so a loop that stops at the first error
 *     runs to its end on every rank and nobody is left waiting; the next
 *     sync fails on every rank with the same code and message, naming the
 *     file; the bytes of the calls synced before are intact; the failure is
 *     reported once (close succeeds);
 *   - one rank held back until the others have finished all their calls
 *     (it waits for a message they send after them): the others do not
 *     wait for it forever, and after sync the file holds every rank's
 *     latest bytes. */
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "io_test.h"

/* Bytes of each small part. */
#define PART 200
/* Calls of the interleaved pattern before and after the limit is set. */
#define CALLS_BEFORE 16
#define CALLS_AFTER 64
/* The limited rank's file size limit: every write past it fails. */
#define LIMIT ((int64_t)1 << 20)
/* The limited rank's large part (written at once, being well-formed and
 * over 32 KiB), at call BIG_CALL, at 2 * LIMIT. */
#define BIG ((int64_t)64 << 10)
#define BIG_CALL 8
/* Slots of each rank's region in the held-back test; every slot is
 * written HELD_CALLS / SLOTS times, the last time with salt HELD_ROUNDS - 1. */
#define SLOTS 16
#define HELD_ROUNDS 4
#define HELD_CALLS (SLOTS * HELD_ROUNDS)

static int rank, nranks;

/* Whether the file's first len bytes are ptest_pattern_byte(i, salt). */
static int file_starts_with(const char *path, int64_t len, int salt) {
    static unsigned char img[(int64_t)SLOTS * 8 * PART + CALLS_BEFORE * 8 * PART];
    int64_t n = ptest_file_image(path, img, len);
    int ok = n == len;
    for (int64_t i = 0; ok && i < n; i++)
        ok = img[i] == ptest_pattern_byte(i, salt);
    return ok;
}

static pario_file *open_small_window(const char *path) {
    if (rank == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    /* a 4 KiB window: slices of 4096 / nranks bytes fill every few calls */
    const char *kv[] = {"cb_buffer_size", "4096", "striping_unit", "4096", NULL};
    return iot_open(path, MPI_MODE_RDWR | MPI_MODE_CREATE, kv);
}

/* Calls calls of the interleaved pattern from byte base, salt salt; call
 * j of rank r at base + (j * nranks + r) * PART. The rank `big` writes its
 * large part at call BIG_CALL instead. Stops at the first failure, as a
 * program does; returns the calls that succeeded. */
static int interleaved(pario_file *fh, int64_t base, int calls, int salt, int big) {
    static unsigned char out[BIG];
    for (int j = 0; j < calls; j++) {
        int64_t off = base + ((int64_t)j * nranks + rank) * PART, len = PART;
        if (big && j == BIG_CALL) {
            off = 2 * LIMIT;
            len = BIG;
        }
        ptest_pattern_fill(out, len, off, salt);
        if (pario_file_write_at_all(fh, off, out, (MPI_Count)len, MPI_BYTE, NULL) != PARIO_OK)
            return j;
    }
    return calls;
}

static void limit_file_size(int64_t limit, struct rlimit *old) {
    getrlimit(RLIMIT_FSIZE, old);
    struct rlimit r = *old;
    r.rlim_cur = (rlim_t)limit;
    PT_EQ(setrlimit(RLIMIT_FSIZE, &r), 0);
}

static void test_storage_fails_on_one_rank(void) {
    const char *path = ptest_path("behind-fail");
    pario_file *fh = open_small_window(path);
    PT_EQ(interleaved(fh, 0, CALLS_BEFORE, 1, 0), CALLS_BEFORE);
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    int limited = rank == nranks - 1;
    struct rlimit old;
    if (limited) {
        signal(SIGXFSZ, SIG_IGN);
        limit_file_size(LIMIT, &old);
    }
    PT_EQ(interleaved(fh, LIMIT, CALLS_AFTER, 2, limited), CALLS_AFTER);
    int rc = pario_file_sync(fh);
    const char *msg = pario_file_last_error(fh)->msg;
    PT_EQ(rc, PARIO_ERR_NO_SPACE);
    PT_CHECK(strstr(msg, path) != NULL);
    PT_CHECK(strstr(msg, "File too large") != NULL);
    PT_CHECK(iot_same_message_everywhere(msg));
    if (limited)
        setrlimit(RLIMIT_FSIZE, &old);
    PT_CHECK(file_starts_with(path, (int64_t)CALLS_BEFORE * nranks * PART, 1));
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
}

/* The last rank makes its calls only once rank 0 has made all of its own. */
static void test_rank_held_elsewhere(void) {
    const char *path = ptest_path("behind-held");
    pario_file *fh = open_small_window(path);
    int held = rank == nranks - 1;
    if (held)
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    unsigned char out[PART];
    int ok = 1;
    for (int j = 0; j < HELD_CALLS; j++) {
        int64_t off = ((int64_t)(j % SLOTS) * nranks + rank) * PART;
        ptest_pattern_fill(out, PART, off, j / SLOTS);
        ok &= pario_file_write_at_all(fh, off, out, PART, MPI_BYTE, NULL) == PARIO_OK;
    }
    PT_CHECK(ok);
    if (rank == 0)
        MPI_Send(NULL, 0, MPI_BYTE, nranks - 1, 0, MPI_COMM_WORLD);
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    PT_CHECK(file_starts_with(path, (int64_t)SLOTS * nranks * PART, HELD_ROUNDS - 1));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    test_storage_fails_on_one_rank();
    test_rank_held_elsewhere();
    return ptest_finish();
}
