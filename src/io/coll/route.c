/* Which way a collective call goes. Each rule below is a test on state all
 * ranks share, tried in order; the first that holds decides. The figures
 * that justify each rule were measured with `pario bench` (4 ranks on a
 * 2-core machine, local ext4, medians; docs/benchmarks.md has the tables).
 * Where a rule has not been judged on a network file system yet, it says
 * so. */
#include "io/coll/route.h"

#include <stdio.h>
#include "io/cache/cache.h"
#include "io/coll/coll_internal.h"

_Static_assert(COLL_ROUTES <= IO_COLL_ROUTES_MAX, "pario_file counts every route");

/* Rule 1, kept writes: every rank's view is one extent per call in a
 * regular file, all ranks share one node's page cache, not atomic mode, and
 * the hints leave the choice to pario. Aggregating could only cut system
 * calls there, and a message round costs every call its synchronisation:
 * IOR strided 4 KiB collective writes 762 -> 2259-2716 MiB/s, 47,008-byte
 * records 1844 -> 3067-3228 (kept.c has the window's own figures). */
static int kept_applies(const pario_file *fh) {
    return fh->nranks > 1 && fh->nnodes == 1 && fh->plain_views && !fh->atomic &&
           !(fh->amode & MPI_MODE_RDONLY) && fh->hints.cb_write == IO_AUTOMATIC &&
           fh->hints.cb_write_behind != IO_DISABLE && fh->nranks <= COLL_KEPT_MAX_RANKS &&
           !fh->kept_failed && !io_cache_on(&fh->io);
}

/* Rule 2, each rank's own read: all ranks share one node's page cache, so
 * aggregating could only trade copies for fewer system calls, and each rank
 * reading its own blocks (sieved when that pays) moves each byte once.
 * Measured (noncontig and coll3d, cached, two-phase vs own reads of the same
 * views): 8 B blocks interleaved 113 vs 7156 MiB/s, 64 B 720 vs 10465, 4 KiB
 * 4120 vs 14196; the 3-D array 6340 vs 15186; from the device (durable), 8 B
 * 118 vs 1018, 4 KiB 922 vs 1098, the array 1609 vs 2319. Views spreading
 * their data thinner than COLL_MAX_SPREAD would make each rank read the
 * others' bytes many times over; romio_cb_read=enable and atomic mode keep
 * two-phase reads. Not where read calls are request-bound (a network file
 * system, whose client the node's ranks share): there the ranges are
 * gathered and the rules after them decide, as across nodes. On the
 * GlusterFS test bed, 4 ranks on one client, IOR collective reads, MiB/s of
 * two alternated rounds, own reads against two-phase: strided 4 KiB 25-34
 * against 45-50 (small adjacent pieces: two-phase, coll_route_by_ranges
 * below), segmented 1 MiB 421-436 against 176-275 (large pieces:
 * independent, as own reads), strided 64 KiB 267-270 against 166-182,
 * ior-hard 178-301 against 195-201. Strided 64 KiB pieces now go two-phase
 * (COLL_REQUEST_BOUND_PIECE: a later day's runs on one client gave
 * two-phase 187-189 against 85-119 for each rank's read with the ranges
 * gathered); against own reads they were not measured again. */
static int own_read_applies(const pario_file *fh) {
    return fh->nranks > 1 && fh->nnodes == 1 && !fh->atomic && fh->dense_views &&
           fh->hints.cb_read == IO_AUTOMATIC && !fh->request_bound_reads;
}

/* Rule 3, the small-write funnel: every rank sends rank 0 its verdict and
 * range, and the data of a small part, in one message; when all parts are
 * small rank 0 writes them itself. Two rounds of point-to-point messages
 * replace the allgather of ranges, each rank's own pwrite and the agreement
 * on the outcome (writes of one file take its inode lock in turn anyway;
 * where write calls are request-bound the funnel writes only adjacent parts
 * and leaves parts apart to their ranks: small.c, funnel_writes). At most
 * COLL_SMALL_MAX_RANKS ranks: rank 0 answers each one. */
