/* Nonblocking independent access through the native API: requests started
 * through an interleaved view with noncontiguous memory land byte for byte;
 * the individual pointer moves by the amount requested when the call
 * starts; shared-pointer requests land every record once; argument errors
 * come back from the starting call without a request; a failure in the
 * background comes back from pario_request_wait with a message naming the
 * file; set_view and close wait for the requests started before them. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "pario/io.h"
#include "ptest.h"

/* Requests each rank starts per check. */
#define NREQ 6
/* Ints each request moves. */
#define INTS 64
/* Most ranks the image buffers are sized for. */
#define MAX_RANKS 8

static int rank, nranks;

static pario_file *open_world(const char *path, int amode) {
    pario_file *fh = NULL;
    pario_error err;
    PT_EQ(pario_file_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh, &err), PARIO_OK);
    return fh;
}

static void close_file(pario_file **fh) {
    pario_error err;
    PT_EQ(pario_file_close(fh, &err), PARIO_OK);
}

/* The first n bytes of the file at path, read with POSIX calls. */
static void read_image(const char *path, void *buf, size_t n) {
    int fd = open(path, O_RDONLY);
    PT_CHECK(fd >= 0 && pread(fd, buf, n, 0) == (ssize_t)n);
    if (fd >= 0)
        close(fd);
}

static int value(int r, int q, int i) {
    return r * 1000000 + q * 1000 + i;
}

