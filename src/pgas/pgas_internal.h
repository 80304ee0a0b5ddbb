/* Internal structures of the pgas layer, shared by its source files. */
#ifndef PARIO_PGAS_INTERNAL_H
#define PARIO_PGAS_INTERNAL_H

#include <mpi.h>
#include <stdint.h>
#include "pario/pgas.h"

/* Alignment of every heap allocation: a cache line, so two arrays (or two
 * locks) never share one and ranks updating neighbouring objects do not
 * false-share; it also gives lock words the 8-byte alignment gas atomics need. */
#define PGAS_ALIGN ((uint64_t)64)
/* First heap offset in every segment: offset 0 is never a valid address, so
 * a zero-filled pointer-to-shared is never valid. */
#define PGAS_HEAP_START PGAS_ALIGN
/* Idle polls of a waiting loop before it yields the CPU: tests run more ranks
 * than cores, and a spinning rank would starve the rank it waits for. */
#define PGAS_SPIN_BEFORE_YIELD 64
/* Non-blocking gas transfers a bulk call keeps in flight before it waits for
 * them: enough to overlap the round trips of small runs (B = 1 arrays spread
 * every element over the ranks), few enough to keep the events on the stack. */
#define PGAS_BATCH_EVENTS 64
/* Staging buffer for memcpy between two ranks neither of which this process
 * maps, and the fill pattern of memset: one gas Medium's worth. */
#define PGAS_BOUNCE_BYTES ((size_t)64 * 1024)
/* Bytes of one lock: ticket counter, now-serving counter, holder (rank + 1). */
#define PGAS_LOCK_WORDS 3

/* One allocation in a heap's book. */
typedef struct pgas_extent {
    uint64_t offset, bytes, id;
} pgas_extent;

/* The book of one heap: [lo, hi) of a segment, allocations sorted by offset. */
typedef struct pgas_heap {
    uint64_t lo, hi;
    pgas_extent *used;
    size_t count, cap;
    uint64_t next_id; /* serial of the next allocation (never 0) */
} pgas_heap;

/* A list of gas transfers in flight. Bounded (a blocking call's, on its
 * stack: waits when full) or growing (a non-blocking call's, kept in its
 * handle until synced). fill is a memset pattern the transfers read from. */
typedef struct pgas_batch {
    pario_gas_event *ev;
    size_t n, cap;
    int grow;
    unsigned char *fill;
} pgas_batch;

