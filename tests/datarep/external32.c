/* The "external32" data representation (MPI 3.1 section 13.5.2): big-endian
 * IEEE data in the file, converted from and to any memory datatype.
 *
 * Expected file images are computed here from each value's bits, written
 * most significant byte first, and compared byte for byte with the file.
 * Every check runs on the system's MPI-IO too (both OMPIO and ROMIO write
 * these types the same way), except where the README lists a deviation. */
#include "../mpiio/conf.h"

#include <stddef.h>
#include <stdint.h>

/* Elements each rank owns in the interleaved views: BLOCKS blocks of BLOCK. */
enum { BLOCK = 2, BLOCKS = 3, NPER = BLOCK * BLOCKS };
/* Byte every unused slot of a memory buffer holds; reads must not touch it. */
#define SENTINEL 0xA5
/* Largest element size of the kinds below. */
#define ELEM_MAX 8

typedef struct kind {
    MPI_Datatype type;
    const char *name;
    int size;
    int is_float;
} kind;

/* The bits of element i of rank r: distinct bytes, both signs. */
static uint64_t value_bits(const kind *k, int r, int i) {
    int negative = i % 2;
    if (k->is_float && k->size == 4) {
        float f = (float)(r * 100 + i) + 0.375f;
        f = negative ? -f : f;
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        return u;
    }
    if (k->is_float) {
        double d = (double)(r * 100 + i) + 0.1;
        d = negative ? -d : d;
        uint64_t u;
        memcpy(&u, &d, sizeof u);
        return u;
    }
    uint64_t v = 0x0102030405060708ull * (uint64_t)(r + 1) + (uint64_t)i * 0x1111u;
    return negative ? ~v : v;
}

/* The element as it lies in memory (host order). */
static void native_bytes(const kind *k, uint64_t bits, unsigned char *out) {
    uint8_t u8 = (uint8_t)bits;
    uint16_t u16 = (uint16_t)bits;
    uint32_t u32 = (uint32_t)bits;
    switch (k->size) {
    case 1:
        memcpy(out, &u8, 1);
        break;
    case 2:
        memcpy(out, &u16, 2);
        break;
    case 4:
        memcpy(out, &u32, 4);
        break;
    default:
        memcpy(out, &bits, 8);
        break;
    }
}

/* The element as external32 stores it: most significant byte first. */
static void be_bytes(int size, uint64_t bits, unsigned char *out) {
    for (int b = 0; b < size; b++)
        out[b] = (unsigned char)(bits >> (8 * (size - 1 - b)));
}

/* The interleaved view: rank r owns BLOCK elements of every BLOCK * n. */
static MPI_Datatype interleaved_filetype(const kind *k, int n) {
    MPI_Datatype vec, ft;
    MPI_Type_vector(BLOCKS, BLOCK, BLOCK * n, k->type, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)BLOCK * n * k->size, &ft);
    MPI_Type_free(&vec);
    MPI_Type_commit(&ft);
    return ft;
}

/* Memory: every other element of a buffer of 2 * NPER elements. */
static MPI_Datatype strided_memtype(const kind *k) {
    MPI_Datatype mt;
    MPI_Type_vector(NPER, 1, 2, k->type, &mt);
    MPI_Type_commit(&mt);
    return mt;
}

static void fill_memory(const kind *k, int r, unsigned char *mem) {
    memset(mem, SENTINEL, (size_t)2 * NPER * k->size);
    for (int i = 0; i < NPER; i++)
        native_bytes(k, value_bits(k, r, i), mem + (size_t)2 * i * k->size);
}

/* The whole file after every rank wrote its elements. */
static size_t expected_image(const kind *k, int n, unsigned char *img) {
    int per_round = BLOCK * n;
    for (int g = 0; g < NPER * n; g++) {
        int r = (g % per_round) / BLOCK, i = (g / per_round) * BLOCK + g % BLOCK;
        be_bytes(k->size, value_bits(k, r, i), img + (size_t)g * k->size);
    }
    return (size_t)NPER * n * k->size;
}

