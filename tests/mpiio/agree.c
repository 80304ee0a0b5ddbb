/* What the ranks of a file must agree on (MPI 3.1 sections 13.3, 13.5.1,
 * 13.2.8), and what they may differ in.
 *
 * - A filetype with no data (a darray or hindexed type for a rank that owns
 *   no element) is a valid view: that rank takes part in collective calls
 *   and moves nothing, and every other rank's bytes land in place.
 * - A set_view refused on one rank is refused on every rank, and the view
 *   in effect before stays in effect everywhere.
 * - Hints may differ between ranks: no combination hangs or misplaces a
 *   byte, and under pario every rank reports the same value in effect.
 * - get_size after a collective write counts every rank's bytes. */
#include "conf.h"

/* Ints of one int's value at global index i of a shared array. */
static int value_at(int i) {
    return 1000000 + i;
}

/* A new empty file named name (its path in path) opened by every rank. */
static MPI_File open_fresh(char *path, const char *name, MPI_Info info) {
    conf_path(path, name);
    conf_remove(path);
    MPI_File fh = MPI_FILE_NULL;
    PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    return fh;
}

/* ---- a darray view with ranks that own no element -------------------------------------- */

/* 3-D array of ints block-distributed over the ranks along its first
 * dimension, which has one plane fewer than there are ranks, so the last
 * rank owns nothing. */
enum { DA_NY = 3, DA_NZ = 4, DA_MAX = 8 * DA_NY * DA_NZ };

static void darray_empty_rank(void) {
    int n = conf_size(), r = conf_rank();
    int gsizes[3] = {n > 1 ? n - 1 : 1, DA_NY, DA_NZ};
    int distribs[3] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
    int dargs[3] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG};
    int psizes[3] = {n, 1, 1};
    MPI_Datatype ft;
    PT_MPI_OK(MPI_Type_create_darray(n, r, 3, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT,
                                     &ft));
    PT_MPI_OK(MPI_Type_commit(&ft));
    int bytes = 0;
    MPI_Type_size(ft, &bytes);
    int count = bytes / 4, total = gsizes[0] * DA_NY * DA_NZ;
    if (n > 1 && r == n - 1)
        PT_EQ(count, 0); /* the premise: this rank owns nothing */
    /* Rank r owns plane r (one plane each): its ints in array order. */
    int mine[DA_NY * DA_NZ];
    for (int i = 0; i < count; i++)
        mine[i] = value_at(r * DA_NY * DA_NZ + i);

    char path[CONF_PATH_MAX];
    MPI_File fh = open_fresh(path, "darray_empty", MPI_INFO_NULL);
    PT_MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL));
    MPI_Status st;
    PT_MPI_OK(MPI_File_write_all(fh, mine, count, MPI_INT, &st));
    int got = -1;
    MPI_Get_count(&st, MPI_INT, &got);
    PT_EQ(got, count);
    /* Once every rank's call has returned (the barrier), get_size counts
     * every part. OMPIO may leave other ranks' parts out until a sync
     * (nonatomic mode allows it); HDF5 and PnetCDF expect them counted. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset size = 0;
    PT_MPI_OK(MPI_File_get_size(fh, &size));
    if (conf_strict())
        PT_EQ(size, (MPI_Offset)total * 4);

    /* Read back through the same views, collectively. */
    int back[DA_NY * DA_NZ];
    memset(back, 0, sizeof back);
    PT_MPI_OK(MPI_File_read_at_all(fh, 0, back, count, MPI_INT, &st));
    PT_CHECK(memcmp(back, mine, (size_t)count * 4) == 0);
    PT_MPI_OK(MPI_File_close(&fh));

    int image[DA_MAX];
    for (int i = 0; i < total; i++)
        image[i] = value_at(i);
    CONF_EXPECT_IMAGE(path, image, (size_t)total * 4);
    MPI_Type_free(&ft);
}

/* ---- a resized hindexed filetype with no blocks on the last rank -------------------------- */

/* Every rank but the last has one block of HB_LEN ints at r * HB_LEN in
 * each tile of HB_TILE ints; tiles repeat HB_REPS times. */
enum { HB_LEN = 5, HB_REPS = 3 };

