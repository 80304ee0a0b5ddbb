/* Error classes and error strings of failing MPI_File_* calls.
 *
 * Every failure must come back with the standard class (MPI_Error_class);
 * under pario the MPI_Error_string of the code names the file and the cause,
 * and the codes come from a bounded pool, so MPI_LASTUSEDCODE stops growing. */
#include "dropin.h"

/* Failures in a row used to check that error codes are reused. */
#define DROPIN_REPEATED_FAILURES 40

static void check_open_errors(const char *path) {
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    PT_MPI_CLASS(rc, MPI_ERR_NO_SUCH_FILE);
    PT_CHECK(fh == MPI_FILE_NULL);
    DROPIN_STRING_HAS(rc, path);

    PT_MPI_OK(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    PT_MPI_OK(MPI_File_close(&fh));
    PT_CHECK(fh == MPI_FILE_NULL);
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                       MPI_INFO_NULL, &fh);
    PT_MPI_CLASS(rc, MPI_ERR_FILE_EXISTS);
    DROPIN_STRING_HAS(rc, path);
    if (rc == MPI_SUCCESS)
        MPI_File_close(&fh);
}

static void check_argument_errors(const char *path) {
    MPI_File fh;
    char buf[16] = {0};
    PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    int rc = MPI_File_write_at(fh, 0, buf, -1, MPI_BYTE, MPI_STATUS_IGNORE);
    PT_MPI_CLASS(rc, MPI_ERR_COUNT);
    DROPIN_STRING_HAS(rc, path);
    DROPIN_STRING_HAS(rc, "-1");
    rc = MPI_File_read_at(fh, 0, buf, 4, MPI_DATATYPE_NULL, MPI_STATUS_IGNORE);
    PT_MPI_CLASS(rc, MPI_ERR_TYPE);
    DROPIN_STRING_HAS(rc, path);
    PT_MPI_CLASS(MPI_File_read(MPI_FILE_NULL, buf, 4, MPI_BYTE, MPI_STATUS_IGNORE), MPI_ERR_FILE);
    PT_MPI_OK(MPI_File_close(&fh));
}

static void check_amode_errors(const char *path) {
    MPI_File fh;
    char buf[16] = {0};
    PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    int rc = MPI_File_write_at(fh, 0, buf, 4, MPI_BYTE, MPI_STATUS_IGNORE);
    PT_CHECK(rc != MPI_SUCCESS);
    if (ptest_on_pario())
        PT_MPI_CLASS(rc, MPI_ERR_READ_ONLY);
    DROPIN_STRING_HAS(rc, path);
    PT_MPI_OK(MPI_File_close(&fh));

    PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    rc = MPI_File_read_at(fh, 0, buf, 4, MPI_BYTE, MPI_STATUS_IGNORE);
    PT_CHECK(rc != MPI_SUCCESS);
    if (ptest_on_pario())
        PT_MPI_CLASS(rc, MPI_ERR_ACCESS);
    DROPIN_STRING_HAS(rc, path);
    PT_MPI_OK(MPI_File_close(&fh));
}

static void check_delete_errors(const char *missing) {
    int rc = MPI_File_delete(missing, MPI_INFO_NULL);
    PT_MPI_CLASS(rc, MPI_ERR_NO_SUCH_FILE);
    DROPIN_STRING_HAS(rc, missing);
}

/* Shared-pointer calls fail like the others: the right class, the file
 * named, and the pointer left where it was. */
static void check_shared_errors(const char *path) {
    MPI_File fh;
    char buf[4] = {0};
    MPI_Offset pos = -1;
    PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    int rc = MPI_File_write_shared(fh, buf, 4, MPI_BYTE, MPI_STATUS_IGNORE);
    if (ptest_on_pario())
        PT_MPI_CLASS(rc, MPI_ERR_READ_ONLY);
    else /* MPICH's ROMIO answers MPI_ERR_ACCESS here */
        PT_CHECK(rc != MPI_SUCCESS);
    DROPIN_STRING_HAS(rc, path);
    PT_MPI_CLASS(MPI_File_read_shared(fh, buf, -1, MPI_BYTE, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
    if (ptest_on_pario()) { /* OMPIO answers MPI_ERR_OTHER and moves the pointer */
        PT_MPI_CLASS(MPI_File_seek_shared(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG);
        PT_MPI_OK(MPI_File_get_position_shared(fh, &pos));
        PT_EQ(pos, 0);
    }
    PT_MPI_OK(MPI_File_close(&fh));
}

static int last_used_code(void) {
    int *value = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &value, &flag);
    return flag && value ? *value : -1;
}

/* Many failures of one class: each code's string is its own failure's (read
 * right away), the class stays right, and MPI's code table stops growing. */
static void check_codes_bounded(const char *path) {
    MPI_File fh;
    char buf[4] = {0};
    PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    int before = 0, bad = 0;
    for (int i = 1; i <= DROPIN_REPEATED_FAILURES; i++) {
        if (i == DROPIN_REPEATED_FAILURES / 2)
            before = last_used_code();
        int rc = MPI_File_write_at(fh, 0, buf, -i, MPI_BYTE, MPI_STATUS_IGNORE);
        int cls = MPI_SUCCESS;
        MPI_Error_class(rc, &cls);
        char want[32], msg[MPI_MAX_ERROR_STRING];
        snprintf(want, sizeof want, "count %d", -i);
        dropin_error_string(rc, msg);
        if (cls != MPI_ERR_COUNT || (ptest_on_pario() && !strstr(msg, want)))
            bad++;
    }
    PT_EQ(bad, 0);
    PT_EQ(last_used_code(), before);
    PT_MPI_OK(MPI_File_close(&fh));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    char path[DROPIN_PATH_MAX], missing[DROPIN_PATH_MAX];
    dropin_fresh_path(path, "errors.dat");
    dropin_fresh_path(missing, "errors-missing.dat");
    check_open_errors(path);
    check_argument_errors(path);
    check_amode_errors(path);
    check_delete_errors(missing);
    check_shared_errors(path);
    check_codes_bounded(path);
    return ptest_finish();
}
