/* Internal to src/io/flat: building flat_types node by node.
 *
 * A flat_builder collects nodes in typemap order and simplifies as it goes:
 * a node that continues the progression of the previous one (same block,
 * next position) extends it, and touching leaves merge. node_repeat() turns
 * "count instances of a child, stride apart" into one node, collapsing the
 * child away when it is a single block. builder_finish() makes the
 * flat_type and computes size, bounds, depth and monotonic. */
#ifndef PARIO_IO_FLAT_INTERNAL_H
#define PARIO_IO_FLAT_INTERNAL_H

#include <stddef.h>

#include "io/flat/flat.h"

/* A child with at most this many nodes is copied into a parent that holds a
 * single instance of it (struct member, resized, last array level): saves a
 * level of depth at the cost of a few nodes; larger children are shared. */
#define FLAT_INLINE_NODES 8

typedef struct flat_builder {
    flat_node *nodes; /* children referenced here hold one reference each */
    int64_t n, cap;
} flat_builder;

/* Zeroed memory for a flat_type (counted by flat_live_count); freed by
 * flat_release when the last reference goes. */
flat_type *flat_alloc_raw(size_t bytes);

void builder_init(flat_builder *b);
/* Drop the nodes and their child references. */
void builder_discard(flat_builder *b);
/* Append (merging with the last node when possible). Empty nodes are dropped.
 * Takes its own reference to node.child. */
int builder_push(flat_builder *b, flat_node node);
/* Append `count` instances of child, `stride` bytes apart from disp. */
int builder_push_repeat(flat_builder *b, int64_t disp, int64_t count, int64_t stride,
                        const flat_type *child);
/* Append `count` blocks `stride` bytes apart, each `blocklen` instances of
 * child `step` bytes apart (a vector). */
int builder_push_vector(flat_builder *b, int64_t disp, int64_t count, int64_t blocklen,
                        int64_t stride, int64_t step, const flat_type *child);
/* Append one instance of child at disp (its nodes copied when few). */
int builder_append_instance(flat_builder *b, int64_t disp, const flat_type *child);
/* Make a flat_type of the nodes (the builder is emptied). lb/extent are set
 * to the data bounds; the caller overrides them for MPI types. */
int builder_finish(flat_builder *b, flat_type **out);

/* One node for `count` instances of child (collapsed when child is a single
 * block); count 0 when empty. Borrows child: no reference taken. */
flat_node node_repeat(int64_t disp, int64_t count, int64_t stride, const flat_type *child);

/* Predefined types (and the Fortran parameterized ones) come back from
 * MPI_Type_get_contents as themselves and must not be freed. */
bool flat_type_is_predefined(MPI_Datatype t);

/* Decoding with MPI_Type_get_envelope / get_contents (flat_decode.c), no
 * cache: what flat_build does. */
int flat_decode(MPI_Datatype type, flat_type **out);
/* The flat_type of b's nodes with the MPI type's bounds; PARIO_ERR_INTERN
 * when the data size disagrees with MPI_Type_size. */
int flat_finish_mpi_type(MPI_Datatype type, flat_builder *b, flat_type **out);

/* Flattening by packing (flat_pack.c), for committed types whose decoding
 * would be costly: at least FLAT_PACK_MIN_MEMBERS member types, a true extent
 * of at most FLAT_PACK_EXTENT_PER_MEMBER bytes per member type, and a true
 * extent and a size of at most 16 MiB each. comm is only used for MPI_Pack
 * (its error handler must return). FLAT_PACK_DECLINED when the type does not
 * qualify, packing is not verbatim here or there is no memory for it (the
 * caller decodes instead); else PARIO_OK, or PARIO_ERR_INTERN when the size
 * disagrees with MPI_Type_size. */
#define FLAT_PACK_MIN_MEMBERS 16
#define FLAT_PACK_EXTENT_PER_MEMBER 4096
#define FLAT_PACK_DECLINED (-1)
int flat_pack_try(MPI_Datatype type, MPI_Comm comm, flat_type **out);

/* Subarray and darray layouts (flat_array.c), appended to b. */
int flat_array_subarray(flat_builder *b, const int *ints, const flat_type *elem);
int flat_array_darray(flat_builder *b, const int *ints, const flat_type *elem);

#endif
