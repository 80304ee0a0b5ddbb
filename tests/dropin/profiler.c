/* A minimal profiling layer in the style of Darshan: it defines
 * MPI_File_open and MPI_File_write_at, counts the calls and forwards them to
 * the PMPI_ names. Preloaded ahead of the drop-in, its PMPI_ calls must reach
 * pario. */
#include <mpi.h>

static int calls; /* calls seen by this layer (a test fixture, single-threaded) */

int dropin_profiler_calls(void) {
    return calls;
}

int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh) {
    calls++;
    return PMPI_File_open(comm, filename, amode, info, fh);
}

int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                      MPI_Datatype datatype, MPI_Status *status) {
    calls++;
    return PMPI_File_write_at(fh, offset, buf, count, datatype, status);
}
