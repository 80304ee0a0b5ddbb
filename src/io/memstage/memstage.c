/* Packed staging of memory datatypes (see memstage.h). */
#include "io/memstage/memstage.h"

#include <limits.h>
#include <stdlib.h>

#include "io/flat/flat.h"
#include "pario/pario.h"

/* Member types named by the type's own constructor (0 for predefined types). */
static int member_types(MPI_Datatype type, bool *predefined) {
    int ni = 0, na = 0, nd = 0, combiner = MPI_COMBINER_NAMED;
    if (MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS) {
        *predefined = true; /* not ours to judge: take the ordinary path */
        return 0;
    }
    *predefined = combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL ||
                  combiner == MPI_COMBINER_F90_COMPLEX || combiner == MPI_COMBINER_F90_INTEGER;
    return nd;
}

/* Whether packing pays for this call: a derived type not yet flattened and
 * not moved before (a type used again is flattened once and cached, so its
 * later calls move the program's memory in place), of a size that MPI_Pack
 * takes and within the bounds of memstage.h. */
static bool worth_staging(MPI_Count count, MPI_Datatype type, int64_t *bytes) {
    bool predefined = true;
    int members = member_types(type, &predefined);
    if (predefined || count <= 0 || count > INT_MAX || flat_is_cached(type) ||
        flat_used_before(type))
        return false;
    MPI_Count size = 0;
    if (MPI_Type_size_x(type, &size) != MPI_SUCCESS || size <= 0 ||
        size > MEMSTAGE_MAX_BYTES / count)
        return false;
    *bytes = (int64_t)(size * count);
    return *bytes <= MEMSTAGE_SMALL_BYTES || members >= MEMSTAGE_MANY_MEMBERS;
}

void mem_stage_open(mem_stage *st, MPI_Comm comm, bool write, void *buf, MPI_Count count,
                    MPI_Datatype type) {
    *st = (mem_stage){.write = write, .comm = comm, .user = buf, .count = count, .type = type};
    if (!worth_staging(count, type, &st->bytes))
        return;
    st->stage = malloc((size_t)st->bytes);
    if (!st->stage)
        return;
    int position = 0;
    if (MPI_Pack(buf, (int)count, type, st->stage, (int)st->bytes, &position, comm) !=
            MPI_SUCCESS ||
        position != st->bytes) {
        free(st->stage);
        st->stage = NULL;
        return;
    }
    st->active = true;
}

void *mem_stage_buf(const mem_stage *st, void *buf) {
    return st->active ? st->stage : buf;
}

MPI_Count mem_stage_count(const mem_stage *st, MPI_Count count) {
    return st->active ? (MPI_Count)st->bytes : count;
}

MPI_Datatype mem_stage_type(const mem_stage *st, MPI_Datatype type) {
    return st->active ? MPI_BYTE : type;
}

int mem_stage_close(mem_stage *st) {
    int rc = PARIO_OK;
    if (st->active && !st->write) {
        int position = 0;
        if (MPI_Unpack(st->stage, (int)st->bytes, &position, st->user, (int)st->count, st->type,
                       st->comm) != MPI_SUCCESS)
            rc = PARIO_ERR_INTERN;
    }
    free(st->stage);
    *st = (mem_stage){.active = false};
    return rc;
}
