/* Independent data access: moving bytes between user memory (any datatype)
 * and the file through the view, with contiguous fast paths, data sieving and
 * list I/O. The collective path reuses it for ranks that go independent. */
#ifndef PARIO_IO_ACCESS_H
#define PARIO_IO_ACCESS_H

#include <sys/uio.h>
#include "io/file/file.h"

/* Move count instances of type between buf and the view's data stream
 * starting at stream byte pos. *moved: bytes transferred (reads stop at end
 * of file). Failures are recorded in fh->last. */
int io_access(pario_file *fh, int write, int64_t pos, void *buf, MPI_Count count, MPI_Datatype type,
              int64_t *moved);
/* The same with the memory datatype already decoded. Makes no MPI call, so
 * it may run in a thread of its own (nonblocking access). */
int io_access_flat(pario_file *fh, int write, int64_t pos, void *buf, MPI_Count count,
                   const flat_type *mt, int64_t *moved);

/* Write niov adjacent buffers (len bytes in all) at file offset off, under
 * the byte-range lock while some rank may sieve a write (fh->sieve_writers),
 * so that its read-modify-write cannot undo these bytes. Failures are
 * recorded in err (fh->last, or the record of a thread that must not touch
 * it). */
int io_write_iov(pario_file *fh, const struct iovec *iov, int niov, int64_t off, int64_t len,
                 pario_error *err);

#endif
