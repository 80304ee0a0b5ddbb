/* A parallel HDF5 application, written against HDF5's public API only: it
 * knows nothing of pario. It writes hyperslabs of a contiguous, a chunked and
 * an extendible dataset through the MPI-IO file driver, independently and
 * collectively, with attributes on the file and on the datasets; then it
 * reopens the file and verifies every value, reading other ranks' parts, the
 * whole datasets, and with some ranks selecting nothing.
 *
 *   hdf5_client OUTDIR      writes OUTDIR/hdf5_client.h5
 *
 * It prints "backend: pario" or "backend: system" (whether the MPI_File_*
 * calls reach pario's drop-in) and exits non-zero on any failed check. */
#include <dlfcn.h>
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rows of each dataset owned by one rank. */
#define ROWS_PER_RANK 6
/* Columns of every two-dimensional dataset. */
#define COLS 10
/* Chunk shape of the chunked datasets: chunks straddle the ranks' rows. */
#define CHUNK_ROWS 4
#define CHUNK_COLS 3
/* Rows the extendible dataset starts with, per rank, before it is extended. */
#define EXT_INITIAL_ROWS_PER_RANK 2
/* Collective buffer size hint, in bytes: smaller than one dataset. */
#define CB_BUFFER_SIZE "256"
/* Longest path built here. */
#define PATH_CAP 4096
/* Capacity of the string attribute read back. */
#define TEXT_CAP 64

static const char *const title_text = "pario clients: parallel HDF5";

static int rank, nranks, failures;

static void check(int ok, const char *what, long a, long b) {
    if (!ok) {
        failures++;
        if (failures <= 20)
            fprintf(stderr, "rank %d: FAILED %s (%ld vs %ld)\n", rank, what, a, b);
    }
}

/* Every HDF5 call returning a negative value is a failure. */
#define H5OK(call)                                                                                 \
    do {                                                                                           \
        if ((call) < 0) {                                                                          \
            fprintf(stderr, "rank %d: %s:%d: %s failed\n", rank, __FILE__, __LINE__, #call);       \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* The value stored at (row, col) of the dataset numbered ds. */
static int value_at(int ds, hsize_t row, hsize_t col) {
    return ds * 1000000 + (int)row * 100 + (int)col;
}

static hsize_t total_rows(void) {
    return (hsize_t)ROWS_PER_RANK * (hsize_t)nranks;
}

static hid_t make_dxpl(H5FD_mpio_xfer_t mode) {
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5OK(H5Pset_dxpl_mpio(dxpl, mode));
    return dxpl;
}

/* Opens the file through the MPI-IO driver, with a small collective buffer
 * (so two-phase I/O takes several cycles) and with metadata read and written
 * collectively (HDF5 then writes its metadata with write_at_all and a
 * derived file type). */
static hid_t open_file(const char *path, int create) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", CB_BUFFER_SIZE);
    MPI_Info_set(info, "romio_cb_write", "enable");
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5OK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, info));
    H5OK(H5Pset_all_coll_metadata_ops(fapl, 1));
    H5OK(H5Pset_coll_metadata_write(fapl, 1));
    MPI_Info_free(&info);
    hid_t file = create ? H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)
                        : H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5OK(file);
    H5Pclose(fapl);
    return file;
}

/* A dataset of ints, rows x COLS (max_rows H5S_UNLIMITED for extendible);
 * chunked when chunk is non-zero. Object times are not recorded, so that two
 * runs can produce the same bytes. */
