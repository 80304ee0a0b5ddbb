/* The native API's variant of tests/dropin/unclosed.c: collective writes,
 * then the program ends without closing its file (MPI_Finalize, or SIGKILL
 * of every rank after a barrier and a sleep); with "reopen", another file
 * is written and closed first. tests/common/run_unclosed.py runs it and
 * checks the file byte for byte. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "pario/io.h"
#include "ptest.h"

/* Longest path built here. */
#define UNCLOSED_PATH_MAX 4400

static void fail(const char *what) {
    fprintf(stderr, "test_io_unclosed: %s failed\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0)
        ;
}

/* path opened with info, and calls parts of part bytes written to it: call
 * j of rank r at (j * nranks + r) * part, byte i of the file being
 * 7 i + i / 251 + salt. */
static pario_file *write_file(const char *path, MPI_Info info, int calls, int part, int salt) {
    int rank = 0, nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    pario_file *fh = NULL;
    pario_error err;
    if (pario_file_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh, &err) !=
        PARIO_OK)
        fail(err.msg);
    unsigned char *buf = malloc((size_t)part);
    for (int j = 0; buf && j < calls; j++) {
        int64_t off = ((int64_t)j * nranks + rank) * part;
        ptest_pattern_fill(buf, part, off, salt);
        if (pario_file_write_at_all(fh, off, buf, part, MPI_BYTE, NULL) != PARIO_OK)
            fail(pario_file_last_error(fh)->msg);
    }
    free(buf);
    return fh;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc != 9)
        fail("usage: test_io_unclosed PATH finalize|kill CALLS PART SALT DELAY_MS SLEEP_MS "
             "fresh|reopen; parsing");
    const char *path = argv[1];
    int kill = strcmp(argv[2], "kill") == 0, calls = atoi(argv[3]), part = atoi(argv[4]);
    int salt = atoi(argv[5]), rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("backend: pario\n");
    MPI_Info info;
    MPI_Info_create(&info);
    if (atoi(argv[6]) > 0)
        MPI_Info_set(info, "pario_cb_write_behind_delay", argv[6]);
    if (strcmp(argv[8], "reopen") == 0) {
        char first[UNCLOSED_PATH_MAX];
        snprintf(first, sizeof first, "%s.first", path);
        pario_file *fh = write_file(first, info, calls, part, salt + 1);
        pario_error err;
        if (pario_file_close(&fh, &err) != PARIO_OK)
            fail(err.msg);
        sleep_ms(atol(argv[7])); /* meanwhile no open file has a window */
    }
    pario_file *fh = write_file(path, info, calls, part, salt);
    (void)fh; /* never closed */
    MPI_Info_free(&info);
    if (kill) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            printf("written\n");
        fflush(stdout);
        sleep_ms(atol(argv[7]));
        raise(SIGKILL);
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
