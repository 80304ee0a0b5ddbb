/* pario pgas: UPC-style shared arrays on the gas layer.
 *
 * The concepts are those of the UPC 1.3 specification, offered as a C library:
 * a UPC programmer should recognise every one of them.
 *
 *   UPC                                   pgas
 *   THREADS, MYTHREAD                     pario_pgas_threads, pario_pgas_mythread
 *   shared [B] T a[N] / upc_all_alloc     pario_pgas_all_alloc (count, elem size, B)
 *   upc_global_alloc, upc_alloc           pario_pgas_global_alloc, pario_pgas_alloc
 *   upc_all_free, upc_free                pario_pgas_all_free, pario_pgas_free
 *   shared [B] T *p, p + n, p - q         pario_pgas_ptr, _ptr_add, _ptr_diff
 *   upc_threadof/phaseof/addrfield        pario_pgas_threadof/phaseof/addrfield
 *   upc_resetphase                        pario_pgas_resetphase
 *   x = *p, *p = x (relaxed / strict)     pario_pgas_get/put, _get_strict/_put_strict
 *                                         (checked); pario_pgas_load/store and
 *                                         _load_double, _store_double, ... (unchecked)
 *   x = a[i], a[i] = x                    pario_pgas_get_at/put_at (checked);
 *                                         pario_pgas_load_at/store_at and
 *                                         _load_double_at, ... (unchecked, inline)
 *   p++                                   pario_pgas_ptr_inc
 *   (T *)p (upc_cast)                     pario_pgas_cast, pario_pgas_cast_range,
 *                                         pario_pgas_cast_part (a rank's whole part)
 *   upc_memget/memput/memcpy/memset       pario_pgas_memget/memput/memcpy/memset
 *   upc_mem{get,put,cpy,set}_nb, upc_sync, upc_sync_attempt
 *                                         pario_pgas_mem*_nb, pario_pgas_sync, _sync_attempt
 *   upc_mem{get,put,cpy,set}_nbi, upc_synci, upc_sync_attempti
 *                                         pario_pgas_mem*_nbi, pario_pgas_synci, _sync_attempti
 *   upc_forall (...; &a[i])               pario_pgas_owned_next (owned block ranges)
 *   upc_forall (...; i)                   pario_pgas_has_affinity_int
 *   upc_barrier / upc_notify / upc_wait   pario_pgas_barrier / _notify / _wait
 *   upc_fence                             pario_pgas_fence
 *   upc_all_lock_alloc, upc_global_lock_alloc   pario_pgas_all_lock_alloc, _global_lock_alloc
 *   upc_lock / upc_lock_attempt / upc_unlock    pario_pgas_lock_acquire / _attempt / _release
 *   upc_lock_free, upc_all_lock_free      pario_pgas_lock_free, pario_pgas_all_lock_free
 *   upc_all_broadcast/scatter/gather      pario_pgas_all_broadcast/_scatter/_gather
 *   upc_all_gather_all/exchange/permute   pario_pgas_all_gather_all/_exchange/_permute
 *   upc_all_reduceT, upc_all_prefix_reduceT
 *                                         pario_pgas_all_reduce, _all_prefix_reduce (type T
 *                                         as PARIO_PGAS_CHAR ... PARIO_PGAS_LDOUBLE)
 *   UPC_ADD ... UPC_NONCOMM_FUNC          PARIO_PGAS_ADD ... PARIO_PGAS_NONCOMM_FUNC
 *   UPC_IN_/UPC_OUT_ NOSYNC/MYSYNC/ALLSYNC   PARIO_PGAS_IN_/_OUT_ NOSYNC/MYSYNC/ALLSYNC
 *
 * ---- Context ----------------------------------------------------------------
 * pario_pgas_init is collective over a communicator; its ranks are the UPC
 * threads. The context owns a gas team and that team's one segment per rank,
 * which holds the shared heap (below). Everything hangs off the context; there
 * is no global state. A context is used by one thread at a time.
 *
 * ---- Shared heap --------------------------------------------------------------
 * Every rank's segment holds two heaps of sizes fixed at init (the same on
 * every rank):
 *   - the symmetric heap: arrays with a block factor B >= 1. An allocation
 *     reserves the same offset range on every rank (the range rank 0, which
 *     holds the most blocks, needs), so an element's address on its owner
 *     follows from the array's base offset by arithmetic alone. Rank 0 keeps
 *     the book of this heap; other ranks ask it through active messages.
 *   - the local heap: arrays with an indefinite block factor (B = 0, every
 *     element on one rank) and locks. Each rank keeps the book of its own.
 * Offset 0 of a segment is never part of a heap, so the zero pointer is never
 * a valid pointer-to-shared. Requests to another rank's book (global_alloc,
 * free of memory another rank keeps) are active messages served when that
 * rank polls: any blocking pgas or gas call polls.
 *
 * ---- Layout -------------------------------------------------------------------
 * An array has count elements of elem_size bytes (any size >= 1) and a block
 * factor B (elements per block). Element i lives on rank (i / B) % nranks at
 * phase i % B, at local element index ((i / B) / nranks) * B + i % B of that
 * rank's part (all offsets in bytes are that times elem_size from the array's
 * base offset). B = 0 (UPC's "shared []", indefinite) puts every element on
 * one rank: rank 0 for all_alloc and global_alloc, the caller for alloc.
 * B = PARIO_PGAS_BLOCK_FIT is UPC's "[*]": B = ceil(count / nranks), the
 * largest block that gives every rank at most one block.
 *
 * ---- Pointers-to-shared -----------------------------------------------------
 * A pario_pgas_ptr is a value (rank, phase, address) plus the type it points
 * to (element size, block factor) and the number of ranks, so arithmetic needs
 * nothing else. Being a value, it may be stored in shared memory and used by
 * any rank of the same context. Adding n moves n elements on in array order:
 * inside a block the address grows by elem_size, at the end of a block the
 * pointer moves to phase 0 of the next rank, and after the last rank to the
 * next block of rank 0 (UPC 6.4.2). With B = 0 only the address moves. The
 * difference of two pointers into one array is the difference of their
 * element indices. A pointer with nranks == 0 is the null pointer-to-shared.
 * The representation is public and what the inline code works on: a
 * node-local access needs rank (an index into the context's table of mapped
 * segments, NULL for ranks of other nodes) and addr (the offset in that
 * segment); a step inside a block changes addr and phase only, a step to the
 * next block also rank. Arrays carry precomputed divisors by B and nranks,
 * so an element's pointer from its index takes two multiplications, and an
 * index kind (pario_pgas_elem_loc) by which an element's owner and address
 * take shifts or one multiplication for the common layouts.
 *
 * ---- Access and the memory model ---------------------------------------------
 * Accesses are relaxed unless named strict (UPC's default):
 *   - relaxed get/put/memget/memput/memcpy/memset: a blocking call; when it
 *     returns, a get's data is in the buffer and a put's data is visible at
 *     the owner (gas's remote completion). Relaxed accesses to different
 *     locations may be seen by other ranks in any order until the next fence,
 *     barrier, lock or unlock; the layer itself never reorders one rank's
 *     accesses to the same location.
 *   - strict get/put: pario_pgas_fence before and after the access, so it is
 *     ordered after every earlier and before every later shared access of the
 *     calling rank (UPC 5.1.2.3).
 *   - pario_pgas_fence: gas quiet (every put of the rank remotely complete)
 *     and a sequentially consistent thread fence (loads and stores through
 *     cast-to-local pointers ordered too).
 *   - barrier, and notify...wait: every access of every rank before its
 *     notify is complete and visible to every rank after its wait.
 *   - lock acquires (accesses after it see what the previous holder did
 *     before unlock); unlock releases (fence first).
 * The fast path: an element on the caller's rank or on a rank of the same
 * node (gas maps node-local peers' segments) is read and written with a plain
 * load/store through the mapping, inline in this header; other elements go
 * through gas put/get (MPI RMA between nodes). get/put test the pointer
 * first; load/store (below, "unchecked element access") do not, as UPC's *p
 * does not, and cost one table load, one branch and the access.
 *
 * ---- Errors -------------------------------------------------------------------
 * Every function returns PARIO_OK or a pario_err code and keeps a message in
 * the context (pario_pgas_last_error). No bad input to a checked call crashes
 * or hangs (the unchecked ones, load/store, load_at/store_at, elem,
 * elem_loc, ptr_add, ptr_inc, are listed with load/store below):
 *   - index or range outside the array, a range running past the local block
 *     of a cast: PARIO_ERR_ARG, the message names the index;
 *   - a pointer that does not point into a shared heap (null, made up, of
 *     another team size, address outside the heap): PARIO_ERR_ARG;
 *   - freeing what is not allocated (twice, or never): PARIO_ERR_REQUEST;
 *   - unlocking a lock the caller does not hold, freeing a held lock,
 *     wait without notify, notify twice: PARIO_ERR_REQUEST;
 *   - collective calls whose arguments differ across ranks (all_alloc sizes,
 *     barrier values): PARIO_ERR_NOT_SAME on every rank;
 *   - a heap too full: PARIO_ERR_NO_MEM; rank outside the team: PARIO_ERR_RANK.
 * A collective call returns the same code on every rank.
 */
