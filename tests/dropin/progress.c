/* Nonblocking independent access makes progress in the background.
 *
 * The proof does not depend on timing: in atomic mode an access first takes
 * a byte-range lock over its span, and the test holds a conflicting OFD lock
 * through a descriptor of its own. MPI_File_iwrite_at must return anyway
 * (an access run inside the call would block for good; an alarm turns that
 * into a failure), MPI_Test must report it unfinished, and once the test
 * drops its lock the bytes must reach the file while the program makes no
 * MPI call at all. Also: a failure in the background (ENOSPC on /dev/full)
 * comes back from MPI_Wait with its class and a message naming the file;
 * many requests at once complete through MPI_Waitany and MPI_Testsome; a
 * request freed before it finished still writes its bytes by close; a
 * nonblocking call on a closed handle fails with MPI_ERR_FILE. */
#include "dropin.h"

#include <signal.h>
#include <time.h>

/* Bytes moved by the lock-blocked accesses. */
#define PROGRESS_BYTES 4096
/* Seconds before a blocked call counts as hung. */
#define PROGRESS_ALARM_S 60
/* Polls of the file (1 ms apart) before the background write counts as lost. */
#define PROGRESS_POLLS 20000
/* Requests in flight at once in the Waitany/Testsome check. */
#define PROGRESS_MANY 32
/* Ints per request there. */
#define PROGRESS_INTS 256

/* Take (type F_WRLCK) or drop (F_UNLCK) an OFD lock on [0, len) of fd. */
static int ofd_lock(int fd, short type, off_t len) {
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = len};
    return fcntl(fd, F_OFD_SETLK, &fl);
}

static void pattern(unsigned char *buf, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)(seed + 7 * i);
}

static void pause_1ms(void) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
}

/* Polls the file's first n bytes with pread until they equal want. */
static int lands_without_mpi(int fd, const unsigned char *want, size_t n) {
    unsigned char got[PROGRESS_BYTES];
    for (int i = 0; i < PROGRESS_POLLS; i++) {
        if (pread(fd, got, n, 0) == (ssize_t)n && memcmp(got, want, n) == 0)
            return 1;
        pause_1ms();
    }
    return 0;
}

static MPI_File open_atomic(const char *path) {
    MPI_File fh = MPI_FILE_NULL;
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    PT_MPI_OK(MPI_File_set_atomicity(fh, 1));
    return fh;
}

static void check_write_progress(const char *path) {
    MPI_File fh = open_atomic(path);
    int fd = open(path, O_RDWR);
    PT_CHECK(fd >= 0 && ofd_lock(fd, F_WRLCK, PROGRESS_BYTES) == 0);
    unsigned char data[PROGRESS_BYTES];
    pattern(data, sizeof data, 3);
    MPI_Request req = MPI_REQUEST_NULL;
    alarm(PROGRESS_ALARM_S);
    PT_MPI_OK(MPI_File_iwrite_at(fh, 0, data, PROGRESS_BYTES, MPI_BYTE, &req));
    int flag = 1;
    MPI_Status st;
    PT_MPI_OK(MPI_Test(&req, &flag, &st));
    PT_EQ(flag, 0); /* the access waits for the test's lock */
    PT_CHECK(ofd_lock(fd, F_UNLCK, PROGRESS_BYTES) == 0);
    PT_CHECK(lands_without_mpi(fd, data, sizeof data));
    PT_MPI_OK(MPI_Wait(&req, &st));
    alarm(0);
    int count = -1;
    MPI_Get_count(&st, MPI_BYTE, &count);
    PT_EQ(count, PROGRESS_BYTES);
    close(fd);
    PT_MPI_OK(MPI_File_close(&fh));
}

static void check_read_progress(const char *path) {
    MPI_File fh = open_atomic(path);
    int fd = open(path, O_RDWR);
    unsigned char want[PROGRESS_BYTES], got[PROGRESS_BYTES];
    pattern(want, sizeof want, 11);
    PT_CHECK(fd >= 0 && pwrite(fd, want, sizeof want, 0) == (ssize_t)sizeof want);
    PT_CHECK(ofd_lock(fd, F_WRLCK, PROGRESS_BYTES) == 0);
    memset(got, 0, sizeof got);
    MPI_Request req = MPI_REQUEST_NULL;
    alarm(PROGRESS_ALARM_S);
    PT_MPI_OK(MPI_File_iread_at(fh, 0, got, PROGRESS_BYTES, MPI_BYTE, &req));
    int flag = 1;
    PT_MPI_OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
    PT_EQ(flag, 0);
    PT_CHECK(ofd_lock(fd, F_UNLCK, PROGRESS_BYTES) == 0);
    MPI_Status st;
    PT_MPI_OK(MPI_Wait(&req, &st));
    alarm(0);
    PT_CHECK(memcmp(got, want, sizeof want) == 0);
    close(fd);
    PT_MPI_OK(MPI_File_close(&fh));
}

