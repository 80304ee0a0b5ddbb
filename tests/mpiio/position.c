/* MPI 3.1 sections 13.4.3 and 13.4.4: file pointers and offsets.
 *
 * seek with SET, CUR and END in etypes relative to a view with holes,
 * get_position, get_byte_offset, get_type_extent, the shared pointer, and
 * seeks to negative positions. */
#include "conf.h"

/* View used by every check: displacement 8 bytes, etype MPI_INT, filetype
 * two ints out of every four (ints 0 and 2 of a 16-byte tile). */
#define VIEW_DISP 8
#define TILE_BYTES 16
/* Tiles the starting file covers exactly: view positions 0..2*FILE_TILES-1. */
#define FILE_TILES 2
#define FILE_LEN (VIEW_DISP + FILE_TILES * TILE_BYTES)

/* Byte offset of view position k under the view above. */
static MPI_Offset view_byte(MPI_Offset k) {
    return VIEW_DISP + (k / 2) * TILE_BYTES + (k % 2) * 8;
}

static MPI_Datatype view_filetype(void) {
    MPI_Datatype vec, ft;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, TILE_BYTES, &ft);
    MPI_Type_free(&vec);
    MPI_Type_commit(&ft);
    return ft;
}

/* Opens path (holding FILE_LEN pattern bytes) with the view set. */
static MPI_File open_with_view(const char *path, unsigned char *image) {
    conf_pattern(image, FILE_LEN, 5);
    conf_put_file(path, image, FILE_LEN);
    MPI_File fh = MPI_FILE_NULL;
    if (!PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh)))
        return MPI_FILE_NULL;
    MPI_Datatype ft = view_filetype();
    PT_MPI_OK(MPI_File_set_view(fh, VIEW_DISP, MPI_INT, ft, "native", MPI_INFO_NULL));
    MPI_Type_free(&ft);
    return fh;
}

static MPI_Offset position(MPI_File fh) {
    MPI_Offset pos = -1;
    PT_MPI_OK(MPI_File_get_position(fh, &pos));
    return pos;
}

/* SEEK_END counts in etypes of the view: the end of file is view position
 * 2 * FILE_TILES here. Deviation: OMPIO ignores the filetype's holes (it
 * lands on position 1 and then fails SEEK_END -3 with MPI_ERR_OTHER), so
 * these are not checked on OMPIO. */
static void check_seek_end(MPI_File fh) {
    if (conf_ompio_deviates())
        return;
    PT_MPI_OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
    PT_EQ(position(fh), 2 * FILE_TILES);
    PT_MPI_OK(MPI_File_seek(fh, -3, MPI_SEEK_END));
    PT_EQ(position(fh), 2 * FILE_TILES - 3);
    PT_MPI_OK(MPI_File_seek(fh, 2, MPI_SEEK_CUR));
    PT_EQ(position(fh), 2 * FILE_TILES - 1);
}

/* SET, CUR and END move the individual pointer in etypes of the view;
 * get_byte_offset maps view positions to absolute bytes. */
static void check_seek(const char *path) {
    unsigned char image[FILE_LEN];
    MPI_File fh = open_with_view(path, image);
    if (fh == MPI_FILE_NULL)
        return;
    PT_EQ(position(fh), 0);
    PT_MPI_OK(MPI_File_seek(fh, 3, MPI_SEEK_SET));
    PT_EQ(position(fh), 3);
    PT_MPI_OK(MPI_File_seek(fh, -1, MPI_SEEK_CUR));
    PT_EQ(position(fh), 2);
    check_seek_end(fh);

    for (MPI_Offset k = 0; k < 6; k++) {
        MPI_Offset byte = -1;
        PT_MPI_OK(MPI_File_get_byte_offset(fh, k, &byte));
        PT_EQ(byte, view_byte(k));
    }

    /* Each rank's pointer is its own: rank r reads the int at position r. */
    int rank = conf_rank();
    MPI_Offset mine = rank % (2 * FILE_TILES);
    PT_MPI_OK(MPI_File_seek(fh, mine, MPI_SEEK_SET));
    MPI_Barrier(MPI_COMM_WORLD);
    PT_EQ(position(fh), mine);
    int v = 0, want = 0;
    MPI_Status st;
    PT_MPI_OK(MPI_File_read(fh, &v, 1, MPI_INT, &st));
    memcpy(&want, image + view_byte(mine), sizeof want);
    PT_EQ(v, want);
    PT_EQ(position(fh), mine + 1);

    /* set_view resets the individual pointer to zero. */
    MPI_Datatype ft = view_filetype();
    PT_MPI_OK(MPI_File_set_view(fh, VIEW_DISP, MPI_INT, ft, "native", MPI_INFO_NULL));
    MPI_Type_free(&ft);
    PT_EQ(position(fh), 0);
    PT_MPI_OK(MPI_File_close(&fh));
    CONF_EXPECT_IMAGE(path, image, FILE_LEN);
}

