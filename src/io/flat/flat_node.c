/* flat_type construction: the node builder, its simplification rules, and the
 * derived properties (size, data bounds, depth, monotonic, prefix sums). */
#include "io/flat/flat_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "pario/pario.h"

/* Initial node capacity of a builder; it doubles when full. */
#define BUILDER_INITIAL_NODES 8

void builder_init(flat_builder *b) {
    b->nodes = NULL;
    b->n = 0;
    b->cap = 0;
}

void builder_discard(flat_builder *b) {
    for (int64_t i = 0; i < b->n; i++)
        if (b->nodes[i].child)
            flat_release(b->nodes[i].child);
    free(b->nodes);
    builder_init(b);
}

/* A leaf repeated at a stride equal to its length is one longer leaf. */
static flat_node node_normalize(flat_node n) {
    if (n.count == 1)
        n.stride = 0;
    if (!n.child && n.count > 1 && n.stride == n.len) {
        n.len *= n.count;
        n.count = 1;
        n.stride = 0;
    }
    return n;
}

static bool node_empty(const flat_node *n) {
    return n->count <= 0 || n->len <= 0;
}

flat_node node_repeat(int64_t disp, int64_t count, int64_t stride, const flat_type *child) {
    flat_node r = {disp, count, stride, child->size, child};
    if (count <= 0 || child->size == 0) {
        r.count = 0;
        return r;
    }
    /* Collapse while the child is one node: its block becomes ours. */
    while (r.child && r.child->nnodes == 1) {
        const flat_node *k = &r.child->nodes[0];
        if (k->count == 1) {
            r = (flat_node){r.disp + k->disp, r.count, r.stride, k->len, k->child};
        } else if (r.count == 1) {
            r = (flat_node){r.disp + k->disp, k->count, k->stride, k->len, k->child};
        } else if (r.stride == k->count * k->stride) {
            r = (flat_node){r.disp + k->disp, r.count * k->count, k->stride, k->len, k->child};
        } else {
            break;
        }
    }
    return node_normalize(r);
}

/* The common stride when next continues last's progression, else false. */
static bool node_continues(const flat_node *last, const flat_node *next, int64_t *stride) {
    if (last->child != next->child || last->len != next->len)
        return false;
    int64_t s;
    if (last->count > 1)
        s = last->stride;
    else if (next->count > 1)
        s = next->stride;
    else
        s = next->disp - last->disp;
    if (next->count > 1 && next->stride != s)
        return false;
    if (next->disp != last->disp + last->count * s)
        return false;
    *stride = s;
    return true;
}

static bool node_try_merge(flat_node *last, const flat_node *next) {
    if (!last->child && !next->child && last->count == 1 && next->count == 1 &&
        last->disp + last->len == next->disp) {
        last->len += next->len;
        return true;
    }
    int64_t s;
    if (!node_continues(last, next, &s))
        return false;
    last->count += next->count;
    last->stride = s;
    *last = node_normalize(*last);
    return true;
}

int builder_push(flat_builder *b, flat_node node) {
    if (node_empty(&node))
        return PARIO_OK;
    node = node_normalize(node);
    if (b->n > 0 && node_try_merge(&b->nodes[b->n - 1], &node))
        return PARIO_OK;
    if (b->n == b->cap) {
        int64_t cap = b->cap ? 2 * b->cap : BUILDER_INITIAL_NODES;
        if (cap > INT_MAX)
            cap = INT_MAX;
        if (b->n == cap)
            return PARIO_ERR_NO_MEM;
        flat_node *p = realloc(b->nodes, (size_t)cap * sizeof *p);
        if (!p)
            return PARIO_ERR_NO_MEM;
        b->nodes = p;
        b->cap = cap;
    }
    if (node.child)
        flat_retain(node.child);
    b->nodes[b->n++] = node;
    return PARIO_OK;
}

int builder_append_instance(flat_builder *b, int64_t disp, const flat_type *child) {
    if (child->nnodes > FLAT_INLINE_NODES)
        return builder_push(b, node_repeat(disp, 1, 0, child));
    for (int i = 0; i < child->nnodes; i++) {
        flat_node n = child->nodes[i];
        n.disp += disp;
        int rc = builder_push(b, n);
        if (rc)
            return rc;
    }
    return PARIO_OK;
}

int builder_push_repeat(flat_builder *b, int64_t disp, int64_t count, int64_t stride,
                        const flat_type *child) {
    if (count == 1)
        return builder_append_instance(b, disp, child);
    return builder_push(b, node_repeat(disp, count, stride, child));
}

