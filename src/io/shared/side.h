/* The shared file pointer in a side file (side.c), where MPI's one-sided
 * calls do not work between the file's processes. */
#ifndef PARIO_IO_SHARED_SIDE_H
#define PARIO_IO_SHARED_SIDE_H

#include "io/file/file.h"

/* Collective on fh->comm: rank 0 makes the side file beside fh->path, every
 * rank opens it (fh->shared_fd); the outcome is agreed. */
int io_shared_side_make(pario_file *fh, pario_error *err);
/* Closes the side file; rank 0 removes it. */
void io_shared_side_free(pario_file *fh);
/* Under the file's lock: *old (may be NULL) gets the counter, which becomes
 * n (replace) or grows by n. */
int io_shared_side_update(pario_file *fh, int replace, int64_t n, int64_t *old);

#endif
