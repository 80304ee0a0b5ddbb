/* Striped files: one logical file stored as `factor` objects in a list of
 * target directories (RAID-0 with a stripe unit, seed 002's user striping).
 *
 * Byte b of the logical file is in stripe s = b / unit, held by object
 * s % factor at offset (s / factor) * unit + b % unit. The logical path holds
 * a small text record of the layout, so a later open needs no hints:
 *
 *   pario-stripe-layout 1
 *   unit 65536
 *   factor 3
 *   object /disk0/out.5f3a09c1.0
 *   object /disk1/out.5f3a09c1.1
 *   object /disk2/out.5f3a09c1.2
 *
 * Objects are named after the logical file's base name and a hash of its
 * absolute path, so files of one name in different directories do not meet
 * in a target. Byte-range locks are taken on the record at logical offsets,
 * so locking means what it means on a plain file. */
#ifndef PARIO_IO_DRIVER_STRIPE_H
#define PARIO_IO_DRIVER_STRIPE_H

#include <stdint.h>
#include "io/driver/driver.h"

/* The first line of every layout record. */
#define IO_STRIPE_MAGIC "pario-stripe-layout 1\n"
/* Most objects per file (a record stays a few KiB). */
#define IO_STRIPE_MAX_FACTOR 64
/* Stripe unit of a new file when no striping_unit hint is given: large
 * enough that one request per target carries a useful amount of data. */
#define IO_STRIPE_DEFAULT_UNIT ((int64_t)1 << 20)
/* Largest record read back (IO_STRIPE_MAX_FACTOR paths). */
#define IO_STRIPE_RECORD_MAX ((int64_t)IO_STRIPE_MAX_FACTOR * 4200)

/* How a new file is to be striped: targets (comma-separated directories),
 * factor (0: one object per target; more than the targets: capped) and unit. */
typedef struct io_stripe_wish {
    const char *targets;
    int factor;
    int64_t unit;
} io_stripe_wish;

typedef struct io_stripe_layout {
    int64_t unit;
    int factor;
    char *objects[IO_STRIPE_MAX_FACTOR]; /* the objects' paths (owned) */
} io_stripe_layout;

/* An open striped file: the layout, one posix handle per object and the
 * record's descriptor (in io_handle.fd) for locks. */
typedef struct io_stripe_file {
    io_stripe_layout layout;
    io_handle objects[IO_STRIPE_MAX_FACTOR];
    /* Data calls (pread, pwrite, pwritev) this process made to each object
     * through this handle, from any thread: which targets a rank reaches. */
    _Atomic int64_t data_calls[IO_STRIPE_MAX_FACTOR];
} io_stripe_file;

/* stripe_layout.c: the record and the layout of a new file. */
int io_stripe_layout_parse(io_stripe_layout *l, const char *text, const char *path,
                           pario_error *err);
/* The record's text in buf (cap bytes); its length, or -1 when it does not fit. */
int64_t io_stripe_layout_format(const io_stripe_layout *l, char *buf, int64_t cap);
/* A new file's layout from the wish: objects named in the targets. */
int io_stripe_layout_plan(io_stripe_layout *l, const io_stripe_wish *w, const char *path,
                          pario_error *err);
void io_stripe_layout_free(io_stripe_layout *l);
/* Reads the record of the open file fd (path for messages): PARIO_OK and
 * the layout, or PARIO_ERR_BAD_FILE when fd holds no layout record. */
int io_stripe_layout_read(int fd, io_stripe_layout *l, const char *path, pario_error *err);
/* Whether the open file fd starts like a layout record (a small regular
 * file beginning with IO_STRIPE_MAGIC). */
int io_stripe_is_record(int fd);

/* Bytes of logical bytes [0, size) held by object i. */
static inline int64_t io_stripe_share(const io_stripe_layout *l, int i, int64_t size) {
    int64_t row = l->unit * l->factor;
    int64_t rest = size % row - (int64_t)i * l->unit;
    rest = rest < 0 ? 0 : rest > l->unit ? l->unit : rest;
    return size / row * l->unit + rest;
}

/* The logical size implied by object i holding size bytes. */
static inline int64_t io_stripe_logical_end(const io_stripe_layout *l, int i, int64_t size) {
    if (size <= 0)
        return 0;
    int64_t last = size - 1;
    return (last / l->unit * l->factor + i) * l->unit + last % l->unit + 1;
}

#endif
