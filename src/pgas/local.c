/* Cast to local: the checked form over a range, and the inverse cast. */
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
