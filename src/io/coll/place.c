/* Where aggregators may run: cb_config_list ("host:count,*:count", ROMIO's
 * syntax) gives each host a number of aggregator processes; the first ranks
 * of a node up to that number may aggregate. cb_nodes then picks that many
 * of them at most, spread evenly. */
#include <stdlib.h>
#include <string.h>
#include "common/error.h"
#include "io/coll/coll_internal.h"

/* Whether this rank may aggregate under the file's cb_config_list. */
static int may_aggregate(const pario_file *fh) {
    char host[MPI_MAX_PROCESSOR_NAME + 1] = "";
    int len = 0;
    if (MPI_Get_processor_name(host, &len) != MPI_SUCCESS)
        host[0] = '\0';
    int count = io_hints_cb_count(fh->hints.cb_config_list, host);
    return count < 0 || fh->node_rank < count; /* malformed lists never get here */
}

/* Once per file, p (of n elements of `size` bytes) unless made before. */
static int reserve(void *p, size_t n, size_t size) {
    void **at = p;
    if (!*at)
        *at = malloc(n * size);
    return *at != NULL;
}

/* The per-call buffers for all ranks' ranges and counts, a plan and a
 * two-phase call's requests, made once per file: what a collective call
 * needs after its ranges are shared cannot fail then (a settled read
 * relies on it: twophase.c). */
static int reserve_range_buffers(pario_file *fh) {
    size_t n = (size_t)fh->nranks;
    int ok = reserve(&fh->coll_ranges, n, sizeof *fh->coll_ranges);
    ok &= reserve(&fh->coll_share, n * SHARE_N, sizeof *fh->coll_share);
    ok &= reserve(&fh->coll_counts, n * 8, sizeof *fh->coll_counts);
    ok &= reserve(&fh->coll_aggr, n, sizeof *fh->coll_aggr);
    ok &= reserve(&fh->coll_domains, n * 2, sizeof *fh->coll_domains);
    ok &= reserve(&fh->coll_requests, n * 4, sizeof *fh->coll_requests);
    return ok ? PARIO_OK : PARIO_ERR_NO_MEM;
}

/* Collective: the ranks that may aggregate, from every rank's answer. */
static int place_by_allgather(pario_file *fh, int *all, int rc, pario_error *err) {
    int mine = may_aggregate(fh);
    rc = io_agree(fh->comm, rc, err);
    if (rc == PARIO_OK &&
        MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, fh->comm) != MPI_SUCCESS)
        rc = pario_fail(err, PARIO_ERR_COMM, "%s: cannot place the aggregators", fh->path);
    if (rc != PARIO_OK)
        return rc;
    int n = 0;
    for (int r = 0; r < fh->nranks; r++)
        if (all[r])
            all[n++] = r;
    if (n == 0) /* the list names no host of this job: every rank may */
        for (int r = 0; r < fh->nranks; r++)
            all[n++] = r;
    fh->ncb_ranks = n;
    io_parked_keep_placement(fh, fh->hints.cb_config_list, all, n);
    return PARIO_OK;
}

int io_coll_place(pario_file *fh, pario_error *err) {
    int *all = malloc((size_t)fh->nranks * sizeof *all);
    int rc = all && reserve_range_buffers(fh) == PARIO_OK
                 ? PARIO_OK
                 : pario_fail(err, PARIO_ERR_NO_MEM, "%s: no memory for the collective buffers",
                              fh->path);
    int n = 0;
    const int *kept = io_parked_placement(fh, fh->hints.cb_config_list, &n);
    if (kept) { /* the same answer on every rank: no message */
        if (all)
            memcpy(all, kept, (size_t)n * sizeof *all);
        fh->ncb_ranks = n;
    } else {
        rc = place_by_allgather(fh, all, rc, err);
    }
    free(fh->cb_ranks);
    fh->cb_ranks = rc == PARIO_OK ? all : NULL;
    if (rc != PARIO_OK) {
        free(all);
        fh->ncb_ranks = 0;
    }
    return rc;
}

int io_coll_naggr(const pario_file *fh) {
    int n = fh->hints.cb_nodes;
    return n < fh->ncb_ranks ? n : fh->ncb_ranks;
}

int io_coll_aggregator(const pario_file *fh, int i, int n) {
    return fh->cb_ranks[(int64_t)i * fh->ncb_ranks / n];
}
