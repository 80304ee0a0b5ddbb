/* Walking the bytes of `count` instances of a flat_type as (offset, len)
 * extents. The iterator keeps one frame per nesting level (type, origin,
 * node, repetition), the rest of the current leaf block and the remaining
 * repetitions of that block's leaf node (the run state: stepping to the next
 * repetition of a leaf is a few additions, and a run of them can be handed
 * out or skipped at once); every step costs O(1) amortized, a seek
 * O(depth log nnodes). */
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

/* When a type is one leaf node whose repetitions continue evenly into the
 * next instance (a single block per instance, or count * stride == extent,
 * as with a resized block tiling a file), the run goes on across the
 * following instances, at most this many blocks at once (bounds the run
 * length, so that counting the blocks of an endless tiling cannot overflow). */
#define FLAT_ITER_RUN_MAX_BLOCKS ((int64_t)1 << 30)

/* Extend the run state of a single-leaf type over the instances after the
 * current one; the instance counter skips the instances taken. */
static void run_over_instances(flat_iter *it, const flat_node *n) {
    const flat_type *t = it->type;
    int64_t span = 0;
    if (t->nnodes != 1 ||
        (n->count > 1 && (__builtin_mul_overflow(n->count, n->stride, &span) || span != t->extent)))
        return;
    int64_t more = it->count - it->instance - 1;
    int64_t room = (FLAT_ITER_RUN_MAX_BLOCKS - it->run_left) / n->count;
    if (more > room)
        more = room;
    if (more <= 0)
        return;
    if (n->count == 1) {
        it->run_stride = t->extent;
        it->run_next = it->blk_off + t->extent;
    }
    it->run_left += more * n->count;
    it->instance += more;
}

/* Make repetition `rep` of leaf node n (at address `at`) the current block
 * and hand the node's later repetitions to the run state; the frame moves on
 * to the next node. */
static inline void take_leaf(flat_iter *it, flat_iter_frame *f, const flat_node *n, int64_t rep,
                             int64_t at) {
    it->blk_off = at;
    it->blk_len = n->len;
    it->run_next = at + n->stride;
    it->run_left = n->count - rep - 1;
    it->run_len = n->len;
    it->run_stride = n->stride;
    f->node++;
    f->rep = 0;
    if (it->depth == 1)
        run_over_instances(it, n);
}

/* The next repetition of the current leaf node becomes the current block. */
static inline void run_step(flat_iter *it) {
    it->blk_off = it->run_next;
    it->blk_len = it->run_len;
    it->run_next += it->run_stride;
    it->run_left--;
}

/* Load the next leaf block into blk_off/blk_len; false at the end. */
static bool iter_advance(flat_iter *it) {
    if (it->run_left > 0) {
        run_step(it);
        return true;
    }
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
        take_leaf(it, f, n, f->rep, at);
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
        take_leaf(it, f, n, f->rep, at);
        it->blk_off += pos;
        it->blk_len -= pos;
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

bool flat_iter_run(flat_iter *it, flat_run *run) {
    if (it->blk_len == 0 && !iter_advance(it))
        return false;
    run->off = it->blk_off;
    run->len = it->blk_len;
    run->stride = it->run_stride;
    run->count = it->blk_len == it->run_len ? 1 + it->run_left : 1;
    return true;
}

void flat_iter_consume(flat_iter *it, int64_t n) {
    if (n < it->blk_len) {
        it->blk_off += n;
        it->blk_len -= n;
        return;
    }
    n -= it->blk_len;
    it->blk_len = 0;
    int64_t whole = n / it->run_len, part = n % it->run_len;
    it->run_next += whole * it->run_stride;
    it->run_left -= whole;
    if (part > 0) {
        run_step(it);
        it->blk_off += part;
        it->blk_len -= part;
    }
}

void flat_iter_free(flat_iter *it) {
    if (!it)
        return;
    free(it->stack);
    it->stack = NULL;
    it->depth = 0;
    it->blk_len = 0;
    it->run_left = 0;
    it->done = true;
}
