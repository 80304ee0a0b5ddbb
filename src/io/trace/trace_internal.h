/* The trace of one file on one rank, shared by trace.c and trace_json.c. */
#ifndef PARIO_IO_TRACE_INTERNAL_H
#define PARIO_IO_TRACE_INTERNAL_H

#include <pthread.h>
#include "io/flat/flat.h"
#include "io/trace/trace.h"

struct io_trace {
    pthread_mutex_t lock; /* every field below */
    io_trace_rec rec;
    io_trace_event *events;                     /* room for cap events */
    int64_t cap;                                /* grows to IO_TRACE_EVENTS on demand */
    const flat_type *view_flat[IO_TRACE_VIEWS]; /* the views of rec.views, to know them again */
    int64_t unit;                               /* the stripe unit requests are judged against */
    char *doc_path;                             /* where the run's document goes */
};

/* Rank 0 at close: the file's merged entry joins the run's document. recs and events hold every
 * rank's (ev_bytes[r] bytes of events from rank r, back to back). */
void io_trace_write_file(const struct pario_file *fh, const io_trace *t, const io_trace_rec *recs,
                         const io_trace_event *events, const int *ev_bytes);
/* At MPI_Finalize, for a file still open: this rank's own part, unmerged,
 * into PATH.open.<world rank> (t->lock held). */
void io_trace_write_unclosed(const struct pario_file *fh, const io_trace *t);

#endif