#ifndef PARIO_PGAS_H
#define PARIO_PGAS_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "pario/gas.h"
#include "pario/pario.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Block factor for UPC's "[*]": ceil(count / nranks) elements per block. */
#define PARIO_PGAS_BLOCK_FIT UINT64_MAX
/* Barrier value meaning "no expression" (UPC's plain upc_notify;). */
#define PARIO_PGAS_ANY INT64_MIN

typedef struct pario_pgas pario_pgas;

/* Sizes of one rank's heaps. Zero fields take the defaults below. Every rank
 * must pass the same sizes (else PARIO_ERR_NOT_SAME on every rank). */
typedef struct pario_pgas_config {
    size_t shared_heap_bytes; /* symmetric heap per rank (arrays with B >= 1) */
    size_t local_heap_bytes;  /* local heap per rank (B = 0 arrays, locks) */
} pario_pgas_config;

/* Defaults: enough for the tests and small benchmarks while every rank of an
 * 8-rank run on one machine still maps its peers' segments cheaply. */
#define PARIO_PGAS_DEFAULT_SHARED_HEAP ((size_t)16 << 20)
#define PARIO_PGAS_DEFAULT_LOCAL_HEAP ((size_t)4 << 20)

/* ---- context -------------------------------------------------------------- */

/* Collective over comm. cfg may be NULL (defaults). err gets the message of a
 * failure (may be NULL). */
int pario_pgas_init(MPI_Comm comm, const pario_pgas_config *cfg, pario_pgas **ctx,
                    pario_error *err);
/* Collective. Frees the context (and every array and lock in it); *ctx = NULL.
 * A notify still waiting for its wait is completed first. */
int pario_pgas_finalize(pario_pgas **ctx);
const pario_error *pario_pgas_last_error(const pario_pgas *ctx);
/* The gas team underneath (for mixing gas calls with pgas ones). */
pario_gas_team *pario_pgas_team(pario_pgas *ctx);

/* The part of a context that the inline functions below read. A context
 * begins with it. Read-only for callers. */
typedef struct pario_pgas_local_map {
    unsigned char *const *base; /* [rank] mapped segment, NULL if not on this node */
    uint64_t heap_lo;           /* first heap offset, the same in every segment */
    uint64_t heap_hi;           /* end of the heaps */
    uint32_t nranks;            /* THREADS */
    uint32_t rank;              /* MYTHREAD */
} pario_pgas_local_map;

static inline const pario_pgas_local_map *pario_pgas_map(const pario_pgas *ctx) {
    return (const pario_pgas_local_map *)(const void *)ctx;
}
static inline int pario_pgas_threads(const pario_pgas *ctx) {
    return (int)pario_pgas_map(ctx)->nranks;
}
static inline int pario_pgas_mythread(const pario_pgas *ctx) {
    return (int)pario_pgas_map(ctx)->rank;
}

/* ---- pointers-to-shared ----------------------------------------------------- */

typedef struct pario_pgas_ptr {
    uint64_t addr;      /* addrfield: byte offset in the owner's segment */
    uint64_t phase;     /* phaseof: element index within its block (0 if B = 0) */
    uint64_t block;     /* block factor B of the pointed-to type; 0 = indefinite */
    uint32_t elem_size; /* bytes of the pointed-to type */
    uint32_t rank;      /* threadof: owning rank */
    uint32_t nranks;    /* ranks of the context; 0 = null pointer-to-shared */
    uint32_t reserved;  /* zero */
} pario_pgas_ptr;

static inline int pario_pgas_ptr_is_null(pario_pgas_ptr p) {
    return p.nranks == 0;
}
static inline int pario_pgas_threadof(pario_pgas_ptr p) {
    return (int)p.rank;
}
static inline uint64_t pario_pgas_phaseof(pario_pgas_ptr p) {
    return p.phase;
}
static inline uint64_t pario_pgas_addrfield(pario_pgas_ptr p) {
    return p.addr;
}
static inline pario_pgas_ptr pario_pgas_resetphase(pario_pgas_ptr p) {
    p.phase = 0;
    return p;
}

/* The fields pointer arithmetic moves: the rest of a pointer (block factor,
 * element size, ranks) stays as it was. */
typedef struct pario_pgas_place {
    uint64_t addr;
    uint64_t phase;
    uint32_t rank;
} pario_pgas_place;

/* Where p + n elements lands, any n: the general case, with divisions (out of
 * line; pario_pgas_ptr_add calls it for steps that leave the block other than
 * to the next one). Only the place comes back, so that in a loop of steps the
 * compiler sees the pointer's layout unchanged and keeps it in registers. */
pario_pgas_place pario_pgas_ptr_place_any(pario_pgas_ptr p, int64_t n);
static inline pario_pgas_ptr pario_pgas_ptr_at_place(pario_pgas_ptr p, pario_pgas_place to) {
    p.addr = to.addr;
    p.phase = to.phase;
    p.rank = to.rank;
    return p;
}
/* p + n elements in array order, any n: the general case. */
pario_pgas_ptr pario_pgas_ptr_add_any(pario_pgas_ptr p, int64_t n);

/* From the last element of a block to the first of the next block in array
 * order: the next rank, or rank 0 one row further on. */
static inline __attribute__((always_inline)) pario_pgas_ptr
pario_pgas_next_block(pario_pgas_ptr p) {
    uint64_t back = (p.block - 1) * p.elem_size; /* to the block's start */
    if (p.rank + 1 < p.nranks) {
        p.rank++;
        p.addr -= back;
    } else {
        p.rank = 0;
        p.addr += p.elem_size; /* block start + B elements */
    }
    p.phase = 0;
    return p;
}

/* p + 1 (UPC's p++): inside a block the address grows by the element size and
 * the phase by one (one compare, taken at block ends only); from a block's
 * last element to the next block a few more integer operations; with B = 0
 * only the address moves. No division, no call. */
static inline __attribute__((always_inline)) pario_pgas_ptr pario_pgas_ptr_inc(pario_pgas_ptr p) {
    if (__builtin_expect(p.phase + 1 < p.block, 1)) {
        p.phase++;
        p.addr += p.elem_size;
        return p;
    }
    if (p.block == 0) {
        p.addr += p.elem_size;
        return p;
    }
    return pario_pgas_next_block(p);
}

/* p + n elements in array order (n may be negative). Always inline: a step
 * that stays in the block (either sign) is one unsigned compare and two
 * additions, a step of one to the next block is pario_pgas_next_block, a
 * step of one row (B * nranks elements: the next element of the same rank
 * and phase, upc_forall's step over a B = 1 array) moves the address only,
 * and any other step calls pario_pgas_ptr_add_any. */
static inline __attribute__((always_inline)) pario_pgas_ptr pario_pgas_ptr_add(pario_pgas_ptr p,
                                                                               int64_t n) {
    uint64_t to = p.phase + (uint64_t)n; /* wraps past B when n < -phase */
    if (p.block == 0 || to < p.block) {
        p.addr += (uint64_t)n * p.elem_size;
        p.phase = p.block == 0 ? p.phase : to;
        return p;
    }
    if (n == 1 && p.nranks > 0)
        return pario_pgas_next_block(p);
    if ((uint64_t)n == p.block * p.nranks) { /* one row on: same rank and phase */
        p.addr += p.block * p.elem_size;
        return p;
    }
    return pario_pgas_ptr_at_place(p, pario_pgas_ptr_place_any(p, n));
}

/* A step of n elements worked out once for pointers of one type (block
 * factor, element size, ranks), as a compiler strength-reduces p += n with
 * n constant in a loop: a step of whole rows (n a multiple of B * nranks,
 * e.g. upc_forall's p += THREADS over a B = 1 array; any n when B = 0)
 * keeps rank and phase and moves the address by a fixed number of bytes;
 * a step of one is pario_pgas_ptr_inc's and any other pario_pgas_ptr_add's. */
typedef struct pario_pgas_step {
    int64_t n;      /* elements */
    uint64_t bytes; /* the address's move when rows */
    uint32_t rows;  /* 1: a step of whole rows */
    uint32_t reserved;
} pario_pgas_step;

