/* MPI 3.1 section 13.4: independent data access.
 *
 * read/write and read_at/write_at with noncontiguous memory types (vector,
 * indexed out of order, struct resized to a larger extent) under the
 * default view and together with a noncontiguous view; zero-count
 * transfers; the status (MPI_Get_count, MPI_Get_elements) of whole,
 * derived-type and partial transfers; short reads at end of file;
 * MPI_STATUS_IGNORE. */
#include "conf.h"

#include <stddef.h>

/* Bytes of the region each rank owns in the memory-type checks (the last
 * part, two packed records, ends at byte 66). */
#define REGION 80
/* Ints each rank moves in the noncontiguous view check. */
#define VIEW_INTS 4

static int count_of(MPI_Status *st, MPI_Datatype t) {
    int c = -7;
    MPI_Get_count(st, t, &c);
    return c;
}

static int elements_of(MPI_Status *st, MPI_Datatype t) {
    int c = -7;
    MPI_Get_elements(st, t, &c);
    return c;
}

static MPI_File open_fresh(const char *path) {
    conf_remove(path);
    MPI_File fh = MPI_FILE_NULL;
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    return fh;
}

/* Vector memory type: 2 of vector(4 blocks of 2 chars, stride 3) write
 * bytes 0,1,3,4,6,7,9,10 of each 11-byte copy, packed, into the file. */
static void put_vector(MPI_File fh, unsigned char *image, int rank) {
    unsigned char mem[32];
    conf_pattern(mem, sizeof mem, 10u + (unsigned)rank);
    MPI_Offset at = (MPI_Offset)rank * REGION;
    size_t k = 0;
    for (int copy = 0; copy < 2; copy++)
        for (int b = 0; b < 4; b++)
            for (int j = 0; j < 2; j++)
                image[at + (MPI_Offset)k++] = mem[copy * 11 + b * 3 + j];
    if (fh == MPI_FILE_NULL)
        return;
    MPI_Datatype vec;
    MPI_Type_vector(4, 2, 3, MPI_CHAR, &vec);
    MPI_Type_commit(&vec);
    MPI_Status st;
    PT_MPI_OK(MPI_File_write_at(fh, at, mem, 2, vec, &st));
    PT_EQ(count_of(&st, vec), 2);
    PT_EQ(elements_of(&st, vec), 16);
    /* Read back into the same shape; the gaps keep their old bytes. */
    unsigned char back[32];
    memset(back, 0xa5, sizeof back);
    PT_MPI_OK(MPI_File_read_at(fh, at, back, 2, vec, &st));
    PT_EQ(count_of(&st, vec), 2);
    int same = 1;
    for (int i = 0; i < 22; i++)
        same &= (i % 11) % 3 == 2 ? back[i] == 0xa5 : back[i] == mem[i];
    PT_CHECK(same);
    MPI_Type_free(&vec);
}

/* Indexed memory type with blocks out of address order: the file receives
 * the typemap order (ints 5,6 then 0 then 9,10,11). */
static void put_indexed(MPI_File fh, unsigned char *image, int rank) {
    int mem[12];
    for (int i = 0; i < 12; i++)
        mem[i] = 100 * (rank + 1) + i;
    MPI_Offset at = (MPI_Offset)rank * REGION + 16;
    static const int order[6] = {5, 6, 0, 9, 10, 11};
    for (int i = 0; i < 6; i++)
        memcpy(image + at + 4 * i, &mem[order[i]], 4);
    if (fh == MPI_FILE_NULL)
        return;
    int lens[3] = {2, 1, 3}, displs[3] = {5, 0, 9};
    MPI_Datatype idx;
    MPI_Type_indexed(3, lens, displs, MPI_INT, &idx);
    MPI_Type_commit(&idx);
    MPI_Status st;
    PT_MPI_OK(MPI_File_write_at(fh, at, mem, 1, idx, &st));
    PT_EQ(count_of(&st, idx), 1);
    PT_EQ(elements_of(&st, idx), 6);
    int back[6];
    PT_MPI_OK(MPI_File_read_at(fh, at, back, 6, MPI_INT, &st));
    PT_EQ(count_of(&st, MPI_INT), 6);
    for (int i = 0; i < 6; i++)
        PT_EQ(back[i], mem[order[i]]);
    MPI_Type_free(&idx);
}

