/* Internal interface of the MPI_File_* drop-in. */
#ifndef PARIO_MPIIO_H
#define PARIO_MPIIO_H

#include <mpi.h>
#include "pario/io.h"

/* The MPI error class for a pario error code. */
int mpiio_error_class(int code);

#endif
