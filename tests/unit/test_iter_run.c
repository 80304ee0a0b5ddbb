/* Run-wise walking of flattened types (flat_iter_run / flat_iter_consume)
 * and the cursors built on it (src/io/indep/cursor.c): random datatypes
 * packed and unpacked in random chunks against MPI_Pack / MPI_Unpack, file
 * cursors handing out runs against the extent-by-extent walk, the strided
 * block copy against a byte loop, tiny-block views read and written
 * through small sieving windows and across end of file, byte-exact, and an
 * empty contiguous buffer at address 0, which has no walk to free. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/flat/flat.h"
#include "io/indep/cursor.h"
#include "pario/io.h"
#include "pario/pario.h"
#include "ptest.h"
#include "test_flat.h"

/* Random types checked per run, from a fixed first seed. */
#define RUN_RANDOM_TYPES 300
#define RUN_BASE_SEED 20261123u
/* MPI constructor nesting of the random types. */
#define RUN_MAX_DEPTH 4
/* Instances per random type: 1..RUN_MAX_INSTANCES. */
#define RUN_MAX_INSTANCES 5
/* Longest chunk asked of a cursor in one call; short enough to split runs. */
#define RUN_MAX_CHUNK 40
/* Stream bytes of a file view compared per random type. */
#define RUN_VIEW_BYTES 3000
/* Blocks in the tiny-block views of the end-to-end checks. */
#define RUN_VIEW_BLOCKS 300

/* ---- helpers --------------------------------------------------------------------- */

static int64_t random_below(rng *r, int64_t n) {
    return n > 0 ? (int64_t)(rng_next(r) % (uint64_t)n) : 0;
}

/* A buffer covering every byte `count` instances of a type touch; `origin`
 * is where displacement 0 lies. */
typedef struct span_buf {
    uint8_t *mem, *origin;
    int64_t len;
} span_buf;

static int span_alloc(span_buf *s, MPI_Datatype t, int64_t count) {
    MPI_Count tlb, text, lb, ext;
    MPI_Type_get_true_extent_x(t, &tlb, &text);
    MPI_Type_get_extent_x(t, &lb, &ext);
    int64_t last = (count - 1) * ext;
    int64_t lo = tlb + (last < 0 ? last : 0);
    s->len = text + (last < 0 ? -last : last);
    s->mem = malloc((size_t)(s->len > 0 ? s->len : 1));
    s->origin = s->mem - lo;
    return s->mem != NULL;
}

/* True when some byte is written twice by the stream (MPI_Unpack is only
 * defined without). */
static int stream_overlaps(const flat_type *f, const span_buf *s, int64_t count) {
    uint8_t *seen = calloc((size_t)(s->len > 0 ? s->len : 1), 1);
    flat_iter it;
    int overlap = !seen || flat_iter_init(&it, f, (int64_t)(intptr_t)s->origin, count, 0) != 0;
    int64_t off, len;
    while (!overlap && flat_iter_next(&it, INT64_MAX, &off, &len))
        for (int64_t i = 0; i < len && !overlap; i++)
            overlap = seen[(uint8_t *)(intptr_t)off - s->mem + i]++ != 0;
    if (seen)
        flat_iter_free(&it);
    free(seen);
    return overlap;
}

/* ---- memory cursor against MPI_Pack / MPI_Unpack ---------------------------------- */

/* Pack the stream from byte `skip` through io_mem_copy in random chunks. */
static void pack_in_chunks(const flat_type *f, const span_buf *s, int count, int64_t skip,
                           uint8_t *out, int64_t total, rng *r) {
    io_mem_cursor m;
    PT_EQ(io_mem_open(&m, f, s->origin, count, skip), PARIO_OK);
    for (int64_t done = skip; done < total;) {
        int64_t n = 1 + random_below(r, RUN_MAX_CHUNK);
        n = n < total - done ? n : total - done;
        io_mem_copy(&m, (char *)out + done - skip, n, 1);
        done += n;
    }
    io_mem_close(&m);
}