static inline pario_pgas_step pario_pgas_step_of(pario_pgas_ptr p, int64_t n) {
    pario_pgas_step st = {n, 0, 0, 0};
    int64_t row = (int64_t)(p.block * p.nranks);
    if (p.nranks != 0 && (p.block == 0 || (row > 0 && n % row == 0))) {
        st.rows = 1; /* n / row rows of B elements each (B = 0: n elements) */
        st.bytes = (uint64_t)(p.block == 0 ? n : n / row * (int64_t)p.block) * p.elem_size;
    }
    return st;
}

/* p + st.n for a pointer of the type st was worked out for (a step of one
 * is pario_pgas_ptr_inc's). */
static inline __attribute__((always_inline)) pario_pgas_ptr
pario_pgas_ptr_step(pario_pgas_ptr p, pario_pgas_step st) {
    if (st.rows) {
        p.addr += st.bytes;
        return p;
    }
    return st.n == 1 ? pario_pgas_ptr_inc(p) : pario_pgas_ptr_add(p, st.n);
}

/* p - q in elements, for two pointers into one array (same type). */
static inline int64_t pario_pgas_ptr_diff(pario_pgas_ptr p, pario_pgas_ptr q) {
    int64_t es = (int64_t)p.elem_size;
    if (p.block == 0)
        return ((int64_t)p.addr - (int64_t)q.addr) / es;
    int64_t b = (int64_t)p.block;
    int64_t rows =
        (((int64_t)p.addr - (int64_t)p.phase * es) - ((int64_t)q.addr - (int64_t)q.phase * es)) /
        (b * es);
    int64_t pos_p = (int64_t)p.rank * b + (int64_t)p.phase;
    int64_t pos_q = (int64_t)q.rank * b + (int64_t)q.phase;
    return rows * b * (int64_t)p.nranks + pos_p - pos_q;
}

/* <0, 0, >0 as p is before, at or after q (pointers into one array). */
static inline int pario_pgas_ptr_cmp(pario_pgas_ptr p, pario_pgas_ptr q) {
    int64_t d = pario_pgas_ptr_diff(p, q);
    return d < 0 ? -1 : d > 0;
}
static inline int pario_pgas_ptr_eq(pario_pgas_ptr p, pario_pgas_ptr q) {
    return p.rank == q.rank && p.addr == q.addr && p.nranks == q.nranks;
}

/* The same location seen as another type (UPC's cast between pointer-to-
 * shared types): rank and address are kept; the phase becomes 0 when the
 * block factor or the element size changes (UPC 6.4.3). */
static inline pario_pgas_ptr pario_pgas_ptr_retype(pario_pgas_ptr p, uint32_t elem_size,
                                                   uint64_t block) {
    if (p.block != block || p.elem_size != elem_size)
        p.phase = 0;
    p.elem_size = elem_size;
    p.block = block;
    return p;
}

/* ---- shared arrays ------------------------------------------------------------ */

/* Where an array came from (decides who frees it and how). */
typedef enum pario_pgas_origin {
    PARIO_PGAS_ALL = 1, /* pario_pgas_all_alloc: collective */
    PARIO_PGAS_GLOBAL,  /* pario_pgas_global_alloc: one rank, spread over all */
    PARIO_PGAS_LOCAL,   /* pario_pgas_alloc: one rank, all on the caller */
} pario_pgas_origin;

/* A shared array: a value, like a pointer-to-shared; may be copied, stored in
 * shared memory and used by any rank. base points at element 0. */
typedef struct pario_pgas_array {
    pario_pgas_ptr base;
    uint64_t count; /* elements */
    uint64_t id;    /* allocation serial: a second free of the same array fails */
    uint32_t origin;
    /* Precomputed division for pario_pgas_elem (set by the alloc calls; an
     * array made by hand leaves them zero and elem divides): when index_mul
     * is 1, x / B == pario_pgas_div_mul(x, block_mul) for every position
     * x <= count + B * nranks and x / nranks == pario_pgas_div_mul(x,
     * ranks_mul) for every block number up to that position's. */
    uint32_t index_mul;
    uint64_t block_mul; /* ceil(2^63 / B) */
    uint64_t ranks_mul; /* ceil(2^63 / nranks) */
    /* The formula of the index path (pario_pgas_elem_loc), chosen by the
     * alloc calls from the layout: a pario_pgas_index_kind. An array made by
     * hand leaves it 0 (PARIO_PGAS_INDEX_ANY: elem's way). */
    uint32_t index_kind;
    uint32_t block_shift; /* log2 B, for PARIO_PGAS_INDEX_POW2 (else 0) */
    uint32_t ranks_shift; /* log2 nranks, for PARIO_PGAS_INDEX_POW2 (else 0) */
    uint32_t reserved;    /* zero */
} pario_pgas_array;

/* How the index path finds element i (x is i plus the base's position in
 * its row, base.rank * B + base.phase; see pario_pgas_elem_loc):
 *   ANY       no shortcut: pario_pgas_elem (divisors) or the general step;
 *   ONE_RANK  every element on the base's rank in index order (B = 0, or a
 *             single rank): the address is base + i elements;
 *   CYCLIC    B = 1: owner x mod nranks, local index x / nranks (one
 *             multiplication by the precomputed divisor);
 *   ONE_ROW   at most one block per rank ([*], or few blocks): owner x / B,
 *             no row to find;
 *   POW2      B and nranks powers of two: shifts and masks;
 *   DIV       the general case by the precomputed divisors (two
 *             multiplications, no division). */
typedef enum pario_pgas_index_kind {
    PARIO_PGAS_INDEX_ANY = 0,
    PARIO_PGAS_INDEX_ONE_RANK,
    PARIO_PGAS_INDEX_CYCLIC,
    PARIO_PGAS_INDEX_ONE_ROW,
    PARIO_PGAS_INDEX_POW2,
    PARIO_PGAS_INDEX_DIV,
} pario_pgas_index_kind;

/* Collective (upc_all_alloc): every rank passes the same count, elem_size and
 * block (else PARIO_ERR_NOT_SAME on every rank) and gets the same array.
 * block: B >= 1, 0 (indefinite: all on rank 0) or PARIO_PGAS_BLOCK_FIT.
 * Contents are undefined, as in UPC. count 0 is allowed (an empty array). */
int pario_pgas_all_alloc(pario_pgas *ctx, uint64_t count, uint32_t elem_size, uint64_t block,
                         pario_pgas_array *a);
/* Not collective (upc_global_alloc): the same layout, allocated by the caller
 * alone. Other ranks learn of the array from the caller (it is a value). */
int pario_pgas_global_alloc(pario_pgas *ctx, uint64_t count, uint32_t elem_size, uint64_t block,
                            pario_pgas_array *a);
/* Not collective (upc_alloc): count elements, all on the caller (B = 0). */
int pario_pgas_alloc(pario_pgas *ctx, uint64_t count, uint32_t elem_size, pario_pgas_array *a);
/* Collective (upc_all_free): every rank passes the same array. */
int pario_pgas_all_free(pario_pgas *ctx, const pario_pgas_array *a);
/* Not collective (upc_free): any rank may free any array once. */
int pario_pgas_free(pario_pgas *ctx, const pario_pgas_array *a);

/* Elements of the array on rank (upc_affinitysize / element size). */
uint64_t pario_pgas_local_count(const pario_pgas_array *a, int rank);

/* Pointer to element i; PARIO_ERR_ARG naming i when i >= count. */
int pario_pgas_index(pario_pgas *ctx, const pario_pgas_array *a, uint64_t i, pario_pgas_ptr *p);
/* x / d by one multiplication, with mul = ceil(2^63 / d): exact when
 * x * (mul * d - 2^63) < 2^63 (a divisor with mul * d == 2^63, a power of
 * two, needs x < 2^63), which pario_pgas_div_mul_exact tells. */
static inline uint64_t pario_pgas_div_mul(uint64_t x, uint64_t mul) {
    __extension__ typedef unsigned __int128 pario_pgas_u128;
    return (uint64_t)(((pario_pgas_u128)mul * (x << 1)) >> 64);
}
/* mul for d >= 1, and whether pario_pgas_div_mul(x, mul) == x / d for every
 * x <= xmax (1) or not (0). */
int pario_pgas_div_mul_exact(uint64_t d, uint64_t xmax, uint64_t *mul);

