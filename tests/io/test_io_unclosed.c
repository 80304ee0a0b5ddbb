/* The native API's variant of tests/dropin/unclosed.c: collective writes,
 * then the program ends without closing its file (MPI_Finalize, or SIGKILL
 * of every rank after a barrier and a sleep). tests/common/run_unclosed.py
 * runs it and checks the file byte for byte. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "pario/io.h"

static void fail(const char *what) {
    fprintf(stderr, "test_io_unclosed: %s failed\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0)
        ;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc != 8)
        fail("usage: test_io_unclosed PATH finalize|kill CALLS PART SALT DELAY_MS SLEEP_MS; "
             "parsing");
    const char *path = argv[1];
    int kill = strcmp(argv[2], "kill") == 0, calls = atoi(argv[3]), part = atoi(argv[4]);
    int salt = atoi(argv[5]), rank = 0, nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (rank == 0)
        printf("backend: pario\n");
    MPI_Info info;
    MPI_Info_create(&info);
    if (atoi(argv[6]) > 0)
        MPI_Info_set(info, "pario_cb_write_behind_delay", argv[6]);
    pario_file *fh = NULL;
    pario_error err;
    if (pario_file_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh, &err) !=
        PARIO_OK)
        fail(err.msg);
    MPI_Info_free(&info);
    unsigned char *buf = malloc((size_t)part);
    for (int j = 0; buf && j < calls; j++) {
        int64_t off = ((int64_t)j * nranks + rank) * part;
        for (int i = 0; i < part; i++)
            buf[i] = (unsigned char)((off + i) * 7 + (off + i) / 251 + salt);
        if (pario_file_write_at_all(fh, off, buf, part, MPI_BYTE, NULL) != PARIO_OK)
            fail(pario_file_last_error(fh)->msg);
    }
    free(buf);
    if (kill) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            printf("written\n");
        fflush(stdout);
        sleep_ms(atol(argv[7]));
        raise(SIGKILL);
    }
    fflush(stdout);
    MPI_Finalize(); /* the file is never closed */
    return 0;
}