static void unpack_in_chunks(const flat_type *f, const span_buf *s, int count,
                             const uint8_t *packed, int64_t total, rng *r) {
    io_mem_cursor m;
    PT_EQ(io_mem_open(&m, f, s->origin, count, 0), PARIO_OK);
    for (int64_t done = 0; done < total;) {
        int64_t n = 1 + random_below(r, RUN_MAX_CHUNK);
        n = n < total - done ? n : total - done;
        io_mem_copy(&m, (char *)packed + done, n, 0);
        done += n;
    }
    io_mem_close(&m);
}

/* Walk with flat_iter_run / flat_iter_consume (random amounts, mixed with
 * flat_iter_next) and gather the bytes; checks the run shape on the way. */
static int64_t gather_by_runs(const flat_type *f, const span_buf *s, int count, uint8_t *out,
                              rng *r) {
    flat_iter it;
    PT_EQ(flat_iter_init(&it, f, (int64_t)(intptr_t)s->origin, count, 0), PARIO_OK);
    int64_t got = 0, off, len;
    flat_run run;
    int shape_ok = 1;
    while (flat_iter_run(&it, &run)) {
        shape_ok &= run.count >= 1 && run.len >= 1;
        if (random_below(r, 4) == 0 && flat_iter_next(&it, 1 + random_below(r, 9), &off, &len)) {
            memcpy(out + got, (char *)(intptr_t)off, (size_t)len);
            got += len;
            continue;
        }
        int64_t n = 1 + random_below(r, run.count * run.len);
        for (int64_t b = 0; b * run.len < n; b++) {
            int64_t piece = n - b * run.len < run.len ? n - b * run.len : run.len;
            memcpy(out + got, (char *)(intptr_t)(run.off + b * run.stride), (size_t)piece);
            got += piece;
        }
        flat_iter_consume(&it, n);
    }
    flat_iter_free(&it);
    PT_CHECK(shape_ok);
    return got;
}

static void check_memory_side(MPI_Datatype t, const flat_type *f, int count, rng *r) {
    int64_t total = (int64_t)count * f->size;
    span_buf s;
    if (total == 0 || !span_alloc(&s, t, count))
        return;
    fill_pattern(s.mem, s.len, 1);
    uint8_t *packed = malloc((size_t)total + 1), *got = malloc((size_t)total + 1);
    int pos = 0;
    MPI_Pack(s.origin, count, t, packed, (int)total + 1, &pos, MPI_COMM_SELF);

    int64_t skip = random_below(r, total);
    pack_in_chunks(f, &s, count, skip, got, total, r);
    PT_CHECK(memcmp(got, packed + skip, (size_t)(total - skip)) == 0);
    PT_EQ(gather_by_runs(f, &s, count, got, r), total);
    PT_CHECK(memcmp(got, packed, (size_t)total) == 0);

    if (!stream_overlaps(f, &s, count)) {
        uint8_t *want = malloc((size_t)s.len);
        fill_pattern(s.mem, s.len, 2);
        pos = 0;
        MPI_Unpack(packed, (int)total + 1, &pos, s.origin, count, t, MPI_COMM_SELF);
        memcpy(want, s.mem, (size_t)s.len);
        fill_pattern(s.mem, s.len, 2);
        unpack_in_chunks(f, &s, count, packed, total, r);
        PT_CHECK(memcmp(want, s.mem, (size_t)s.len) == 0);
        free(want);
    }
    free(packed);
    free(got);
    free(s.mem);
}

/* ---- file cursor: runs against extents ------------------------------------------- */

/* File offsets of the first n stream bytes, one by one, from io_file_peek. */
static void offsets_by_extents(const io_view *v, int64_t pos, int64_t *at, int64_t n) {
    io_file_cursor c;
    PT_EQ(io_file_open(&c, v, pos), PARIO_OK);
    int64_t off, len;
    for (int64_t i = 0; i < n && io_file_peek(&c, n - i, &off, &len);) {
        for (int64_t b = 0; b < len; b++)
            at[i++] = off + b;
        io_file_take(&c, len);
    }
    io_file_close(&c);
}

