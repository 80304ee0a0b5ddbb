/* MPI 3.1 section 13.3: file views.
 *
 * Every rank writes its part of an interleaved layout through a view built
 * from one filetype constructor (contiguous, vector, indexed, hindexed,
 * struct, subarray in C and Fortran order, darray, resized with lb and
 * extent); rank 0 compares the whole file with the image computed from the
 * layout formulas below, and every rank reads its part back through the
 * view. Also get_view, the "native" datarep, an unsupported datarep, and
 * views the standard forbids. */
#include "conf.h"

/* Filetype copies (tiles) each rank writes through its view. */
#define TILES 2
/* Most ints of one rank in one tile (darray and subarray: 8). */
#define MAX_PER_TILE 8
/* Longest data representation name read back by get_view. */
#define DATAREP_LEN (MPI_MAX_DATAREP_STRING + 1)
/* Ints in the largest file image: 8 ranks x MAX_PER_TILE x TILES plus holes. */
#define MAX_INTS 2048

/* One layout: the filetype of rank r of n, its displacement, and, as
 * computed by hand, the int index (from the displacement) of each int of
 * the rank's part in one tile and the tile's extent in ints. */
struct layout {
    const char *name;
    MPI_Datatype (*filetype)(int r, int n);
    MPI_Offset (*disp)(int r, int n);
    int (*ints)(int r, int n, int *idx); /* returns ints per tile */
    int (*extent)(int n);                /* tile extent in ints */
};

static MPI_Datatype commit(MPI_Datatype t) {
    MPI_Type_commit(&t);
    return t;
}

static MPI_Datatype resize_ints(MPI_Datatype t, int lb_ints, int extent_ints) {
    MPI_Datatype out;
    MPI_Type_create_resized(t, (MPI_Aint)lb_ints * 4, (MPI_Aint)extent_ints * 4, &out);
    MPI_Type_free(&t);
    return commit(out);
}

static MPI_Offset disp_zero(int r, int n) {
    (void)r, (void)n;
    return 0;
}

/* contiguous: two ints per rank, cell of 2n ints, displacement 8r:
 * ints 2r and 2r+1 (0 and 1 from the displacement). */
static MPI_Datatype ft_contig(int r, int n) {
    (void)r;
    MPI_Datatype t;
    MPI_Type_contiguous(2, MPI_INT, &t);
    return resize_ints(t, 0, 2 * n);
}
static MPI_Offset disp_contig(int r, int n) {
    (void)n;
    return (MPI_Offset)r * 8;
}
static int ix_contig(int r, int n, int *idx) {
    (void)r, (void)n;
    idx[0] = 0;
    idx[1] = 1;
    return 2;
}
static int ext_2n(int n) {
    return 2 * n;
}

/* vector: 3 ints with stride n, displacement 4r: ints r, n+r, 2n+r
 * (0, n, 2n from the displacement). */
static MPI_Datatype ft_vector(int r, int n) {
    (void)r;
    MPI_Datatype t;
    MPI_Type_vector(3, 1, n, MPI_INT, &t);
    return resize_ints(t, 0, 3 * n);
}
static MPI_Offset disp_vector(int r, int n) {
    (void)n;
    return (MPI_Offset)r * 4;
}
static int ix_vector(int r, int n, int *idx) {
    (void)r;
    for (int i = 0; i < 3; i++)
        idx[i] = i * n;
    return 3;
}
static int ext_3n(int n) {
    return 3 * n;
}

/* indexed: blocks of 1 and 2 ints at ints r and n+2r, cell of 3n ints. */
static MPI_Datatype ft_indexed(int r, int n) {
    int lens[2] = {1, 2}, displs[2] = {r, n + 2 * r};
    MPI_Datatype t;
    MPI_Type_indexed(2, lens, displs, MPI_INT, &t);
    return resize_ints(t, 0, 3 * n);
}
static int ix_indexed(int r, int n, int *idx) {
    idx[0] = r;
    idx[1] = n + 2 * r;
    idx[2] = n + 2 * r + 1;
    return 3;
}