/* The same without the check (i < count is the caller's promise; i == count
 * gives the end pointer). Element i is in block i / B, on rank (i / B) %
 * nranks, row (i / B) / nranks. With the precomputed divisors (index_mul),
 * two multiplications take the place of the divisions; an array without
 * them, or with B = 0, goes to pario_pgas_elem_any. The divisors depend
 * on B, nranks and the array's size only, so elem also serves a copy of the
 * array whose base was moved to one of its elements (a view), as long as
 * the view stays inside the array it was made from. */
/* elem's general case: pario_pgas_ptr_add_any from the base (out of line, so
 * that the inline path copies nothing to the stack). */
pario_pgas_ptr pario_pgas_elem_any(const pario_pgas_array *a, uint64_t i);
static inline __attribute__((always_inline)) pario_pgas_ptr
pario_pgas_elem(const pario_pgas_array *a, uint64_t i) {
    pario_pgas_ptr p = a->base;
    if (__builtin_expect(a->index_mul != 1, 0))
        return pario_pgas_elem_any(a, i);
    uint64_t from = p.rank * p.block; /* the base's position in its row, less its phase */
    uint64_t x = from + p.phase + i;
    uint64_t blk = pario_pgas_div_mul(x, a->block_mul);
    uint64_t row = pario_pgas_div_mul(blk, a->ranks_mul);
    p.phase = x - blk * p.block;
    p.rank = (uint32_t)(blk - row * p.nranks);
    /* local index row * B + phase, less the base's (its phase) */
    p.addr += (from + i - (blk - row) * p.block) * p.elem_size;
    return p;
}

/* ---- index to address (UPC's a[i]) ----------------------------------------------- */

/* Where element i of a lives: the owner's rank and the byte offset in its
 * segment. No phase, so less work than pario_pgas_elem. */
typedef struct pario_pgas_loc {
    uint64_t addr;
    uint32_t rank;
} pario_pgas_loc;

/* Where element i of a lives, before the element size comes in: the owner's
 * rank and the element's index in the owner's part of the array, counted
 * from the owner's first block of a's row 0 (so for a view, whose base sits at
 * phase p of its rank, the base itself is local index p). It depends only on
 * a's layout (see pario_pgas_same_layout), so arrays of one layout (UPC
 * arrays of one type) share it: a loop over a[i], b[i], c[i] finds the slot of
 * i once, as a compiler finds the thread and offset of i once for arrays of
 * one type. i < count is the caller's promise (unchecked); computed as index
 * kind kind says (a's index_kind, or PARIO_PGAS_INDEX_ANY). Always inline:
 * with kind a constant, as in a loop written once per kind, only that
 * kind's arithmetic remains (UPC compilers know the layout from the type):
 *   ONE_RANK  base phase + i
 *   CYCLIC    one multiplication (row = x / nranks), owner x - row * nranks
 *   ONE_ROW   one multiplication (owner = x / B)
 *   POW2      two shifts, a mask and one more shift
 *   DIV       two multiplications (block and row), no division
 * where x = base.rank * B + base.phase + i (i for an array as allocated);
 * ANY goes the general way (pario_pgas_ptr_place_any from the base). */
typedef struct pario_pgas_slot {
    uint64_t local; /* element index in the owner's part (see above) */
    uint32_t rank;  /* owner */
} pario_pgas_slot;

static inline __attribute__((always_inline)) pario_pgas_slot
pario_pgas_index_slot(const pario_pgas_array *a, uint64_t i, uint32_t kind) {
    const pario_pgas_ptr b = a->base;
    uint64_t x = (uint64_t)b.rank * b.block + b.phase + i, blk, row;
    /* tests, not a switch: a jump table costs more than the few compares */
    if (kind == PARIO_PGAS_INDEX_ONE_RANK)
        return (pario_pgas_slot){b.phase + i, b.rank};
    if (kind == PARIO_PGAS_INDEX_CYCLIC) { /* B = 1: block x, phase 0 */
        row = pario_pgas_div_mul(x, a->ranks_mul);
        return (pario_pgas_slot){row, (uint32_t)(x - row * b.nranks)};
    }
    if (kind == PARIO_PGAS_INDEX_ONE_ROW) {
        blk = pario_pgas_div_mul(x, a->block_mul);
        return (pario_pgas_slot){x - blk * b.block, (uint32_t)blk};
    }
    if (kind == PARIO_PGAS_INDEX_POW2) {
        blk = x >> a->block_shift;
        row = blk >> a->ranks_shift;
        return (pario_pgas_slot){x - ((blk - row) << a->block_shift),
                                 (uint32_t)(blk & (b.nranks - 1))};
    }
    if (kind == PARIO_PGAS_INDEX_DIV) {
        blk = pario_pgas_div_mul(x, a->block_mul);
        row = pario_pgas_div_mul(blk, a->ranks_mul);
        return (pario_pgas_slot){x - (blk - row) * b.block, (uint32_t)(blk - row * b.nranks)};
    }
    pario_pgas_place to = pario_pgas_ptr_place_any(b, (int64_t)i);
    /* back from the address to the local index (the base is local index
     * phase; the element may lie before the base in its owner's part) */
    int64_t moved = (int64_t)(to.addr - b.addr) / (int64_t)b.elem_size;
    return (pario_pgas_slot){b.phase + (uint64_t)moved, to.rank};
}

/* The element of a at slot s, for es-byte elements (a's element size). */
static inline __attribute__((always_inline)) pario_pgas_loc
pario_pgas_slot_loc(const pario_pgas_array *a, pario_pgas_slot s, uint32_t es) {
    return (pario_pgas_loc){a->base.addr + (s.local - a->base.phase) * es, s.rank};
}

/* 1 when every index has the same slot in a and b (same count, block factor,
 * ranks, base position and index arithmetic; element sizes may differ), so
 * one pario_pgas_index_slot serves both: arrays made by the same allocation
 * call with the same count and block factor are. */
int pario_pgas_same_layout(const pario_pgas_array *a, const pario_pgas_array *b);

/* Element i of a, for i < count (the caller's promise, unchecked), of
 * es-byte elements, computed as index kind kind says: the slot of i, then
 * its address. Like elem, it serves a view of the array (its base moved to
 * one of its elements) inside the array it was made from. */
static inline __attribute__((always_inline)) pario_pgas_loc
pario_pgas_elem_loc_as(const pario_pgas_array *a, uint64_t i, uint32_t es, uint32_t kind) {
    if (kind == PARIO_PGAS_INDEX_ANY) { /* straight to the address */
        pario_pgas_place to = pario_pgas_ptr_place_any(a->base, (int64_t)i);
        return (pario_pgas_loc){to.addr, to.rank};
    }
    return pario_pgas_slot_loc(a, pario_pgas_index_slot(a, i, kind), es);
}
/* The same for a's own layout, when the kind is not a constant: one-rank
 * layouts by their shortcut, every other with divisors by DIV's two
 * multiplications (a test per kind would cost more than it saves), the
 * rest the general way. es is the element size (a constant in the typed
 * forms). */
static inline __attribute__((always_inline)) pario_pgas_loc
pario_pgas_elem_loc_es(const pario_pgas_array *a, uint64_t i, uint32_t es) {
    if (a->index_kind == PARIO_PGAS_INDEX_ONE_RANK)
        return pario_pgas_elem_loc_as(a, i, es, PARIO_PGAS_INDEX_ONE_RANK);
    if (a->index_mul == 1)
        return pario_pgas_elem_loc_as(a, i, es, PARIO_PGAS_INDEX_DIV);
    return pario_pgas_elem_loc_as(a, i, es, PARIO_PGAS_INDEX_ANY);
}
static inline __attribute__((always_inline)) pario_pgas_loc
pario_pgas_elem_loc(const pario_pgas_array *a, uint64_t i) {
    return pario_pgas_elem_loc_es(a, i, a->base.elem_size);
}

/* ---- cast to local ------------------------------------------------------------- */

/* Address of p's element in this process: its own rank's memory and that of
 * ranks on the same node. NULL where it cannot (another node, a pointer that
 * is not to shared memory). Any thread may use the result for loads and
 * stores until the array is freed; those accesses are relaxed. */
static inline __attribute__((always_inline)) void *pario_pgas_cast(const pario_pgas *ctx,
                                                                   pario_pgas_ptr p) {
    const pario_pgas_local_map *m = pario_pgas_map(ctx);
    /* Every test at once (no early exit): one branch on the access path. The
     * first address outside the heaps wraps around when addr < heap_lo. */
    uint64_t last_phase = p.block ? p.block - 1 : 0;
    int bad = (p.nranks != m->nranks) | (p.rank >= m->nranks) | (p.elem_size == 0) |
              (p.phase > last_phase) | (p.addr - m->heap_lo >= m->heap_hi - m->heap_lo) |
              (p.elem_size > m->heap_hi - p.addr);
    if (bad)
        return NULL;
    unsigned char *base = m->base[p.rank];
    return base ? base + p.addr : NULL;
}
/* Checked: a plain pointer to elements first .. first + count - 1 of a, which
 * must lie in one block of one rank this process maps (so they are
 * contiguous in memory). PARIO_ERR_ARG naming the index that breaks this:
 * outside the array, on a rank of another node, or past the local block. */
