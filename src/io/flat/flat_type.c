/* flat_type lifetime (reference counts, the live counter) and queries. */
#include "io/flat/flat_internal.h"

#include <stdatomic.h>
#include <stdlib.h>

/* Debug counter of allocated flat_types: process-wide, atomic, only ever
 * incremented on allocation and decremented on free. */
static atomic_int_fast64_t flat_live;

int64_t flat_live_count(void) {
    return (int64_t)atomic_load(&flat_live);
}

flat_type *flat_alloc_raw(size_t bytes) {
    flat_type *t = calloc(1, bytes);
    if (t)
        atomic_fetch_add(&flat_live, 1);
    return t;
}

void flat_retain(const flat_type *t) {
    if (t)
        __atomic_fetch_add(&((flat_type *)t)->refs, 1, __ATOMIC_RELAXED);
}

void flat_release(const flat_type *t) {
    while (t) {
        flat_type *m = (flat_type *)t;
        if (__atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) != 0)
            return;
        /* Release all children but the last recursively; the last one in
         * this loop, so a long chain does not grow the C stack. */
        const flat_type *tail = NULL;
        for (int i = 0; i < m->nnodes; i++) {
            const flat_type *c = m->nodes[i].child;
            if (!c)
                continue;
            if (tail)
                flat_release(tail);
            tail = c;
        }
        free(m);
        atomic_fetch_sub(&flat_live, 1);
        t = tail;
    }
}

bool flat_is_contiguous(const flat_type *t) {
    if (t->size == 0)
        return true;
    return t->nnodes == 1 && !t->nodes[0].child && t->nodes[0].count == 1 &&
           t->nodes[0].len == t->size;
}

int64_t flat_blocks(const flat_type *t) {
    int64_t n = 0;
    for (int i = 0; i < t->nnodes && n < INT64_MAX / 2; i++) {
        const flat_node *d = &t->nodes[i];
        int64_t each = d->child ? flat_blocks(d->child) : 1;
        n += each > INT64_MAX / 2 / d->count ? INT64_MAX / 2 : each * d->count;
    }
    return n < INT64_MAX / 2 ? n : INT64_MAX / 2;
}

/* Distinct flat_types met while measuring a footprint. */
typedef struct visit_set {
    const flat_type **items;
    size_t n, cap;
} visit_set;

/* Adds t; 1 if added, 0 if already there, -1 when out of memory. */
static int visit_add(visit_set *v, const flat_type *t) {
    for (size_t i = 0; i < v->n; i++)
        if (v->items[i] == t)
            return 0;
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 16;
        const flat_type **p = realloc(v->items, cap * sizeof *p);
        if (!p)
            return -1;
        v->items = p;
        v->cap = cap;
    }
    v->items[v->n++] = t;
    return 1;
}

int64_t flat_footprint(const flat_type *t) {
    visit_set v = {NULL, 0, 0};
    int64_t bytes = 0;
    if (visit_add(&v, t) < 0)
        return -1;
    /* v doubles as the work list: entries past `done` are still to measure. */
    for (size_t done = 0; done < v.n; done++) {
        const flat_type *x = v.items[done];
        bytes += (int64_t)(sizeof *x + (size_t)x->nnodes * sizeof(flat_node) +
                           (size_t)(x->nnodes + 1) * sizeof(int64_t));
        for (int i = 0; i < x->nnodes; i++) {
            if (x->nodes[i].child && visit_add(&v, x->nodes[i].child) < 0) {
                free(v.items);
                return -1;
            }
        }
    }
    free(v.items);
    return bytes;
}