/* hindexed: blocks of 2 and 1 ints at bytes 8r and 4(2n+r), cell 3n ints. */
static MPI_Datatype ft_hindexed(int r, int n) {
    int lens[2] = {2, 1};
    MPI_Aint displs[2] = {(MPI_Aint)8 * r, (MPI_Aint)4 * (2 * n + r)};
    MPI_Datatype t;
    MPI_Type_create_hindexed(2, lens, displs, MPI_INT, &t);
    return resize_ints(t, 0, 3 * n);
}
static int ix_hindexed(int r, int n, int *idx) {
    idx[0] = 2 * r;
    idx[1] = 2 * r + 1;
    idx[2] = 2 * n + r;
    return 3;
}

/* struct: one int at int r and a contiguous pair at ints n+2r, cell 3n. */
static MPI_Datatype ft_struct(int r, int n) {
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    int lens[2] = {1, 1};
    MPI_Aint displs[2] = {(MPI_Aint)4 * r, (MPI_Aint)4 * (n + 2 * r)};
    MPI_Datatype types[2] = {MPI_INT, pair}, t;
    MPI_Type_create_struct(2, lens, displs, types, &t);
    MPI_Type_free(&pair);
    return resize_ints(t, 0, 3 * n);
}

/* subarray, C order: a 4 x 2n array, rank r owns columns 2r and 2r+1. */
static MPI_Datatype ft_sub_c(int r, int n) {
    int sizes[2] = {4, 2 * n}, subs[2] = {4, 2}, starts[2] = {0, 2 * r};
    MPI_Datatype t;
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t);
    return commit(t);
}
/* The same block in Fortran order: first dimension (2n) varies fastest. */
static MPI_Datatype ft_sub_f(int r, int n) {
    int sizes[2] = {2 * n, 4}, subs[2] = {2, 4}, starts[2] = {2 * r, 0};
    MPI_Datatype t;
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT, &t);
    return commit(t);
}
static int ix_columns(int r, int n, int *idx) {
    int k = 0;
    for (int row = 0; row < 4; row++)
        for (int c = 0; c < 2; c++)
            idx[k++] = row * 2 * n + 2 * r + c;
    return k;
}
static int ext_8n(int n) {
    return 8 * n;
}

/* darray: 4 x 2n array, rows not distributed, columns cyclic over n ranks:
 * rank r owns columns r and n+r of every row. */
static MPI_Datatype ft_darray(int r, int n) {
    int gsizes[2] = {4, 2 * n}, distribs[2] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_CYCLIC};
    int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 1}, psizes[2] = {1, n};
    MPI_Datatype t;
    MPI_Type_create_darray(n, r, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &t);
    return commit(t);
}
static int ix_darray(int r, int n, int *idx) {
    int k = 0;
    for (int row = 0; row < 4; row++) {
        idx[k++] = row * 2 * n + r;
        idx[k++] = row * 2 * n + n + r;
    }
    return k;
}

/* resized with a lower bound: one int at int n+r, lb n ints, extent n:
 * tiles repeat every n ints (tile k's typemap shifted by k extents, the lb
 * moves nothing) and the first n ints of the view stay a hole. Deviation:
 * ROMIO places the data elsewhere (one int further at 1 and 2 ranks) and
 * at 2 ranks does not read back what it wrote, so this layout is skipped
 * on ROMIO. */
static MPI_Datatype ft_lb(int r, int n) {
    int len = 1;
    MPI_Aint displ = (MPI_Aint)4 * (n + r);
    MPI_Datatype t;
    MPI_Type_create_hindexed(1, &len, &displ, MPI_INT, &t);
    return resize_ints(t, n, n);
}
static int ix_lb(int r, int n, int *idx) {
    idx[0] = n + r;
    return 1;
}
static int ext_n(int n) {
    return n;
}