/* A read must have filled exactly the strided slots with rank r's values. */
static void check_memory(const kind *k, int r, const unsigned char *mem) {
    unsigned char want[ELEM_MAX];
    int bad_value = 0, bad_gap = 0;
    for (int i = 0; i < NPER; i++) {
        native_bytes(k, value_bits(k, r, i), want);
        bad_value += memcmp(mem + (size_t)2 * i * k->size, want, (size_t)k->size) != 0;
        for (int b = 0; b < k->size; b++)
            bad_gap += mem[(size_t)(2 * i + 1) * k->size + b] != SENTINEL;
    }
    PT_EQ(bad_value, 0);
    PT_EQ(bad_gap, 0);
}

static void set_view(MPI_File fh, const kind *k, MPI_Datatype ft) {
    int r = conf_rank();
    PT_MPI_OK(MPI_File_set_view(fh, (MPI_Offset)r * BLOCK * k->size, k->type, ft, "external32",
                                MPI_INFO_NULL));
}

/* Collective write, image, collective read back. */
static void test_collective(const kind *k, const char *path) {
    int r = conf_rank(), n = conf_size();
    MPI_Datatype ft = interleaved_filetype(k, n), mt = strided_memtype(k);
    unsigned char mem[2 * NPER * ELEM_MAX], img[NPER * 8 * ELEM_MAX];
    MPI_File fh;
    conf_remove(path);
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    set_view(fh, k, ft);
    fill_memory(k, r, mem);
    MPI_Status st;
    int got = -1;
    PT_MPI_OK(MPI_File_write_all(fh, mem, 1, mt, &st));
    MPI_Get_count(&st, mt, &got);
    PT_EQ(got, 1);
    PT_MPI_OK(MPI_File_close(&fh));
    CONF_EXPECT_IMAGE(path, img, expected_image(k, n, img));

    PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    set_view(fh, k, ft);
    memset(mem, SENTINEL, sizeof mem);
    PT_MPI_OK(MPI_File_read_all(fh, mem, 1, mt, &st));
    MPI_Get_count(&st, k->type, &got);
    PT_EQ(got, NPER);
    check_memory(k, r, mem);
    PT_MPI_OK(MPI_File_close(&fh));
    MPI_Type_free(&ft);
    MPI_Type_free(&mt);
}

/* Independent: individual pointer for the first half, explicit offset for
 * the rest; the pointer moves in etypes. */
static void test_independent(const kind *k, const char *path) {
    int r = conf_rank(), n = conf_size();
    MPI_Datatype ft = interleaved_filetype(k, n), mt;
    MPI_Type_vector(NPER / 2, 1, 2, k->type, &mt);
    MPI_Type_commit(&mt);
    unsigned char mem[2 * NPER * ELEM_MAX], img[NPER * 8 * ELEM_MAX];
    MPI_File fh;
    MPI_Offset pos = -1;
    conf_remove(path);
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    set_view(fh, k, ft);
    fill_memory(k, r, mem);
    PT_MPI_OK(MPI_File_write(fh, mem, 1, mt, MPI_STATUS_IGNORE));
    MPI_File_get_position(fh, &pos);
    PT_EQ(pos, NPER / 2);
    PT_MPI_OK(
        MPI_File_write_at(fh, NPER / 2, mem + (size_t)NPER * k->size, 1, mt, MPI_STATUS_IGNORE));
    PT_MPI_OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PT_MPI_OK(MPI_File_sync(fh));
    CONF_EXPECT_IMAGE(path, img, expected_image(k, n, img));

    memset(mem, SENTINEL, sizeof mem);
    PT_MPI_OK(MPI_File_read_at(fh, 0, mem, 1, mt, MPI_STATUS_IGNORE));
    PT_MPI_OK(MPI_File_seek(fh, NPER / 2, MPI_SEEK_SET));
    PT_MPI_OK(MPI_File_read(fh, mem + (size_t)NPER * k->size, 1, mt, MPI_STATUS_IGNORE));
    MPI_File_get_position(fh, &pos);
    /* MPICH 4.0's ROMIO counts the view's holes after an external32 read
     * through a noncontiguous view (10 instead of 6 at 2 ranks). */
    if (!conf_romio_deviates())
        PT_EQ(pos, NPER);
    check_memory(k, r, mem);
    PT_MPI_OK(MPI_File_close(&fh));
    MPI_Type_free(&ft);
    MPI_Type_free(&mt);
}