/* The same through io_file_peek_run / io_file_take_run in random amounts,
 * mixed with peek/take; checks that runs of several blocks are increasing
 * and do not touch. */
static void offsets_by_runs(const io_view *v, int64_t pos, int64_t *at, int64_t n, rng *r) {
    io_file_cursor c;
    PT_EQ(io_file_open(&c, v, pos), PARIO_OK);
    flat_run run;
    int shape_ok = 1;
    for (int64_t i = 0; i < n && io_file_peek_run(&c, n - i, &run);) {
        shape_ok &= run.count == 1 || run.stride > run.len;
        int64_t limit = n - i < run.count * run.len ? n - i : run.count * run.len;
        int64_t take = random_below(r, 3) == 0 ? limit : 1 + random_below(r, limit);
        if (random_below(r, 5) == 0) {
            int64_t off, len;
            PT_CHECK(io_file_peek(&c, take, &off, &len));
            PT_EQ(off, run.off);
            for (int64_t b = 0; b < len; b++)
                at[i++] = off + b;
            io_file_take(&c, len);
            continue;
        }
        for (int64_t b = 0; b < take; b++)
            at[i++] = run.off + (b / run.len) * run.stride + b % run.len;
        io_file_take_run(&c, take);
    }
    io_file_close(&c);
    PT_CHECK(shape_ok);
}

static void check_file_side(const flat_type *f, rng *r) {
    if (f->size == 0 || !f->monotonic || f->true_lb < 0)
        return; /* not a valid filetype */
    io_view v = {.disp = random_below(r, 100), .flat = f, .linear = false};
    int64_t pos = random_below(r, 2 * f->size);
    int64_t *want = malloc(RUN_VIEW_BYTES * sizeof *want);
    int64_t *got = malloc(RUN_VIEW_BYTES * sizeof *got);
    for (int64_t i = 0; i < RUN_VIEW_BYTES; i++)
        want[i] = got[i] = -1;
    offsets_by_extents(&v, pos, want, RUN_VIEW_BYTES);
    offsets_by_runs(&v, pos, got, RUN_VIEW_BYTES, r);
    PT_CHECK(want[RUN_VIEW_BYTES - 1] >= 0);
    PT_CHECK(memcmp(want, got, RUN_VIEW_BYTES * sizeof *want) == 0);
    free(want);
    free(got);
}

static void test_random_types(void) {
    for (unsigned i = 0; i < RUN_RANDOM_TYPES; i++) {
        uint64_t seed = RUN_BASE_SEED + i;
        rng r = {seed ^ 0x7a11ULL};
        MPI_Datatype t = random_type(seed, RUN_MAX_DEPTH);
        const flat_type *f = NULL;
        PT_EQ(flat_get(t, &f), PARIO_OK);
        if (f) {
            check_memory_side(t, f, (int)(1 + random_below(&r, RUN_MAX_INSTANCES)), &r);
            check_file_side(f, &r);
        }
        MPI_Type_free(&t);
    }
}

/* Single-block types tiled by their extent (resized blocks, and vectors
 * whose extent continues their stride): the runs then span instances. */
