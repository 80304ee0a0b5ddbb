/* File pieces gathered from several ranks, written with few system calls:
 * the small-write funnel (small.c) and kept collective writes (kept.c). */
#include <stdlib.h>
#include <sys/uio.h>
#include "io/coll/coll_internal.h"
#include "io/indep/access.h"

/* Buffers of one pwritev (Linux's IOV_MAX). */
#define PIECES_IOV 1024

static int by_offset(const void *a, const void *b) {
    const coll_piece *x = a, *y = b;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

int coll_pieces_sort(coll_piece *p, int64_t n) {
    qsort(p, (size_t)n, sizeof *p, by_offset);
    for (int64_t i = 1; i < n; i++)
        if (p[i].off < p[i - 1].off + p[i - 1].len)
            return 1;
    return 0;
}

int coll_pieces_write(pario_file *fh, const coll_piece *p, int64_t n, int join) {
    struct iovec iov[PIECES_IOV];
    int rc = PARIO_OK;
    for (int64_t i = 0; i < n && rc == PARIO_OK;) {
        int niov = 0;
        int64_t off = p[i].off, end = off;
        do {
            iov[niov++] = (struct iovec){p[i].data, (size_t)p[i].len};
            end += p[i++].len;
        } while (join && i < n && niov < PIECES_IOV && p[i].off == end);
        rc = io_write_iov(fh, iov, niov, off, end - off);
    }
    return rc;
}