/* A write through the pointer lands at the view's byte, the pointer
 * advances by the etypes written, and the file grows past a hole. */
static void check_write_at_pointer(const char *path) {
    unsigned char image[FILE_LEN + TILE_BYTES];
    MPI_File fh = open_with_view(path, image);
    if (fh == MPI_FILE_NULL)
        return;
    if (conf_rank() == 0) {
        int vals[2] = {0x11223344, 0x55667788};
        PT_MPI_OK(MPI_File_seek(fh, 3, MPI_SEEK_SET));
        PT_MPI_OK(MPI_File_write(fh, vals, 2, MPI_INT, MPI_STATUS_IGNORE));
        PT_EQ(position(fh), 5);
        memcpy(image + view_byte(3), &vals[0], 4);
        memcpy(image + view_byte(4), &vals[1], 4);
    }
    PT_MPI_OK(MPI_File_close(&fh));
    CONF_EXPECT_IMAGE(path, image, (size_t)view_byte(4) + 4);
}

/* A seek to a negative position is erroneous (13.4.3); the standard names
 * no class, an invalid argument is MPI_ERR_ARG. Deviation: OMPIO answers
 * MPI_ERR_OTHER, so the class is not checked on OMPIO; every MPI must
 * fail the call and leave the pointer where it was. */
static void seek_fails(MPI_File fh, MPI_Offset off, int whence, const char *path) {
    int rc = MPI_File_seek(fh, off, whence);
    PT_CHECK(rc != MPI_SUCCESS);
    if (!conf_ompio_deviates())
        PT_MPI_CLASS(rc, MPI_ERR_ARG);
    CONF_NAMES_FILE(rc, path);
}

static void check_negative_seek(const char *path) {
    unsigned char image[FILE_LEN];
    MPI_File fh = open_with_view(path, image);
    if (fh == MPI_FILE_NULL)
        return;
    PT_MPI_OK(MPI_File_seek(fh, 2, MPI_SEEK_SET));
    seek_fails(fh, -1, MPI_SEEK_SET, path);
    PT_EQ(position(fh), 2);
    seek_fails(fh, -3, MPI_SEEK_CUR, path);
    PT_EQ(position(fh), 2);
    seek_fails(fh, 0, 12345, path);
    PT_EQ(position(fh), 2);
    if (!conf_ompio_deviates()) {
        seek_fails(fh, -(2 * FILE_TILES + 1), MPI_SEEK_END, path);
        PT_EQ(position(fh), 2);
    }
    PT_MPI_OK(MPI_File_close(&fh));
    CONF_EXPECT_IMAGE(path, image, FILE_LEN);
}

/* The shared pointer: collective seek_shared, get_position_shared, and
 * set_view resetting it. */
static void check_shared_pointer(const char *path) {
    unsigned char image[FILE_LEN];
    MPI_File fh = open_with_view(path, image);
    if (fh == MPI_FILE_NULL)
        return;
    MPI_Offset pos = -1;
    PT_MPI_OK(MPI_File_get_position_shared(fh, &pos));
    PT_EQ(pos, 0);
    /* seek_shared need not synchronize: all ranks look before it moves. */
    MPI_Barrier(MPI_COMM_WORLD);
    PT_MPI_OK(MPI_File_seek_shared(fh, 3, MPI_SEEK_SET));
    PT_MPI_OK(MPI_File_get_position_shared(fh, &pos));
    PT_EQ(pos, 3);
    PT_MPI_OK(MPI_File_close(&fh));
    CONF_EXPECT_IMAGE(path, image, FILE_LEN);
}

