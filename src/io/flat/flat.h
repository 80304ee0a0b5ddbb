/* Datatype flattening: any MPI datatype as a compact loop nest of byte blocks.
 *
 * A flat_type describes the data bytes of one instance of a datatype, in
 * typemap order, as a list of nodes. A node is a block repeated `count` times
 * `stride` bytes apart, starting at `disp`; the block is either `len` bytes
 * (a leaf) or a whole child flat_type (whose own displacements are relative
 * to the start of each repetition). Repetition is kept, never expanded: a
 * vector of a million blocks is one node, so memory and time grow with the
 * number of distinct blocks, not with the count.
 *
 * Built by decoding MPI_Type_get_envelope / MPI_Type_get_contents for every
 * combiner (named, dup, contiguous, vector, hvector, indexed, hindexed,
 * indexed_block, hindexed_block, struct, subarray, darray, resized, the
 * Fortran parameterized types, the MPI-1 *_INTEGER combiners where mpi.h
 * defines them, and their nesting). Subarrays and darrays become one level of
 * nodes per dimension (O(ndims) nodes whatever the array size).
 *
 * Kept compact as it is built: zero-length blocks are dropped; a repeated
 * single-block child is collapsed into its parent node; a leaf repeated at a
 * stride equal to its length is one longer leaf; a block that continues the
 * progression of the previous node (same block, next position) extends it,
 * so even a million indexed displacements in arithmetic progression fold
 * into one node; touching leaves merge. Children are shared, not copied,
 * except that a single instance of a child of at most a few nodes is
 * inlined. Every node has count >= 1 and len >= 1, so an iterator never
 * meets an empty level.
 *
 * Thread safety: a flat_type is immutable once built; reference counts are
 * atomic; flat_get is safe to call concurrently (see the registry below).
 */
#ifndef PARIO_IO_FLAT_H
#define PARIO_IO_FLAT_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct flat_type flat_type;

typedef struct flat_node {
    int64_t disp;           /* bytes from the start of the instance to repetition 0 */
    int64_t count;          /* repetitions, >= 1 */
    int64_t stride;         /* bytes between repetitions (may be negative or 0) */
    int64_t len;            /* leaf: bytes per block; non-leaf: child->size */
    const flat_type *child; /* NULL for a leaf */
} flat_node;

struct flat_type {
    int64_t size;                 /* data bytes in one instance (MPI_Type_size) */
    int64_t lb, extent;           /* MPI_Type_get_extent */
    int64_t true_lb, true_extent; /* bounds of the data bytes: MPI_Type_get_true_extent
                                     for nonempty types, except that MPICH also counts
                                     empty members; internal children: lb/extent equal
                                     these */
    int depth;                    /* 1 for only leaves; 1 + max child depth otherwise */
    bool monotonic;               /* block offsets non-decreasing and non-overlapping
                                     in typemap order (required of file types) */
    bool nondecreasing;           /* block starts never decrease in typemap order, though
                                     blocks may overlap (allowed in views of files opened
                                     read-only); repetitions of a child never overlap */
    int64_t last_start;           /* offset of the last block's start (nondecreasing) */
    int refs;                     /* reference count; children are shared */
    int nnodes;
    flat_node *nodes;
    int64_t *before; /* nnodes + 1 prefix sums: data bytes in nodes[0..j-1];
                        lets an iterator seek in O(depth log nnodes) */
};

/* The flattened form of type, cached on the datatype (an attribute, freed when
 * the datatype is freed). The pointer stays valid until the datatype is freed
 * or flat_release is called on a reference taken with flat_retain. Works on
 * uncommitted types too. Returns PARIO_OK, PARIO_ERR_ARG (out is NULL),
 * PARIO_ERR_TYPE (MPI_DATATYPE_NULL, or a type MPI refuses to decode; note
 * that MPI first hands such a failure to MPI_COMM_WORLD's error handler,
 * which by default aborts), PARIO_ERR_NO_MEM, or PARIO_ERR_INTERN (the keyval
 * could not be created, or the decoded size disagrees with MPI_Type_size).
 *
 * Cache registry: one process-wide MPI datatype keyval, created on the first
 * call (pthread_once; MPI must be initialized) and never freed. Its delete
 * callback releases the cached form when the datatype is freed; its copy
 * callback shares the cached form with MPI_Type_dup copies. A mutex makes the
 * check-and-attach atomic, so concurrent calls on one datatype agree on one
 * pointer. Predefined (named) datatypes are cached the same way: both Open
 * MPI 4.1 and MPICH 4.0 accept attributes on them (MPICH deletes them at
 * MPI_Finalize, Open MPI keeps them to the end of the process). */
int flat_get(MPI_Datatype type, const flat_type **out);

/* flat_get for a committed type, where the caller also names a communicator
 * whose error handler returns: a type whose decoding would be costly (many
 * member types in a small extent, e.g. a struct of one derived type per HDF5
 * chunk) is then flattened by packing it (flat_pack.c). Same result and
 * errors as flat_get. */
