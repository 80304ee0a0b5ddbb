/* Walking the bytes of `count` instances of a flat_type as (offset, len)
 * extents. The iterator keeps one frame per nesting level (type, origin,
 * node, repetition) and the rest of the current leaf block; every step costs
 * O(1) amortized, a seek O(depth log nnodes). */
#include "io/flat/flat.h"

#include <stdlib.h>
#include <string.h>

#include "pario/pario.h"

static inline flat_iter_frame *iter_frames(flat_iter *it) {
    return it->stack ? it->stack : it->frames;
}

/* Move a frame to the next repetition, or the next node after the last one. */
static inline void frame_step(flat_iter_frame *f) {
    if (++f->rep == f->type->nodes[f->node].count) {
        f->node++;
        f->rep = 0;
    }
}

/* Load the next leaf block into blk_off/blk_len; false at the end. */
static bool iter_advance(flat_iter *it) {
    flat_iter_frame *st = iter_frames(it);
    for (;;) {
        if (it->depth == 0) {
            if (it->done || ++it->instance >= it->count) {
                it->done = true;
                it->blk_len = 0;
                return false;
            }
            st[0] = (flat_iter_frame){it->type, it->base + it->instance * it->type->extent, 0, 0};
            it->depth = 1;
        }
        flat_iter_frame *f = &st[it->depth - 1];
        if (f->node == f->type->nnodes) {
            if (--it->depth > 0)
                frame_step(&st[it->depth - 1]);
            continue;
        }
        const flat_node *n = &f->type->nodes[f->node];
        int64_t at = f->origin + n->disp + f->rep * n->stride;
        if (n->child) {
            st[it->depth++] = (flat_iter_frame){n->child, at, 0, 0};
            continue;
        }
        it->blk_off = at;
        it->blk_len = n->len;
        frame_step(f);
        return true;
    }
}

/* The node holding data byte `pos` of t: before[j] <= pos < before[j + 1]. */
static int node_at(const flat_type *t, int64_t pos) {
    int lo = 0, hi = t->nnodes - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (t->before[mid] <= pos)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Descend from a root frame to the leaf holding data byte pos of instance. */
static void iter_seek(flat_iter *it, int64_t pos) {
    flat_iter_frame *st = iter_frames(it);
    st[0] = (flat_iter_frame){it->type, it->base + it->instance * it->type->extent, 0, 0};
    it->depth = 1;
    for (;;) {
        flat_iter_frame *f = &st[it->depth - 1];
        int j = node_at(f->type, pos);
        const flat_node *n = &f->type->nodes[j];
        pos -= f->type->before[j];
        f->node = j;
        f->rep = pos / n->len;
        pos %= n->len;
        int64_t at = f->origin + n->disp + f->rep * n->stride;
        if (n->child) {
            st[it->depth++] = (flat_iter_frame){n->child, at, 0, 0};
            continue;
        }
        it->blk_off = at + pos;
        it->blk_len = n->len - pos;
        frame_step(f);
        return;
    }
}

int flat_iter_init(flat_iter *it, const flat_type *t, int64_t base, int64_t count, int64_t skip) {
    if (!it)
        return PARIO_ERR_ARG;
    memset(it, 0, sizeof *it);
    if (!t || skip < 0)
        return PARIO_ERR_ARG;
    it->type = t;
    it->base = base;
    it->count = count;
    if (t->depth > FLAT_ITER_INLINE_FRAMES) {
        it->stack = malloc((size_t)t->depth * sizeof *it->stack);
        if (!it->stack)
            return PARIO_ERR_NO_MEM;
    }
    if (count <= 0 || t->size == 0 || skip / t->size >= count) {
        it->done = true;
        return PARIO_OK;
    }
    it->instance = skip / t->size;
    iter_seek(it, skip % t->size);
    return PARIO_OK;
}

bool flat_iter_next(flat_iter *it, int64_t max, int64_t *off, int64_t *len) {
    if (it->blk_len == 0 && !iter_advance(it))
        return false;
    if (max <= 0)
        max = INT64_MAX;
    int64_t start = it->blk_off, take = 0;
    for (;;) {
        int64_t piece = it->blk_len < max - take ? it->blk_len : max - take;
        take += piece;
        it->blk_off += piece;
        it->blk_len -= piece;
        if (take == max || !iter_advance(it) || it->blk_off != start + take)
            break;
    }
    *off = start;
    *len = take;
    return true;
}

void flat_iter_free(flat_iter *it) {
    if (!it)
        return;
    free(it->stack);
    it->stack = NULL;
    it->depth = 0;
    it->blk_len = 0;
    it->done = true;
}
