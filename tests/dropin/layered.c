/* A profiling layer preloaded ahead of the drop-in sits on top of it: the
 * program's MPI_File_open and MPI_File_write_at go to the layer, which
 * forwards to PMPI_File_*, which are pario's; the bytes reach the file. */
#include "dropin.h"

/* Bytes written. */
#define DROPIN_LAYERED_LEN 64

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    int (*calls)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "dropin_profiler_calls");
    PT_CHECK(calls != NULL);
    PT_CHECK(ptest_on_pario());
    char path[DROPIN_PATH_MAX];
    dropin_fresh_path(path, "layered.dat");
    unsigned char out[DROPIN_LAYERED_LEN], in[DROPIN_LAYERED_LEN];
    dropin_pattern(out, sizeof out, 5);
    MPI_File fh;
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    MPI_Status st;
    PT_MPI_OK(MPI_File_write_at(fh, 0, out, DROPIN_LAYERED_LEN, MPI_BYTE, &st));
    int count = -1;
    MPI_Get_count(&st, MPI_BYTE, &count);
    PT_EQ(count, DROPIN_LAYERED_LEN);
    PT_MPI_OK(MPI_File_close(&fh));
    if (calls)
        PT_EQ(calls(), 2);
    PT_EQ(ptest_read_file(path, in, sizeof in), DROPIN_LAYERED_LEN);
    PT_CHECK(memcmp(in, out, sizeof out) == 0);
    /* The handle came from pario: an error names the file. */
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_EXCL | MPI_MODE_CREATE,
                           MPI_INFO_NULL, &fh);
    PT_CHECK(rc != MPI_SUCCESS);
    DROPIN_STRING_HAS(rc, "layered.dat");
    if (calls)
        PT_EQ(calls(), 3);
    return ptest_finish();
}