static int funnel_applies(const pario_file *fh) {
    return fh->hints.cb_write == IO_AUTOMATIC && !fh->atomic && fh->nranks > 1 &&
           fh->nranks <= COLL_SMALL_MAX_RANKS;
}

/* Rule 6, reading once per node by the pattern (seed 001: every task reads
 * the same input). Where read calls are request-bound (a network file
 * system: each rank's own read is a round trip to the servers), ranks share
 * nodes, the file is read-only and pario_read_once is left automatic, the
 * first collective read whose ranks all ask the same contiguous bytes turns
 * on what pario_read_once=enable does at open (io/cache/once.c): from then
 * on each node reads the file once into shared memory and its ranks copy
 * from there, for collective and independent reads alike. It is judged on
 * one call per file, and taken only where those bytes are 1 MiB or more, or
 * at least half of a smaller file (io_cache_attach_once): the copy is
 * loaded in pieces as reads ask for them, so a program that reads its input
 * in 1 MiB collective calls gets it from the first call on, while a header
 * every rank reads says nothing about the rest of the file. */
int coll_read_once_applies(const pario_file *fh, int write, const coll_range *all) {
    if (write || fh->once_judged || !(fh->amode & MPI_MODE_RDONLY) ||
        fh->hints.read_once != IO_AUTOMATIC || !fh->request_bound_reads ||
        fh->nnodes >= fh->nranks || io_cache_on(&fh->io) || io_cache_once_on(&fh->io))
        return 0;
    const coll_range *a = &all[0];
    if (a->bytes <= 0 || a->bytes != a->end - a->first)
        return 0;
    for (int r = 1; r < fh->nranks; r++)
        if (all[r].first != a->first || all[r].end != a->end || all[r].bytes != a->bytes)
            return 0;
    return 1;
}

coll_route coll_route_first(const pario_file *fh, int write) {
    if (write && kept_applies(fh))
        return COLL_ROUTE_KEPT;
    if (!write && own_read_applies(fh)) /* from the node's copy where the file has one */
        return io_cache_once_on(&fh->io) ? COLL_ROUTE_NODE_COPY : COLL_ROUTE_OWN_READ;
    if (write && funnel_applies(fh))
        return COLL_ROUTE_FUNNEL;
    return COLL_ROUTE_BY_RANGES;
}

/* Once the ranges are known:
 * - Reads through a node's copy (reading once per node) are each rank's
 *   own copy of its bytes from shared memory, whatever the hints.
 * - romio_cb_* disable, and atomic mode (locked independent access), go
 *   independent; one rank has nobody to combine with; neither can views
 *   with overlapping blocks (read-only files): two-phase places a rank's
 *   data by file offset, which such a view does not map to one position.
 *   So do calls over the global cache (io/cache): each rank's pieces go to
 *   their pages' owners, which is the aggregation, and the cache's RMA
 *   stays in this thread.
 * - romio_cb_* enable asks for two-phase.
 * - Rule 4, own sieved writes: on one node, views with holes whose blocks
 *   all average under COLL_TINY_BLOCK (and spread at most COLL_MAX_SPREAD)
 *   are written by each rank's own sieving write: describing each piece to
 *   an aggregator costs more than the piece (8 B blocks 103 vs 718 MiB/s,
 *   64 B 653 vs 1728; coll.h has the rest).
 * - Otherwise two-phase where ranges overlap or interleave, or some rank's
 *   access has holes; ranks with disjoint contiguous ranges go on their
 *   own, unless reads are request-bound on the file system
 *   (IO_REQUEST_BOUND_READ) and the pieces adjacent and smaller than
 *   COLL_REQUEST_BOUND_PIECE: then one aggregator's request replaces one
 *   per rank. */