/* A record of three basic types, its struct type resized to a 24-byte
 * extent: the file gets 13 packed bytes per record. */
struct record {
    char tag;
    int id;
    double value;
};
#define RECORD_EXTENT 24
#define RECORD_BYTES 13

static MPI_Datatype record_type(void) {
    int lens[3] = {1, 1, 1};
    MPI_Aint displs[3] = {offsetof(struct record, tag), offsetof(struct record, id),
                          offsetof(struct record, value)};
    MPI_Datatype types[3] = {MPI_CHAR, MPI_INT, MPI_DOUBLE}, st, rt;
    MPI_Type_create_struct(3, lens, displs, types, &st);
    MPI_Type_create_resized(st, 0, RECORD_EXTENT, &rt);
    MPI_Type_free(&st);
    MPI_Type_commit(&rt);
    return rt;
}

static void put_struct(MPI_File fh, unsigned char *image, int rank) {
    unsigned char mem[2 * RECORD_EXTENT];
    memset(mem, 0, sizeof mem);
    for (int i = 0; i < 2; i++) {
        struct record rec = {(char)('p' + rank), 7 * rank + i, 0.5 + rank + i};
        memcpy(mem + i * RECORD_EXTENT, &rec, sizeof rec);
    }
    MPI_Offset at = (MPI_Offset)rank * REGION + 40;
    for (int i = 0; i < 2; i++) {
        struct record rec;
        memcpy(&rec, mem + i * RECORD_EXTENT, sizeof rec);
        unsigned char *p = image + at + i * RECORD_BYTES;
        p[0] = (unsigned char)rec.tag;
        memcpy(p + 1, &rec.id, 4);
        memcpy(p + 5, &rec.value, 8);
    }
    if (fh == MPI_FILE_NULL)
        return;
    MPI_Datatype rt = record_type();
    MPI_Status st;
    PT_MPI_OK(MPI_File_write_at(fh, at, mem, 2, rt, &st));
    PT_EQ(count_of(&st, rt), 2);
    PT_EQ(elements_of(&st, rt), 6);
    unsigned char back[2 * RECORD_EXTENT];
    memset(back, 0, sizeof back);
    PT_MPI_OK(MPI_File_read_at(fh, at, back, 2, rt, &st));
    PT_EQ(count_of(&st, rt), 2);
    for (int i = 0; i < 2; i++) {
        struct record a, b;
        memcpy(&a, mem + i * RECORD_EXTENT, sizeof a);
        memcpy(&b, back + i * RECORD_EXTENT, sizeof b);
        PT_CHECK(a.tag == b.tag && a.id == b.id && a.value == b.value);
    }
    MPI_Type_free(&rt);
}

/* Each rank fills its REGION through three noncontiguous memory types; the
 * put_ functions compute every rank's part of the image and do the I/O
 * only for a real handle (the calling rank's own part). */
static void check_memory_types(const char *path) {
    MPI_File fh = open_fresh(path);
    if (fh == MPI_FILE_NULL)
        return;
    int rank = conf_rank(), n = conf_size();
    static unsigned char image[8 * REGION];
    memset(image, 0, sizeof image);
    for (int r = 0; r < n; r++) {
        put_vector(r == rank ? fh : MPI_FILE_NULL, image, r);
        put_indexed(r == rank ? fh : MPI_FILE_NULL, image, r);
        put_struct(r == rank ? fh : MPI_FILE_NULL, image, r);
    }
    PT_MPI_OK(MPI_File_close(&fh));
    size_t len = (size_t)(n - 1) * REGION + 40 + 2 * RECORD_BYTES;
    CONF_EXPECT_IMAGE(path, image, len);
}