/* Shared pointers of files opened by disjoint groups of one split: each
 * group's pointer counts only its own writes. Under Open MPI 4.1 such groups
 * may get the same communicator id, and windows named by it alias one
 * shared segment; several rounds, each with a fresh split, make a collision
 * likely. Rank 0 of each group checks the file: every record whole and each
 * rank's records all there, with no hole. */
#define SPLIT_ROUNDS 8
#define SPLIT_RECORDS 40
#define SPLIT_INTS 4

static void check_split_file(const char *path, int group_size, MPI_Comm group) {
    static unsigned char image[CONF_IMAGE_MAX];
    long long want = (long long)group_size * SPLIT_RECORDS * SPLIT_INTS * (long long)sizeof(int);
    long long size = conf_read_image(path, image, sizeof image);
    PT_EQ(size, want);
    int counts[64] = {0};
    const int *v = (const int *)image;
    for (long long r = 0; size == want && r < want / (SPLIT_INTS * (long long)sizeof(int)); r++) {
        const int *rec = v + r * SPLIT_INTS;
        int whole =
            rec[0] >= 0 && rec[0] < 64 && rec[1] == rec[0] && rec[2] == rec[0] && rec[3] == rec[0];
        PT_CHECK(whole);
        if (whole)
            counts[rec[0]]++;
    }
    int world = conf_size();
    for (int w = 0; w < world && w < 64; w++) {
        int member = 0, grank = -1;
        MPI_Group wg, gg;
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        MPI_Comm_group(group, &gg);
        MPI_Group_translate_ranks(wg, 1, &w, gg, &grank);
        MPI_Group_free(&wg);
        MPI_Group_free(&gg);
        member = grank != MPI_UNDEFINED;
        PT_EQ(counts[w], member ? SPLIT_RECORDS : 0);
    }
}

static void split_round(int round) {
    int rank = conf_rank(), color = rank % 2;
    MPI_Comm group;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &group);
    int grank = 0, gsize = 1;
    MPI_Comm_rank(group, &grank);
    MPI_Comm_size(group, &gsize);
    char name[64], path[CONF_PATH_MAX];
    snprintf(name, sizeof name, "position-split%d-%d.dat", color, round);
    conf_path(path, name);
    if (grank == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File fh = MPI_FILE_NULL;
    if (PT_MPI_OK(
            MPI_File_open(group, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh))) {
        int rec[SPLIT_INTS] = {rank, rank, rank, rank};
        for (int i = 0; i < SPLIT_RECORDS; i++)
            PT_MPI_OK(MPI_File_write_shared(fh, rec, SPLIT_INTS, MPI_INT, MPI_STATUS_IGNORE));
        PT_MPI_OK(MPI_File_close(&fh));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (grank == 0) {
        check_split_file(path, gsize, group);
        unlink(path);
    }
    MPI_Comm_free(&group);
}

static void check_shared_pointer_split(void) {
    for (int round = 0; round < SPLIT_ROUNDS; round++)
        split_round(round);
}

/* get_type_extent gives the extent in the file's data representation; for
 * "native" that is the type's own extent. */
static void check_type_extent(const char *path) {
    unsigned char image[FILE_LEN];
    MPI_File fh = open_with_view(path, image);
    if (fh == MPI_FILE_NULL)
        return;
    MPI_Aint ext = -1;
    PT_MPI_OK(MPI_File_get_type_extent(fh, MPI_INT, &ext));
    PT_EQ(ext, sizeof(int));
    PT_MPI_OK(MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext));
    PT_EQ(ext, sizeof(double));
    MPI_Datatype ft = view_filetype();
    PT_MPI_OK(MPI_File_get_type_extent(fh, ft, &ext));
    PT_EQ(ext, TILE_BYTES);
    MPI_Type_free(&ft);
    PT_MPI_OK(MPI_File_close(&fh));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    char path[CONF_PATH_MAX];
    conf_path(path, "position.dat");
    check_seek(path);
    check_write_at_pointer(path);
    check_negative_seek(path);
    check_shared_pointer(path);
    check_shared_pointer_split();
    check_type_extent(path);
    return ptest_finish();
}
