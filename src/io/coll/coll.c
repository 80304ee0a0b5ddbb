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
    if (sw == IO_ENABLE)
        return 1;
    return fh->nranks > 1 && coll_should_aggregate(all, fh->nranks);
}

int io_coll_access(pario_file *fh, int write, int64_t pos, void *buf, MPI_Count count,
                   MPI_Datatype type, int64_t *moved) {
    const flat_type *mt = NULL;
    int64_t total = 0;
    coll_range mine = {0, 0, 0};
    coll_range *all = malloc((size_t)fh->nranks * sizeof *all);
    int rc = all ? flat_get(type, &mt) : PARIO_ERR_NO_MEM;
    if (rc == PARIO_OK) {
        total = (int64_t)count * mt->size;
        rc = my_range(fh, write, pos, &total, &mine);
    }
    if (rc != PARIO_OK && fh->last.code == PARIO_OK)
        pario_fail(&fh->last, rc, "%s %s: cannot plan the collective access",
                   write ? "write_all" : "read_all", fh->path);
    rc = io_agree(fh->comm, rc, &fh->last);
    if (rc == PARIO_OK && MPI_Allgather(&mine, 3, MPI_INT64_T, all, 3, MPI_INT64_T, fh->comm) !=
                              MPI_SUCCESS)
        rc = pario_fail(&fh->last, PARIO_ERR_COMM, "%s %s: exchange of access ranges failed",
                        write ? "write_all" : "read_all", fh->path);
    if (rc != PARIO_OK) {
        free(all);
        return rc;
    }
    *moved = 0;
    if (!aggregate(fh, write, all)) {
        free(all);
        rc = io_access(fh, write, pos, buf, count, type, moved);
        return io_agree(fh->comm, rc, &fh->last);
    }
    coll_plan plan;
    rc = coll_plan_make(&plan, fh, all, write);
    free(all);
    if (rc != PARIO_OK)
        pario_fail(&fh->last, rc, "%s %s: out of memory", write ? "write_all" : "read_all",
                   fh->path);
    rc = io_agree(fh->comm, rc, &fh->last);
    if (rc != PARIO_OK)
        return rc;
    rc = coll_twophase(fh, &plan, write, pos, buf, count, type, total);
    coll_plan_free(&plan);
    if (rc == PARIO_OK)
        *moved = total;
    return rc;
}
