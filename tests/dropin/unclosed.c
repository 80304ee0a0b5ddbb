/* Collective writes, then the program ends without closing its file:
 * MPI_Finalize, or every rank killing itself with SIGKILL after a barrier
 * and a sleep. With "reopen", another file is written and closed first, and
 * the program sleeps before it writes the main file, which takes over the
 * window the closed file used.
 * tests/common/run_unclosed.py runs it and checks the file byte for byte
 * (its description lists the arguments). The MPI API only: it runs on the
 * system's MPI-IO, which writes at once, and on pario's drop-in, which
 * keeps such writes behind. */
#include <signal.h>
#include <time.h>
#include "dropin.h"

static void fail(const char *what) {
    fprintf(stderr, "unclosed: %s failed\n", what);
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
static MPI_File write_file(const char *path, MPI_Info info, int calls, int part, int salt) {
    int rank = dropin_rank(), nranks = dropin_size();
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh) !=
        MPI_SUCCESS)
        fail("MPI_File_open");
    unsigned char *buf = malloc((size_t)part);
    for (int j = 0; buf && j < calls; j++) {
        MPI_Offset off = ((MPI_Offset)j * nranks + rank) * part;
        ptest_pattern_fill(buf, part, off, salt);
        if (MPI_File_write_at_all(fh, off, buf, part, MPI_BYTE, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            fail("MPI_File_write_at_all");
    }
    free(buf);
    return fh;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc != 9)
        fail("usage: unclosed PATH finalize|kill CALLS PART SALT DELAY_MS SLEEP_MS fresh|reopen; "
             "parsing");
    const char *path = argv[1];
    int kill = strcmp(argv[2], "kill") == 0, calls = atoi(argv[3]), part = atoi(argv[4]);
    int salt = atoi(argv[5]);
    if (dropin_rank() == 0)
        printf("backend: %s\n", ptest_on_pario() ? "pario" : "system");
    MPI_Info info;
    MPI_Info_create(&info);
    if (atoi(argv[6]) > 0)
        MPI_Info_set(info, "pario_cb_write_behind_delay", argv[6]);
    if (strcmp(argv[8], "reopen") == 0) {
        char first[DROPIN_PATH_MAX];
        snprintf(first, sizeof first, "%s.first", path);
        MPI_File fh = write_file(first, info, calls, part, salt + 1);
        if (MPI_File_close(&fh) != MPI_SUCCESS)
            fail("MPI_File_close");
        sleep_ms(atol(argv[7])); /* meanwhile no open file has a window */
    }
    MPI_File fh = write_file(path, info, calls, part, salt);
    (void)fh; /* never closed */
    MPI_Info_free(&info);
    if (kill) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (dropin_rank() == 0)
            printf("written\n");
        fflush(stdout);
        sleep_ms(atol(argv[7]));
        raise(SIGKILL);
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