static void hindexed_empty_rank(void) {
    int n = conf_size(), r = conf_rank();
    int writers = n > 1 ? n - 1 : 1, tile = writers * HB_LEN;
    int nblocks = r < writers ? 1 : 0, len = HB_LEN;
    MPI_Aint disp = (MPI_Aint)r * HB_LEN * 4;
    MPI_Datatype blocks, ft;
    PT_MPI_OK(MPI_Type_create_hindexed(nblocks, &len, &disp, MPI_INT, &blocks));
    PT_MPI_OK(MPI_Type_create_resized(blocks, 0, (MPI_Aint)tile * 4, &ft));
    PT_MPI_OK(MPI_Type_commit(&ft));
    int count = nblocks * HB_LEN * HB_REPS;
    int mine[HB_LEN * HB_REPS];
    for (int t = 0; t < HB_REPS && nblocks; t++)
        for (int k = 0; k < HB_LEN; k++)
            mine[t * HB_LEN + k] = value_at(t * tile + r * HB_LEN + k);

    char path[CONF_PATH_MAX];
    MPI_File fh = open_fresh(path, "hindexed_empty", MPI_INFO_NULL);
    PT_MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL));
    PT_MPI_OK(MPI_File_write_all(fh, mine, count, MPI_INT, MPI_STATUS_IGNORE));
    /* A rank whose view is empty may still ask for data: it gets none.
     * (MPICH's ROMIO reports data read.) */
    if (nblocks == 0 && !conf_romio_deviates()) {
        MPI_Status st;
        int got = -1;
        PT_MPI_OK(MPI_File_read_at(fh, 0, mine, 4, MPI_INT, &st));
        MPI_Get_count(&st, MPI_INT, &got);
        PT_EQ(got, 0);
    }
    PT_MPI_OK(MPI_File_close(&fh));

    int image[8 * HB_LEN * HB_REPS];
    for (int i = 0; i < tile * HB_REPS; i++)
        image[i] = value_at(i);
    CONF_EXPECT_IMAGE(path, image, (size_t)tile * HB_REPS * 4);
    MPI_Type_free(&blocks);
    MPI_Type_free(&ft);
}

/* ---- a set_view refused on one rank ------------------------------------------------------- */

/* The last rank passes a negative displacement while the others pass a
 * valid view that would move their data: every rank must fail, and the
 * write that follows must use the contiguous view of before. */