static const struct layout layouts[] = {
    {"contiguous", ft_contig, disp_contig, ix_contig, ext_2n},
    {"vector", ft_vector, disp_vector, ix_vector, ext_3n},
    {"indexed", ft_indexed, disp_zero, ix_indexed, ext_3n},
    {"hindexed", ft_hindexed, disp_zero, ix_hindexed, ext_3n},
    {"struct", ft_struct, disp_zero, ix_indexed, ext_3n},
    {"subarray-c", ft_sub_c, disp_zero, ix_columns, ext_8n},
    {"subarray-f", ft_sub_f, disp_zero, ix_columns, ext_8n},
    {"darray", ft_darray, disp_zero, ix_darray, ext_8n},
    {"resized-lb", ft_lb, disp_zero, ix_lb, ext_n},
};

/* The value rank r stores as its i-th int. */
static int value_of(int r, int i) {
    return 1000 * (r + 1) + i;
}

/* Builds the expected image: every rank's ints at their layout positions,
 * zeros in holes. Returns the image length in bytes. */
static size_t expected_image(const struct layout *l, int n, int *image) {
    size_t len = 0;
    memset(image, 0, MAX_INTS * sizeof(int));
    for (int r = 0; r < n; r++) {
        int idx[MAX_PER_TILE];
        int per = l->ints(r, n, idx);
        MPI_Offset base = l->disp(r, n) / 4;
        for (int t = 0; t < TILES; t++) {
            for (int k = 0; k < per; k++) {
                size_t at = (size_t)(base + (MPI_Offset)t * l->extent(n) + idx[k]);
                image[at] = value_of(r, t * per + k);
                len = at + 1 > len ? at + 1 : len;
            }
        }
    }
    return len * sizeof(int);
}

/* get_view returns the view just set: displacement, the named etype itself,
 * a new derived filetype (freed here) of the same extent, and "native". */
static void check_get_view(MPI_File fh, MPI_Offset disp, MPI_Datatype filetype) {
    MPI_Offset d = -1;
    MPI_Datatype et = MPI_DATATYPE_NULL, ft = MPI_DATATYPE_NULL;
    char rep[DATAREP_LEN] = "";
    if (!PT_MPI_OK(MPI_File_get_view(fh, &d, &et, &ft, rep)))
        return;
    PT_EQ(d, disp);
    PT_CHECK(et == MPI_INT);
    PT_CHECK(strcmp(rep, "native") == 0);
    int ni, na, nt, comb = -1;
    MPI_Type_get_envelope(ft, &ni, &na, &nt, &comb);
    PT_CHECK(comb != MPI_COMBINER_NAMED);
    MPI_Aint lb1, ext1, lb2, ext2;
    MPI_Type_get_extent(ft, &lb1, &ext1);
    MPI_Type_get_extent(filetype, &lb2, &ext2);
    PT_EQ(lb1, lb2);
    PT_EQ(ext1, ext2);
    int s1 = 0, s2 = 0;
    MPI_Type_size(ft, &s1);
    MPI_Type_size(filetype, &s2);
    PT_EQ(s1, s2);
    /* The returned filetype is the caller's to free; the original stays valid. */
    PT_MPI_OK(MPI_Type_free(&ft));
}

/* Writes this rank's ints through the layout's view, checks the image on
 * rank 0, reads the ints back through the view. */
