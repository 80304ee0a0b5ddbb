/* Collective data access. */
#ifndef PARIO_IO_COLL_H
#define PARIO_IO_COLL_H

#include "io/file/file.h"

/* Called by every rank of fh->comm with arguments already checked and agreed.
 * Returns the same code on every rank; *moved is this rank's byte count. */
int io_coll_access(pario_file *fh, int write, int64_t pos, void *buf, MPI_Count count,
                   MPI_Datatype type, int64_t *moved);

#endif