int flat_get_committed(MPI_Datatype type, MPI_Comm comm, const flat_type **out);

/* Whether flat_get would find the form already cached on type (no decoding
 * is done). */
bool flat_is_cached(MPI_Datatype type);
/* Marks type as moved once without its flattened form (io/memstage) and
 * says whether it was marked before: a type used again is worth
 * flattening and caching; true when it cannot tell. Thread-safe as the
 * attribute functions of MPI are. */
bool flat_used_before(MPI_Datatype type);

/* Build without caching (caller owns; release with flat_release). Same
 * errors as flat_get; no attribute is touched. */
int flat_build(MPI_Datatype type, flat_type **out);
/* Reference counting is atomic: any thread may retain or release. */
void flat_retain(const flat_type *t);
void flat_release(const flat_type *t);

/* True when one instance is `size` bytes starting at true_lb with no gaps. */
bool flat_is_contiguous(const flat_type *t);

/* Blocks of data in one instance (leaves times their repetitions; blocks
 * that touch were merged when the type was flattened). */
int64_t flat_blocks(const flat_type *t);

/* Number of bytes the flattened representation occupies, each shared child
 * counted once (for memory tests). -1 if the bookkeeping cannot be allocated. */
int64_t flat_footprint(const flat_type *t);

/* Debug counter: flat_types currently allocated in the process (children
 * and internal nodes included). Lets a test prove that freeing a datatype
 * frees its flattened form. */
int64_t flat_live_count(void);

/* ---- iteration ------------------------------------------------------------------
 * An iterator walks `count` instances of a flat_type placed `extent` bytes
 * apart from `base`, yielding (offset, len) byte extents in typemap order.
 * Adjacent extents (one ends where the next begins) are merged. */
typedef struct flat_iter_frame {
    const flat_type *type;
    int64_t origin; /* byte address of this instance of `type` */
    int node;       /* current node index */
    int64_t rep;    /* current repetition within the node */
} flat_iter_frame;

/* Frames kept inside the iterator itself; deeper types use a heap stack. */
#define FLAT_ITER_INLINE_FRAMES 8

/* All fields are private to flat_iter_*. */
typedef struct flat_iter {
    const flat_type *type;
    int64_t base;             /* byte address of instance 0 */
    int64_t count;            /* instances to walk */
    int64_t instance;         /* current instance */
    int64_t blk_off, blk_len; /* rest of the current block, not yet returned */
    /* The leaf node the current block belongs to is taken over whole: its
     * repetitions after the current block live here, not in the frames. */
    int64_t run_next;       /* address of the next repetition */
    int64_t run_left;       /* repetitions still to come after the current block */
    int64_t run_len;        /* bytes per repetition */
    int64_t run_stride;     /* bytes between repetitions */
    int depth;              /* frames in use */
    flat_iter_frame *stack; /* heap frames when type->depth > FLAT_ITER_INLINE_FRAMES */
    flat_iter_frame frames[FLAT_ITER_INLINE_FRAMES];
    bool done;
} flat_iter;

/* A strided run of blocks: `count` blocks of `len` bytes, the first at `off`,
 * each `stride` bytes after the previous one (stride may be anything when
 * count is 1). */
typedef struct flat_run {
    int64_t off, len, stride, count;
} flat_run;

/* Start at data byte `skip` (0 = beginning) of the stream of `count`
 * instances; seeking costs O(depth) (a binary search per level), not
 * O(blocks). count may be INT64_MAX for an endless tiling (file views). A
 * skip at or past the end gives an exhausted iterator. Returns PARIO_OK,
 * PARIO_ERR_ARG (NULL pointer, negative skip) or PARIO_ERR_NO_MEM (only for
 * types deeper than FLAT_ITER_INLINE_FRAMES). Always pair with flat_iter_free. */
int flat_iter_init(flat_iter *it, const flat_type *t, int64_t base, int64_t count, int64_t skip);
/* Next extent; false when the stream is exhausted. len is at most `max`
 * (a longer block is returned in pieces); pass INT64_MAX (or any max <= 0)
 * for no limit. Never allocates. */
bool flat_iter_next(flat_iter *it, int64_t max, int64_t *off, int64_t *len);

/* Run-wise walking, for consumers that handle many tiny blocks: the run
 * starting at the current position without consuming it; false when the
 * stream is exhausted. The run is the rest of one leaf node's repetitions
 * (within one repetition of its enclosing nodes); a partly consumed block is
 * a run of its own (count 1). Runs are not merged with adjacent blocks the
 * way flat_iter_next merges extents; both kinds of call may be mixed. */
bool flat_iter_run(flat_iter *it, flat_run *run);
/* Consume the first n bytes of the run flat_iter_run returned (0 < n <=
 * run.count * run.len): whole blocks and possibly a part of the next one,
 * in O(1). */
void flat_iter_consume(flat_iter *it, int64_t n);
void flat_iter_free(flat_iter *it);

#endif