static hid_t create_dataset(hid_t file, const char *name, hsize_t rows, hsize_t max_rows,
                            int chunk) {
    hsize_t dims[2] = {rows, COLS}, maxdims[2] = {max_rows, COLS};
    hsize_t chunk_dims[2] = {CHUNK_ROWS, CHUNK_COLS};
    hid_t space = H5Screate_simple(2, dims, maxdims);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5OK(H5Pset_obj_track_times(dcpl, 0));
    if (chunk)
        H5OK(H5Pset_chunk(dcpl, 2, chunk_dims));
    hid_t dset = H5Dcreate2(file, name, H5T_NATIVE_INT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5OK(dset);
    H5Pclose(dcpl);
    H5Sclose(space);
    return dset;
}

static void write_int_attr(hid_t obj, const char *name, const int *vals, hsize_t n) {
    hid_t space = H5Screate_simple(1, &n, NULL);
    hid_t attr = H5Acreate2(obj, name, H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT);
    H5OK(H5Awrite(attr, H5T_NATIVE_INT, vals));
    H5Aclose(attr);
    H5Sclose(space);
}

static void write_text_attr(hid_t obj, const char *name, const char *text) {
    hid_t type = H5Tcopy(H5T_C_S1);
    H5OK(H5Tset_size(type, strlen(text) + 1));
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    H5OK(H5Awrite(attr, type, text));
    H5Aclose(attr);
    H5Sclose(space);
    H5Tclose(type);
}

static void write_double_attr(hid_t obj, const char *name, double v) {
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(obj, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT);
    H5OK(H5Awrite(attr, H5T_NATIVE_DOUBLE, &v));
    H5Aclose(attr);
    H5Sclose(space);
}

/* Fills buf (rows x COLS of the dataset's rows start, start+stride, ...) */
static void fill_rows(int ds, int *buf, hsize_t start, hsize_t stride, hsize_t rows) {
    for (hsize_t i = 0; i < rows; i++)
        for (hsize_t c = 0; c < COLS; c++)
            buf[i * COLS + c] = value_at(ds, start + i * stride, c);
}

/* Writes rows [first, first + count) with stride `stride` from a packed
 * buffer, in the given transfer mode. */
static void write_rows(hid_t dset, int ds, hsize_t first, hsize_t stride, hsize_t count,
                       H5FD_mpio_xfer_t mode) {
    int *buf = malloc(sizeof(int) * (count ? count : 1) * COLS);
    fill_rows(ds, buf, first, stride, count);
    hid_t fspace = H5Dget_space(dset);
    hsize_t start[2] = {first, 0}, str[2] = {stride, 1}, cnt[2] = {count, 1}, blk[2] = {1, COLS};
    if (count)
        H5OK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, str, cnt, blk));
    else
        H5OK(H5Sselect_none(fspace));
    hsize_t mdims[2] = {count ? count : 1, COLS};
    hid_t mspace = H5Screate_simple(2, mdims, NULL);
    if (!count)
        H5OK(H5Sselect_none(mspace));
    hid_t dxpl = make_dxpl(mode);
    H5OK(H5Dwrite(dset, H5T_NATIVE_INT, mspace, fspace, dxpl, buf));
    H5Pclose(dxpl);
    H5Sclose(mspace);
    H5Sclose(fspace);
    free(buf);
}

/* Writes a column block of every row from a memory buffer with a padded row
 * (a noncontiguous memory selection as well as a noncontiguous file one). */
static void write_column_block(hid_t dset, int ds, hsize_t col0, hsize_t ncols,
                               H5FD_mpio_xfer_t mode) {
    const hsize_t pad = 2; /* unused columns around the data in memory */
    hsize_t rows = total_rows(), mcols = ncols + 2 * pad;
    int *buf = malloc(sizeof(int) * rows * mcols);
    for (hsize_t r = 0; r < rows; r++)
        for (hsize_t c = 0; c < mcols; c++)
            buf[r * mcols + c] =
                (c >= pad && c < pad + ncols) ? value_at(ds, r, col0 + c - pad) : -1;
    hid_t fspace = H5Dget_space(dset);
    hsize_t fstart[2] = {0, col0}, fcount[2] = {rows, ncols};
    H5OK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, fstart, NULL, fcount, NULL));
    hsize_t mdims[2] = {rows, mcols}, mstart[2] = {0, pad};
    hid_t mspace = H5Screate_simple(2, mdims, NULL);
    H5OK(H5Sselect_hyperslab(mspace, H5S_SELECT_SET, mstart, NULL, fcount, NULL));
    hid_t dxpl = make_dxpl(mode);
    H5OK(H5Dwrite(dset, H5T_NATIVE_INT, mspace, fspace, dxpl, buf));
    H5Pclose(dxpl);
    H5Sclose(mspace);
    H5Sclose(fspace);
    free(buf);
}

/* The columns [*col0, *col0 + *ncols) this rank owns when COLS columns are
 * split over the ranks (the last ranks may own none). */