/* Noncontiguous memory (every other int) through a noncontiguous view
 * (ints r, r+n, ... of the file), with the individual pointer. */
static void check_both_noncontiguous(const char *path) {
    MPI_File fh = open_fresh(path);
    if (fh == MPI_FILE_NULL)
        return;
    int rank = conf_rank(), n = conf_size();
    MPI_Datatype col, ft, mt;
    MPI_Type_vector(1, 1, 1, MPI_INT, &col);
    MPI_Type_create_resized(col, 0, (MPI_Aint)n * 4, &ft);
    MPI_Type_commit(&ft);
    MPI_Type_vector(VIEW_INTS, 1, 2, MPI_INT, &mt);
    MPI_Type_commit(&mt);
    PT_MPI_OK(MPI_File_set_view(fh, (MPI_Offset)rank * 4, MPI_INT, ft, "native", MPI_INFO_NULL));
    int mem[2 * VIEW_INTS];
    for (int i = 0; i < 2 * VIEW_INTS; i++)
        mem[i] = i % 2 ? -1 : 10 * rank + i / 2;
    MPI_Status st;
    PT_MPI_OK(MPI_File_write(fh, mem, 1, mt, &st));
    PT_EQ(count_of(&st, mt), 1);
    PT_EQ(elements_of(&st, mt), VIEW_INTS);
    int back[VIEW_INTS];
    PT_MPI_OK(MPI_File_read_at(fh, 0, back, VIEW_INTS, MPI_INT, &st));
    PT_EQ(count_of(&st, MPI_INT), VIEW_INTS);
    for (int i = 0; i < VIEW_INTS; i++)
        PT_EQ(back[i], 10 * rank + i);
    PT_MPI_OK(MPI_File_close(&fh));
    int image[8 * VIEW_INTS];
    for (int i = 0; i < VIEW_INTS; i++)
        for (int r = 0; r < n; r++)
            image[i * n + r] = 10 * r + i;
    CONF_EXPECT_IMAGE(path, image, (size_t)n * VIEW_INTS * 4);
    MPI_Type_free(&col);
    MPI_Type_free(&ft);
    MPI_Type_free(&mt);
}

