/* File handles and views: MPI_File_c2f/f2c round trips, invalid handles,
 * and MPI_File_get_view returning predefined types as they are and new
 * duplicates of derived types, with a view that outlives the program's own
 * (freed) filetype and places the bytes where the view says. */
#include "dropin.h"

/* ints each rank writes through its view: 3 blocks of 2. */
#define DROPIN_VIEW_BLOCKS 3
#define DROPIN_VIEW_BLOCKLEN 2
#define DROPIN_VIEW_INTS (DROPIN_VIEW_BLOCKS * DROPIN_VIEW_BLOCKLEN)
/* Largest file image checked: DROPIN_VIEW_INTS ints from each of at most 8 ranks. */
#define DROPIN_IMAGE_INTS (DROPIN_VIEW_INTS * 8)

static void check_fortran_handles(const char *path_a, const char *path_b) {
    MPI_File a, b;
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_WORLD, path_a, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &a));
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_WORLD, path_b, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &b));
    MPI_Fint fa = MPI_File_c2f(a), fb = MPI_File_c2f(b);
    PT_CHECK(fa != fb);
    PT_CHECK(MPI_File_f2c(fa) == a);
    PT_CHECK(MPI_File_f2c(fb) == b);
    PT_CHECK(MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL)) == MPI_FILE_NULL);
    MPI_File stale = a;
    PT_MPI_OK(MPI_File_close(&a));
    PT_CHECK(a == MPI_FILE_NULL);
    if (ptest_on_pario()) {
        MPI_Offset size = 0;
        PT_CHECK(MPI_File_f2c(fa) == MPI_FILE_NULL);
        PT_MPI_CLASS(MPI_File_get_size(stale, &size), MPI_ERR_FILE);
    }
    PT_CHECK(MPI_File_f2c(fb) == b);
    PT_MPI_OK(MPI_File_close(&b));
}

/* Rank r's view: blocks of DROPIN_VIEW_BLOCKLEN ints, one block per rank in
 * turn, starting at block r. */
static MPI_Datatype make_filetype(int nranks) {
    MPI_Datatype vec;
    MPI_Type_vector(DROPIN_VIEW_BLOCKS, DROPIN_VIEW_BLOCKLEN, DROPIN_VIEW_BLOCKLEN * nranks,
                    MPI_INT, &vec);
    MPI_Type_commit(&vec);
    return vec;
}

/* get_view: disp, predefined etype as is, filetype a new derived duplicate. */
static void check_get_view(MPI_File fh, MPI_Offset want_disp, MPI_Aint want_extent) {
    MPI_Offset disp = -1;
    MPI_Datatype etype = MPI_DATATYPE_NULL, ftype = MPI_DATATYPE_NULL;
    char datarep[MPI_MAX_DATAREP_STRING];
    PT_MPI_OK(MPI_File_get_view(fh, &disp, &etype, &ftype, datarep));
    PT_EQ(disp, want_disp);
    PT_CHECK(etype == MPI_INT);
    PT_CHECK(strcmp(datarep, "native") == 0);
    int ni, na, nd, combiner = MPI_COMBINER_NAMED, size = 0;
    MPI_Aint lb = -1, extent = 0;
    MPI_Type_get_envelope(ftype, &ni, &na, &nd, &combiner);
    PT_CHECK(combiner != MPI_COMBINER_NAMED);
    MPI_Type_size(ftype, &size);
    MPI_Type_get_extent(ftype, &lb, &extent);
    PT_EQ(size, DROPIN_VIEW_INTS * (int)sizeof(int));
    PT_EQ(lb, 0);
    PT_EQ(extent, want_extent);
    PT_MPI_OK(MPI_Type_free(&ftype));
}

/* Rank 0 checks the interleaved file image byte for byte. */
static void check_view_image(const char *path, int nranks) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (dropin_rank() != 0)
        return;
    int want[DROPIN_IMAGE_INTS], got[DROPIN_IMAGE_INTS];
    int total = DROPIN_VIEW_INTS * nranks;
    for (int i = 0; i < total; i++) {
        int block = i / DROPIN_VIEW_BLOCKLEN, rank = block % nranks;
        int k = (block / nranks) * DROPIN_VIEW_BLOCKLEN + i % DROPIN_VIEW_BLOCKLEN;
        want[i] = rank * 100 + k;
    }
    PT_EQ(dropin_file_size(path), (long long)(total * sizeof(int)));
    PT_EQ(ptest_read_file(path, got, total * sizeof(int)), (long long)(total * sizeof(int)));
    PT_CHECK(memcmp(want, got, total * sizeof(int)) == 0);
}

static void check_views(const char *path) {
    int rank = dropin_rank(), nranks = dropin_size();
    MPI_File fh;
    PT_MPI_OK(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Datatype vec = make_filetype(nranks);
    MPI_Aint lb, extent;
    MPI_Type_get_extent(vec, &lb, &extent);
    MPI_Offset disp = (MPI_Offset)rank * DROPIN_VIEW_BLOCKLEN * sizeof(int);
    PT_MPI_OK(MPI_File_set_view(fh, disp, MPI_INT, vec, "native", MPI_INFO_NULL));
    MPI_Type_free(&vec);

    int data[DROPIN_VIEW_INTS], back[DROPIN_VIEW_INTS];
    for (int k = 0; k < DROPIN_VIEW_INTS; k++)
        data[k] = rank * 100 + k;
    MPI_Status st;
    PT_MPI_OK(MPI_File_write_at_all(fh, 0, data, DROPIN_VIEW_INTS, MPI_INT, &st));
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    PT_EQ(count, DROPIN_VIEW_INTS);
    check_get_view(fh, disp, extent);
    check_get_view(fh, disp, extent);
    PT_MPI_OK(MPI_File_sync(fh));
    check_view_image(path, nranks);

    memset(back, 0, sizeof back);
    PT_MPI_OK(MPI_File_read_at_all(fh, 0, back, DROPIN_VIEW_INTS, MPI_INT, &st));
    PT_CHECK(memcmp(back, data, sizeof data) == 0);
    PT_MPI_OK(MPI_File_close(&fh));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    char a[DROPIN_PATH_MAX], b[DROPIN_PATH_MAX], v[DROPIN_PATH_MAX];
    dropin_fresh_path(a, "handles-a.dat");
    dropin_fresh_path(b, "handles-b.dat");
    dropin_fresh_path(v, "handles-view.dat");
    check_fortran_handles(a, b);
    if (dropin_size() <= DROPIN_IMAGE_INTS / DROPIN_VIEW_INTS)
        check_views(v);
    return ptest_finish();
}
