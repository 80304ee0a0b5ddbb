/* Nonblocking independent access: the checks and the file pointer update
 * happen in the call, the bytes move in a background thread of the file.
 *
 * Each open file gets one thread, started on its first nonblocking access,
 * that runs the file's requests in the order they were started. The thread
 * makes no MPI call (datatypes are decoded before the request is queued),
 * so it works at every MPI thread level. A request runs on a snapshot of the
 * file taken when it started (view, hints, handle, atomic mode) with the
 * thread's own scratch buffers and error record, so blocking calls on the
 * same file may run meanwhile. Calls that change what a snapshot points to
 * (set_view, set_size, preallocate, sync, close) first wait for the file's
 * requests. Accesses through a view that converts the data (io/datarep) run
 * inside the starting call instead. */
#ifndef PARIO_IO_ASYNC_H
#define PARIO_IO_ASYNC_H

#include "io/indep/rw.h"

/* Checks the call, advances the individual pointer by the amount requested
 * (unless an offset is given) and queues the access. On a bad argument
 * returns its code (message in fh->last) and makes no request. */
int io_rw_start(pario_file *fh, const rw_call *c, void *buf, MPI_Count count, MPI_Datatype type,
                pario_request **req);
/* Waits until every request started on fh has finished. */
void io_async_drain(pario_file *fh);
/* Drains, then ends the file's thread (close). */
void io_async_stop(pario_file *fh);

#endif
