/* File error handlers: MPI_File_create/set/get/call_errhandler, the handler
 * of MPI_FILE_NULL as the default for open, delete and new files, and MPI's
 * reference counting of handles returned by MPI_File_get_errhandler. */
#include "dropin.h"

/* get/free rounds on a predefined handler: enough to use up a reference
 * count that get_errhandler failed to raise. */
#define DROPIN_GET_FREE_ROUNDS 20

/* What the recording handlers saw. */
struct seen {
    int calls;
    MPI_File file;
    int code;
};
static struct seen seen_file, seen_default;

static void record(struct seen *s, MPI_File *fh, int *code) {
    s->calls++;
    s->file = *fh;
    s->code = *code;
}
static void on_file_error(MPI_File *fh, int *code, ...) {
    record(&seen_file, fh, code);
}
static void on_default_error(MPI_File *fh, int *code, ...) {
    record(&seen_default, fh, code);
}

static int error_class(int code) {
    int cls = MPI_SUCCESS;
    MPI_Error_class(code, &cls);
    return cls;
}

/* Frees a user handler returned by MPI_File_get_errhandler, which returns a
 * new reference. MPICH 4.0's own MPI-IO returns it without one (freeing it
 * trips an assertion in MPICH), so there the system's handle is not freed. */
static void free_returned(MPI_Errhandler *got) {
#ifdef MPICH_VERSION
    if (!ptest_on_pario())
        return;
#endif
    PT_MPI_OK(MPI_Errhandler_free(got));
}

/* A user handler on an open file: runs on failures with the file and code,
 * survives MPI_Errhandler_free of the creator's handle, and comes back from
 * MPI_File_get_errhandler as a handle the caller may free. */
static void check_file_handler(const char *path) {
    MPI_File fh;
    MPI_Errhandler eh, got = MPI_ERRHANDLER_NULL;
    char buf[8] = {0};
    PT_MPI_OK(MPI_File_create_errhandler(on_file_error, &eh));
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    PT_MPI_OK(MPI_File_set_errhandler(fh, eh));
    PT_MPI_OK(MPI_Errhandler_free(&eh));
    PT_MPI_OK(MPI_File_get_errhandler(fh, &got));
    PT_CHECK(got != MPI_ERRHANDLER_NULL && got != MPI_ERRORS_RETURN);
    free_returned(&got);

    memset(&seen_file, 0, sizeof seen_file);
    int rc = MPI_File_write_at(fh, 0, buf, -1, MPI_BYTE, MPI_STATUS_IGNORE);
    PT_EQ(error_class(rc), MPI_ERR_COUNT);
    PT_EQ(seen_file.calls, 1);
    PT_CHECK(seen_file.file == fh);
    PT_EQ(seen_file.code, rc);

    PT_MPI_OK(MPI_File_call_errhandler(fh, MPI_ERR_OTHER));
    PT_EQ(seen_file.calls, 2);
    PT_EQ(seen_file.code, MPI_ERR_OTHER);

    PT_MPI_OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    rc = MPI_File_write_at(fh, 0, buf, -1, MPI_BYTE, MPI_STATUS_IGNORE);
    PT_EQ(error_class(rc), MPI_ERR_COUNT);
    PT_EQ(seen_file.calls, 2);
    PT_MPI_OK(MPI_File_close(&fh));
}

/* MPI_ERRORS_RETURN is the initial default; each get returns a reference. */
static void check_default_is_return(void) {
    for (int i = 0; i < DROPIN_GET_FREE_ROUNDS; i++) {
        MPI_Errhandler d = MPI_ERRHANDLER_NULL;
        PT_MPI_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &d));
        PT_CHECK(d == MPI_ERRORS_RETURN);
        PT_MPI_OK(MPI_Errhandler_free(&d));
    }
}

/* The handler of MPI_FILE_NULL runs for failed opens and deletes, and new
 * files start with it. */
static void check_default_handler(const char *missing, const char *path) {
    MPI_Errhandler eh, got = MPI_ERRHANDLER_NULL;
    PT_MPI_OK(MPI_File_create_errhandler(on_default_error, &eh));
    PT_MPI_OK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    memset(&seen_default, 0, sizeof seen_default);

    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    PT_EQ(error_class(rc), MPI_ERR_NO_SUCH_FILE);
    PT_EQ(seen_default.calls, 1);
    PT_CHECK(seen_default.file == MPI_FILE_NULL);
    PT_EQ(seen_default.code, rc);

    rc = MPI_File_delete(missing, MPI_INFO_NULL);
    PT_EQ(error_class(rc), MPI_ERR_NO_SUCH_FILE);
    PT_EQ(seen_default.calls, 2);

    PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    PT_MPI_OK(MPI_File_get_errhandler(fh, &got));
    PT_CHECK(got == eh);
    free_returned(&got);
    char buf[4] = {0};
    rc = MPI_File_read_at(fh, 0, buf, 1, MPI_DATATYPE_NULL, MPI_STATUS_IGNORE);
    PT_EQ(error_class(rc), MPI_ERR_TYPE);
    PT_EQ(seen_default.calls, 3);
    PT_CHECK(seen_default.file == fh);
    PT_MPI_OK(MPI_File_close(&fh));

    /* pario runs the MPI_FILE_NULL handler here; Open MPI refuses MPI_FILE_NULL. */
    int before = seen_default.calls;
    if (ptest_on_pario()) {
        PT_MPI_OK(MPI_File_call_errhandler(MPI_FILE_NULL, MPI_ERR_IO));
        PT_EQ(seen_default.calls, before + 1);
        PT_EQ(seen_default.code, MPI_ERR_IO);
        before++;
    }

    PT_MPI_OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    PT_MPI_OK(MPI_Errhandler_free(&eh));
    rc = MPI_File_delete(missing, MPI_INFO_NULL);
    PT_EQ(error_class(rc), MPI_ERR_NO_SUCH_FILE);
    PT_EQ(seen_default.calls, before);
}

/* Under pario, a handle that is no file error handler is refused. */
static void check_bad_handler(const char *path) {
    if (!ptest_on_pario())
        return;
    MPI_File fh;
    PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    PT_MPI_CLASS(MPI_File_set_errhandler(fh, MPI_ERRHANDLER_NULL), MPI_ERR_ARG);
    PT_MPI_CLASS(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRHANDLER_NULL), MPI_ERR_ARG);
    MPI_Errhandler got = MPI_ERRHANDLER_NULL;
    PT_MPI_OK(MPI_File_get_errhandler(fh, &got));
    PT_CHECK(got == MPI_ERRORS_RETURN);
    PT_MPI_OK(MPI_Errhandler_free(&got));
    PT_MPI_OK(MPI_File_close(&fh));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    char path[DROPIN_PATH_MAX], missing[DROPIN_PATH_MAX];
    dropin_fresh_path(path, "handlers.dat");
    dropin_fresh_path(missing, "handlers-missing.dat");
    check_default_is_return();
    check_file_handler(path);
    check_default_handler(missing, path);
    check_bad_handler(path);
    check_default_is_return();
    return ptest_finish();
}