/* A bounded batch on the caller's stack, for the blocking calls. */
#define PGAS_STACK_BATCH(name)                                                                     \
    pario_gas_event name##_ev[PGAS_BATCH_EVENTS];                                                  \
    pgas_batch name = {name##_ev, 0, PGAS_BATCH_EVENTS, 0, NULL}

/* The transfers of one explicit handle, or of the implicit ones. */
typedef struct pgas_nb_slot {
    pgas_batch batch;
    uint32_t generation; /* part of the handle: a stale handle does not match */
    int in_use;
} pgas_nb_slot;

/* Which heap a request names. */
enum pgas_region { PGAS_SYMMETRIC = 0, PGAS_LOCAL = 1 };

struct pario_pgas {
    pario_pgas_local_map map; /* first: the inline functions read it */
    pario_gas_team *team;
    MPI_Comm comm; /* private duplicate: the split-phase barrier's reductions */
    int rank, nranks;
    unsigned char **base; /* [rank] mapped segment or NULL (behind map.base) */
    uint64_t sym_lo, sym_hi, local_lo, local_hi;
    pgas_heap sym;   /* the symmetric heap's book: kept by rank 0 only */
    pgas_heap local; /* this rank's local heap */
    uint64_t *peer;  /* [rank] address of that rank's context (AM argument) */
    int handler_base;
    int notified; /* between notify and wait */
    MPI_Request barrier_req;
    int64_t barrier_send[2], barrier_recv[2];
    pgas_nb_slot *nb; /* explicit handles' slots */
    size_t nb_count;  /* slots allocated */
    pgas_batch nbi;   /* implicit-handle transfers not yet synced */
    pario_error last;
};

/* ---- errors (context.c) ---- */
int pgas_fail(pario_pgas *ctx, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A failed gas call: its code, with gas's message, prefixed by what. */
int pgas_gas_failed(pario_pgas *ctx, int rc, const char *what);
/* One step of a waiting loop: poll gas, yield after idle spins. */
int pgas_idle_step(pario_pgas *ctx, int *idle);
/* Completes MPI requests while serving other ranks' gas requests (a rank
 * blocked in MPI alone would leave their atomics and allocations waiting). */
int pgas_wait_requests(pario_pgas *ctx, int count, MPI_Request *reqs, const char *what);
/* Every rank passes n equal values (compared as unsigned): PARIO_OK on all,
 * or PARIO_ERR_NOT_SAME on all; local_bad != 0 on any rank makes every rank
 * return PARIO_ERR_ARG. */
int pgas_agree(pario_pgas *ctx, const uint64_t *values, int n, int local_bad, const char *what);
/* rc (and, on failure, the root's message) from root to every rank. */
int pgas_share_result(pario_pgas *ctx, int rc, int root, uint64_t *values, int n);

/* ---- heap books (heap.c) ---- */
void pgas_heap_init(pgas_heap *h, uint64_t lo, uint64_t hi);
void pgas_heap_release(pgas_heap *h);
/* First fit, PGAS_ALIGN-aligned; PARIO_ERR_NO_MEM when nothing fits. */
int pgas_heap_alloc(pgas_heap *h, uint64_t bytes, uint64_t *offset, uint64_t *id);
/* PARIO_ERR_REQUEST when (offset, id) is not a live allocation. */
int pgas_heap_free(pgas_heap *h, uint64_t offset, uint64_t id);

/* ---- allocation service (book.c) ---- */
int pgas_book_register(pario_pgas *ctx);
/* Allocates / frees in the book of region kept by rank keeper, locally or by
 * an active message to the keeper. */
int pgas_book_alloc(pario_pgas *ctx, int region, int keeper, uint64_t bytes, uint64_t *offset,
                    uint64_t *id);
int pgas_book_free(pario_pgas *ctx, int region, int keeper, uint64_t offset, uint64_t id);

/* ---- bulk transfers (access.c) ---- */
/* Waits for every transfer of b; b is empty after it. */
int pgas_batch_finish(pario_pgas *ctx, pgas_batch *b);
/* Check the range, copy what is mapped, start gas transfers for the rest
 * into b. On failure, transfers already started stay in b. */
int pgas_memget_start(pario_pgas *ctx, pgas_batch *b, void *dst, const pario_pgas_array *a,
                      uint64_t first, uint64_t count, const char *what);
int pgas_memput_start(pario_pgas *ctx, pgas_batch *b, const pario_pgas_array *a, uint64_t first,
                      const void *src, uint64_t count, const char *what);
/* memput without the checks (the caller checked every run). */
int pgas_memput_runs(pario_pgas *ctx, pgas_batch *b, const pario_pgas_array *a, uint64_t first,
                     const void *src, uint64_t count);
int pgas_memset_start(pario_pgas *ctx, pgas_batch *b, const pario_pgas_array *a, uint64_t first,
                      int value, uint64_t count, const char *what);
int pgas_memcpy_start(pario_pgas *ctx, pgas_batch *b, const pario_pgas_array *dst,
                      uint64_t dst_first, const pario_pgas_array *src, uint64_t src_first,
                      uint64_t count, const char *what);

/* ---- non-blocking transfers (nb.c) ---- */
/* Completes every implicit-handle transfer (fence, strict access, barrier). */
int pgas_nb_sync_implicit(pario_pgas *ctx);
/* Completes every outstanding transfer and frees the handles (finalize). */
int pgas_nb_release(pario_pgas *ctx);

/* ---- collectives (coll.c) ---- */
/* Entry of a collective: a call between notify and wait or bad flags make
 * the caller's arguments bad; fence; then every rank agrees on args (which
 * include the flags). The same code on every rank. */
int pgas_coll_begin(pario_pgas *ctx, const char *what, int flags, int local_bad,
                    const uint64_t *args, int nargs);
/* Exit: with OUT_ALLSYNC every rank waits for all and they agree on rc. */
int pgas_coll_end(pario_pgas *ctx, const char *what, int flags, int rc);
/* Checks the start of an MPI non-blocking call (mrc) and completes *req. */
int pgas_coll_mpi(pario_pgas *ctx, const char *what, int mrc, MPI_Request *req);

/* ---- pointer arithmetic (ptr.c) ---- */
/* Fills a's precomputed divisors (index_mul, block_mul, ranks_mul) and its
 * index kind (index_kind, block_shift, ranks_shift). */
void pgas_set_divisors(pario_pgas_array *a);
/* 1 when a's divisors are absent (all zero) or those pgas_set_divisors sets,
 * and its index kind is ANY (shifts zero) or the one it sets. */
int pgas_divisors_valid(const pario_pgas_array *a);

/* ---- layout (array.c) ---- */
/* PARIO_OK if p is a pointer into this context's heaps. */
int pgas_check_ptr(pario_pgas *ctx, pario_pgas_ptr p, const char *what);
/* PARIO_OK if a is an array of this context. */
int pgas_check_array(pario_pgas *ctx, const pario_pgas_array *a, const char *what);
/* PARIO_OK if [first, first + count) lies inside a; else names the index. */
int pgas_check_range(pario_pgas *ctx, const pario_pgas_array *a, uint64_t first, uint64_t count,
                     const char *what);

/* A run of consecutive elements in one block on one rank. */
typedef struct pgas_run {
    uint64_t count; /* elements */
    uint32_t rank;
    uint64_t addr; /* segment offset of the run's first element */
} pgas_run;
/* The run starting at element i, cut at element end. */
pgas_run pgas_run_at(const pario_pgas_array *a, uint64_t i, uint64_t end);
/* The same for the elements p, p + 1, ... (p may have any phase). */
pgas_run pgas_ptr_run_at(pario_pgas_ptr p, uint64_t i, uint64_t end);

/* Rounds n up to a multiple of PGAS_ALIGN (n < 2^63). */
static inline uint64_t pgas_align(uint64_t n) {
    return (n + PGAS_ALIGN - 1) & ~(PGAS_ALIGN - 1);
}

/* 1 when flags holds only PARIO_PGAS_IN_* / OUT_* bits, at most one of each side
 * (none is ALLSYNC). */
static inline int pgas_sync_flags_valid(int flags) {
    const int in = PARIO_PGAS_IN_NOSYNC | PARIO_PGAS_IN_MYSYNC | PARIO_PGAS_IN_ALLSYNC;
    const int out = PARIO_PGAS_OUT_NOSYNC | PARIO_PGAS_OUT_MYSYNC | PARIO_PGAS_OUT_ALLSYNC;
    int i = flags & in, o = flags & out;
    return (flags & ~(in | out)) == 0 && (i & (i - 1)) == 0 && (o & (o - 1)) == 0;
}

#endif