static void refused_view_keeps_old(void) {
    /* OMPIO refuses on the bad rank only and installs the view elsewhere;
     * MPICH's ROMIO refuses on the bad rank only while the others wait in
     * set_view's own agreement (a hang). */
    if (conf_ompio_deviates() || conf_romio_deviates())
        return;
    int n = conf_size(), r = conf_rank();
    char path[CONF_PATH_MAX];
    MPI_File fh = open_fresh(path, "refused_view", MPI_INFO_NULL);
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    PT_MPI_OK(MPI_File_set_view(fh, (MPI_Offset)r * 16, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_Offset disp = r == n - 1 ? -64 : 1024 + (MPI_Offset)r * 16;
    int rc = MPI_File_set_view(fh, disp, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    PT_EQ(conf_class(rc), MPI_ERR_ARG);
    CONF_SAME_CLASS(rc);
    CONF_NAMES_FILE(rc, path);
    int mine[4] = {value_at(4 * r), value_at(4 * r + 1), value_at(4 * r + 2), value_at(4 * r + 3)};
    PT_MPI_OK(MPI_File_write_all(fh, mine, 4, MPI_INT, MPI_STATUS_IGNORE));
    PT_MPI_OK(MPI_File_close(&fh));
    int image[32];
    for (int i = 0; i < 4 * n; i++)
        image[i] = value_at(i);
    CONF_EXPECT_IMAGE(path, image, (size_t)n * 16);
}

/* ---- hints that differ between ranks ---------------------------------------------------- */

/* Hints steering the collective path, each set on one rank only. */
static MPI_Info hints_of_rank(int r) {
    MPI_Info info;
    MPI_Info_create(&info);
    if (r == 0) {
        MPI_Info_set(info, "pario_cb_write_behind", "disable");
        MPI_Info_set(info, "romio_cb_write", "enable");
        MPI_Info_set(info, "cb_buffer_size", "4096");
    } else if (r == 1) {
        MPI_Info_set(info, "romio_cb_read", "disable");
        MPI_Info_set(info, "romio_cb_write", "disable");
        MPI_Info_set(info, "cb_nodes", "1");
        MPI_Info_set(info, "striping_unit", "512");
    } else {
        MPI_Info_set(info, "romio_cb_read", "enable");
        MPI_Info_set(info, "cb_buffer_size", "65536");
    }
    return info;
}

/* Under pario every rank reports the same value of key as rank 0. */
static void same_hint_everywhere(MPI_File fh, const char *key) {
    MPI_Info info;
    PT_MPI_OK(MPI_File_get_info(fh, &info));
    char v[MPI_MAX_INFO_VAL + 1] = "", first[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag);
    MPI_Info_free(&info);
    memcpy(first, v, sizeof first);
    MPI_Bcast(first, (int)sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    int same = flag && strcmp(first, v) == 0, all = 0;
    MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    char text[128];
    snprintf(text, sizeof text, "every rank reports the same %s", key);
    ptest_check(all, text, __FILE__, __LINE__);
}

/* Contiguous parts of PART ints, rank by rank, CALLS times; get_size after
 * each call (once every rank's call returned) counts every rank's part,
 * asked by every rank and then by one rank alone (get_size is not
 * collective); then the same through an interleaved view, read back
 * collectively. */
enum { PART = 25, CALLS = 4 };

static void write_parts(MPI_File fh, int n, int r) {
    for (int c = 0; c < CALLS; c++) {
        int part[PART];
        int first = (c * n + r) * PART;
        for (int k = 0; k < PART; k++)
            part[k] = value_at(first + k);
        PT_MPI_OK(MPI_File_write_at_all(fh, (MPI_Offset)first * 4, part, PART, MPI_INT,
                                        MPI_STATUS_IGNORE));
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Offset size = 0;
        if (c % 2 == 0 || r == c % n)
            PT_MPI_OK(MPI_File_get_size(fh, &size));
        else
            size = (MPI_Offset)(c + 1) * n * PART * 4; /* not asked on this rank */
        if (conf_strict())                             /* see darray_empty_rank */
            PT_EQ(size, (MPI_Offset)(c + 1) * n * PART * 4);
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

static void hints_differ(void) {
    /* MPICH's ROMIO fails the open when ranks pass different values of
     * cb_buffer_size or cb_nodes (MPI lets hints differ between ranks). */
    if (conf_romio_deviates())
        return;
    int n = conf_size(), r = conf_rank();
    char path[CONF_PATH_MAX];
    MPI_Info info = hints_of_rank(r);
    MPI_File fh = open_fresh(path, "hints_differ", info);
    write_parts(fh, n, r);
    if (conf_strict()) {
        const char *keys[] = {"pario_cb_write_behind", "romio_cb_write", "romio_cb_read",
                              "cb_buffer_size",        "cb_nodes",       "striping_unit"};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            same_hint_everywhere(fh, keys[i]);
    }
    /* The same hints again through set_info, then an interleaved view. */
    PT_MPI_OK(MPI_File_set_info(fh, info));
    MPI_Datatype blk, ft;
    MPI_Type_contiguous(PART, MPI_INT, &blk);
    MPI_Type_create_resized(blk, 0, (MPI_Aint)n * PART * 4, &ft);
    MPI_Type_commit(&ft);
    MPI_Offset base = (MPI_Offset)CALLS * n * PART * 4;
    PT_MPI_OK(MPI_File_set_view(fh, base + (MPI_Offset)r * PART * 4, MPI_INT, ft, "native", info));
    int more[2 * PART], back[2 * PART];
    for (int b = 0; b < 2; b++)
        for (int k = 0; k < PART; k++)
            more[b * PART + k] = value_at(CALLS * n * PART + (b * n + r) * PART + k);
    PT_MPI_OK(MPI_File_write_all(fh, more, 2 * PART, MPI_INT, MPI_STATUS_IGNORE));
    PT_MPI_OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    memset(back, 0, sizeof back);
    PT_MPI_OK(MPI_File_read_all(fh, back, 2 * PART, MPI_INT, MPI_STATUS_IGNORE));
    PT_CHECK(memcmp(back, more, sizeof more) == 0);
    PT_MPI_OK(MPI_File_close(&fh));

    int total = (CALLS + 2) * n * PART;
    static int image[(CALLS + 2) * 8 * PART];
    for (int i = 0; i < total; i++)
        image[i] = value_at(i);
    CONF_EXPECT_IMAGE(path, image, (size_t)total * 4);
    MPI_Type_free(&blk);
    MPI_Type_free(&ft);
    MPI_Info_free(&info);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    darray_empty_rank();
    hindexed_empty_rank();
    refused_view_keeps_old();
    hints_differ();
    return ptest_finish();
}
