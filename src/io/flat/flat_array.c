/* Subarray and distributed-array layouts as nested nodes.
 *
 * Both describe, per dimension, which global indices belong to the type: a
 * subarray one run of subsizes[d] indices from starts[d]; a darray the
 * indices this process owns (one block, or cyclic blocks plus a shorter
 * last one). The type is built from the fastest-varying dimension outwards:
 * each level repeats the level inside it at that dimension's byte stride,
 * so an n-dimensional array costs O(n) nodes whatever its size. */
#include "io/flat/flat_internal.h"

#include <stdlib.h>

#include "pario/pario.h"

/* The indices one dimension contributes: `nblocks` blocks of `blen`
 * indices, `period` apart, from `first`; then `tail_len` more from
 * `tail_first` (a cyclic distribution's shorter last block). */
typedef struct dim_runs {
    int64_t first, nblocks, blen, period;
    int64_t tail_first, tail_len;
} dim_runs;

/* One level: the runs of dimension d over `inner`, one index `step` bytes. */
static int array_level(const dim_runs *r, int64_t step, const flat_type *inner, flat_type **out) {
    flat_builder b;
    builder_init(&b);
    int rc = builder_push_vector(&b, r->first * step, r->nblocks, r->blen, r->period * step, step,
                                 inner);
    if (!rc && r->tail_len > 0)
        rc = builder_push_repeat(&b, r->tail_first * step, r->tail_len, step, inner);
    if (!rc)
        rc = builder_finish(&b, out);
    builder_discard(&b);
    return rc;
}

/* Nest the levels, fastest dimension (last for C order, first for Fortran)
 * innermost, and append the outermost one to b. */
static int array_build(flat_builder *b, int ndims, const int *gsizes, const dim_runs *runs,
                       bool c_order, const flat_type *elem) {
    const flat_type *inner = elem;
    flat_retain(inner);
    int64_t step = elem->extent;
    for (int i = 0; i < ndims; i++) {
        int d = c_order ? ndims - 1 - i : i;
        flat_type *level;
        int rc = array_level(&runs[d], step, inner, &level);
        flat_release(inner);
        if (rc)
            return rc;
        inner = level;
        step *= gsizes[d];
    }
    int rc = builder_append_instance(b, 0, inner);
    flat_release(inner);
    return rc;
}

static int order_is_c(int order, bool *c_order) {
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return PARIO_ERR_TYPE;
    *c_order = order == MPI_ORDER_C;
    return PARIO_OK;
}

/* ints = ndims, sizes[ndims], subsizes[ndims], starts[ndims], order. */
int flat_array_subarray(flat_builder *b, const int *ints, const flat_type *elem) {
    int ndims = ints[0];
    const int *sizes = ints + 1, *subsizes = sizes + ndims, *starts = subsizes + ndims;
    bool c_order;
    if (ndims <= 0 || order_is_c(starts[ndims], &c_order))
        return PARIO_ERR_TYPE;
    dim_runs *runs = calloc((size_t)ndims, sizeof *runs);
    if (!runs)
        return PARIO_ERR_NO_MEM;
    for (int d = 0; d < ndims; d++)
        runs[d] = (dim_runs){starts[d], subsizes[d] > 0 ? 1 : 0, subsizes[d], 0, 0, 0};
    int rc = array_build(b, ndims, sizes, runs, c_order, elem);
    free(runs);
    return rc;
}

static int64_t ceil_div(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

/* The indices of one dimension of gsize indices that process coordinate
 * `coord` of `psize` owns. */
static int darray_dim(int distrib, int darg, int64_t gsize, int64_t psize, int64_t coord,
                      dim_runs *r) {
    *r = (dim_runs){0, 0, 0, 0, 0, 0};
    if (distrib == MPI_DISTRIBUTE_NONE) {
        *r = (dim_runs){0, gsize > 0 ? 1 : 0, gsize, 0, 0, 0};
        return PARIO_OK;
    }
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        int64_t blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? ceil_div(gsize, psize) : darg;
        int64_t start = coord * blk;
        int64_t len = gsize - start < blk ? gsize - start : blk;
        if (len > 0)
            *r = (dim_runs){start, 1, len, 0, 0, 0};
        return PARIO_OK;
    }
    if (distrib != MPI_DISTRIBUTE_CYCLIC)
        return PARIO_ERR_TYPE;
    int64_t blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    if (blk <= 0)
        return PARIO_ERR_TYPE;
    int64_t start = coord * blk, period = psize * blk;
    if (start >= gsize)
        return PARIO_OK;
    /* Full blocks k: start + k * period + blk <= gsize. */
    int64_t nfull = start + blk <= gsize ? (gsize - start - blk) / period + 1 : 0;
    int64_t tail = start + nfull * period;
    *r = (dim_runs){start, nfull, blk, period, tail, tail < gsize ? gsize - tail : 0};
    return PARIO_OK;
}

/* ints = size, rank, ndims, gsizes[ndims], distribs[ndims], dargs[ndims],
 * psizes[ndims], order. Processes form a row-major grid of psizes. */
int flat_array_darray(flat_builder *b, const int *ints, const flat_type *elem) {
    int rank = ints[1], ndims = ints[2];
    const int *gsizes = ints + 3, *distribs = gsizes + ndims, *dargs = distribs + ndims;
    const int *psizes = dargs + ndims;
    bool c_order;
    if (ndims <= 0 || order_is_c(psizes[ndims], &c_order))
        return PARIO_ERR_TYPE;
    dim_runs *runs = calloc((size_t)ndims, sizeof *runs);
    if (!runs)
        return PARIO_ERR_NO_MEM;
    int rc = PARIO_OK;
    int64_t rest = rank;
    for (int d = ndims - 1; d >= 0 && !rc; d--) {
        if (psizes[d] <= 0) {
            rc = PARIO_ERR_TYPE;
            break;
        }
        int64_t coord = rest % psizes[d];
        rest /= psizes[d];
        rc = darray_dim(distribs[d], dargs[d], gsizes[d], psizes[d], coord, &runs[d]);
    }
    if (!rc)
        rc = array_build(b, ndims, gsizes, runs, c_order, elem);
    free(runs);
    return rc;
}
