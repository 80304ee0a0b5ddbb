/* Collective data access. */
#ifndef PARIO_IO_COLL_H
#define PARIO_IO_COLL_H

#include "io/file/file.h"

/* Called by every rank of fh->comm; check is this rank's verdict on its
 * arguments (recorded in fh->last when not PARIO_OK). The verdicts travel
 * with the access ranges in one collective, so a call that is bad on any
 * rank fails on every rank before data moves. Returns the same code on every
 * rank; *moved is this rank's byte count. */
int io_coll_access(pario_file *fh, int check, int write, int64_t pos, void *buf, MPI_Count count,
                   MPI_Datatype type, int64_t *moved);

/* Entries each rank contributes to the allgather of ranges. */
enum { SHARE_RC, SHARE_FIRST, SHARE_END, SHARE_BYTES, SHARE_SPARE, SHARE_N };

/* Collective. Which ranks may aggregate (fh->cb_ranks): rank r may when its
 * index among its node's ranks is below the count cb_config_list gives its
 * host. A list naming no host of the job lets every rank. Called by open
 * and whenever the hints change. Also allocates, once per file, the
 * buffers every collective call needs for all ranks' ranges, so that no
 * call can fail on one rank alone for want of memory. */
int io_coll_place(pario_file *fh, pario_error *err);
/* Aggregators a collective call uses: cb_nodes of the ranks allowed, at most. */
int io_coll_naggr(const pario_file *fh);
/* The rank of aggregator i of n (spread evenly over the allowed ranks, so
 * over the nodes when ranks are placed node by node). */
int io_coll_aggregator(const pario_file *fh, int i, int n);

#endif
