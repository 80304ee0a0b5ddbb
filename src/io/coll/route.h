/* The route of a collective call: every rule that chooses how a collective
 * read or write moves its data, in one place and in order (route.c). */
#ifndef PARIO_IO_COLL_ROUTE_H
#define PARIO_IO_COLL_ROUTE_H

#include "io/file/file.h"

struct coll_range;

typedef enum coll_route {
    COLL_ROUTE_KEPT,        /* write kept in a shared-memory window, no message (kept.c) */
    COLL_ROUTE_OWN_READ,    /* each rank's own read, no message */
    COLL_ROUTE_FUNNEL,      /* small write written by one rank for all (small.c) */
    COLL_ROUTE_TWOPHASE,    /* two-phase aggregation (twophase.c) */
    COLL_ROUTE_OWN_SIEVED,  /* each rank's own (sieved) write, outcome agreed */
    COLL_ROUTE_INDEPENDENT, /* each rank's own access, outcome agreed */
    COLL_ROUTE_NODE_COPY,   /* each rank's own read from its node's copy (io/cache/once.c) */
    COLL_ROUTES,
    /* Not a route: the call gathers every rank's range (through the
     * funnel for a write it may finish) and coll_route_by_ranges decides. */
    COLL_ROUTE_BY_RANGES = COLL_ROUTES
} coll_route;

/* Before anything is exchanged, from state every rank agreed on (hints at
 * open/set_view/set_info, the views' agreement, the mode): the same answer
 * on every rank. KEPT, OWN_READ, NODE_COPY (own reads from the node's copy),
 * FUNNEL or BY_RANGES. */
coll_route coll_route_first(const pario_file *fh, int write);
/* Once every rank's range is known, before the route: whether this read
 * turns on reading once per node (the same answer on every rank). */
int coll_read_once_applies(const pario_file *fh, int write, const struct coll_range *all);
/* Once every rank's range is known: TWOPHASE, OWN_SIEVED, INDEPENDENT or
 * NODE_COPY. */
coll_route coll_route_by_ranges(const pario_file *fh, int write, const struct coll_range *all);
/* Aggregators of a two-phase call over a span of file bytes with windows
 * of `window` bytes, out of the naggr the hints allow. */
int coll_route_aggregators(const pario_file *fh, int write, int64_t span, int64_t window,
                           int naggr);
/* Count a call that took route r (reported by get_info as pario_coll_routes). */
void coll_route_count(pario_file *fh, coll_route r);

#endif