/* A record of two types: its packed external32 form has no padding. */
typedef struct record {
    int id;
    double x;
} record;
enum { RECORDS = 3, RECORD_FILE = 12 /* 4-byte int + 8-byte double */ };

static MPI_Datatype record_type(void) {
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {offsetof(record, id), offsetof(record, x)};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, st, t;
    MPI_Type_create_struct(2, bl, disp, types, &st);
    MPI_Type_create_resized(st, 0, sizeof(record), &t);
    MPI_Type_free(&st);
    MPI_Type_commit(&t);
    return t;
}

static uint64_t double_bits(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* Records through a byte view: int and double converted in place, padding
 * dropped; each rank writes its records at its own byte offset. */
static void test_struct(const char *path) {
    if (conf_romio_deviates())
        return; /* MPICH 4.0's ROMIO dies of SIGILL converting a struct memory type */
    int r = conf_rank(), n = conf_size();
    MPI_Datatype rt = record_type();
    record rec[RECORDS], back[RECORDS];
    unsigned char img[RECORDS * RECORD_FILE * 8];
    for (int i = 0; i < RECORDS; i++)
        rec[i] = (record){.id = -(r * 10 + i) - 1, .x = r + i * 0.5 + 0.125};
    for (int q = 0; q < n; q++)
        for (int i = 0; i < RECORDS; i++) {
            unsigned char *at = img + (size_t)(q * RECORDS + i) * RECORD_FILE;
            be_bytes(4, (uint32_t)(-(q * 10 + i) - 1), at);
            be_bytes(8, double_bits(q + i * 0.5 + 0.125), at + 4);
        }
    MPI_File fh;
    conf_remove(path);
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    PT_MPI_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    MPI_Offset at = (MPI_Offset)r * RECORDS * RECORD_FILE;
    PT_MPI_OK(MPI_File_write_at_all(fh, at, rec, RECORDS, rt, MPI_STATUS_IGNORE));
    PT_MPI_OK(MPI_File_sync(fh));
    CONF_EXPECT_IMAGE(path, img, (size_t)n * RECORDS * RECORD_FILE);
    memset(back, 0, sizeof back);
    PT_MPI_OK(MPI_File_read_at(fh, at, back, RECORDS, rt, MPI_STATUS_IGNORE));
    for (int i = 0; i < RECORDS; i++) {
        PT_EQ(back[i].id, rec[i].id);
        PT_CHECK(back[i].x == rec[i].x);
    }
    PT_MPI_OK(MPI_File_close(&fh));
    MPI_Type_free(&rt);
}

/* File extents in external32: table 13.2 sizes; derived types keep their
 * layout. */
static void test_type_extent(const char *path) {
    MPI_File fh;
    MPI_Aint ext = -1;
    MPI_Datatype rt = record_type();
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    PT_MPI_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    PT_MPI_OK(MPI_File_get_type_extent(fh, MPI_INT, &ext));
    PT_EQ(ext, 4);
    PT_MPI_OK(MPI_File_get_type_extent(fh, MPI_SHORT, &ext));
    PT_EQ(ext, 2);
    PT_MPI_OK(MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext));
    PT_EQ(ext, 8);
    PT_MPI_OK(MPI_File_get_type_extent(fh, MPI_LONG_LONG, &ext));
    PT_EQ(ext, 8);
    PT_MPI_OK(MPI_File_get_type_extent(fh, rt, &ext));
    PT_EQ(ext, (long long)sizeof(record));
    /* OMPIO and ROMIO give MPI_LONG its native 8 bytes; table 13.2 says 4. */
    if (!conf_ompio_deviates() && !conf_romio_deviates()) {
        PT_MPI_OK(MPI_File_get_type_extent(fh, MPI_LONG, &ext));
        PT_EQ(ext, 4);
    }
    PT_MPI_OK(MPI_File_close(&fh));
    MPI_Type_free(&rt);
}