static void test_tiled_types(void) {
    static const int shapes[][3] = {{8, 1, 32}, {1, 1, 3}, {4, 1, 4}, {8, 3, 16}, {2, 5, 7}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        int len = shapes[i][0], count = shapes[i][1], stride = shapes[i][2];
        MPI_Datatype v, t;
        MPI_Type_vector(count, len, stride, MPI_BYTE, &v);
        MPI_Type_create_resized(v, 0, (MPI_Aint)count * stride, &t);
        MPI_Type_commit(&t);
        MPI_Type_free(&v);
        const flat_type *f = NULL;
        PT_EQ(flat_get(t, &f), PARIO_OK);
        if (f) {
            rng r = {0x711edULL + i};
            flat_iter it;
            flat_run run;
            PT_EQ(flat_iter_init(&it, f, 0, 100, 0), PARIO_OK);
            PT_CHECK(flat_iter_run(&it, &run) && run.count == 100 * count);
            flat_iter_free(&it);
            for (int k = 0; k < 20; k++) {
                check_memory_side(t, f, (int)(1 + random_below(&r, 200)), &r);
                check_file_side(f, &r);
            }
        }
        MPI_Type_free(&t);
    }
}

/* ---- strided block copy ----------------------------------------------------------- */

static void test_copy_blocks(void) {
    static const int64_t lens[] = {1, 2, 3, 4, 8, 16, 24};
    enum { ROOM = 1024, MID = 512 };
    uint8_t src[ROOM], dst[ROOM], want[ROOM];
    fill_pattern(src, ROOM, 3);
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
        int64_t len = lens[l];
        int64_t strides[][2] = {{len, len + 5}, {len + 3, len}, {-(len + 2), len}, {len, 0}};
        for (size_t s = 0; s < sizeof strides / sizeof strides[0]; s++) {
            for (int64_t count = 0; count <= 6; count++) {
                int64_t ds = strides[s][0], ss = strides[s][1];
                fill_pattern(dst, ROOM, 4);
                memcpy(want, dst, ROOM);
                for (int64_t b = 0; b < count; b++)
                    for (int64_t i = 0; i < len; i++)
                        want[MID + b * ds + i] = src[MID + b * ss + i];
                io_copy_blocks((char *)dst + MID, ds, (const char *)src + MID, ss, len, count);
                PT_CHECK(memcmp(dst, want, ROOM) == 0);
            }
        }
    }
}

/* ---- tiny blocks end to end ----------------------------------------------------- */

/* One tiny-block layout: the view is vector(RUN_VIEW_BLOCKS, block,
 * stride) at disp, or a block resized to stride tiling the file from disp;
 * memory is vector(RUN_VIEW_BLOCKS, block, 2 * block). */
typedef struct tiny_case {
    int block, stride, disp;
    int tiled;       /* the view is resized(block, stride), tiling the file */
    const char *ds;  /* romio_ds_read and romio_ds_write */
    const char *buf; /* ind_rd_buffer_size and ind_wr_buffer_size */
} tiny_case;

static pario_file *open_tiny(const char *path, const tiny_case *tc, MPI_Datatype ft) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_read", tc->ds);
    MPI_Info_set(info, "romio_ds_write", tc->ds);
    MPI_Info_set(info, "ind_rd_buffer_size", tc->buf);
    MPI_Info_set(info, "ind_wr_buffer_size", tc->buf);
    pario_file *fh = NULL;
    pario_error err;
    PT_EQ(pario_file_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh, &err),
          PARIO_OK);
    MPI_Info_free(&info);
    if (fh)
        PT_EQ(pario_file_set_view(fh, tc->disp, MPI_BYTE, ft, "native", MPI_INFO_NULL), PARIO_OK);
    return fh;
}

/* Write through the view over a file holding a background pattern, check
 * the file byte for byte, then cut the file inside a block and read back:
 * the bytes before the cut arrive, memory gaps stay untouched. */
