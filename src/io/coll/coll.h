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

/* The collective calls of this file per route taken, as text
 * ("kept:N,own_read:N,funnel:N,twophase:N,own_sieved:N,independent:N"),
 * the same on every rank (route.c). */
int io_coll_routes_text(const pario_file *fh, char *out, size_t len);
/* The file bytes an aggregator's two-phase cycle moves in one window, as
 * the file system and the hints decide (route.c, rule 7). */
int64_t io_coll_cycle_size(const pario_file *fh);

/* Kept collective writes (kept.c). Collective, called by every rank
 * before anything that must see the kept bytes of all ranks (sync, close,
 * set_view, set_size, set_info, set_atomicity, collective access): writes
 * every rank's kept bytes; the outcome is agreed. Nothing to do, and no
 * message, when no collective write was kept since the last flush. */
int io_coll_kept_flush(pario_file *fh);
/* The same for the writes kept on one node only (the shared window), not
 * those kept at the funnel: the funnel's own calls keep these. */
int io_coll_kept_flush_node(pario_file *fh);
/* Not collective: writes every rank's kept bytes published so far (before
 * this rank's independent accesses, get_size, a seek from the end). */
int io_coll_kept_write_own(pario_file *fh);
/* Not collective: writes every piece any rank has published, whichever
 * calls they belong to, so that every collective write completed on any
 * rank counts (get_size); the order of overlapping pieces of calls not yet
 * finished everywhere is MPI's to leave undefined. */
int io_coll_kept_write_published(pario_file *fh);
/* Collective, with nothing kept (a cb_buffer_size change, close): this
 * file's window waits with its communicator (fh->kept_idle, parked and
 * taken with it: io/file/parked.c) for the next file there, or is freed
 * when one waits already. */
void io_coll_kept_release(pario_file *fh);
/* Collective over the communicator it was made on: frees a window that
 * waited with it (NULL: nothing). */
void io_coll_kept_window_free(struct kept_window *w);
/* MPI_Finalize has begun (not collective): windows still parked are MPI's
 * to tear down. */
void io_coll_kept_finalize(void);
/* Wakes the flusher thread, starting it if need be (kept.c). */
void io_coll_flusher_poke(void);

/* Collective writes kept at the funnel (funnel_kept.c). Collective, part
 * of io_coll_kept_flush: the funnel writes its kept run, the outcome (with
 * a failure recorded since) agreed. */
int io_coll_funnel_kept_flush(pario_file *fh);
/* Not collective, part of io_coll_kept_write_own: before this rank's
 * independent access, get_size or a seek from the end, the funnel writes its
 * kept run (returning a failure recorded, which stays for the next
 * collective point); another rank waits until it is written. */
int io_coll_funnel_kept_meet(pario_file *fh);
/* How far the parts the ranks keep as their own reach in the file (0: none
 * kept): get_size counts them before they are written. */
int64_t io_coll_own_kept_end(const pario_file *fh);
/* With the file: the run (none after close's flush) and its memory. */
void io_coll_funnel_kept_free(pario_file *fh);

/* Average block size of a file view with holes under which a collective
 * write on one node is every rank's own (sieved) write rather than two-phase:
 * describing each piece to an aggregator then costs more than the piece.
 * Measured (pario bench noncontig, 4 ranks on 2 cores, MiB/s, two-phase vs
 * independent writes of the same view, cached and durable): 8 B blocks 103
 * vs 718 and 110 vs 617, 64 B 653 vs 1728 and 534 vs 597; 512 B 2005 vs 1401
 * and 845 vs 628, 4 KiB 2357 vs 1787 and 928 vs 643. */
#define COLL_TINY_BLOCK 256
/* Largest spread (filetype extent over its data bytes) for which a rank's
 * own sieved access on one node stays cheaper than two-phase: a sieving
 * rank reads (and, writing, writes back) the other ranks' bytes between its
 * own, so its traffic grows with the spread, while two-phase moves each byte
 * once. At 4 ranks (spread 4) each rank's own reads were 3.4x (4 KiB blocks)
 * to 60x (8 B) faster than two-phase; past 8 the margin for the larger
 * blocks would be gone. */
#define COLL_MAX_SPREAD 8
/* Where reads are request-bound (IO_REQUEST_BOUND_READ, io/cost), adjacent
 * pieces each smaller than this go
 * two-phase: a request then costs at least a quarter of a piece's transfer,
 * and one request for all the pieces beat one per rank by more than the
 * ranks' requests gained from running side by side. IOR strided
 * 64 KiB collective reads on the GlusterFS test bed, alternated rounds,
 * medians of 5, two-phase against each rank on its own: 2 nodes x 2 ranks
 * 241-263 against 53-110 MiB/s (OMPIO 109-199), 1 node x 4 ranks 187-189
 * against 85-119 (OMPIO 137-172). At 1 MiB pieces neither won (336 and 203
 * against 183 and 229), so they stay independent. */
#define COLL_REQUEST_BOUND_PIECE (4 * IO_REQUEST_BOUND_READ)

/* Entries each rank contributes to the allgather of ranges (SHARE_READ: the
 * outcome of a read made ahead, coll.c, or SHARE_NOT_READ). */
enum {
    SHARE_RC,
    SHARE_FIRST,
    SHARE_END,
    SHARE_BYTES,
    SHARE_SPARE,
    SHARE_READ,
    SHARE_PLAIN,
    SHARE_N
};
#define SHARE_NOT_READ (-1)

/* Collective. Which ranks may aggregate (fh->cb_ranks): rank r may when its
 * index among its node's ranks is below the count cb_config_list gives its
 * host. A list naming no host of the job lets every rank. Called by open
 * and whenever the hints change. Also allocates, once per file, the
 * buffers every collective call needs for all ranks' ranges, so that no
 * call can fail on one rank alone for want of memory. Collective only when
 * the placement under the file's cb_config_list is not parked on its
 * communicator yet (io_parked_placement); otherwise a failure is this
 * rank's alone and the caller agrees on it. */
int io_coll_place(pario_file *fh, pario_error *err);
/* Aggregators a collective call uses: cb_nodes of the ranks allowed, at most. */
int io_coll_naggr(const pario_file *fh);
/* The rank of aggregator i of n (spread evenly over the allowed ranks, so
 * over the nodes when ranks are placed node by node). */
int io_coll_aggregator(const pario_file *fh, int i, int n);

#endif