static void check_layout(const char *path, const struct layout *l) {
    int rank = conf_rank(), n = conf_size();
    conf_remove(path);
    MPI_File fh;
    if (!PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                                 MPI_INFO_NULL, &fh)))
        return;
    MPI_Datatype ft = l->filetype(rank, n);
    MPI_Offset disp = l->disp(rank, n);
    PT_MPI_OK(MPI_File_set_view(fh, disp, MPI_INT, ft, "native", MPI_INFO_NULL));
    check_get_view(fh, disp, ft);
    int idx[MAX_PER_TILE];
    int count = TILES * l->ints(rank, n, idx);
    int mine[TILES * MAX_PER_TILE], back[TILES * MAX_PER_TILE];
    for (int i = 0; i < count; i++)
        mine[i] = value_of(rank, i);
    MPI_Status st;
    PT_MPI_OK(MPI_File_write(fh, mine, count, MPI_INT, &st));
    int got = -1;
    MPI_Get_count(&st, MPI_INT, &got);
    PT_EQ(got, count);
    PT_MPI_OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PT_MPI_OK(MPI_File_sync(fh));

    static int image[MAX_INTS];
    size_t len = expected_image(l, n, image);
    CONF_EXPECT_IMAGE(path, image, len);

    memset(back, 0, sizeof back);
    PT_MPI_OK(MPI_File_read_at(fh, 0, back, count, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &got);
    PT_EQ(got, count);
    char what[64];
    snprintf(what, sizeof what, "%s: read back through the view", l->name);
    ptest_check(memcmp(back, mine, (size_t)count * sizeof(int)) == 0, what, __FILE__, __LINE__);
    PT_MPI_OK(MPI_File_close(&fh));
    MPI_Type_free(&ft);
}

