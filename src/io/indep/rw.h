/* The common path of every data-access call: checks, then the move. */
#ifndef PARIO_IO_RW_H
#define PARIO_IO_RW_H

#include "io/file/file.h"

typedef struct rw_call {
    const char *op;      /* the call's name, for messages */
    int write;
    int explicit_offset; /* offset given (else the individual pointer) */
    int shared;          /* offset taken from the shared pointer: allowed on SEQUENTIAL files */
    MPI_Offset offset;   /* in etypes, when explicit */
} rw_call;

int io_rw_independent(pario_file *fh, const rw_call *c, void *buf, MPI_Count count,
                      MPI_Datatype type, MPI_Count *bytes);
/* Collective: argument errors are agreed before any data moves. */
int io_rw_collective(pario_file *fh, const rw_call *c, void *buf, MPI_Count count,
                     MPI_Datatype type, MPI_Count *bytes);
/* The argument checks alone (mode, offset, count, datatype, whole etypes). */
int io_rw_check(pario_file *fh, const rw_call *c, MPI_Count count, MPI_Datatype type);

#endif
