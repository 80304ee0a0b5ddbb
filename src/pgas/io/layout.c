/* From a shared buffer's layout to each owner's part of the file: the
 * arithmetic that makes the array's index order the file's byte order. */
#include "pgas/io/pgas_io_internal.h"
#include "pgas/pgas_internal.h"

static uint64_t min_u64(uint64_t a, uint64_t b) {
    return a < b ? a : b;
}

pio_pattern pio_pattern_of(pario_pgas_ptr ptr, uint64_t block_bytes, uint64_t len, uint64_t file) {
    /* A buffer typed with another block starts at phase 0 of its block. */
    int reset = block_bytes != 0 && ptr.block * ptr.elem_size != block_bytes;
    uint64_t phase = block_bytes == 0 || reset ? 0 : ptr.phase * ptr.elem_size;
    return (pio_pattern){.addr = ptr.addr - (reset ? ptr.phase * ptr.elem_size : 0),
                         .phase = phase,
                         .block = block_bytes,
                         .len = len,
                         .file = file,
                         .rank = ptr.rank};
}

/* The pointer to the byte `at` bytes after the pattern's first one. */
static pario_pgas_ptr pattern_byte(const pio_pattern *p, uint32_t nranks, uint64_t at) {
    pario_pgas_ptr q = {.addr = p->addr,
                        .phase = p->phase,
                        .block = p->block,
                        .elem_size = 1,
                        .rank = (uint32_t)p->rank,
                        .nranks = nranks};
    return pario_pgas_ptr_add(q, (int64_t)at);
}

int pio_check_pattern(pario_pgas_file *fd, const pio_pattern *p, const char *what) {
    if (p->len == 0)
        return PARIO_OK;
    uint32_t n = (uint32_t)fd->nranks;
    pario_pgas_ptr ends[2] = {pattern_byte(p, n, 0), pattern_byte(p, n, p->len - 1)};
    for (int i = 0; i < 2; i++) {
        int rc = pgas_check_ptr(fd->ctx, ends[i], what);
        if (rc != PARIO_OK)
            return pio_fail(fd, rc, "%s %s: %s byte of the shared buffer: %s", what, fd->name,
                            i ? "last" : "first", pario_pgas_last_error(fd->ctx)->msg);
    }
    return PARIO_OK;
}

/* Positions below are in the pattern's row: the row of nranks blocks in which
 * its first byte lies, starting at rank 0's block (s is the first byte's). */
int pio_pattern_part(const pio_pattern *p, uint32_t nranks, uint32_t o, pio_part *part,
                     uint64_t *mem_addr) {
    *part = (pio_part){0};
    if (p->len == 0)
        return 0;
    if (p->block == 0) { /* indefinite: everything on the pointer's rank */
        if (p->rank != o)
            return 0;
        part->head_off = p->file;
        part->head_len = p->len;
        *mem_addr = p->addr;
        return 1;
    }
    uint64_t b = p->block, row = b * nranks;
    uint64_t s = p->rank * b + p->phase, end = s + p->len;
    uint64_t v = (uint64_t)o * b; /* start of o's first block touching [s, end) */
    if (v + b <= s)
        v += row;
    if (v >= end)
        return 0;
    uint64_t first = v > s ? v : s;
    part->head_off = p->file + (first - s);
    part->head_len = min_u64(v + b, end) - first;
    uint64_t v1 = v + row; /* the next block of o */
    uint64_t nfull = v1 + b <= end ? (end - v1 - b) / row + 1 : 0;
    part->body_off = p->file + (v1 - s);
    part->body_count = nfull;
    part->body_block = b;
    part->body_stride = row;
    uint64_t vt = v1 + nfull * row; /* the block after the whole ones */
    part->tail_off = p->file + (vt - s);
    part->tail_len = vt < end ? end - vt : 0;
    *mem_addr = pattern_byte(p, nranks, first - s).addr;
    return 1;
}