int pario_pgas_cast_range(pario_pgas *ctx, const pario_pgas_array *a, uint64_t first,
                          uint64_t count, void **local);
/* Checked: rank's whole part of a as one plain C array (UPC's idiom of
 * casting &a[MYTHREAD] and indexing the thread's elements locally): a
 * rank's elements lie one after another in its memory in index order, so
 * *local points at its first and *count (its local_count) follow. Local
 * element j of an array as allocated (base at rank 0, phase 0) is index
 * ((j / B) * nranks + rank) * B + j % B; arrays of one layout
 * (pario_pgas_same_layout) have the same index at the same j. A rank with no
 * elements gets NULL and 0. PARIO_ERR_ARG naming the rank when it is outside
 * the team or on another node, or for an array that is not one. */
int pario_pgas_cast_part(pario_pgas *ctx, const pario_pgas_array *a, int rank, void **local,
                         uint64_t *count);
/* The inverse (Berkeley UPC's bupc_inverse_cast): the pointer-to-shared of a
 * local address inside a mapped heap, typed as elem_size with an indefinite
 * block. PARIO_ERR_ARG for an address that is not in shared memory. */
int pario_pgas_inverse_cast(pario_pgas *ctx, const void *local, uint32_t elem_size,
                            pario_pgas_ptr *p);

/* ---- element access ------------------------------------------------------------ */

/* Checked slow paths behind the inline functions below. */
int pario_pgas_get_slow(pario_pgas *ctx, pario_pgas_ptr p, void *dst);
int pario_pgas_put_slow(pario_pgas *ctx, pario_pgas_ptr p, const void *src);

/* Copies one element; sizes 1, 2, 4 and 8 are single loads and stores. */
static inline void pario_pgas_copy_elem(void *dst, const void *src, uint32_t bytes) {
    switch (bytes) {
    case 8:
        memcpy(dst, src, 8);
        break;
    case 4:
        memcpy(dst, src, 4);
        break;
    case 2:
        memcpy(dst, src, 2);
        break;
    case 1:
        memcpy(dst, src, 1);
        break;
    default:
        memcpy(dst, src, bytes);
    }
}

/* Relaxed read / write of the element p points to (p->elem_size bytes). */
static inline __attribute__((always_inline)) int pario_pgas_get(pario_pgas *ctx, pario_pgas_ptr p,
                                                                void *dst) {
    void *local = pario_pgas_cast(ctx, p);
    if (!local)
        return pario_pgas_get_slow(ctx, p, dst);
    pario_pgas_copy_elem(dst, local, p.elem_size);
    return PARIO_OK;
}
static inline __attribute__((always_inline)) int pario_pgas_put(pario_pgas *ctx, pario_pgas_ptr p,
                                                                const void *src) {
    void *local = pario_pgas_cast(ctx, p);
    if (!local)
        return pario_pgas_put_slow(ctx, p, src);
    pario_pgas_copy_elem(local, src, p.elem_size);
    return PARIO_OK;
}

/* Strict: ordered after every earlier and before every later access. */
int pario_pgas_get_strict(pario_pgas *ctx, pario_pgas_ptr p, void *dst);
int pario_pgas_put_strict(pario_pgas *ctx, pario_pgas_ptr p, const void *src);
/* By index, checked against the array's bounds (PARIO_ERR_ARG naming i). */
int pario_pgas_get_at(pario_pgas *ctx, const pario_pgas_array *a, uint64_t i, void *dst);
int pario_pgas_put_at(pario_pgas *ctx, const pario_pgas_array *a, uint64_t i, const void *src);

/* ---- unchecked element access (UPC's x = *p and *p = x) ----------------------------- */

/* Which calls check their pointer:
 *   checked    get, put, get_strict, put_strict, get_at, put_at, cast,
 *              cast_range and every bulk call: a pointer that is not to
 *              shared memory or an index outside the array is an error
 *              (PARIO_ERR_ARG with a message), never a crash;
 *   unchecked  load and store below, load_at and store_at, the typed forms,
 *              elem, elem_loc, ptr_add, ptr_inc: the pointer (or index) must
 *              be valid, as for UPC's *p, where anything else is undefined
 *              behaviour.
 * load/store are relaxed accesses like get/put, built for loops: when the
 * element is on a rank of this node the access is one load of the segment
 * table entry of p's rank, one branch on it (is it mapped here?) and the
 * element's load or store, inline; the compiler may keep and reorder them
 * as it does plain C accesses, within UPC's rules for relaxed accesses (the
 * same location in program order; fence, barrier, lock and the strict calls
 * are function calls, which it cannot move accesses across). Off node they
 * call pario_pgas_load_far / pario_pgas_store_far, which check p's rank and
 * address against the heaps and use gas get/put.
 * Debug builds check too: with PARIO_PGAS_DEBUG_CHECKS nonzero (the default
 * when NDEBUG is not defined) every load and store first checks its pointer
 * as get/put do, and the typed ones also its element size against the
 * type's, and returns PARIO_ERR_ARG with a message instead of accessing. */
#ifndef PARIO_PGAS_DEBUG_CHECKS
#ifdef NDEBUG
#define PARIO_PGAS_DEBUG_CHECKS 0
#else
#define PARIO_PGAS_DEBUG_CHECKS 1
#endif
#endif

/* The address of p's element in this process, or NULL when its rank is not
 * on this node; no other test (unchecked cast). */
static inline __attribute__((always_inline)) unsigned char *
pario_pgas_local_unchecked(const pario_pgas *ctx, pario_pgas_ptr p) {
    unsigned char *base = pario_pgas_map(ctx)->base[p.rank];
    return base ? base + p.addr : NULL;
}

/* The checks of get/put for an access of bytes bytes through p (bytes must
 * equal p's element size): PARIO_OK or PARIO_ERR_ARG naming what. */
int pario_pgas_access_check(pario_pgas *ctx, pario_pgas_ptr p, uint32_t bytes, const char *what);

/* Off-node halves of load/store: bytes (1 .. 8 for the word forms) at addr
 * of rank's segment; PARIO_ERR_ARG when rank is outside the team or the
 * bytes outside the heaps, else gas get/put (remote completion, as put). */
typedef struct pario_pgas_word {
    int rc;        /* PARIO_OK or the error code */
    uint64_t bits; /* the bytes read, from the first byte of bits */
} pario_pgas_word;
pario_pgas_word pario_pgas_load_far(pario_pgas *ctx, uint32_t rank, uint64_t addr, uint32_t bytes);
int pario_pgas_store_far(pario_pgas *ctx, uint32_t rank, uint64_t addr, uint64_t bits,
                         uint32_t bytes);
int pario_pgas_get_far(pario_pgas *ctx, uint32_t rank, uint64_t addr, void *dst, uint32_t bytes);
int pario_pgas_put_far(pario_pgas *ctx, uint32_t rank, uint64_t addr, const void *src,
                       uint32_t bytes);

/* The checks of the indexed forms below (debug builds): a is an array of
 * this context and i < count (else PARIO_ERR_ARG naming i), and bytes is its
 * element size. */
int pario_pgas_index_check(pario_pgas *ctx, const pario_pgas_array *a, uint64_t i, uint32_t bytes,
                           const char *what);

/* Relaxed read / write of bytes bytes at l: inline when l's rank is mapped
 * here, else gas (pario_pgas_get_far / put_far). Unchecked. */
static inline __attribute__((always_inline)) int
pario_pgas_load_loc(pario_pgas *ctx, pario_pgas_loc l, void *dst, uint32_t bytes) {
    unsigned char *base = pario_pgas_map(ctx)->base[l.rank];
    if (__builtin_expect(base == NULL, 0))
        return pario_pgas_get_far(ctx, l.rank, l.addr, dst, bytes);
    pario_pgas_copy_elem(dst, base + l.addr, bytes);
    return PARIO_OK;
}
static inline __attribute__((always_inline)) int
pario_pgas_store_loc(pario_pgas *ctx, pario_pgas_loc l, const void *src, uint32_t bytes) {
    unsigned char *base = pario_pgas_map(ctx)->base[l.rank];
    if (__builtin_expect(base == NULL, 0))
        return pario_pgas_put_far(ctx, l.rank, l.addr, src, bytes);
    pario_pgas_copy_elem(base + l.addr, src, bytes);
    return PARIO_OK;
}

