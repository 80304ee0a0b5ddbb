/* Collective data access: decide between two-phase aggregation and
 * independent access, from everyone's access range and the hints. */
#include <stdlib.h>
#include "common/error.h"
#include "io/coll/coll_internal.h"
#include "io/indep/access.h"

/* This rank's range. Reads are clipped at end of file first: data past it
 * is not read, and the byte count says so. */
static int my_range(pario_file *fh, int write, int64_t pos, int64_t *total, coll_range *r) {
    int rc = PARIO_OK;
    if (!write && *total > 0) {
        int64_t eof = 0, below = 0;
        rc = fh->io.drv->get_size(&fh->io, &eof, &fh->last);
        if (rc == PARIO_OK)
            rc = view_pos_of_byte(&fh->view, eof, &below);
        if (rc == PARIO_OK && below - pos < *total)
            *total = below - pos > 0 ? below - pos : 0;
    }
    *r = (coll_range){0, 0, *total};
    if (rc == PARIO_OK && *total > 0) {
        rc = view_byte_of_pos(&fh->view, pos, &r->first);
        if (rc == PARIO_OK)
            rc = view_byte_of_pos(&fh->view, pos + *total - 1, &r->end);
        r->end += 1;
    }
    return rc;
}

static int aggregate(const pario_file *fh, int write, const coll_range *all) {
    io_switch sw = write ? fh->hints.cb_write : fh->hints.cb_read;
    if (sw == IO_DISABLE || fh->atomic) /* atomic mode: locked independent access */
        return 0;
    if (fh->nranks == 1) /* one rank has nobody to combine with: buffering only copies */
        return 0;
    if (sw == IO_ENABLE)
        return 1;
    return coll_should_aggregate(all, fh->nranks);
}

/* One allgather carries every rank's verdict and range. On a failure, the
 * lowest failing rank's message is shared, as io_agree does. */
static int share_ranges(pario_file *fh, int rc, const coll_range *mine, coll_range *all) {
    int64_t out[4] = {rc, mine->first, mine->end, mine->bytes};
    int64_t *in = malloc((size_t)fh->nranks * sizeof out);
    if (!in || MPI_Allgather(out, 4, MPI_INT64_T, in, 4, MPI_INT64_T, fh->comm) != MPI_SUCCESS) {
        free(in); /* without the allgather, io_agree keeps the ranks together */
        return io_agree(
            fh->comm,
            pario_fail(&fh->last, PARIO_ERR_COMM, "%s: exchange of access ranges failed", fh->path),
            &fh->last);
    }
    int failed = 0;
    for (int r = 0; r < fh->nranks; r++) {
        all[r] = (coll_range){in[4 * r + 1], in[4 * r + 2], in[4 * r + 3]};
        failed |= in[4 * r] != PARIO_OK;
    }
    free(in);
    return failed ? io_agree(fh->comm, rc, &fh->last) : PARIO_OK;
}

int io_coll_access(pario_file *fh, int check, int write, int64_t pos, void *buf, MPI_Count count,
                   MPI_Datatype type, int64_t *moved) {
    const flat_type *mt = NULL;
    int64_t total = 0;
    coll_range mine = {0, 0, 0};
    *moved = 0;
    coll_range *all = malloc((size_t)fh->nranks * sizeof *all);
    int rc = check;
    if (rc == PARIO_OK && !all)
        rc = pario_fail(&fh->last, PARIO_ERR_NO_MEM, "%s: out of memory", fh->path);
    if (rc == PARIO_OK && (rc = flat_get(type, &mt)) == PARIO_OK) {
        total = (int64_t)count * mt->size;
        rc = my_range(fh, write, pos, &total, &mine);
    }
    if (rc != PARIO_OK && fh->last.code == PARIO_OK)
        pario_fail(&fh->last, rc, "%s %s: cannot plan the collective access",
                   write ? "write_all" : "read_all", fh->path);
    if (!all) /* no room for the ranges: agree on the failure alone */
        return io_agree(fh->comm, rc, &fh->last);
    rc = share_ranges(fh, rc, &mine, all);
    if (rc != PARIO_OK || !aggregate(fh, write, all)) {
        free(all);
        if (rc == PARIO_OK)
            rc = io_agree(fh->comm, io_access(fh, write, pos, buf, count, type, moved), &fh->last);
        return rc;
    }
    coll_plan plan;
    rc = coll_plan_make(&plan, fh, all, write);
    free(all);
    if (rc != PARIO_OK)
        pario_fail(&fh->last, rc, "%s %s: out of memory", write ? "write_all" : "read_all",
                   fh->path);
    rc = coll_twophase(fh, &plan, rc, write, pos, buf, count, type, total);
    coll_plan_free(&plan);
    if (rc == PARIO_OK)
        *moved = total;
    return rc;
}
