/* Collective access, first form: every rank moves its own data with the
 * independent engine (byte-range locks keep concurrent read-modify-write
 * windows correct), then all ranks agree on the outcome. Two-phase
 * aggregation replaces this for interleaved patterns. */
#include "io/coll/coll.h"

#include "io/indep/access.h"

int io_coll_access(pario_file *fh, int write, int64_t pos, void *buf, MPI_Count count,
                   MPI_Datatype type, int64_t *moved) {
    int rc = io_access(fh, write, pos, buf, count, type, moved);
    return io_agree(fh->comm, rc, &fh->last);
}