coll_route coll_route_by_ranges(const pario_file *fh, int write, const coll_range *all) {
    io_switch sw = write ? fh->hints.cb_write : fh->hints.cb_read;
    if (!write && io_cache_once_on(&fh->io))
        return COLL_ROUTE_NODE_COPY;
    if (sw == IO_DISABLE || fh->atomic || fh->nranks == 1 || fh->overlapping_views ||
        io_cache_on(&fh->io))
        return COLL_ROUTE_INDEPENDENT;
    if (sw == IO_ENABLE)
        return COLL_ROUTE_TWOPHASE;
    if (write && fh->nnodes == 1 && fh->tiny_holes && fh->dense_views)
        return COLL_ROUTE_OWN_SIEVED;
    coll_shape sh = coll_ranges_shape(all, fh->nranks);
    if (sh.interleaved || sh.holes) /* aggregators then read or write whole runs */
        return COLL_ROUTE_TWOPHASE;
    if (!write && fh->request_bound_reads && sh.adjacent && sh.largest < COLL_REQUEST_BOUND_PIECE)
        return COLL_ROUTE_TWOPHASE;
    return COLL_ROUTE_INDEPENDENT;
}

/* Rule 5, the aggregators of a two-phase read where read calls are
 * request-bound (IO_REQUEST_BOUND_READ): as few as take the call's span in
 * one window each, so the call costs one request per window, whatever the
 * block size. Cut into cb_nodes domains at striping_unit boundaries (the
 * 128 KiB block size FUSE reports on the GlusterFS test bed), IOR's
 * ior-hard read (calls of 4 x 47,008 adjacent bytes, 188,032 B) took 433
 * preads in 178 calls, down to 5.5 KB each; one aggregator takes 178 of
 * 188,032 B, as OMPIO does, and its storage time (rank-seconds, traced)
 * fell from 0.42 to 0.34 s. Two aggregators of half the span each (one per
 * node) made 356 requests and 0.80 s of storage. Writes and calls whose
 * reads are not request-bound keep cb_nodes aggregators. */
int coll_route_aggregators(const pario_file *fh, int write, int64_t span, int64_t window,
                           int naggr) {
    if (write || !fh->request_bound_reads || window <= 0 || span <= 0)
        return naggr;
    int64_t need = (span + window - 1) / window;
    return need < naggr ? (int)need : naggr;
}

/* Rule 7, the two-phase window where requests are round trips: where read
 * calls are request-bound (a network file system) and no hint sets
 * pario_cb_cycle_size, an aggregator's cycle is the whole cb_buffer_size
 * (halves of it when pipelined), not the 1 MiB that keeps a window in the
 * CPU cache on a local disk. coll3d's collective call on the GlusterFS test
 * bed (one brick, costs calibrated, MiB/s, medians of three alternated
 * rounds, write cached / durable, read cached / durable), 1 MiB windows
 * against 8 MiB: 2 nodes x 2 ranks 668 / 564 / 853 / 984 against
 * 751 / 661 / 1126 / 1142; 4 x 1 723 / 592 / 791 / 891 against
 * 814 / 670 / 969 / 1091; 4 MiB fell in between. One aggregator in all
 * with 16 MiB lost (4 x 1: 693 / 574 / 858 / 880), so rule 5 still counts
 * aggregators by the hint's window. Local disks keep the hint's 1 MiB. */
int64_t io_coll_cycle_size(const pario_file *fh) {
    const io_hints *h = &fh->hints;
    if (fh->request_bound_reads && !h->cb_cycle_given)
        return h->cb_buffer_size;
    return h->cb_cycle_size;
}

void coll_route_count(pario_file *fh, coll_route r) {
    if (r < COLL_ROUTES)
        fh->coll_routes[r]++;
}

static const char *const route_names[COLL_ROUTES] = {
    "kept", "own_read", "funnel", "twophase", "own_sieved", "independent", "node_copy"};

int io_coll_routes_text(const pario_file *fh, char *out, size_t len) {
    size_t at = 0;
    out[0] = '\0';
    for (int r = 0; r < COLL_ROUTES && at < len; r++) {
        int n = snprintf(out + at, len - at, "%s%s:%lld", r ? "," : "", route_names[r],
                         (long long)fh->coll_routes[r]);
        if (n < 0)
            return PARIO_ERR_INTERN;
        at += (size_t)n;
    }
    return at < len ? PARIO_OK : PARIO_ERR_INTERN;
}
