/* MPI_ERRORS_ARE_FATAL on a file aborts the program when a call on the file
 * fails: the test passes when the abort message appears and "NOT ABORTED"
 * (printed if the failing call returns) does not. Under pario the message
 * names the file. */
#include "dropin.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    char path[DROPIN_PATH_MAX];
    dropin_fresh_path(path, "fatal.dat");
    MPI_File fh;
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    PT_MPI_OK(MPI_File_set_errhandler(fh, MPI_ERRORS_ARE_FATAL));
    char buf[4] = {0};
    MPI_File_write_at(fh, 0, buf, -1, MPI_BYTE, MPI_STATUS_IGNORE);
    printf("NOT ABORTED\n");
    fflush(stdout);
    MPI_File_close(&fh);
    return ptest_finish();
}