static void my_columns(hsize_t *col0, hsize_t *ncols) {
    hsize_t per = (COLS + (hsize_t)nranks - 1) / (hsize_t)nranks;
    hsize_t lo = per * (hsize_t)rank;
    hsize_t hi = lo + per < COLS ? lo + per : COLS;
    *col0 = lo < COLS ? lo : COLS;
    *ncols = hi > *col0 ? hi - *col0 : 0;
}

static void write_phase(const char *path) {
    hid_t file = open_file(path, 1);
    hsize_t rows = total_rows();
    int ranks_attr[2] = {nranks, ROWS_PER_RANK};
    write_text_attr(file, "title", title_text);
    write_int_attr(file, "layout", ranks_attr, 2);

    /* 1: contiguous, independent, each rank its block of rows. */
    hid_t d1 = create_dataset(file, "contig_indep", rows, rows, 0);
    write_rows(d1, 1, (hsize_t)rank * ROWS_PER_RANK, 1, ROWS_PER_RANK, H5FD_MPIO_INDEPENDENT);
    write_double_attr(d1, "scale", 0.25);

    /* 2: contiguous, collective, rows dealt round-robin (strided file view). */
    hid_t d2 = create_dataset(file, "contig_coll", rows, rows, 0);
    write_rows(d2, 2, (hsize_t)rank, (hsize_t)nranks, ROWS_PER_RANK, H5FD_MPIO_COLLECTIVE);
    write_text_attr(d2, "units", "kelvin");

    /* 3: chunked, independent, column blocks from a padded memory buffer. */
    hid_t d3 = create_dataset(file, "chunked_indep", rows, rows, 1);
    hsize_t col0, ncols;
    my_columns(&col0, &ncols);
    if (ncols)
        write_column_block(d3, 3, col0, ncols, H5FD_MPIO_INDEPENDENT);
    int chunk_attr[2] = {CHUNK_ROWS, CHUNK_COLS};
    write_int_attr(d3, "chunk", chunk_attr, 2);

    /* 4: chunked, collective, block rows (each chunk shared by two ranks). */
    hid_t d4 = create_dataset(file, "chunked_coll", rows, rows, 1);
    write_rows(d4, 4, (hsize_t)rank * ROWS_PER_RANK, 1, ROWS_PER_RANK, H5FD_MPIO_COLLECTIVE);
    write_double_attr(d4, "offset", -1.5);

    /* 5: extendible chunked dataset, written, flushed, extended, written. */
    hsize_t ext0 = (hsize_t)EXT_INITIAL_ROWS_PER_RANK * (hsize_t)nranks;
    hid_t d5 = create_dataset(file, "extended", ext0, H5S_UNLIMITED, 1);
    write_rows(d5, 5, (hsize_t)rank * EXT_INITIAL_ROWS_PER_RANK, 1, EXT_INITIAL_ROWS_PER_RANK,
               H5FD_MPIO_COLLECTIVE);
    H5OK(H5Fflush(file, H5F_SCOPE_GLOBAL));
    hsize_t newdims[2] = {rows, COLS};
    H5OK(H5Dset_extent(d5, newdims));
    /* The new rows [ext0, rows) dealt round-robin; rank 0 writes none. */
    hsize_t added = rows - ext0, writers = nranks > 1 ? (hsize_t)nranks - 1 : 1;
    hsize_t me = nranks > 1 ? (hsize_t)rank - 1 : 0;
    hsize_t mine = (nranks > 1 && rank == 0) ? 0 : (added - me + writers - 1) / writers;
    write_rows(d5, 5, ext0 + me, writers, mine, H5FD_MPIO_COLLECTIVE);

    H5Dclose(d1);
    H5Dclose(d2);
    H5Dclose(d3);
    H5Dclose(d4);
    H5Dclose(d5);
    H5OK(H5Fclose(file));
}