/* A request freed while blocked still lands its bytes before close returns. */
static void check_freed_request(const char *path) {
    MPI_File fh = open_atomic(path);
    int fd = open(path, O_RDWR);
    PT_CHECK(fd >= 0 && ofd_lock(fd, F_WRLCK, PROGRESS_BYTES) == 0);
    unsigned char data[PROGRESS_BYTES], got[PROGRESS_BYTES];
    pattern(data, sizeof data, 29);
    MPI_Request req = MPI_REQUEST_NULL;
    alarm(PROGRESS_ALARM_S);
    PT_MPI_OK(MPI_File_iwrite_at(fh, 0, data, PROGRESS_BYTES, MPI_BYTE, &req));
    PT_MPI_OK(MPI_Request_free(&req));
    PT_CHECK(req == MPI_REQUEST_NULL);
    PT_CHECK(ofd_lock(fd, F_UNLCK, PROGRESS_BYTES) == 0);
    PT_MPI_OK(MPI_File_close(&fh));
    alarm(0);
    PT_CHECK(pread(fd, got, sizeof got, 0) == (ssize_t)sizeof got);
    PT_CHECK(memcmp(got, data, sizeof data) == 0);
    close(fd);
}

static void check_many(const char *path) {
    MPI_File fh = MPI_FILE_NULL;
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    static int data[PROGRESS_MANY][PROGRESS_INTS], back[PROGRESS_MANY][PROGRESS_INTS];
    MPI_Request reqs[PROGRESS_MANY];
    for (int r = 0; r < PROGRESS_MANY; r++) {
        for (int i = 0; i < PROGRESS_INTS; i++)
            data[r][i] = r * 100000 + i;
        MPI_Offset at = (MPI_Offset)(PROGRESS_MANY - 1 - r) * sizeof data[0];
        PT_MPI_OK(MPI_File_iwrite_at(fh, at, data[r], PROGRESS_INTS, MPI_INT, &reqs[r]));
    }
    for (int left = PROGRESS_MANY; left > 0; left--) {
        int idx = MPI_UNDEFINED;
        MPI_Status st;
        PT_MPI_OK(MPI_Waitany(PROGRESS_MANY, reqs, &idx, &st));
        PT_CHECK(idx >= 0 && idx < PROGRESS_MANY && reqs[idx] == MPI_REQUEST_NULL);
    }
    for (int r = 0; r < PROGRESS_MANY; r++)
        PT_MPI_OK(MPI_File_iread_at(fh, (MPI_Offset)(PROGRESS_MANY - 1 - r) * sizeof data[0],
                                    back[r], PROGRESS_INTS, MPI_INT, &reqs[r]));
    int done = 0, polls = 0, idx[PROGRESS_MANY];
    MPI_Status sts[PROGRESS_MANY];
    while (done < PROGRESS_MANY && polls++ < PROGRESS_POLLS) {
        int outcount = 0;
        PT_MPI_OK(MPI_Testsome(PROGRESS_MANY, reqs, &outcount, idx, sts));
        if (outcount == MPI_UNDEFINED)
            break;
        done += outcount;
        if (outcount == 0)
            pause_1ms();
    }
    PT_EQ(done, PROGRESS_MANY);
    PT_CHECK(memcmp(back, data, sizeof data) == 0);
    PT_MPI_OK(MPI_File_close(&fh));
}

/* ENOSPC in the background reaches MPI_Wait with the class and the file. */
static void check_background_failure(void) {
    MPI_File fh = MPI_FILE_NULL;
    PT_MPI_OK(MPI_File_open(MPI_COMM_SELF, "/dev/full", MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    if (fh == MPI_FILE_NULL)
        return;
    char data[PROGRESS_BYTES] = {1};
    MPI_Request req = MPI_REQUEST_NULL;
    PT_MPI_OK(MPI_File_iwrite_at(fh, 0, data, PROGRESS_BYTES, MPI_BYTE, &req));
    MPI_Status st;
    int rc = MPI_Wait(&req, &st);
    PT_MPI_CLASS(rc, MPI_ERR_NO_SPACE);
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    PT_CHECK(strstr(msg, "/dev/full") != NULL);
    PT_MPI_OK(MPI_File_close(&fh));
}

static void check_closed_handle(const char *path) {
    MPI_File fh = MPI_FILE_NULL;
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    MPI_File stale = fh;
    PT_MPI_OK(MPI_File_close(&fh));
    int v = 1;
    MPI_Request req = MPI_REQUEST_NULL;
    PT_MPI_CLASS(MPI_File_iwrite_at(stale, 0, &v, 1, MPI_INT, &req), MPI_ERR_FILE);
    PT_MPI_CLASS(MPI_File_iread(stale, &v, 1, MPI_INT, &req), MPI_ERR_FILE);
    PT_MPI_CLASS(MPI_File_iwrite_all(MPI_FILE_NULL, &v, 1, MPI_INT, &req), MPI_ERR_FILE);
    PT_CHECK(req == MPI_REQUEST_NULL);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    char path[DROPIN_PATH_MAX];
    check_write_progress(dropin_fresh_path(path, "progress_write.dat"));
    check_read_progress(dropin_fresh_path(path, "progress_read.dat"));
    check_freed_request(dropin_fresh_path(path, "progress_freed.dat"));
    check_many(dropin_fresh_path(path, "progress_many.dat"));
    check_background_failure();
    check_closed_handle(dropin_fresh_path(path, "progress_closed.dat"));
    return ptest_finish();
}