/* Count zero moves nothing, succeeds, reports zero, leaves the pointer. */
static void check_zero_count(const char *path) {
    MPI_File fh = open_fresh(path);
    if (fh == MPI_FILE_NULL)
        return;
    if (conf_rank() == 0)
        PT_MPI_OK(MPI_File_write_at(fh, 0, "zero", 4, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Status st;
    char buf[4] = "xxxx";
    PT_MPI_OK(MPI_File_write_at(fh, 2, buf, 0, MPI_BYTE, &st));
    PT_EQ(count_of(&st, MPI_BYTE), 0);
    PT_MPI_OK(MPI_File_write(fh, buf, 0, MPI_INT, &st));
    PT_EQ(count_of(&st, MPI_INT), 0);
    PT_MPI_OK(MPI_File_read(fh, buf, 0, MPI_INT, &st));
    PT_EQ(count_of(&st, MPI_INT), 0);
    PT_CHECK(memcmp(buf, "xxxx", 4) == 0);
    MPI_Offset pos = -1;
    PT_MPI_OK(MPI_File_get_position(fh, &pos));
    PT_EQ(pos, 0);
    PT_MPI_OK(MPI_File_read_at(fh, 100, buf, 0, MPI_BYTE, MPI_STATUS_IGNORE));
    PT_MPI_OK(MPI_File_close(&fh));
    CONF_EXPECT_IMAGE(path, "zero", 4);
}

/* Reads crossing the end of file return what is there: the status counts
 * the whole items read (MPI_UNDEFINED for a partial derived item) and the
 * basic elements; a read wholly past the end gives zero. The individual
 * pointer then points "to the next etype after the last one that will be
 * accessed" (13.4.3), i.e. the end of what was read. Deviation: OMPIO
 * advances it by the amount requested, so that is not checked on OMPIO. */
static void check_short_reads(const char *path) {
    MPI_File fh = open_fresh(path);
    if (fh == MPI_FILE_NULL)
        return;
    int vals[6] = {1, 2, 3, 4, 5, 6};
    if (conf_rank() == 0)
        PT_MPI_OK(MPI_File_write_at(fh, 0, vals, 6, MPI_INT, MPI_STATUS_IGNORE));
    PT_MPI_OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PT_MPI_OK(MPI_File_sync(fh));

    int back[8];
    MPI_Status st;
    memset(back, 0, sizeof back);
    PT_MPI_OK(MPI_File_read_at(fh, 8, back, 6, MPI_INT, &st));
    PT_EQ(count_of(&st, MPI_INT), 4);
    PT_EQ(elements_of(&st, MPI_INT), 4);
    PT_CHECK(memcmp(back, vals + 2, 16) == 0);

    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    memset(back, 0, sizeof back);
    PT_MPI_OK(MPI_File_read_at(fh, 4, back, 3, pair, &st));
    PT_EQ(count_of(&st, pair), MPI_UNDEFINED);
    PT_EQ(elements_of(&st, pair), 5);
    PT_CHECK(memcmp(back, vals + 1, 20) == 0);
    MPI_Type_free(&pair);

    /* Through the individual pointer: it advances by what was read. */
    PT_MPI_OK(MPI_File_seek(fh, 20, MPI_SEEK_SET));
    PT_MPI_OK(MPI_File_read(fh, back, 4, MPI_INT, &st));
    PT_EQ(count_of(&st, MPI_INT), 1);
    PT_EQ(back[0], 6);
    MPI_Offset pos = -1;
    PT_MPI_OK(MPI_File_get_position(fh, &pos));
    if (!conf_ompio_deviates())
        PT_EQ(pos, 24);

    PT_MPI_OK(MPI_File_read_at(fh, 100, back, 4, MPI_INT, &st));
    PT_EQ(count_of(&st, MPI_INT), 0);
    PT_MPI_OK(MPI_File_read(fh, back, 4, MPI_INT, &st));
    PT_EQ(count_of(&st, MPI_INT), 0);
    PT_MPI_OK(MPI_File_close(&fh));
    CONF_EXPECT_IMAGE(path, vals, sizeof vals);
}

/* MPI_STATUS_IGNORE is accepted by every blocking independent call. */
static void check_status_ignore(const char *path) {
    MPI_File fh = open_fresh(path);
    if (fh == MPI_FILE_NULL)
        return;
    int rank = conf_rank(), n = conf_size();
    unsigned char mine[8], back[8];
    memset(mine, 'A' + rank, sizeof mine);
    PT_MPI_OK(MPI_File_write_at(fh, (MPI_Offset)rank * 16, mine, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    PT_MPI_OK(MPI_File_seek(fh, (MPI_Offset)rank * 16 + 8, MPI_SEEK_SET));
    PT_MPI_OK(MPI_File_write(fh, mine, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    PT_MPI_OK(MPI_File_read_at(fh, (MPI_Offset)rank * 16, back, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    PT_CHECK(memcmp(back, mine, 8) == 0);
    PT_MPI_OK(MPI_File_seek(fh, (MPI_Offset)rank * 16 + 8, MPI_SEEK_SET));
    PT_MPI_OK(MPI_File_read(fh, back, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    PT_CHECK(memcmp(back, mine, 8) == 0);
    PT_MPI_OK(MPI_File_close(&fh));
    unsigned char image[8 * 16];
    for (int r = 0; r < n; r++)
        memset(image + 16 * r, 'A' + r, 16);
    CONF_EXPECT_IMAGE(path, image, (size_t)n * 16);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    char path[CONF_PATH_MAX];
    conf_path(path, "rw.dat");
    check_memory_types(path);
    check_both_noncontiguous(path);
    check_zero_count(path);
    check_short_reads(path);
    check_status_ignore(path);
    return ptest_finish();
}