/* Reads rows [first, first + count) (all columns) and checks them. */
static void check_rows(hid_t file, const char *name, int ds, hsize_t first, hsize_t count,
                       H5FD_mpio_xfer_t mode) {
    hid_t dset = H5Dopen2(file, name, H5P_DEFAULT);
    H5OK(dset);
    hid_t fspace = H5Dget_space(dset);
    hsize_t dims[2] = {0, 0};
    H5Sget_simple_extent_dims(fspace, dims, NULL);
    check(dims[0] == total_rows() && dims[1] == COLS, name, (long)dims[0], (long)total_rows());
    hsize_t start[2] = {first, 0}, cnt[2] = {count, COLS};
    hsize_t mdims[2] = {count ? count : 1, COLS};
    hid_t mspace = H5Screate_simple(2, mdims, NULL);
    if (count) {
        H5OK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, cnt, NULL));
    } else {
        H5OK(H5Sselect_none(fspace));
        H5OK(H5Sselect_none(mspace));
    }
    int *buf = calloc((count ? count : 1) * COLS, sizeof(int));
    hid_t dxpl = make_dxpl(mode);
    H5OK(H5Dread(dset, H5T_NATIVE_INT, mspace, fspace, dxpl, buf));
    for (hsize_t r = 0; r < count; r++)
        for (hsize_t c = 0; c < COLS; c++) {
            int want = value_at(ds, first + r, c);
            check(buf[r * COLS + c] == want, name, buf[r * COLS + c], want);
        }
    free(buf);
    H5Pclose(dxpl);
    H5Sclose(mspace);
    H5Sclose(fspace);
    H5Dclose(dset);
}

/* Reads the scalar double attribute attr_name of the dataset dset_name. */
static herr_t read_double_attr(hid_t file, const char *dset_name, const char *attr_name,
                               double *out) {
    hid_t attr = H5Aopen_by_name(file, dset_name, attr_name, H5P_DEFAULT, H5P_DEFAULT);
    if (attr < 0)
        return -1;
    herr_t rc = H5Aread(attr, H5T_NATIVE_DOUBLE, out);
    H5Aclose(attr);
    return rc;
}

static void check_attributes(hid_t file) {
    char text[TEXT_CAP] = {0};
    hid_t attr = H5Aopen(file, "title", H5P_DEFAULT);
    hid_t type = H5Aget_type(attr);
    check(H5Tget_size(type) == strlen(title_text) + 1, "title size", (long)H5Tget_size(type),
          (long)strlen(title_text) + 1);
    if (H5Tget_size(type) <= sizeof text)
        H5OK(H5Aread(attr, type, text));
    check(strcmp(text, title_text) == 0, "title text", 0, 0);
    H5Tclose(type);
    H5Aclose(attr);

    int layout[2] = {0, 0};
    attr = H5Aopen(file, "layout", H5P_DEFAULT);
    H5OK(H5Aread(attr, H5T_NATIVE_INT, layout));
    check(layout[0] == nranks && layout[1] == ROWS_PER_RANK, "layout", layout[0], nranks);
    H5Aclose(attr);

    double scale = 0;
    H5OK(read_double_attr(file, "contig_indep", "scale", &scale));
    check(scale == 0.25, "scale attribute", (long)(scale * 100), 25);
    double offset = 0;
    H5OK(read_double_attr(file, "chunked_coll", "offset", &offset));
    check(offset == -1.5, "offset attribute", (long)(offset * 100), -150);
}

static void read_phase(const char *path) {
    hid_t file = open_file(path, 0);
    check_attributes(file);
    hsize_t rows = total_rows();
    hsize_t other = (hsize_t)((rank + 1) % nranks) * ROWS_PER_RANK;
    static const char *const names[] = {"contig_indep", "contig_coll", "chunked_indep",
                                        "chunked_coll", "extended"};
    for (int i = 0; i < 5; i++) {
        /* Another rank's block, independently; everything, collectively;
         * then collectively with only the even ranks selecting anything. */
        check_rows(file, names[i], i + 1, other, ROWS_PER_RANK, H5FD_MPIO_INDEPENDENT);
        check_rows(file, names[i], i + 1, 0, rows, H5FD_MPIO_COLLECTIVE);
        check_rows(file, names[i], i + 1, other, rank % 2 == 0 ? ROWS_PER_RANK : 0,
                   H5FD_MPIO_COLLECTIVE);
    }
    H5OK(H5Fclose(file));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char path[PATH_CAP];
    snprintf(path, sizeof path, "%s/hdf5_client.h5", argv[1]);
    if (rank == 0)
        printf("backend: %s\n", dlsym(RTLD_DEFAULT, "pario_mpiio_active") ? "pario" : "system");

    write_phase(path);
    MPI_Barrier(MPI_COMM_WORLD);
    read_phase(path);

    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("hdf5_client: %d ranks, %d failed checks\n", nranks, total);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
