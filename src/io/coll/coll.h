/* Collective data access. */
#ifndef PARIO_IO_COLL_H
#define PARIO_IO_COLL_H

#include "io/file/file.h"

/* Called by every rank of fh->comm; check is this rank's verdict on its
 * arguments (recorded in fh->last when not PARIO_OK). The verdicts travel
 * with the access ranges in one collective, so a call that is bad on any
 * rank fails on every rank before data moves. Returns the same code on every
 * rank; *moved is this rank's byte count. */
int io_coll_access(pario_file *fh, int check, int write, int64_t pos, void *buf,
                   MPI_Count count, MPI_Datatype type, int64_t *moved);

#endif