/* pario refuses types whose external32 size differs from the native one (see
 * the README): on every rank, naming the file, leaving the file unchanged. */
static void test_refused_types(const char *path) {
    if (!ptest_on_pario())
        return; /* the system MPI-IO accepts them and writes a wrong layout */
    unsigned char img[16];
    conf_pattern(img, sizeof img, 7);
    conf_put_file(path, img, sizeof img);
    MPI_File fh;
    PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    int rc = MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL);
    PT_EQ(conf_class(rc), MPI_ERR_UNSUPPORTED_DATAREP);
    CONF_NAMES_FILE(rc, path);
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    PT_CHECK(strstr(msg, "MPI_LONG") != NULL);
    PT_MPI_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    long l[2] = {1, 2};
    long double ld[1] = {1.0L};
    rc = MPI_File_write_at_all(fh, 0, l, 2, MPI_LONG, MPI_STATUS_IGNORE);
    PT_EQ(conf_class(rc), MPI_ERR_UNSUPPORTED_DATAREP);
    CONF_SAME_CLASS(rc);
    rc = MPI_File_write_at(fh, 0, ld, 1, MPI_LONG_DOUBLE, MPI_STATUS_IGNORE);
    PT_EQ(conf_class(rc), MPI_ERR_UNSUPPORTED_DATAREP);
    PT_MPI_OK(MPI_File_close(&fh));
    CONF_EXPECT_IMAGE(path, img, sizeof img);
}

/* Shared file pointer: ordered write (rank r writes r + 1 shorts in rank
 * order), then each rank reads its own part back with read_at. */
static void test_ordered(const char *path) {
    int r = conf_rank(), n = conf_size();
    short mine[8], back[8];
    unsigned char img[8 * 9 * 2];
    size_t len = 0;
    for (int q = 0; q < n; q++)
        for (int i = 0; i <= q; i++, len += 2)
            be_bytes(2, (uint16_t)(-(q * 100 + i) - 3), img + len);
    for (int i = 0; i <= r; i++)
        mine[i] = (short)(-(r * 100 + i) - 3);
    MPI_File fh;
    conf_remove(path);
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    PT_MPI_OK(MPI_File_set_view(fh, 0, MPI_SHORT, MPI_SHORT, "external32", MPI_INFO_NULL));
    PT_MPI_OK(MPI_File_write_ordered(fh, mine, r + 1, MPI_SHORT, MPI_STATUS_IGNORE));
    MPI_Offset shared = -1;
    PT_MPI_OK(MPI_File_get_position_shared(fh, &shared));
    PT_EQ(shared, (long long)n * (n + 1) / 2);
    PT_MPI_OK(MPI_File_sync(fh));
    CONF_EXPECT_IMAGE(path, img, len);
    memset(back, 0, sizeof back);
    PT_MPI_OK(MPI_File_read_at(fh, (MPI_Offset)r * (r + 1) / 2, back, r + 1, MPI_SHORT,
                               MPI_STATUS_IGNORE));
    PT_CHECK(memcmp(back, mine, (size_t)(r + 1) * sizeof(short)) == 0);
    PT_MPI_OK(MPI_File_close(&fh));
}

/* Nonblocking and split collective accesses convert like blocking ones:
 * rank r writes 3 doubles at etype 6r with iwrite_at and 3 more with a
 * split write_at_all, then reads all 6 back with iread_at. */