static inline pario_pgas_loc pario_pgas_ptr_loc(pario_pgas_ptr p) {
    return (pario_pgas_loc){p.addr, p.rank};
}

/* Relaxed read / write of p's element (p.elem_size bytes), unchecked. */
static inline __attribute__((always_inline)) int pario_pgas_load(pario_pgas *ctx, pario_pgas_ptr p,
                                                                 void *dst) {
    if (PARIO_PGAS_DEBUG_CHECKS) {
        int rc = pario_pgas_access_check(ctx, p, p.elem_size, "pario_pgas_load");
        if (rc != PARIO_OK)
            return rc;
    }
    return pario_pgas_load_loc(ctx, pario_pgas_ptr_loc(p), dst, p.elem_size);
}
static inline __attribute__((always_inline)) int pario_pgas_store(pario_pgas *ctx, pario_pgas_ptr p,
                                                                  const void *src) {
    if (PARIO_PGAS_DEBUG_CHECKS) {
        int rc = pario_pgas_access_check(ctx, p, p.elem_size, "pario_pgas_store");
        if (rc != PARIO_OK)
            return rc;
    }
    return pario_pgas_store_loc(ctx, pario_pgas_ptr_loc(p), src, p.elem_size);
}

/* Indexed (UPC's x = a[i] and a[i] = x): element i of a by the index path
 * (pario_pgas_elem_loc), i < count unchecked. Debug builds check a and i
 * (PARIO_ERR_ARG naming i) as pario_pgas_get_at does. */
static inline __attribute__((always_inline)) int
pario_pgas_load_at(pario_pgas *ctx, const pario_pgas_array *a, uint64_t i, void *dst) {
    if (PARIO_PGAS_DEBUG_CHECKS) {
        int rc = pario_pgas_index_check(ctx, a, i, a->base.elem_size, "pario_pgas_load_at");
        if (rc != PARIO_OK)
            return rc;
    }
    return pario_pgas_load_loc(ctx, pario_pgas_elem_loc(a, i), dst, a->base.elem_size);
}
static inline __attribute__((always_inline)) int
pario_pgas_store_at(pario_pgas *ctx, const pario_pgas_array *a, uint64_t i, const void *src) {
    if (PARIO_PGAS_DEBUG_CHECKS) {
        int rc = pario_pgas_index_check(ctx, a, i, a->base.elem_size, "pario_pgas_store_at");
        if (rc != PARIO_OK)
            return rc;
    }
    return pario_pgas_store_loc(ctx, pario_pgas_elem_loc(a, i), src, a->base.elem_size);
}

/* Typed forms, for elements of sizeof(T) bytes (UPC's shared T *p, shared T a[]):
 *   int pario_pgas_load_NAME(ctx, p, T *v)         *v = *p
 *   int pario_pgas_store_NAME(ctx, p, T v)         *p = v
 *   int pario_pgas_load_NAME_at(ctx, a, i, T *v)   *v = a[i]
 *   int pario_pgas_store_NAME_at(ctx, a, i, T v)   a[i] = v
 *   int pario_pgas_load_NAME_loc(ctx, l, T *v), pario_pgas_store_NAME_loc(ctx, l, T v)
 *                                                  the access at a location (unchecked)
 * for NAME/T in double, float, i8 .. i64 (int8_t ..), u8 .. u64 (uint8_t ..).
 * The value travels in registers (no buffer in memory), and the element is
 * copied with memcpy, so accesses of one element as different types are
 * well defined. *v is left alone when the call fails. */
