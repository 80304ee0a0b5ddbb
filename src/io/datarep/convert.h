/* Data access through a view whose representation is not native: the user's
 * data is converted chunk by chunk in a staging buffer and moved as MPI_BYTE
 * through the ordinary entry points (see datarep.h for the rules). */
#ifndef PARIO_IO_DATAREP_CONVERT_H
#define PARIO_IO_DATAREP_CONVERT_H

#include <stdbool.h>
#include "io/indep/rw.h"

/* True when an access of `type` data on fh needs a conversion: the view's
 * representation is not native and the data is not MPI_BYTE or MPI_PACKED. */
bool io_datarep_applies(const pario_file *fh, MPI_Datatype type);

/* io_rw_independent and io_rw_collective for such accesses: same contract
 * (*bytes counts memory bytes; the individual pointer advances in etypes). */
int io_datarep_rw_independent(pario_file *fh, const rw_call *c, void *buf, MPI_Count count,
                              MPI_Datatype type, MPI_Count *bytes);
int io_datarep_rw_collective(pario_file *fh, const rw_call *c, void *buf, MPI_Count count,
                             MPI_Datatype type, MPI_Count *bytes);

#endif