static void test_nonblocking(const char *path) {
    if (conf_romio_deviates())
        return; /* MPICH 4.0's ROMIO writes native bytes from MPI_File_iwrite_at */
    int r = conf_rank(), n = conf_size();
    double mine[6], back[6];
    unsigned char img[8 * 6 * 8];
    for (int q = 0; q < n; q++)
        for (int i = 0; i < 6; i++)
            be_bytes(8, double_bits(-(q * 10 + i) - 0.75), img + (size_t)(q * 6 + i) * 8);
    for (int i = 0; i < 6; i++)
        mine[i] = -(r * 10 + i) - 0.75;
    MPI_File fh;
    MPI_Request req;
    conf_remove(path);
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    PT_MPI_OK(MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_DOUBLE, "external32", MPI_INFO_NULL));
    PT_MPI_OK(MPI_File_iwrite_at(fh, (MPI_Offset)r * 6, mine, 3, MPI_DOUBLE, &req));
    PT_MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    PT_MPI_OK(MPI_File_write_at_all_begin(fh, (MPI_Offset)r * 6 + 3, mine + 3, 3, MPI_DOUBLE));
    PT_MPI_OK(MPI_File_write_at_all_end(fh, mine + 3, MPI_STATUS_IGNORE));
    PT_MPI_OK(MPI_File_sync(fh));
    CONF_EXPECT_IMAGE(path, img, (size_t)n * 6 * 8);
    memset(back, 0, sizeof back);
    PT_MPI_OK(MPI_File_iread_at(fh, (MPI_Offset)r * 6, back, 6, MPI_DOUBLE, &req));
    PT_MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    PT_CHECK(memcmp(back, mine, sizeof mine) == 0);
    PT_MPI_OK(MPI_File_close(&fh));
}

/* Ints per rank in the large case: more than one staging chunk (4 MiB). */
#define LARGE_INTS (1536 * 1024)

/* Many chunks, ranks with different amounts (odd ranks write half): the
 * collective rounds must still match. Checked with pread per rank. */
static void test_large(const char *path) {
    int r = conf_rank();
    int mine = r % 2 ? LARGE_INTS / 2 : LARGE_INTS;
    int *v = malloc((size_t)LARGE_INTS * sizeof *v);
    unsigned char *raw = malloc((size_t)LARGE_INTS * 4);
    for (int i = 0; i < LARGE_INTS; i++)
        v[i] = (r + 1) * 0x01000000 + i * 3 - 7;
    MPI_File fh;
    conf_remove(path);
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    PT_MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    MPI_Offset at = (MPI_Offset)r * LARGE_INTS;
    MPI_Status st;
    int got = -1;
    PT_MPI_OK(MPI_File_write_at_all(fh, at, v, mine, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &got);
    PT_EQ(got, mine);
    PT_MPI_OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    int fd = open(path, O_RDONLY), bad = 0;
    PT_CHECK(fd >= 0);
    PT_EQ(pread(fd, raw, (size_t)mine * 4, (off_t)at * 4), (long long)mine * 4);
    close(fd);
    for (int i = 0; i < mine; i++) {
        unsigned char want[4];
        be_bytes(4, (uint32_t)v[i], want);
        bad += memcmp(raw + (size_t)i * 4, want, 4) != 0;
    }
    PT_EQ(bad, 0);
    memset(v, 0, (size_t)LARGE_INTS * sizeof *v);
    PT_MPI_OK(MPI_File_read_at_all(fh, at, v, mine, MPI_INT, &st));
    for (int i = 0; i < mine; i++)
        bad += v[i] != (r + 1) * 0x01000000 + i * 3 - 7;
    PT_EQ(bad, 0);
    PT_MPI_OK(MPI_File_close(&fh));
    free(raw);
    free(v);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    static const kind kinds[] = {
        {MPI_INT, "int", 4, 0},     {MPI_SHORT, "short", 2, 0},        {MPI_DOUBLE, "double", 8, 1},
        {MPI_FLOAT, "float", 4, 1}, {MPI_LONG_LONG, "longlong", 8, 0}, {MPI_CHAR, "char", 1, 0},
    };
    char path[CONF_PATH_MAX];
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "coll_%s", kinds[i].name);
        test_collective(&kinds[i], conf_path(path, name));
        snprintf(name, sizeof name, "indep_%s", kinds[i].name);
        test_independent(&kinds[i], conf_path(path, name));
    }
    test_struct(conf_path(path, "struct"));
    test_type_extent(conf_path(path, "extent"));
    test_refused_types(conf_path(path, "refused"));
    test_ordered(conf_path(path, "ordered"));
    test_nonblocking(conf_path(path, "nonblocking"));
    test_large(conf_path(path, "large"));
    return ptest_finish();
}