#define PARIO_PGAS_TYPED_ACCESS(NAME, T)                                                           \
    static inline __attribute__((always_inline)) int pario_pgas_load_##NAME##_loc(                 \
        pario_pgas *ctx, pario_pgas_loc l, T *v) {                                                 \
        unsigned char *base = pario_pgas_map(ctx)->base[l.rank];                                   \
        if (__builtin_expect(base != NULL, 1)) {                                                   \
            memcpy(v, base + l.addr, sizeof(T));                                                   \
            return PARIO_OK;                                                                       \
        }                                                                                          \
        pario_pgas_word w = pario_pgas_load_far(ctx, l.rank, l.addr, sizeof(T));                   \
        if (w.rc == PARIO_OK)                                                                      \
            memcpy(v, &w.bits, sizeof(T));                                                         \
        return w.rc;                                                                               \
    }                                                                                              \
    static inline __attribute__((always_inline)) int pario_pgas_store_##NAME##_loc(                \
        pario_pgas *ctx, pario_pgas_loc l, T v) {                                                  \
        unsigned char *base = pario_pgas_map(ctx)->base[l.rank];                                   \
        if (__builtin_expect(base != NULL, 1)) {                                                   \
            memcpy(base + l.addr, &v, sizeof(T));                                                  \
            return PARIO_OK;                                                                       \
        }                                                                                          \
        uint64_t bits = 0;                                                                         \
        memcpy(&bits, &v, sizeof(T));                                                              \
        return pario_pgas_store_far(ctx, l.rank, l.addr, bits, sizeof(T));                         \
    }                                                                                              \
    static inline __attribute__((always_inline)) int pario_pgas_load_##NAME(                       \
        pario_pgas *ctx, pario_pgas_ptr p, T *v) {                                                 \
        if (PARIO_PGAS_DEBUG_CHECKS) {                                                             \
            int rc = pario_pgas_access_check(ctx, p, sizeof(T), "pario_pgas_load_" #NAME);         \
            if (rc != PARIO_OK)                                                                    \
                return rc;                                                                         \
        }                                                                                          \
        return pario_pgas_load_##NAME##_loc(ctx, pario_pgas_ptr_loc(p), v);                        \
    }                                                                                              \
    static inline __attribute__((always_inline)) int pario_pgas_store_##NAME(                      \
        pario_pgas *ctx, pario_pgas_ptr p, T v) {                                                  \
        if (PARIO_PGAS_DEBUG_CHECKS) {                                                             \
            int rc = pario_pgas_access_check(ctx, p, sizeof(T), "pario_pgas_store_" #NAME);        \
            if (rc != PARIO_OK)                                                                    \
                return rc;                                                                         \
        }                                                                                          \
        return pario_pgas_store_##NAME##_loc(ctx, pario_pgas_ptr_loc(p), v);                       \
    }                                                                                              \
    static inline __attribute__((always_inline)) int pario_pgas_load_##NAME##_at(                  \
        pario_pgas *ctx, const pario_pgas_array *a, uint64_t i, T *v) {                            \
        if (PARIO_PGAS_DEBUG_CHECKS) {                                                             \
            int rc = pario_pgas_index_check(ctx, a, i, sizeof(T), "pario_pgas_load_" #NAME "_at"); \
            if (rc != PARIO_OK)                                                                    \
                return rc;                                                                         \
        }                                                                                          \
        return pario_pgas_load_##NAME##_loc(ctx, pario_pgas_elem_loc_es(a, i, sizeof(T)), v);      \
    }                                                                                              \
    static inline __attribute__((always_inline)) int pario_pgas_store_##NAME##_at(                 \
        pario_pgas *ctx, const pario_pgas_array *a, uint64_t i, T v) {                             \
        if (PARIO_PGAS_DEBUG_CHECKS) {                                                             \
            int rc =                                                                               \
                pario_pgas_index_check(ctx, a, i, sizeof(T), "pario_pgas_store_" #NAME "_at");     \
            if (rc != PARIO_OK)                                                                    \
                return rc;                                                                         \
        }                                                                                          \
        return pario_pgas_store_##NAME##_loc(ctx, pario_pgas_elem_loc_es(a, i, sizeof(T)), v);     \
    }

PARIO_PGAS_TYPED_ACCESS(double, double)
PARIO_PGAS_TYPED_ACCESS(float, float)
PARIO_PGAS_TYPED_ACCESS(i8, int8_t)
PARIO_PGAS_TYPED_ACCESS(i16, int16_t)
PARIO_PGAS_TYPED_ACCESS(i32, int32_t)
PARIO_PGAS_TYPED_ACCESS(i64, int64_t)
PARIO_PGAS_TYPED_ACCESS(u8, uint8_t)
PARIO_PGAS_TYPED_ACCESS(u16, uint16_t)
PARIO_PGAS_TYPED_ACCESS(u32, uint32_t)
PARIO_PGAS_TYPED_ACCESS(u64, uint64_t)

/* ---- bulk access ------------------------------------------------------------------ */

/* Elements first .. first + count - 1 of a, in array order, to or from a
 * contiguous local buffer of count * elem_size bytes. The range is split at
 * block boundaries into one transfer per contiguous run on one rank. A range
 * past the end of the array: PARIO_ERR_ARG naming the first index outside, and
 * nothing moves. */
int pario_pgas_memget(pario_pgas *ctx, void *dst, const pario_pgas_array *a, uint64_t first,
                      uint64_t count);
int pario_pgas_memput(pario_pgas *ctx, const pario_pgas_array *a, uint64_t first, const void *src,
                      uint64_t count);
/* Shared to shared, any ranks and layouts: count elements from src[src_first]
 * to dst[dst_first]. Both arrays must have the same element size. Ranges of
 * one array that overlap give undefined bytes, as with memcpy. */
int pario_pgas_memcpy(pario_pgas *ctx, const pario_pgas_array *dst, uint64_t dst_first,
                      const pario_pgas_array *src, uint64_t src_first, uint64_t count);
/* Every byte of elements first .. first + count - 1 set to value. */
int pario_pgas_memset(pario_pgas *ctx, const pario_pgas_array *a, uint64_t first, int value,
                      uint64_t count);

/* ---- non-blocking bulk access (UPC 1.3 upc_nb.h) ---------------------------------------- */

/* The same transfers as memget/memput/memcpy/memset, started by the call and
 * completed later. How: the range is checked and split into runs as for the
 * blocking calls; runs on ranks this process maps are copied in the call;
 * every other run is started as a gas non-blocking put/get, which between
 * nodes is an MPI_Rput/MPI_Rget in gas's passive-target epoch, and is left in
 * flight. (A memcpy piece between two ranks this process maps neither of
 * goes through a staging buffer, get then put, inside the call.) The MPI library moves those bytes
 * while the caller computes (how far without further MPI calls depends on its RMA component;
 * docs/pgas.md has the measurement). Completion waits for the requests and flushes the target
 * (remote completion of puts), as the blocking calls do.
 *
 * Explicit handles (upc_memcpy_nb family): *h names the transfer until
 * pario_pgas_sync or a successful pario_pgas_sync_attempt completes it; then
 * it is spent. A call that finished everything at once returns
 * PARIO_PGAS_COMPLETE_HANDLE, whose sync succeeds immediately. Syncing a
 * handle twice, or a value no call returned: PARIO_ERR_REQUEST naming the
 * handle, nothing else happens. Fences, strict accesses and barriers do not
 * complete explicit-handle transfers: until synced, their
 * local buffer must not be touched and the shared bytes are undefined to
 * other ranks.
 * Implicit handles (upc_memcpy_nbi family): pario_pgas_synci completes every
 * implicit transfer of the caller, pario_pgas_sync_attempti does when they
 * have all finished; pario_pgas_fence, strict accesses, barrier and notify,
 * lock release and finalize complete them too.
 * Bad arguments (range outside the array, element sizes differing, ...) fail
 * in the starting call with the blocking call's code and message, and nothing
 * moves; a failure after transfers started waits for them before returning
 * (no handle is given). Finalize completes transfers never synced. */
typedef uint64_t pario_pgas_handle;
#define PARIO_PGAS_COMPLETE_HANDLE ((pario_pgas_handle)0)

int pario_pgas_memget_nb(pario_pgas *ctx, void *dst, const pario_pgas_array *a, uint64_t first,
                         uint64_t count, pario_pgas_handle *h);
int pario_pgas_memput_nb(pario_pgas *ctx, const pario_pgas_array *a, uint64_t first,
                         const void *src, uint64_t count, pario_pgas_handle *h);
int pario_pgas_memcpy_nb(pario_pgas *ctx, const pario_pgas_array *dst, uint64_t dst_first,
                         const pario_pgas_array *src, uint64_t src_first, uint64_t count,
                         pario_pgas_handle *h);
int pario_pgas_memset_nb(pario_pgas *ctx, const pario_pgas_array *a, uint64_t first, int value,
                         uint64_t count, pario_pgas_handle *h);
/* upc_sync: blocks until the transfer of h is complete; h is then spent. */
int pario_pgas_sync(pario_pgas *ctx, pario_pgas_handle h);
/* upc_sync_attempt: *done = 1 (and h spent) when complete, else 0. */
int pario_pgas_sync_attempt(pario_pgas *ctx, pario_pgas_handle h, int *done);

int pario_pgas_memget_nbi(pario_pgas *ctx, void *dst, const pario_pgas_array *a, uint64_t first,
                          uint64_t count);
int pario_pgas_memput_nbi(pario_pgas *ctx, const pario_pgas_array *a, uint64_t first,
                          const void *src, uint64_t count);
int pario_pgas_memcpy_nbi(pario_pgas *ctx, const pario_pgas_array *dst, uint64_t dst_first,
                          const pario_pgas_array *src, uint64_t src_first, uint64_t count);
/* A memset_nbi with another value than one still in flight completes that one first. */
int pario_pgas_memset_nbi(pario_pgas *ctx, const pario_pgas_array *a, uint64_t first, int value,
                          uint64_t count);
/* upc_synci / upc_sync_attempti: every implicit-handle transfer of the caller. */
int pario_pgas_synci(pario_pgas *ctx);
int pario_pgas_sync_attempti(pario_pgas *ctx, int *done);

/* ---- affinity ------------------------------------------------------------------------ */

/* A run of consecutive indices that live in one block on one rank. */
typedef struct pario_pgas_range {
    uint64_t first;
    uint64_t count;
} pario_pgas_range;

/* upc_forall (i = 0; i < count; i++; &a[i]) as a loop over runs:
 *     uint64_t cursor = 0; pario_pgas_range r;
 *     while (pario_pgas_owned_next(&a, rank, &cursor, &r))
 *         for (uint64_t i = r.first; i < r.first + r.count; i++) ...
 * Visits exactly the elements on rank, in increasing index order. cursor
 * starts at 0 and is private to the loop. Returns 0 when done. */
int pario_pgas_owned_next(const pario_pgas_array *a, int rank, uint64_t *cursor,
                          pario_pgas_range *r);
/* upc_forall (...; i): iteration i runs on rank i mod nranks. */
static inline int pario_pgas_has_affinity_int(const pario_pgas *ctx, int64_t i) {
    int64_t n = (int64_t)pario_pgas_map(ctx)->nranks;
    return ((i % n) + n) % n == (int64_t)pario_pgas_map(ctx)->rank;
}

/* ---- synchronisation -------------------------------------------------------------------- */

/* upc_barrier value: collective; PARIO_ERR_NOT_SAME on every rank when two
 * ranks pass different values other than PARIO_PGAS_ANY. */
int pario_pgas_barrier(pario_pgas *ctx, int64_t value);
/* Split-phase barrier (upc_notify / upc_wait). notify completes the caller's
 * accesses and returns at once; wait returns when every rank has notified.
 * The values of notify are matched as for barrier; a value given to wait
 * that differs from the notified one fails on that rank only. A second notify before
 * wait, or wait without notify: PARIO_ERR_REQUEST. Between them the rank may
 * do local work and relaxed accesses; it may not call another collective. */
int pario_pgas_notify(pario_pgas *ctx, int64_t value);
int pario_pgas_wait(pario_pgas *ctx, int64_t value);
/* upc_fence: every earlier shared access of the caller is complete. */
int pario_pgas_fence(pario_pgas *ctx);
/* Runs pending requests of other ranks (allocation service, off-node atomics).
 * A rank that computes for long without pgas calls should call it now and then. */
int pario_pgas_poll(pario_pgas *ctx);

/* ---- collectives (UPC 1.3 upc_collective.h) -------------------------------------------------- */

/* Every function below is collective over the context's ranks; every rank
 * passes the same arguments (user functions excepted). Pointers name shared
 * memory as in UPC: a pointer is viewed as the type the UPC function names
 * (pario_pgas_ptr_retype: rank and address kept, phase reset when the type
 * changes), so any array, block factor or starting rank may be passed.
 *
 * Relocalization (nbytes per block; "the block of X on rank i" is the block
 * of X viewed as shared [nbytes] char, or [nbytes * THREADS] char where noted,
 * with affinity to rank i; "X[i]" is the i-th nbytes piece of an indefinite
 * (shared []) view, all on X's rank):
 *   broadcast   src[0] (shared [] on one rank)     -> the block of dst on every rank
 *   scatter     src[i] (shared [] on one rank)     -> the block of dst on rank i
 *   gather      the block of src on rank i          -> dst[i] (shared [] on one rank)
 *   gather_all  the block of src on rank i          -> piece i of the [nbytes*THREADS]
 *                                                      block of dst on every rank
 *   exchange    piece i of src's [nbytes*THREADS] block on rank j
 *                                                   -> piece j of dst's block on rank i
 *   permute     the block of src on rank i          -> the block of dst on rank perm[i]
 *               (perm: THREADS ints in shared memory, a permutation of 0..THREADS-1)
 * They move data with MPI's non-blocking collectives (Ibcast, Iscatter,
 * Igather, Iallgather, Ialltoall; permute: one Isend/Irecv pair) straight
 * between the segments, completed while serving gas requests.
 *
 * Computation: reduce folds src[0 .. nelems-1] (viewed as shared [blk_size] T,
 * blk_size 0 = indefinite) with op into the one T at dst; prefix_reduce
 * writes dst[i] = src[0] op ... op src[i] (dst viewed like src). Each rank
 * folds the elements it owns; the partial results meet at dst's rank
 * (reduce: MPI_Igatherv) or at every rank (prefix: MPI_Iallgatherv of one
 * partial per block), where they are combined in array order. Types: every C
 * integer type and float, double, long double; ops: + * & | ^ && || min max,
 * PARIO_PGAS_FUNC (fn associative and commutative: the order of operands is
 * unspecified) and PARIO_PGAS_NONCOMM_FUNC (fn associative only: operands are
 * combined in array order, src[0] leftmost). fn(acc, x) sets *acc = *acc op *x.
 * & | ^ on a floating type, a FUNC op without fn, nelems 0 for reduce:
 * PARIO_ERR_ARG. Floating sums may differ from a serial sum by rounding.
 *
 * Synchronisation flags (UPC_IN_* | UPC_OUT_*; 0 means IN_ALLSYNC |
 * OUT_ALLSYNC). The call first completes the caller's earlier accesses
 * (fence) and then agrees on the arguments among all ranks (one allreduce),
 * so every rank has entered before any data moves: every IN mode acts as
 * IN_ALLSYNC. OUT_ALLSYNC: no rank returns before every rank's part is done
 * (one allreduce that also agrees on the outcome). OUT_MYSYNC: a rank returns
 * when the data with its affinity is read and written (MPI collective
 * completion; prefix_reduce, whose results other ranks may write, acts as
 * OUT_ALLSYNC). OUT_NOSYNC: as OUT_MYSYNC (prefix_reduce: returns when its
 * own writes are complete). More than one IN or OUT flag, unknown bits:
 * PARIO_ERR_ARG.
 *
 * Errors (the same code on every rank, nothing moved): arguments differing
 * between ranks: PARIO_ERR_NOT_SAME; a pointer not to shared memory, a block
 * that runs past the heaps or is not contiguous (phase != 0 in its view), a
 * perm that is not a permutation, sizes over 2 GiB: PARIO_ERR_ARG (on the
 * rank that found it the message names the argument; the others' says that
 * another rank's arguments were invalid); a call between notify and wait:
 * PARIO_ERR_REQUEST on that rank, PARIO_ERR_ARG on the others. */
#define PARIO_PGAS_IN_NOSYNC 0x1
#define PARIO_PGAS_IN_MYSYNC 0x2
#define PARIO_PGAS_IN_ALLSYNC 0x4
#define PARIO_PGAS_OUT_NOSYNC 0x8
#define PARIO_PGAS_OUT_MYSYNC 0x10
#define PARIO_PGAS_OUT_ALLSYNC 0x20

int pario_pgas_all_broadcast(pario_pgas *ctx, pario_pgas_ptr dst, pario_pgas_ptr src, size_t nbytes,
                             int flags);
int pario_pgas_all_scatter(pario_pgas *ctx, pario_pgas_ptr dst, pario_pgas_ptr src, size_t nbytes,
                           int flags);
int pario_pgas_all_gather(pario_pgas *ctx, pario_pgas_ptr dst, pario_pgas_ptr src, size_t nbytes,
                          int flags);
int pario_pgas_all_gather_all(pario_pgas *ctx, pario_pgas_ptr dst, pario_pgas_ptr src,
                              size_t nbytes, int flags);
int pario_pgas_all_exchange(pario_pgas *ctx, pario_pgas_ptr dst, pario_pgas_ptr src, size_t nbytes,
                            int flags);
int pario_pgas_all_permute(pario_pgas *ctx, pario_pgas_ptr dst, pario_pgas_ptr src,
                           pario_pgas_ptr perm, size_t nbytes, int flags);

/* The T of upc_all_reduceT (C, UC, S, US, I, UI, L, UL, F, D, LD; LL and ULL added). */
typedef enum pario_pgas_type {
    PARIO_PGAS_CHAR, /* signed char */
    PARIO_PGAS_UCHAR,
    PARIO_PGAS_SHORT,
    PARIO_PGAS_USHORT,
    PARIO_PGAS_INT,
    PARIO_PGAS_UINT,
    PARIO_PGAS_LONG,
    PARIO_PGAS_ULONG,
    PARIO_PGAS_LLONG,
    PARIO_PGAS_ULLONG,
    PARIO_PGAS_FLOAT,
    PARIO_PGAS_DOUBLE,
    PARIO_PGAS_LDOUBLE,
    PARIO_PGAS_TYPE_COUNT /* not a type */
} pario_pgas_type;

/* upc_op_t */
typedef enum pario_pgas_op {
    PARIO_PGAS_ADD,
    PARIO_PGAS_MULT,
    PARIO_PGAS_AND,
    PARIO_PGAS_OR,
    PARIO_PGAS_XOR,
    PARIO_PGAS_LOGAND,
    PARIO_PGAS_LOGOR,
    PARIO_PGAS_MIN,
    PARIO_PGAS_MAX,
    PARIO_PGAS_FUNC,
    PARIO_PGAS_NONCOMM_FUNC,
    PARIO_PGAS_OP_COUNT /* not an op */
} pario_pgas_op;

/* User operation: *acc = *acc op *x, both of the reduction's type. */
typedef void (*pario_pgas_reduce_fn)(void *acc, const void *x);

int pario_pgas_all_reduce(pario_pgas *ctx, pario_pgas_ptr dst, pario_pgas_ptr src, pario_pgas_op op,
                          pario_pgas_type type, uint64_t nelems, uint64_t blk_size,
                          pario_pgas_reduce_fn fn, int flags);
int pario_pgas_all_prefix_reduce(pario_pgas *ctx, pario_pgas_ptr dst, pario_pgas_ptr src,
                                 pario_pgas_op op, pario_pgas_type type, uint64_t nelems,
                                 uint64_t blk_size, pario_pgas_reduce_fn fn, int flags);

/* ---- locks ---------------------------------------------------------------------------------- */

/* A lock: a value naming its storage (three 64-bit words on one rank).
 * Tickets make it fair: ranks acquire in the order they asked (FIFO). Every
 * operation is a gas atomic, so it works alike on the node-local and MPI
 * paths; off node each costs a round trip served when the owner polls. */
typedef struct pario_pgas_lock {
    uint64_t addr; /* segment offset of the lock words */
    uint64_t id;   /* allocation serial */
    uint32_t rank; /* rank holding the words */
    uint32_t nranks;
} pario_pgas_lock;

/* Collective (upc_all_lock_alloc): the same unlocked lock on every rank. */
int pario_pgas_all_lock_alloc(pario_pgas *ctx, pario_pgas_lock *lock);
/* Not collective (upc_global_lock_alloc): an unlocked lock for the caller to share. */
int pario_pgas_global_lock_alloc(pario_pgas *ctx, pario_pgas_lock *lock);
/* Blocks until the caller holds the lock. Locking a lock the caller already
 * holds: PARIO_ERR_REQUEST (it would wait for itself). */
int pario_pgas_lock_acquire(pario_pgas *ctx, const pario_pgas_lock *lock);
/* *acquired = 1 if the lock was free and is now held by the caller, else 0. */
int pario_pgas_lock_attempt(pario_pgas *ctx, const pario_pgas_lock *lock, int *acquired);
/* PARIO_ERR_REQUEST when the caller does not hold the lock. */
int pario_pgas_lock_release(pario_pgas *ctx, const pario_pgas_lock *lock);
/* upc_lock_free (any rank) and upc_all_lock_free (collective). A lock that
 * is held or awaited: PARIO_ERR_REQUEST; a second free: PARIO_ERR_REQUEST. */
int pario_pgas_lock_free(pario_pgas *ctx, const pario_pgas_lock *lock);
int pario_pgas_all_lock_free(pario_pgas *ctx, const pario_pgas_lock *lock);

#ifdef __cplusplus
}
#endif

#endif