static void check_tiny_case(const tiny_case *tc) {
    const char *path = ptest_path("iter_run_tiny.dat");
    int64_t n = RUN_VIEW_BLOCKS, b = tc->block, st = tc->stride;
    int64_t fsize = tc->disp + (n - 1) * st + b + st, msize = 2 * n * b;
    uint8_t *file = malloc((size_t)fsize), *want = malloc((size_t)fsize);
    uint8_t *mem = malloc((size_t)msize), *back = malloc((size_t)msize);
    fill_pattern(want, fsize, 5);
    fill_pattern(mem, msize, 6);
    int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
    PT_EQ(pwrite(fd, want, (size_t)fsize, 0), fsize);
    for (int64_t k = 0; k < n; k++)
        memcpy(want + tc->disp + k * st, mem + 2 * k * b, (size_t)b);

    MPI_Datatype ft, mt;
    if (tc->tiled) {
        MPI_Datatype one;
        MPI_Type_contiguous((int)b, MPI_BYTE, &one);
        MPI_Type_create_resized(one, 0, (MPI_Aint)st, &ft);
        MPI_Type_free(&one);
    } else {
        MPI_Type_vector((int)n, (int)b, (int)st, MPI_BYTE, &ft);
    }
    MPI_Type_vector((int)n, (int)b, (int)(2 * b), MPI_BYTE, &mt);
    MPI_Type_commit(&ft);
    MPI_Type_commit(&mt);
    pario_file *fh = open_tiny(path, tc, ft);
    MPI_Count moved = 0;
    PT_EQ(pario_file_write_at(fh, 0, mem, 1, mt, &moved), PARIO_OK);
    PT_EQ(moved, n * b);
    PT_EQ(pread(fd, file, (size_t)fsize, 0), fsize);
    PT_CHECK(memcmp(file, want, (size_t)fsize) == 0);

    int64_t keep = n / 2 * b + b / 2; /* stream bytes before the cut */
    int64_t cut = tc->disp + (keep / b) * st + keep % b;
    PT_EQ(ftruncate(fd, cut), 0);
    fill_pattern(back, msize, 7);
    PT_EQ(pario_file_read_at(fh, 0, back, 1, mt, &moved), PARIO_OK);
    PT_EQ(moved, keep);
    int same = 1;
    for (int64_t i = 0; i < msize; i++) {
        int64_t k = i / (2 * b), in_block = i % (2 * b) < b;
        int64_t stream = k * b + i % (2 * b);
        if (in_block && stream < keep)
            same &= back[i] == mem[i];
        else if (!in_block)
            same &= back[i] == pattern_byte(i, 7);
    }
    PT_CHECK(same);
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    close(fd);
    MPI_Type_free(&ft);
    MPI_Type_free(&mt);
    free(file);
    free(want);
    free(mem);
    free(back);
}

static void test_tiny_blocks(void) {
    static const tiny_case cases[] = {
        {8, 32, 0, 0, "enable", "100"},    {8, 32, 5, 0, "automatic", "4194304"},
        {8, 24, 3, 0, "disable", "65536"}, {1, 3, 1, 0, "enable", "77"},
        {2, 5, 0, 0, "automatic", "1000"}, {4, 12, 7, 0, "enable", "64"},
        {16, 40, 2, 0, "enable", "333"},   {3, 11, 0, 0, "enable", "50"},
        {8, 32, 9, 0, "automatic", "8"},   {16, 17, 0, 0, "disable", "4096"},
        {8, 32, 0, 1, "enable", "100"},    {8, 32, 5, 1, "automatic", "4194304"},
        {1, 3, 1, 1, "enable", "77"},      {4, 12, 7, 1, "disable", "4096"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_tiny_case(&cases[i]);
}

/* A cursor over zero ints at NULL: its contiguous run starts at address 0,
 * and closing it must not free a walk it never made (the cursor's memory
 * is filled with garbage first, as an uninitialized stack variable is). */
static void test_empty_buffer(void) {
    const flat_type *f = NULL;
    PT_EQ(flat_get(MPI_INT, &f), PARIO_OK);
    if (!f)
        return;
    io_mem_cursor m;
    memset(&m, 0xA5, sizeof m);
    PT_EQ(io_mem_open(&m, f, NULL, 0, 0), PARIO_OK);
    io_mem_close(&m);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    test_copy_blocks();
    test_random_types();
    test_tiled_types();
    test_tiny_blocks();
    test_empty_buffer();
    return ptest_finish();
}
