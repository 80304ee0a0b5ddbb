/* MPI 3.1 sections 8.3.4 and 13.7: file error handlers.
 *
 * The default file handler is MPI_ERRORS_RETURN; a handler made with
 * MPI_File_create_errhandler and set on a file is called with the file
 * handle and the error code of the failing call; get_errhandler returns it;
 * call_errhandler invokes it; a handler set on MPI_FILE_NULL becomes the
 * default for files opened later and for failing opens. */
#include "conf.h"

/* What the recording handler saw: the process-local record of one test
 * program, reset before each check. */
static struct {
    int calls;
    MPI_File file;
    int code;
} seen;

static void record_error(MPI_File *fh, int *code, ...) {
    seen.calls++;
    seen.file = *fh;
    seen.code = *code;
}

static void forget_errors(void) {
    seen.calls = 0;
    seen.file = MPI_FILE_NULL;
    seen.code = MPI_SUCCESS;
}

/* get_errhandler behaves as if it made a new handler object, which the
 * caller frees (8.3). Deviation: ROMIO's MPI_File_get_errhandler takes no
 * reference, so freeing what it returns drives the count below zero and
 * MPICH aborts later; on ROMIO the returned handles are not freed. */
static void release_returned(MPI_Errhandler *eh) {
    if (!conf_romio_deviates())
        PT_MPI_OK(MPI_Errhandler_free(eh));
}

static MPI_File open_existing(const char *path, int amode) {
    MPI_File fh = MPI_FILE_NULL;
    PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh));
    return fh;
}

/* New files and MPI_FILE_NULL start with MPI_ERRORS_RETURN. */
static void check_default(const char *path) {
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    PT_MPI_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
    PT_CHECK(eh == MPI_ERRORS_RETURN);
    release_returned(&eh);
    MPI_File fh = open_existing(path, MPI_MODE_RDONLY);
    if (fh == MPI_FILE_NULL)
        return;
    PT_MPI_OK(MPI_File_get_errhandler(fh, &eh));
    PT_CHECK(eh == MPI_ERRORS_RETURN);
    release_returned(&eh);
    /* A failing call just returns its code. */
    PT_MPI_CLASS(MPI_File_seek(fh, 0, 12345), MPI_ERR_ARG);
    PT_MPI_OK(MPI_File_close(&fh));
}

/* A handler set on a file sees that file and the failing call's code. */
static void check_file_handler(const char *path, MPI_Errhandler mine) {
    MPI_File fh = open_existing(path, MPI_MODE_RDWR);
    if (fh == MPI_FILE_NULL)
        return;
    PT_MPI_OK(MPI_File_set_errhandler(fh, mine));
    MPI_Errhandler got = MPI_ERRHANDLER_NULL;
    PT_MPI_OK(MPI_File_get_errhandler(fh, &got));
    PT_CHECK(got == mine);
    release_returned(&got);

    forget_errors();
    int rc = MPI_File_seek(fh, 0, 12345);
    PT_MPI_CLASS(rc, MPI_ERR_ARG);
    PT_EQ(seen.calls, 1);
    PT_CHECK(seen.file == fh);
    PT_EQ(seen.code, rc);

    /* A successful call does not call it. */
    forget_errors();
    PT_MPI_OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    PT_EQ(seen.calls, 0);

    /* call_errhandler invokes it with the given code. */
    forget_errors();
    PT_MPI_OK(MPI_File_call_errhandler(fh, MPI_ERR_IO));
    PT_EQ(seen.calls, 1);
    PT_CHECK(seen.file == fh);
    PT_EQ(conf_class(seen.code), MPI_ERR_IO);

    /* Back to MPI_ERRORS_RETURN: no more calls. */
    PT_MPI_OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    forget_errors();
    PT_MPI_CLASS(MPI_File_seek(fh, 0, 12345), MPI_ERR_ARG);
    PT_EQ(seen.calls, 0);
    PT_MPI_OK(MPI_File_close(&fh));
}

/* The handler on MPI_FILE_NULL: inherited by files opened afterwards (not
 * by files already open), called with MPI_FILE_NULL for a failing open on
 * every rank. */
static void check_default_handler(const char *path, MPI_Errhandler mine) {
    MPI_File before = open_existing(path, MPI_MODE_RDONLY);
    PT_MPI_OK(MPI_File_set_errhandler(MPI_FILE_NULL, mine));
    MPI_Errhandler got = MPI_ERRHANDLER_NULL;
    PT_MPI_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
    PT_CHECK(got == mine);
    release_returned(&got);

    MPI_File after = open_existing(path, MPI_MODE_RDONLY);
    if (after != MPI_FILE_NULL) {
        PT_MPI_OK(MPI_File_get_errhandler(after, &got));
        PT_CHECK(got == mine);
        release_returned(&got);
        forget_errors();
        int rc = MPI_File_seek(after, 0, 12345);
        PT_EQ(seen.calls, 1);
        PT_CHECK(seen.file == after);
        PT_EQ(seen.code, rc);
        PT_MPI_OK(MPI_File_close(&after));
    }
    if (before != MPI_FILE_NULL) {
        PT_MPI_OK(MPI_File_get_errhandler(before, &got));
        PT_CHECK(got == MPI_ERRORS_RETURN);
        release_returned(&got);
        PT_MPI_OK(MPI_File_close(&before));
    }

    char missing[CONF_PATH_MAX];
    conf_path(missing, "errhandler.missing");
    conf_remove(missing);
    forget_errors();
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    PT_MPI_CLASS(rc, MPI_ERR_NO_SUCH_FILE);
    CONF_SAME_CLASS(rc);
    PT_EQ(seen.calls, 1);
    PT_CHECK(seen.file == MPI_FILE_NULL);
    PT_EQ(seen.code, rc);
    CONF_NAMES_FILE(rc, missing);

    PT_MPI_OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    forget_errors();
    rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    PT_MPI_CLASS(rc, MPI_ERR_NO_SUCH_FILE);
    PT_EQ(seen.calls, 0);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    char path[CONF_PATH_MAX];
    conf_path(path, "errhandler.dat");
    conf_put_file(path, "errhandler", 10);
    MPI_Errhandler mine;
    PT_MPI_OK(MPI_File_create_errhandler(record_error, &mine));
    check_default(path);
    check_file_handler(path, mine);
    check_default_handler(path, mine);
    MPI_Errhandler_free(&mine);
    CONF_EXPECT_IMAGE(path, "errhandler", 10);
    return ptest_finish();
}