/* A view with a named filetype: get_view hands back the named types. */
static void check_named_view(const char *path) {
    conf_remove(path);
    MPI_File fh;
    if (!PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                                 MPI_INFO_NULL, &fh)))
        return;
    MPI_Offset d = -1;
    MPI_Datatype et, ft;
    char rep[DATAREP_LEN];
    /* The default view: displacement 0, MPI_BYTE, MPI_BYTE, "native". */
    PT_MPI_OK(MPI_File_get_view(fh, &d, &et, &ft, rep));
    PT_EQ(d, 0);
    PT_CHECK(et == MPI_BYTE && ft == MPI_BYTE);
    PT_CHECK(strcmp(rep, "native") == 0);

    PT_MPI_OK(MPI_File_set_view(fh, 8, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    PT_MPI_OK(MPI_File_get_view(fh, &d, &et, &ft, rep));
    PT_EQ(d, 8);
    PT_CHECK(et == MPI_INT && ft == MPI_INT);
    int rank = conf_rank(), v = value_of(rank, 0);
    PT_MPI_OK(MPI_File_write_at(fh, rank, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
    PT_MPI_OK(MPI_File_close(&fh));
    static int image[MAX_INTS];
    int n = conf_size();
    memset(image, 0, sizeof image);
    for (int r = 0; r < n; r++)
        image[2 + r] = value_of(r, 0);
    CONF_EXPECT_IMAGE(path, image, (size_t)(2 + n) * sizeof(int));
}

/* Views the standard rules out: an unknown datarep is
 * MPI_ERR_UNSUPPORTED_DATAREP (13.5); a filetype not made of whole etypes
 * and a negative displacement are erroneous, and the bytes already written
 * stay. The standard names no class for the last two; pario answers
 * MPI_ERR_ARG for both, as ROMIO does (OMPIO too for the first). Deviation:
 * OMPIO accepts the negative displacement, so that is not checked on OMPIO. */
static void check_bad_views(const char *path) {
    conf_remove(path);
    MPI_File fh;
    if (!PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                                 MPI_INFO_NULL, &fh)))
        return;
    if (conf_rank() == 0)
        PT_MPI_OK(MPI_File_write_at(fh, 0, "viewdata", 8, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);

    int rc = MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "no-such-representation", MPI_INFO_NULL);
    PT_MPI_CLASS(rc, MPI_ERR_UNSUPPORTED_DATAREP);
    CONF_SAME_CLASS(rc);
    CONF_NAMES_FILE(rc, path);

    MPI_Datatype six;
    MPI_Type_contiguous(6, MPI_BYTE, &six);
    MPI_Type_commit(&six);
    rc = MPI_File_set_view(fh, 0, MPI_INT, six, "native", MPI_INFO_NULL);
    CONF_SAME_CLASS(rc);
    PT_MPI_CLASS(rc, MPI_ERR_ARG);
    if (ptest_on_pario())
        CONF_NAMES_FILE(rc, path);
    MPI_Type_free(&six);

    rc = MPI_File_set_view(fh, -8, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    CONF_SAME_CLASS(rc);
    if (!conf_ompio_deviates())
        PT_CHECK(rc != MPI_SUCCESS);
    if (ptest_on_pario())
        PT_MPI_CLASS(rc, MPI_ERR_ARG);

    /* After the failures the default view still works. */
    PT_MPI_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    char back[8];
    PT_MPI_OK(MPI_File_read_at(fh, 0, back, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    PT_CHECK(memcmp(back, "viewdata", 8) == 0);
    PT_MPI_OK(MPI_File_close(&fh));
    CONF_EXPECT_IMAGE(path, "viewdata", 8);
}

/* MPI_DISPLACEMENT_CURRENT (13.3): with MPI_MODE_SEQUENTIAL the view's
 * displacement must be it, and it means the shared pointer's position;
 * without SEQUENTIAL it is invalid. */
static void check_displacement_current(const char *path) {
    int rank = conf_rank(), n = conf_size();
    conf_remove(path);
    MPI_File fh;
    int amode = MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_SEQUENTIAL;
    if (!PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh)))
        return;
    char mine[2] = {(char)('a' + rank), (char)('A' + rank)};
    PT_MPI_OK(MPI_File_write_ordered(fh, mine, 2, MPI_BYTE, MPI_STATUS_IGNORE));
    PT_MPI_OK(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_BYTE, MPI_BYTE, "native",
                                MPI_INFO_NULL));
    MPI_Offset d = -1;
    MPI_Datatype et, ft;
    char rep[DATAREP_LEN];
    PT_MPI_OK(MPI_File_get_view(fh, &d, &et, &ft, rep));
    PT_EQ(d, 2 * n);
    MPI_Offset shared = -1;
    /* Deviation: MPICH's ROMIO refuses get_position_shared on a SEQUENTIAL file. */
    if (ptest_on_pario() || !conf_romio_deviates()) {
        PT_MPI_OK(MPI_File_get_position_shared(fh, &shared));
        PT_EQ(shared, 0);
    }
    PT_MPI_OK(MPI_File_write_ordered(fh, mine + 1, 1, MPI_BYTE, MPI_STATUS_IGNORE));
    PT_MPI_OK(MPI_File_close(&fh));
    unsigned char want[24];
    PT_CHECK(n <= 8); /* want holds 8 ranks' bytes */
    for (int r = 0; r < n && r < 8; r++) {
        want[2 * r] = (unsigned char)('a' + r);
        want[2 * r + 1] = (unsigned char)('A' + r);
        want[2 * n + r] = (unsigned char)('A' + r);
    }
    CONF_EXPECT_IMAGE(path, want, (size_t)3 * n);

    if (!PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh)))
        return;
    int rc = MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_BYTE, MPI_BYTE, "native",
                               MPI_INFO_NULL);
    PT_CHECK(rc != MPI_SUCCESS);
    CONF_SAME_CLASS(rc);
    PT_MPI_OK(MPI_File_close(&fh));
    CONF_EXPECT_IMAGE(path, want, (size_t)3 * n);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    char path[CONF_PATH_MAX];
    conf_path(path, "view.dat");
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
        if (layouts[i].filetype == ft_lb && conf_romio_deviates())
            continue;
        check_layout(path, &layouts[i]);
    }
    check_named_view(path);
    check_bad_views(path);
    check_displacement_current(path);
    return ptest_finish();
}
