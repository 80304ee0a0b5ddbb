/* User data representations: MPI_Register_datarep (MPI 3.1 section 13.5.3).
 *
 * "plus1000" stores every int as the big-endian form of value + 1000; its
 * conversion functions walk the typemap of the memory datatype themselves
 * (MPI_INT, or the strided vector below), starting at item `position`, as
 * the standard describes. Neither OMPIO (Open MPI 4.1) nor ROMIO (MPICH 4.0)
 * implements MPI_Register_datarep, so the checks that need it run under
 * pario only (see README.md); the unknown-name checks run everywhere. */
#include "../mpiio/conf.h"

#include <stdint.h>

/* Ints each rank owns: BLOCKS blocks of BLOCK, interleaved over the ranks. */
enum { BLOCK = 2, BLOCKS = 3, NPER = BLOCK * BLOCKS };
/* What "plus1000" adds to every value in the file. */
#define OFFSET_IN_FILE 1000
/* Value every unused memory slot holds; reads must not touch it. */
#define SENTINEL (-77)

/* The conversion functions' extra state: which types they understand and
 * what they were asked to do. */
typedef struct conv_state {
    MPI_Datatype strided; /* NPER ints, every other one */
    long long items;      /* items converted so far */
    MPI_Offset last_position;
    int fail; /* nonzero: the next conversion fails */
} conv_state;

/* Address of item idx of the typemap of dt tiled over buf. */
static int *item_address(const conv_state *s, void *buf, MPI_Datatype dt, MPI_Offset idx) {
    if (dt == MPI_INT)
        return (int *)buf + idx;
    MPI_Aint lb, extent;
    MPI_Type_get_extent(s->strided, &lb, &extent);
    char *inst = (char *)buf + (idx / NPER) * extent;
    return (int *)(void *)(inst + (idx % NPER) * 2 * sizeof(int));
}

static int known_type(const conv_state *s, MPI_Datatype dt) {
    return dt == MPI_INT || dt == s->strided;
}

static uint32_t to_be32(uint32_t v) {
    unsigned char b[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 8), (unsigned char)v};
    uint32_t out;
    memcpy(&out, b, 4);
    return out;
}

static uint32_t from_be32(uint32_t raw) {
    unsigned char b[4];
    memcpy(b, &raw, 4);
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static int plus_to_file(void *userbuf, MPI_Datatype dt, MPI_Count count, void *filebuf,
                        MPI_Offset position, void *extra) {
    conv_state *s = extra;
    if (s->fail || !known_type(s, dt))
        return MPI_ERR_TYPE;
    uint32_t *out = filebuf;
    for (MPI_Count i = 0; i < count; i++)
        out[i] = to_be32((uint32_t)(*item_address(s, userbuf, dt, position + i) + OFFSET_IN_FILE));
    s->items += count;
    s->last_position = position;
    return MPI_SUCCESS;
}

static int plus_from_file(void *userbuf, MPI_Datatype dt, MPI_Count count, void *filebuf,
                          MPI_Offset position, void *extra) {
    conv_state *s = extra;
    if (s->fail || !known_type(s, dt))
        return MPI_ERR_TYPE;
    const uint32_t *in = filebuf;
    for (MPI_Count i = 0; i < count; i++)
        *item_address(s, userbuf, dt, position + i) = (int)from_be32(in[i]) - OFFSET_IN_FILE;
    s->items += count;
    s->last_position = position;
    return MPI_SUCCESS;
}

static int write_plus(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position,
                      void *extra) {
    return plus_to_file(userbuf, dt, count, filebuf, position, extra);
}

static int read_plus(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position,
                     void *extra) {
    return plus_from_file(userbuf, dt, count, filebuf, position, extra);
}

static int native_extent(MPI_Datatype dt, MPI_Aint *extent, void *extra) {
    (void)extra;
    int size = 0;
    MPI_Type_size(dt, &size);
    *extent = size;
    return MPI_SUCCESS;
}

/* Every type twice as wide in the file: pario refuses such layouts. */
static int double_extent(MPI_Datatype dt, MPI_Aint *extent, void *extra) {
    native_extent(dt, extent, extra);
    *extent *= 2;
    return MPI_SUCCESS;
}

static int value_of(int r, int i) {
    return (i % 2 ? -1 : 1) * (r * 1000003 + i * 17 + 5);
}

static MPI_Datatype interleaved_filetype(int n) {
    MPI_Datatype vec, ft;
    MPI_Type_vector(BLOCKS, BLOCK, BLOCK * n, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)BLOCK * n * sizeof(int), &ft);
    MPI_Type_free(&vec);
    MPI_Type_commit(&ft);
    return ft;
}

