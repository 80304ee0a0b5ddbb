/* The book of one heap: which ranges of [lo, hi) are allocated.
 *
 * A sorted array of extents, first fit. Allocation and free are O(number of
 * live allocations), which is small for shared arrays (a program allocates a
 * few large arrays, not millions of small ones). Every allocation gets a
 * serial number; a free must name offset and serial, so freeing an array
 * twice fails even after its range was given to a new array. */
#include "pgas/pgas_internal.h"

#include <stdlib.h>
#include <string.h>

/* First capacity of the extent array; it doubles when full. */
#define HEAP_FIRST_CAP 16

void pgas_heap_init(pgas_heap *h, uint64_t lo, uint64_t hi) {
    memset(h, 0, sizeof *h);
    h->lo = lo;
    h->hi = hi;
    h->next_id = 1;
}

void pgas_heap_release(pgas_heap *h) {
    free(h->used);
    h->used = NULL;
    h->count = h->cap = 0;
}

static int heap_grow(pgas_heap *h) {
    if (h->count < h->cap)
        return PARIO_OK;
    size_t cap = h->cap ? 2 * h->cap : HEAP_FIRST_CAP;
    pgas_extent *u = realloc(h->used, cap * sizeof *u);
    if (!u)
        return PARIO_ERR_NO_MEM;
    h->used = u;
    h->cap = cap;
    return PARIO_OK;
}

/* Index of the first extent whose gap before it holds bytes, or count when
 * only the gap after the last extent is left; *at is the offset found. */
static size_t heap_first_fit(const pgas_heap *h, uint64_t bytes, uint64_t *at) {
    uint64_t start = h->lo;
    for (size_t i = 0; i < h->count; i++) {
        if (h->used[i].offset - start >= bytes) {
            *at = start;
            return i;
        }
        start = h->used[i].offset + h->used[i].bytes;
    }
    *at = start;
    return h->count;
}

int pgas_heap_alloc(pgas_heap *h, uint64_t bytes, uint64_t *offset, uint64_t *id) {
    if (bytes > h->hi - h->lo || heap_grow(h) != PARIO_OK)
        return PARIO_ERR_NO_MEM;
    /* Zero bytes still take a slot, so every array has its own address. */
    uint64_t need = pgas_align(bytes ? bytes : 1);
    uint64_t at = 0;
    size_t i = heap_first_fit(h, need, &at);
    if (i == h->count && h->hi - at < need)
        return PARIO_ERR_NO_MEM;
    memmove(h->used + i + 1, h->used + i, (h->count - i) * sizeof *h->used);
    h->used[i] = (pgas_extent){at, need, h->next_id++};
    h->count++;
    *offset = at;
    *id = h->used[i].id;
    return PARIO_OK;
}

int pgas_heap_free(pgas_heap *h, uint64_t offset, uint64_t id) {
    size_t lo = 0, hi = h->count;
    while (lo < hi) { /* binary search by offset */
        size_t mid = lo + (hi - lo) / 2;
        if (h->used[mid].offset < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == h->count || h->used[lo].offset != offset || h->used[lo].id != id)
        return PARIO_ERR_REQUEST;
    memmove(h->used + lo, h->used + lo + 1, (h->count - lo - 1) * sizeof *h->used);
    h->count--;
    return PARIO_OK;
}