/* Memory: every other int of a buffer twice as long. */
static MPI_Datatype every_other_int(int n) {
    MPI_Datatype t;
    MPI_Type_vector(n, 1, 2, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

static void test_view_round_trip(void) {
    const char *path = ptest_path("async-view");
    pario_file *fh = open_world(path, MPI_MODE_RDWR | MPI_MODE_CREATE);
    MPI_Datatype ft = ptest_interleaved(1, MPI_INT), mt = every_other_int(INTS);
    PT_EQ(pario_file_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL), PARIO_OK);
    static int out[NREQ][2 * INTS], in[NREQ][2 * INTS];
    pario_request *req[NREQ];
    for (int q = 0; q < NREQ; q++) {
        for (int i = 0; i < INTS; i++)
            out[q][2 * i] = value(rank, q, i);
        PT_EQ(pario_file_iwrite(fh, out[q], 1, mt, &req[q]), PARIO_OK);
        MPI_Offset pos = -1;
        pario_file_get_position(fh, &pos);
        PT_EQ(pos, (q + 1) * INTS); /* moved at the start, not at the end */
    }
    MPI_Type_free(&mt); /* a started request keeps what it needs */
    for (int q = 0; q < NREQ; q++) {
        MPI_Count bytes = -1;
        PT_EQ(pario_request_wait(req[q], &bytes, NULL), PARIO_OK);
        PT_EQ(bytes, INTS * (int)sizeof(int));
    }
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    MPI_Barrier(MPI_COMM_WORLD);
    mt = every_other_int(INTS);
    memset(in, 0, sizeof in);
    for (int q = NREQ - 1; q >= 0; q--)
        PT_EQ(pario_file_iread_at(fh, (MPI_Offset)q * INTS, in[q], 1, mt, &req[q]), PARIO_OK);
    int same = 1;
    for (int q = 0; q < NREQ; q++) {
        PT_EQ(pario_request_wait(req[q], NULL, NULL), PARIO_OK);
        for (int i = 0; i < INTS; i++)
            same &= in[q][2 * i] == value(rank, q, i) && in[q][2 * i + 1] == 0;
    }
    PT_CHECK(same);
    MPI_Type_free(&mt);
    MPI_Type_free(&ft);
    close_file(&fh);
    /* The image: int k*nranks + r is rank r's int k. */
    static int img[MAX_RANKS * NREQ * INTS];
    read_image(path, img, (size_t)nranks * NREQ * INTS * sizeof(int));
    int exact = 1;
    for (int k = 0; k < NREQ * INTS; k++)
        for (int r = 0; r < nranks; r++)
            exact &= img[k * nranks + r] == value(r, k / INTS, k % INTS);
    PT_CHECK(exact);
}

static void test_shared(void) {
    const char *path = ptest_path("async-shared");
    pario_file *fh = open_world(path, MPI_MODE_RDWR | MPI_MODE_CREATE);
    int rec[NREQ][2];
    pario_request *req[NREQ];
    for (int q = 0; q < NREQ; q++) {
        rec[q][0] = rank;
        rec[q][1] = q;
        PT_EQ(pario_file_iwrite_shared(fh, rec[q], 2, MPI_INT, &req[q]), PARIO_OK);
    }
    for (int q = 0; q < NREQ; q++)
        PT_EQ(pario_request_wait(req[q], NULL, NULL), PARIO_OK);
    close_file(&fh);
    static int img[MAX_RANKS * NREQ][2];
    int seen[MAX_RANKS][NREQ] = {{0}};
    read_image(path, img, (size_t)nranks * NREQ * sizeof img[0]);
    for (int i = 0; i < nranks * NREQ; i++)
        if (img[i][0] >= 0 && img[i][0] < nranks && img[i][1] >= 0 && img[i][1] < NREQ)
            seen[img[i][0]][img[i][1]]++;
    int once = 1;
    for (int r = 0; r < nranks; r++)
        for (int q = 0; q < NREQ; q++)
            once &= seen[r][q] == 1;
    PT_CHECK(once);
}

static void test_start_errors(void) {
    const char *path = ptest_path("async-errors");
    pario_file *fh = open_world(path, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    int v[4] = {0};
    pario_request *req = (pario_request *)&v; /* must be reset */
    PT_EQ(pario_file_iread(fh, v, 4, MPI_INT, &req), PARIO_ERR_ACCESS);
    PT_CHECK(req == NULL);
    PT_EQ(pario_file_iwrite_at(fh, -1, v, 4, MPI_INT, &req), PARIO_ERR_ARG);
    PT_CHECK(strstr(pario_file_last_error(fh)->msg, path) != NULL);
    PT_EQ(pario_file_iwrite_at(fh, 0, v, -2, MPI_INT, &req), PARIO_ERR_COUNT_ARG);
    PT_CHECK(req == NULL);
    close_file(&fh);
}

/* set_view returns only after the requests started before it have run. */
static void test_set_view_waits(void) {
    const char *path = ptest_path("async-setview");
    pario_file *fh = open_world(path, MPI_MODE_RDWR | MPI_MODE_CREATE);
    static int data[NREQ][INTS];
    pario_request *req[NREQ];
    for (int q = 0; q < NREQ; q++)
        PT_EQ(pario_file_iwrite_at(fh, (MPI_Offset)(rank * NREQ + q) * sizeof data[0], data[q],
                                   INTS, MPI_INT, &req[q]),
              PARIO_OK);
    PT_EQ(pario_file_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), PARIO_OK);
    int all_done = 1;
    for (int q = 0; q < NREQ; q++) {
        int done = 0;
        pario_request_test(req[q], &done);
        all_done &= done;
        pario_request_wait(req[q], NULL, NULL);
    }
    PT_CHECK(all_done);
    close_file(&fh);
}

static void test_background_failure(void) {
    pario_file *fh = NULL;
    pario_error err;
    if (pario_file_open(MPI_COMM_SELF, "/dev/full", MPI_MODE_WRONLY, MPI_INFO_NULL, &fh, &err) !=
        PARIO_OK)
        return;
    char data[INTS] = {1};
    pario_request *req = NULL;
    PT_EQ(pario_file_iwrite_at(fh, 0, data, INTS, MPI_BYTE, &req), PARIO_OK);
    pario_error why = {PARIO_OK, ""};
    MPI_Count bytes = -1;
    PT_EQ(pario_request_wait(req, &bytes, &why), PARIO_ERR_NO_SPACE);
    PT_EQ(why.code, PARIO_ERR_NO_SPACE);
    PT_CHECK(strstr(why.msg, "/dev/full") != NULL);
    PT_EQ(bytes, 0);
    close_file(&fh);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    PT_CHECK(nranks <= MAX_RANKS);
    if (nranks > MAX_RANKS)
        return ptest_finish();
    test_view_round_trip();
    test_shared();
    test_start_errors();
    test_set_view_waits();
    test_background_failure();
    return ptest_finish();
}