/* The file after every rank wrote its ints through rep ("plus1000": big-endian
 * value + 1000; otherwise native). */
static size_t expected_image(int n, int plus, unsigned char *img) {
    int per_round = BLOCK * n;
    for (int g = 0; g < NPER * n; g++) {
        int r = (g % per_round) / BLOCK, i = (g / per_round) * BLOCK + g % BLOCK;
        uint32_t v = (uint32_t)value_of(r, i);
        uint32_t stored = plus ? to_be32(v + OFFSET_IN_FILE) : v;
        memcpy(img + (size_t)g * 4, &stored, 4);
    }
    return (size_t)NPER * n * 4;
}

static void fill_strided(int r, int *mem) {
    for (int i = 0; i < 2 * NPER; i++)
        mem[i] = i % 2 ? SENTINEL : value_of(r, i / 2);
}

static void check_strided(int r, const int *mem) {
    int bad = 0;
    for (int i = 0; i < 2 * NPER; i++)
        bad += mem[i] != (i % 2 ? SENTINEL : value_of(r, i / 2));
    PT_EQ(bad, 0);
}

/* Collective write and read of the strided memory type through rep. */
static void test_collective(conv_state *s, const char *rep, int plus, const char *path) {
    int r = conf_rank(), n = conf_size();
    MPI_Datatype ft = interleaved_filetype(n);
    int mem[2 * NPER];
    unsigned char img[NPER * 8 * 4];
    MPI_File fh;
    conf_remove(path);
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Offset disp = (MPI_Offset)r * BLOCK * sizeof(int);
    PT_MPI_OK(MPI_File_set_view(fh, disp, MPI_INT, ft, rep, MPI_INFO_NULL));
    fill_strided(r, mem);
    s->items = 0;
    PT_MPI_OK(MPI_File_write_all(fh, mem, 1, s->strided, MPI_STATUS_IGNORE));
    PT_EQ(s->items, plus ? NPER : 0);
    PT_MPI_OK(MPI_File_sync(fh));
    CONF_EXPECT_IMAGE(path, img, expected_image(n, plus, img));
    for (int i = 0; i < 2 * NPER; i++)
        mem[i] = SENTINEL;
    s->items = 0;
    MPI_Status st;
    int got = -1;
    PT_MPI_OK(MPI_File_read_at_all(fh, 0, mem, 1, s->strided, &st));
    MPI_Get_count(&st, MPI_INT, &got);
    PT_EQ(got, NPER);
    PT_EQ(s->items, plus ? NPER : 0);
    check_strided(r, mem);
    PT_MPI_OK(MPI_File_close(&fh));
    MPI_Type_free(&ft);
}

/* Independent: contiguous ints in two calls; the second conversion starts
 * at typemap item 0 of its own call, the pointer moves in etypes. */
static void test_independent(conv_state *s, const char *path) {
    int r = conf_rank(), n = conf_size();
    MPI_Datatype ft = interleaved_filetype(n);
    int vals[NPER], back[NPER];
    unsigned char img[NPER * 8 * 4];
    for (int i = 0; i < NPER; i++)
        vals[i] = value_of(r, i);
    MPI_File fh;
    MPI_Offset pos = -1;
    conf_remove(path);
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    PT_MPI_OK(MPI_File_set_view(fh, (MPI_Offset)r * BLOCK * sizeof(int), MPI_INT, ft, "plus1000",
                                MPI_INFO_NULL));
    PT_MPI_OK(MPI_File_write(fh, vals, BLOCK, MPI_INT, MPI_STATUS_IGNORE));
    PT_MPI_OK(MPI_File_write(fh, vals + BLOCK, NPER - BLOCK, MPI_INT, MPI_STATUS_IGNORE));
    PT_EQ(s->last_position, 0);
    MPI_File_get_position(fh, &pos);
    PT_EQ(pos, NPER);
    PT_MPI_OK(MPI_File_sync(fh));
    CONF_EXPECT_IMAGE(path, img, expected_image(n, 1, img));
    memset(back, 0, sizeof back);
    PT_MPI_OK(MPI_File_read_at(fh, 0, back, NPER, MPI_INT, MPI_STATUS_IGNORE));
    PT_CHECK(memcmp(back, vals, sizeof vals) == 0);
    PT_MPI_OK(MPI_File_close(&fh));
    MPI_Type_free(&ft);
}

