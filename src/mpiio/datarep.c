/* MPI_Register_datarep (and MPI 4's MPI_Register_datarep_c, under an MPI 4
 * library): user data representations, kept in pario's
 * process-wide registry (io/datarep/registry.c, guarded by its own mutex).
 * Failures are reported through the error handler of MPI_FILE_NULL, as for
 * other I/O calls made without a file. */
#include "mpiio/mpiio.h"

/* MPI_SUCCESS, or rc reported through the handler of MPI_FILE_NULL. */
static int registered(const char *fname, int rc, const pario_error *err) {
    if (rc == PARIO_OK)
        return MPI_SUCCESS;
    return mpiio_fail(NULL, fname, mpiio_error_class(rc), "%s", err->msg);
}

int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                          MPI_Datarep_conversion_function *write_conversion_fn,
                          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state) {
    pario_error err;
    int rc = pario_register_datarep(datarep, read_conversion_fn, write_conversion_fn,
                                    dtype_file_extent_fn, extra_state, &err);
    return registered("MPI_Register_datarep", rc, &err);
}
MPIIO_ALIAS(MPI_Register_datarep);

#if MPI_VERSION >= 4
int PMPI_Register_datarep_c(const char *datarep,
                            MPI_Datarep_conversion_function_c *read_conversion_fn,
                            MPI_Datarep_conversion_function_c *write_conversion_fn,
                            MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state) {
    pario_error err;
    int rc = pario_register_datarep_c(datarep, read_conversion_fn, write_conversion_fn,
                                      dtype_file_extent_fn, extra_state, &err);
    return registered("MPI_Register_datarep_c", rc, &err);
}
MPIIO_ALIAS(MPI_Register_datarep_c);
#endif
