#include "io/indep/cursor.h"

#include <stdint.h>
#include <string.h>

/* Copies of `len` bytes with len a constant after inlining, so each block
 * is a move or two instead of a call to memcpy. */
static inline __attribute__((always_inline)) void copy_fixed(char *dst, int64_t dst_stride,
                                                             const char *src, int64_t src_stride,
                                                             int64_t count, size_t len) {
    for (int64_t i = 0; i < count; i++) {
        memcpy(dst, src, len);
        dst += dst_stride;
        src += src_stride;
    }
}

void io_copy_blocks(char *dst, int64_t dst_stride, const char *src, int64_t src_stride, int64_t len,
                    int64_t count) {
    switch (len) {
    case 1:
        copy_fixed(dst, dst_stride, src, src_stride, count, 1);
        break;
    case 2:
        copy_fixed(dst, dst_stride, src, src_stride, count, 2);
        break;
    case 4:
        copy_fixed(dst, dst_stride, src, src_stride, count, 4);
        break;
    case 8:
        copy_fixed(dst, dst_stride, src, src_stride, count, 8);
        break;
    case 16:
        copy_fixed(dst, dst_stride, src, src_stride, count, 16);
        break;
    default:
        copy_fixed(dst, dst_stride, src, src_stride, count, (size_t)len);
        break;
    }
}

int io_mem_open(io_mem_cursor *m, const flat_type *t, void *buf, MPI_Count count, int64_t skip) {
    m->contig = NULL;
    m->walking = 0;
    if (flat_is_contiguous(t) && (count == 1 || t->size == t->extent)) {
        m->contig = (char *)buf + t->true_lb + skip;
        return PARIO_OK;
    }
    int rc = flat_iter_init(&m->it, t, (int64_t)(intptr_t)buf, count, skip);
    m->walking = rc == PARIO_OK;
    return rc;
}

void io_mem_close(io_mem_cursor *m) {
    if (m->walking)
        flat_iter_free(&m->it);
}

/* Copy between the staging buffer and one user extent. */
static inline void copy_extent(char *stage, int64_t user, int64_t len, int pack) {
    char *u = (char *)(intptr_t)user;
    if (pack)
        memcpy(stage, u, (size_t)len);
    else
        memcpy(u, stage, (size_t)len);
}

/* Copy the whole blocks of run r that fit in n bytes (at least one); returns
 * the bytes copied. */
static int64_t copy_run(const flat_run *r, char *stage, int64_t n, int pack) {
    int64_t whole = n / r->len < r->count ? n / r->len : r->count;
    char *user = (char *)(intptr_t)r->off;
    if (pack)
        io_copy_blocks(stage, r->len, user, r->stride, r->len, whole);
    else
        io_copy_blocks(user, r->stride, stage, r->len, r->len, whole);
    return whole * r->len;
}

void io_mem_copy(io_mem_cursor *m, char *stage, int64_t n, int pack) {
    if (m->contig) {
        if (pack)
            memcpy(stage, m->contig, (size_t)n);
        else
            memcpy(m->contig, stage, (size_t)n);
        m->contig += n;
        return;
    }
    flat_run r;
    int64_t off, len;
    while (n > 0 && flat_iter_run(&m->it, &r)) {
        if (r.count > 1 && r.len <= n) {
            len = copy_run(&r, stage, n, pack);
            flat_iter_consume(&m->it, len);
        } else if (flat_iter_next(&m->it, n, &off, &len)) {
            copy_extent(stage, off, len, pack); /* a lone block, merged with its neighbours */
        } else {
            break;
        }
        stage += len;
        n -= len;
    }
}

int io_file_open(io_file_cursor *c, const io_view *v, int64_t pos) {
    *c = (io_file_cursor){.linear = v->linear};
    if (!v->linear)
        return view_iter_init(v, &c->it, pos);
    c->off = v->disp + v->linear_base + pos;
    c->len = INT64_MAX - c->off;
    c->has = 1;
    return PARIO_OK;
}

void io_file_close(io_file_cursor *c) {
    if (!c->linear)
        flat_iter_free(&c->it);
}

int io_file_peek(io_file_cursor *c, int64_t limit, int64_t *off, int64_t *len) {
    if (!c->has) {
        if (!flat_iter_next(&c->it, limit, &c->off, &c->len))
            return 0;
        c->has = 1;
    }
    *off = c->off;
    *len = c->len < limit ? c->len : limit;
    return 1;
}

void io_file_take(io_file_cursor *c, int64_t n) {
    c->off += n;
    c->len -= n;
    c->has = c->len > 0;
}

int io_file_peek_run(io_file_cursor *c, int64_t limit, flat_run *run) {
    if (!c->has) {
        if (!flat_iter_run(&c->it, run))
            return 0;
        if (run->count > 1 && run->stride > run->len)
            return 1;
    }
    int64_t off, len;
    if (!io_file_peek(c, limit, &off, &len))
        return 0;
    *run = (flat_run){.off = off, .len = len, .stride = len, .count = 1};
    return 1;
}

void io_file_take_run(io_file_cursor *c, int64_t n) {
    if (c->has)
        io_file_take(c, n);
    else
        flat_iter_consume(&c->it, n);
}