/* A failing conversion on rank 0 fails the collective write on every rank. */
static void test_failing_conversion(conv_state *s, const char *path) {
    int mem[NPER] = {0};
    MPI_File fh;
    conf_remove(path);
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    PT_MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "plus1000", MPI_INFO_NULL));
    s->fail = conf_rank() == 0;
    int rc = MPI_File_write_at_all(fh, (MPI_Offset)conf_rank() * NPER, mem, NPER, MPI_INT,
                                   MPI_STATUS_IGNORE);
    s->fail = 0;
    PT_EQ(conf_class(rc), MPI_ERR_CONVERSION);
    CONF_SAME_CLASS(rc);
    CONF_NAMES_FILE(rc, path);
    PT_MPI_OK(MPI_File_close(&fh));
}

/* Sizes that differ from native: refused in views, reported by
 * get_type_extent. */
static void test_wide(const char *path) {
    MPI_File fh;
    MPI_Aint ext = 0;
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    int rc = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "wide", MPI_INFO_NULL);
    PT_EQ(conf_class(rc), MPI_ERR_UNSUPPORTED_DATAREP);
    CONF_SAME_CLASS(rc);
    CONF_NAMES_FILE(rc, path);
    PT_MPI_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "wide", MPI_INFO_NULL));
    PT_MPI_OK(MPI_File_get_type_extent(fh, MPI_INT, &ext));
    PT_EQ(ext, 8);
    PT_MPI_OK(MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext));
    PT_EQ(ext, 16);
    PT_MPI_OK(MPI_File_close(&fh));
}

/* An unknown name fails set_view on every rank; the view and file stay. */
static void test_unknown(const char *path) {
    unsigned char img[64];
    conf_pattern(img, sizeof img, 11);
    conf_put_file(path, img, sizeof img);
    MPI_File fh;
    PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    int rc = MPI_File_set_view(fh, 4, MPI_INT, MPI_INT, "no-such-representation", MPI_INFO_NULL);
    PT_EQ(conf_class(rc), MPI_ERR_UNSUPPORTED_DATAREP);
    CONF_SAME_CLASS(rc);
    CONF_NAMES_FILE(rc, path);
    MPI_Offset disp = -1;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING] = "";
    PT_MPI_OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    PT_EQ(disp, 0);
    PT_CHECK(strcmp(rep, "native") == 0);
    PT_MPI_OK(MPI_File_close(&fh));
    CONF_EXPECT_IMAGE(path, img, sizeof img);
}

static void test_registration(conv_state *s) {
    PT_MPI_CLASS(MPI_Register_datarep("plus1000", read_plus, write_plus, native_extent, s),
                 MPI_ERR_DUP_DATAREP);
    PT_MPI_CLASS(MPI_Register_datarep("external32", read_plus, write_plus, native_extent, s),
                 MPI_ERR_DUP_DATAREP);
    PT_MPI_OK(MPI_Register_datarep("nullconv", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                   native_extent, NULL));
    PT_MPI_OK(MPI_Register_datarep("wide", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                   double_extent, NULL));
}

#if MPI_VERSION >= 4
/* MPI 4's MPI_Register_datarep_c: the same representation registered with
 * large-count conversion functions writes and reads the same file. */
static void test_large_count(conv_state *s, const char *path) {
    PT_MPI_OK(MPI_Register_datarep_c("plus1000c", plus_from_file, plus_to_file, native_extent, s));
    PT_MPI_CLASS(
        MPI_Register_datarep_c("plus1000c", plus_from_file, plus_to_file, native_extent, s),
        MPI_ERR_DUP_DATAREP);
    test_collective(s, "plus1000c", 1, path);
}
#endif

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    char path[CONF_PATH_MAX];
    test_unknown(conf_path(path, "unknown"));

    conv_state s = {.strided = MPI_DATATYPE_NULL};
    MPI_Type_vector(NPER, 1, 2, MPI_INT, &s.strided);
    MPI_Type_commit(&s.strided);
    int rc = MPI_Register_datarep("plus1000", read_plus, write_plus, native_extent, &s);
    /* OMPIO and ROMIO do not implement MPI_Register_datarep. */
    if (!conf_ompio_deviates() && !conf_romio_deviates()) {
        PT_MPI_OK(rc);
        test_registration(&s);
        test_collective(&s, "plus1000", 1, conf_path(path, "coll_plus"));
        test_collective(&s, "nullconv", 0, conf_path(path, "coll_null"));
        test_independent(&s, conf_path(path, "indep_plus"));
        test_failing_conversion(&s, conf_path(path, "failing"));
        test_wide(conf_path(path, "wide"));
#if MPI_VERSION >= 4
        test_large_count(&s, conf_path(path, "coll_plus_c"));
#endif
    }
    MPI_Type_free(&s.strided);
    return ptest_finish();
}
