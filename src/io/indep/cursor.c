#include "io/indep/cursor.h"

#include <stdint.h>
#include <string.h>

int io_mem_open(io_mem_cursor *m, const flat_type *t, void *buf, MPI_Count count, int64_t skip) {
    m->contig = NULL;
    if (flat_is_contiguous(t) && (count == 1 || t->size == t->extent)) {
        m->contig = (char *)buf + t->true_lb + skip;
        return PARIO_OK;
    }
    return flat_iter_init(&m->it, t, (int64_t)(intptr_t)buf, count, skip);
}

void io_mem_close(io_mem_cursor *m) {
    if (!m->contig)
        flat_iter_free(&m->it);
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
    int64_t off, len;
    while (n > 0 && flat_iter_next(&m->it, n, &off, &len)) {
        char *user = (char *)(intptr_t)off;
        if (pack)
            memcpy(stage, user, (size_t)len);
        else
            memcpy(user, stage, (size_t)len);
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
