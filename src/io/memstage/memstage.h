/* Packed staging of a memory datatype that is not worth flattening.
 *
 * A data call names its memory layout with (buf, count, type). pario moves
 * bytes by walking the flattened form of the type (src/io/flat), which is
 * cached on the type. A program that builds a new derived type for every call
 * (HDF5 does: one per selection, and for linked-chunk I/O a struct of one
 * derived type per chunk) never hits that cache, and decoding such a type
 * costs an MPI_Type_get_contents per derived node, each of which makes Open
 * MPI duplicate every derived member type it returns. For such a call it is
 * cheaper to let MPI copy the data: MPI_Pack gathers the bytes in typemap
 * order into a staging buffer (a write), or MPI_Unpack scatters the bytes
 * read back out of it (a read), and the call moves the buffer as MPI_BYTE.
 *
 * Taken only where it keeps every guarantee: a native view (the datarep path
 * needs the element types), a committed derived type (checked by the caller's
 * argument checks), no flattened form already cached on the type and the
 * type not moved before (a type used again is flattened once and cached, so
 * its later calls move the program's memory in place), count and
 * bytes that MPI_Pack can take, and a size bound (MEMSTAGE_MAX_BYTES, or
 * MEMSTAGE_SMALL_BYTES unless the type has many member types). Declining is
 * never an error: the call then takes the ordinary path. A read packs the
 * caller's buffer into the stage first and unpacks the whole stage after the
 * call, so bytes that a short read did not fill are written back with the
 * values they had, and nothing can fail once the call has moved data. */
#ifndef PARIO_IO_MEMSTAGE_H
#define PARIO_IO_MEMSTAGE_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

/* Below this many bytes a new derived type is always staged: packing costs
 * no more than decoding the type would. */
#define MEMSTAGE_SMALL_BYTES (256 * 1024)
/* Up to this many bytes a type with at least MEMSTAGE_MANY_MEMBERS member
 * types (a struct of derived types) is staged. */
#define MEMSTAGE_MAX_BYTES (16 * 1024 * 1024)
#define MEMSTAGE_MANY_MEMBERS 16

typedef struct mem_stage {
    bool active; /* the call moves `stage` as MPI_BYTE */
    bool write;
    MPI_Comm comm; /* for MPI_Pack/Unpack (its error handler returns) */
    void *user;    /* the caller's buffer, count and type */
    MPI_Count count;
    MPI_Datatype type;
    int64_t bytes; /* count * size of type: the stage's length */
    char *stage;
} mem_stage;

/* Decides whether the call (buf, count, type) is staged and packs the
 * caller's data into the stage. Never fails: when anything is not as required (including
 * no memory or a failing MPI_Pack), st->active is false and nothing is
 * allocated. Call only after the call's arguments were checked. */
void mem_stage_open(mem_stage *st, MPI_Comm comm, bool write, void *buf, MPI_Count count,
                    MPI_Datatype type);

/* The buffer, count and type the call moves. */
void *mem_stage_buf(const mem_stage *st, void *buf);
MPI_Count mem_stage_count(const mem_stage *st, MPI_Count count);
MPI_Datatype mem_stage_type(const mem_stage *st, MPI_Datatype type);

/* After the call: a read's stage is unpacked into the caller's buffer; the
 * stage is freed. PARIO_OK, or PARIO_ERR_INTERN if MPI_Unpack failed. */
int mem_stage_close(mem_stage *st);

#endif