/* A flat_type holding the single node n (for a block that is repeated). */
static int flat_from_node(flat_node n, flat_type **out) {
    flat_builder b;
    builder_init(&b);
    int rc = builder_push(&b, n);
    if (!rc)
        rc = builder_finish(&b, out);
    builder_discard(&b);
    return rc;
}

int builder_push_vector(flat_builder *b, int64_t disp, int64_t count, int64_t blocklen,
                        int64_t stride, int64_t step, const flat_type *child) {
    if (count <= 0 || blocklen <= 0 || child->size == 0)
        return PARIO_OK;
    if (blocklen == 1)
        return builder_push_repeat(b, disp, count, stride, child);
    if (count == 1)
        return builder_push_repeat(b, disp, blocklen, step, child);
    flat_type *block;
    int rc = flat_from_node(node_repeat(0, blocklen, step, child), &block);
    if (rc)
        return rc;
    rc = builder_push_repeat(b, disp, count, stride, block);
    flat_release(block);
    return rc;
}

/* ---- derived properties ---------------------------------------------------------- */

static int64_t min64(int64_t a, int64_t b) {
    return a < b ? a : b;
}
static int64_t max64(int64_t a, int64_t b) {
    return a > b ? a : b;
}

/* Lowest and highest data byte (exclusive) touched by a node. */
static void node_bounds(const flat_node *n, int64_t *lo, int64_t *hi) {
    int64_t last = (n->count - 1) * n->stride;
    int64_t first_lo = n->child ? n->child->true_lb : 0;
    int64_t span = n->child ? n->child->true_extent : n->len;
    *lo = n->disp + min64(0, last) + first_lo;
    *hi = n->disp + max64(0, last) + first_lo + span;
}

/* Repetitions of the block come in order without overlapping. */
static bool node_monotonic(const flat_node *n) {
    if (n->child && !n->child->monotonic)
        return false;
    int64_t span = n->child ? n->child->true_extent : n->len;
    return n->count == 1 || n->stride >= span;
}

/* The node's blocks start in order: a leaf's repetitions never step back;
 * a child's repetitions, whole, neither step back nor overlap. */
static bool node_nondecreasing(const flat_node *n) {
    if (n->child)
        return node_monotonic(n);
    return n->count == 1 || n->stride >= 0;
}

/* Where the node's last block starts; for a node with a child, where its
 * data ends (the next node may not start before it). */
static int64_t node_last_start(const flat_node *n, int64_t nhi) {
    return n->child ? nhi : n->disp + (n->count - 1) * n->stride;
}

static void flat_compute_properties(flat_type *t) {
    int64_t lo = INT64_MAX, hi = INT64_MIN, prev_end = INT64_MIN, prev_start = INT64_MIN;
    t->size = 0;
    t->depth = 1;
    t->monotonic = true;
    t->nondecreasing = true;
    for (int i = 0; i < t->nnodes; i++) {
        const flat_node *n = &t->nodes[i];
        int64_t nlo, nhi;
        node_bounds(n, &nlo, &nhi);
        lo = min64(lo, nlo);
        hi = max64(hi, nhi);
        if (!node_monotonic(n) || nlo < prev_end)
            t->monotonic = false;
        if (!node_nondecreasing(n) || nlo < prev_start)
            t->nondecreasing = false;
        prev_end = nhi;
        prev_start = node_last_start(n, nhi);
        if (n->child && n->child->depth + 1 > t->depth)
            t->depth = n->child->depth + 1;
        t->before[i] = t->size;
        t->size += n->count * n->len;
    }
    t->before[t->nnodes] = t->size;
    t->last_start = t->nnodes ? prev_start : 0;
    t->true_lb = t->nnodes ? lo : 0;
    t->true_extent = t->nnodes ? hi - lo : 0;
    t->lb = t->true_lb;
    t->extent = t->true_extent;
}

int builder_finish(flat_builder *b, flat_type **out) {
    size_t bytes =
        sizeof(flat_type) + (size_t)b->n * sizeof(flat_node) + (size_t)(b->n + 1) * sizeof(int64_t);
    flat_type *t = flat_alloc_raw(bytes);
    if (!t)
        return PARIO_ERR_NO_MEM;
    t->refs = 1;
    t->nnodes = (int)b->n;
    t->nodes = (flat_node *)(t + 1);
    t->before = (int64_t *)(t->nodes + b->n);
    if (b->n)
        memcpy(t->nodes, b->nodes, (size_t)b->n * sizeof(flat_node));
    free(b->nodes); /* the child references moved into t */
    builder_init(b);
    flat_compute_properties(t);
    *out = t;
    return PARIO_OK;
}
