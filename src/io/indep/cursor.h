/* Cursors over the two sides of a transfer: the user's memory (a datatype
 * repeated count times) and the file (the view's extents).
 *
 * Both hand out strided runs of blocks rather than one block per call where
 * the datatype repeats a leaf (a vector of 8-byte blocks is one run), so the
 * per-block cost is one fixed-size copy, not a call chain. */
#ifndef PARIO_IO_CURSOR_H
#define PARIO_IO_CURSOR_H

#include <stdint.h>

#include "io/flat/flat.h"
#include "io/view/view.h"

typedef struct io_mem_cursor {
    char *contig; /* next byte, when the user data is one contiguous run (NULL
                     when that run is an empty buffer at address 0) */
    int walking;  /* `it` is in use */
    flat_iter it; /* otherwise: walk of the memory datatype */
} io_mem_cursor;

/* Cursor at data byte `skip` of count instances of t at buf. */
int io_mem_open(io_mem_cursor *m, const flat_type *t, void *buf, MPI_Count count, int64_t skip);
void io_mem_close(io_mem_cursor *m);
/* Copy the next n bytes of user data into stage (pack) or from it (unpack). */
void io_mem_copy(io_mem_cursor *m, char *stage, int64_t n, int pack);

/* The view's file extents from a stream position, with one extent of
 * lookahead. A linear view is one endless extent and needs no iterator. */
typedef struct io_file_cursor {
    flat_iter it;
    int linear;
    int64_t off, len; /* pending extent */
    int has;
} io_file_cursor;

int io_file_open(io_file_cursor *c, const io_view *v, int64_t pos);
void io_file_close(io_file_cursor *c);
/* The pending extent, at most `limit` bytes long; 0 when the view ends. */
int io_file_peek(io_file_cursor *c, int64_t limit, int64_t *off, int64_t *len);
/* Consume n bytes of the pending extent. */
void io_file_take(io_file_cursor *c, int64_t n);

/* The pending run of file blocks; 0 when the view ends. A run of two or more
 * blocks has stride > len (blocks in increasing file order, not touching);
 * anything else (the pending extent, a lone block, blocks merged with their
 * neighbours) comes as a single block (count 1) of at most `limit` bytes.
 * Consume with io_file_take_run; may be mixed with peek/take. */
int io_file_peek_run(io_file_cursor *c, int64_t limit, flat_run *run);
/* Consume the first n bytes of the pending run (n <= count * len). */
void io_file_take_run(io_file_cursor *c, int64_t n);

/* Copy `count` blocks of `len` bytes from src to dst, the blocks
 * `src_stride` and `dst_stride` bytes apart. The small power-of-two lengths
 * tiny noncontiguous types use most get a copy of fixed size. */
void io_copy_blocks(char *dst, int64_t dst_stride, const char *src, int64_t src_stride, int64_t len,
                    int64_t count);

#endif
