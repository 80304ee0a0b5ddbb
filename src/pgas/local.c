/* Cast to local: the checked forms over a range and over a rank's part, and
 * the inverse cast. */
#include "pgas/pgas_internal.h"

int pario_pgas_cast_range(pario_pgas *ctx, const pario_pgas_array *a, uint64_t first,
                          uint64_t count, void **local) {
    const char *what = "pario_pgas_cast_range";
    *local = NULL;
    if (count == 0)
        return pgas_fail(ctx, PARIO_ERR_ARG, "pgas: %s: empty range at index %llu", what,
                         (unsigned long long)first);
    int rc = pgas_check_range(ctx, a, first, count, what);
    if (rc != PARIO_OK)
        return rc;
    pgas_run r = pgas_run_at(a, first, first + count);
    if (!ctx->base[r.rank])
        return pgas_fail(ctx, PARIO_ERR_ARG,
                         "pgas: %s: index %llu lives on rank %u, on another node than rank %d",
                         what, (unsigned long long)first, r.rank, ctx->rank);
    /* With one rank, consecutive blocks follow each other in its memory. */
    if (r.count < count && ctx->nranks > 1)
        return pgas_fail(ctx, PARIO_ERR_ARG,
                         "pgas: %s: index %llu is past the local block (rank %u holds %llu .. "
                         "%llu)",
                         what, (unsigned long long)(first + r.count), r.rank,
                         (unsigned long long)first, (unsigned long long)(first + r.count - 1));
    *local = ctx->base[r.rank] + r.addr;
    return PARIO_OK;
}

int pario_pgas_cast_part(pario_pgas *ctx, const pario_pgas_array *a, int rank, void **local,
                         uint64_t *count) {
    const char *what = "pario_pgas_cast_part";
    *local = NULL;
    *count = 0;
    int rc = pgas_check_array(ctx, a, what);
    if (rc != PARIO_OK)
        return rc;
    if (rank < 0 || rank >= ctx->nranks)
        return pgas_fail(ctx, PARIO_ERR_ARG, "pgas: %s: rank %d outside the team of %d", what, rank,
                         ctx->nranks);
    if (!ctx->base[rank])
        return pgas_fail(ctx, PARIO_ERR_ARG, "pgas: %s: rank %d is on another node than rank %d",
                         what, rank, ctx->rank);
    uint64_t cursor = 0;
    pario_pgas_range first;
    if (!pario_pgas_owned_next(a, rank, &cursor, &first))
        return PARIO_OK; /* no elements on rank */
    *local = ctx->base[rank] + pario_pgas_elem(a, first.first).addr;
    *count = pario_pgas_local_count(a, rank);
    return PARIO_OK;
}

int pario_pgas_inverse_cast(pario_pgas *ctx, const void *local, uint32_t elem_size,
                            pario_pgas_ptr *p) {
    const unsigned char *at = local;
    for (int r = 0; r < ctx->nranks && elem_size > 0; r++) {
        const unsigned char *lo = ctx->base[r];
        if (!lo || at < lo + ctx->sym_lo || at >= lo + ctx->local_hi)
            continue;
        uint64_t addr = (uint64_t)(at - lo);
        if (elem_size > ctx->local_hi - addr)
            break;
        *p = (pario_pgas_ptr){addr, 0, 0, elem_size, (uint32_t)r, (uint32_t)ctx->nranks, 0};
        return PARIO_OK;
    }
    return pgas_fail(ctx, PARIO_ERR_ARG,
                     "pgas: pario_pgas_inverse_cast: %p (%u bytes) is not in shared memory "
                     "this process maps",
                     local, elem_size);
}
