/* A PnetCDF application, written against PnetCDF's public API only: it knows
 * nothing of pario. It defines dimensions (one unlimited), fixed-size and
 * record variables and attributes, writes the variables with the collective
 * (ncmpi_put_vara_*_all, ncmpi_put_vars_*_all, nonblocking iput + wait_all)
 * and independent (ncmpi_begin_indep_data ... ncmpi_end_indep_data) APIs,
 * then reopens the file and verifies every value and attribute, collectively
 * and independently.
 *
 *   pnetcdf_client OUTDIR      writes OUTDIR/pnetcdf_client.nc
 *
 * It prints "backend: pario" or "backend: system" (whether the MPI_File_*
 * calls reach pario's drop-in) and exits non-zero on any failed check. */
#include <dlfcn.h>
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rows of the fixed-size variables owned by one rank. */
#define ROWS_PER_RANK 5
/* Columns of every two-dimensional variable. */
#define COLS 7
/* Records each rank writes to the record variable. */
#define RECORDS_PER_RANK 3
/* Collective buffer size hint, in bytes: smaller than one variable. */
#define CB_BUFFER_SIZE "128"
/* Longest path built here. */
#define PATH_CAP 4096
/* Capacity of the text attributes read back. */
#define TEXT_CAP 64

static const char *const title_text = "pario clients: PnetCDF";
static const char *const units_text = "m/s";

static int rank, nranks, failures;

static void check(int ok, const char *what, long a, long b) {
    if (!ok) {
        failures++;
        if (failures <= 20)
            fprintf(stderr, "rank %d: FAILED %s (%ld vs %ld)\n", rank, what, a, b);
    }
}

/* Every PnetCDF call returning an error is a failure, reported by name. */
#define NCOK(call)                                                                                 \
    do {                                                                                           \
        int nc_rc_ = (call);                                                                       \
        if (nc_rc_ != NC_NOERR) {                                                                  \
            fprintf(stderr, "rank %d: %s:%d: %s: %s\n", rank, __FILE__, __LINE__, #call,           \
                    ncmpi_strerror(nc_rc_));                                                       \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* Variable ids of the file, in definition order. */
struct vars {
    int speed;  /* float (y, x): block rows, collective */
    int ids;    /* int (y, x): strided rows, collective put_vars */
    int series; /* double (time, x): records, nonblocking collective */
    int flags;  /* short (y, x): column blocks, independent */
    int step;   /* int scalar: rank 0, independent put_var1 */
};

static float speed_at(MPI_Offset r, MPI_Offset c) {
    return (float)r * 0.5f + (float)c * 0.125f;
}
static int id_at(MPI_Offset r, MPI_Offset c) {
    return (int)(r * 1000 + c);
}
static double series_at(MPI_Offset t, MPI_Offset c) {
    return (double)t * 10.0 + (double)c / 8.0;
}
static short flag_at(MPI_Offset r, MPI_Offset c) {
    return (short)(r * 16 + c);
}

static MPI_Offset total_rows(void) {
    return (MPI_Offset)ROWS_PER_RANK * nranks;
}

static void define_file(int ncid, struct vars *v) {
    int dim_time, dim_y, dim_x;
    NCOK(ncmpi_def_dim(ncid, "time", NC_UNLIMITED, &dim_time));
    NCOK(ncmpi_def_dim(ncid, "y", total_rows(), &dim_y));
    NCOK(ncmpi_def_dim(ncid, "x", COLS, &dim_x));
    int yx[2] = {dim_y, dim_x}, tx[2] = {dim_time, dim_x};
    NCOK(ncmpi_def_var(ncid, "speed", NC_FLOAT, 2, yx, &v->speed));
    NCOK(ncmpi_def_var(ncid, "ids", NC_INT, 2, yx, &v->ids));
    NCOK(ncmpi_def_var(ncid, "series", NC_DOUBLE, 2, tx, &v->series));
    NCOK(ncmpi_def_var(ncid, "flags", NC_SHORT, 2, yx, &v->flags));
    NCOK(ncmpi_def_var(ncid, "step", NC_INT, 0, NULL, &v->step));

    int version[2] = {1, nranks};
    float range[2] = {0.0f, 100.0f};
    NCOK(ncmpi_put_att_text(ncid, NC_GLOBAL, "title", strlen(title_text), title_text));
    NCOK(ncmpi_put_att_int(ncid, NC_GLOBAL, "version", NC_INT, 2, version));
    NCOK(ncmpi_put_att_text(ncid, v->speed, "units", strlen(units_text), units_text));
    NCOK(ncmpi_put_att_float(ncid, v->speed, "valid_range", NC_FLOAT, 2, range));
    NCOK(ncmpi_enddef(ncid));
}

/* Collective: block rows of speed, rows rank, rank + nranks, ... of ids. */
static void write_collective(int ncid, const struct vars *v) {
    float speed[ROWS_PER_RANK * COLS];
    int ids[ROWS_PER_RANK * COLS];
    MPI_Offset r0 = (MPI_Offset)rank * ROWS_PER_RANK;
    for (int r = 0; r < ROWS_PER_RANK; r++)
        for (int c = 0; c < COLS; c++) {
            speed[r * COLS + c] = speed_at(r0 + r, c);
            ids[r * COLS + c] = id_at(rank + (MPI_Offset)r * nranks, c);
        }
    MPI_Offset start[2] = {r0, 0}, count[2] = {ROWS_PER_RANK, COLS};
    NCOK(ncmpi_put_vara_float_all(ncid, v->speed, start, count, speed));
    MPI_Offset sstart[2] = {rank, 0}, stride[2] = {nranks, 1};
    NCOK(ncmpi_put_vars_int_all(ncid, v->ids, sstart, count, stride, ids));
}

/* Nonblocking collective: each rank posts its records one by one (records
 * rank, rank + nranks, ...) and waits for them all at once. */
static void write_records(int ncid, const struct vars *v) {
    double rec[RECORDS_PER_RANK][COLS];
    int req[RECORDS_PER_RANK], st[RECORDS_PER_RANK];
    for (int i = 0; i < RECORDS_PER_RANK; i++) {
        MPI_Offset t = rank + (MPI_Offset)i * nranks;
        for (int c = 0; c < COLS; c++)
            rec[i][c] = series_at(t, c);
        MPI_Offset start[2] = {t, 0}, count[2] = {1, COLS};
        NCOK(ncmpi_iput_vara_double(ncid, v->series, start, count, rec[i], &req[i]));
    }
    NCOK(ncmpi_wait_all(ncid, RECORDS_PER_RANK, req, st));
    for (int i = 0; i < RECORDS_PER_RANK; i++)
        check(st[i] == NC_NOERR, "iput status", st[i], NC_NOERR);
}

/* Independent: column blocks of flags, written row by row with put_vara, and
 * the scalar step from rank 0. */
static void write_independent(int ncid, const struct vars *v) {
    NCOK(ncmpi_begin_indep_data(ncid));
    for (MPI_Offset c = rank; c < COLS; c += nranks)
        for (MPI_Offset r = 0; r < total_rows(); r++) {
            short val = flag_at(r, c);
            MPI_Offset start[2] = {r, c}, count[2] = {1, 1};
            NCOK(ncmpi_put_vara_short(ncid, v->flags, start, count, &val));
        }
    if (rank == 0) {
        int step = 42;
        MPI_Offset none[1] = {0};
        NCOK(ncmpi_put_var1_int(ncid, v->step, none, &step));
    }
    NCOK(ncmpi_end_indep_data(ncid));
}

static void write_phase(const char *path) {
    int ncid;
    struct vars v;
    /* A small collective buffer, so two-phase I/O takes several cycles. */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", CB_BUFFER_SIZE);
    NCOK(ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | NC_64BIT_DATA, info, &ncid));
    MPI_Info_free(&info);
    define_file(ncid, &v);
    write_collective(ncid, &v);
    write_records(ncid, &v);
    write_independent(ncid, &v);
    NCOK(ncmpi_sync(ncid));
    NCOK(ncmpi_close(ncid));
}

static void check_attributes(int ncid, int speed) {
    char text[TEXT_CAP] = {0};
    MPI_Offset len = 0;
    NCOK(ncmpi_inq_attlen(ncid, NC_GLOBAL, "title", &len));
    check(len == (MPI_Offset)strlen(title_text), "title length", (long)len,
          (long)strlen(title_text));
    if (len < TEXT_CAP)
        NCOK(ncmpi_get_att_text(ncid, NC_GLOBAL, "title", text));
    check(strcmp(text, title_text) == 0, "title text", 0, 0);
    int version[2] = {0, 0};
    NCOK(ncmpi_get_att_int(ncid, NC_GLOBAL, "version", version));
    check(version[0] == 1 && version[1] == nranks, "version", version[1], nranks);
    memset(text, 0, sizeof text);
    NCOK(ncmpi_get_att_text(ncid, speed, "units", text));
    check(strcmp(text, units_text) == 0, "units", 0, 0);
    float range[2] = {0, 0};
    NCOK(ncmpi_get_att_float(ncid, speed, "valid_range", range));
    check(range[0] == 0.0f && range[1] == 100.0f, "valid_range", (long)range[1], 100);
}

/* Collectively, every rank reads the whole of speed and ids. */
static void check_fixed_collective(int ncid, const struct vars *v) {
    MPI_Offset rows = total_rows();
    float *speed = malloc(sizeof(float) * (size_t)(rows * COLS));
    int *ids = malloc(sizeof(int) * (size_t)(rows * COLS));
    MPI_Offset start[2] = {0, 0}, count[2] = {rows, COLS};
    NCOK(ncmpi_get_vara_float_all(ncid, v->speed, start, count, speed));
    NCOK(ncmpi_get_vara_int_all(ncid, v->ids, start, count, ids));
    for (MPI_Offset r = 0; r < rows; r++)
        for (MPI_Offset c = 0; c < COLS; c++) {
            check(speed[r * COLS + c] == speed_at(r, c), "speed", (long)(r * COLS + c), 0);
            check(ids[r * COLS + c] == id_at(r, c), "ids", ids[r * COLS + c], id_at(r, c));
        }
    free(speed);
    free(ids);
}

/* Collectively, each rank reads the records another rank wrote. */
static void check_records(int ncid, const struct vars *v) {
    MPI_Offset nrec = 0;
    int dim_time;
    NCOK(ncmpi_inq_dimid(ncid, "time", &dim_time));
    NCOK(ncmpi_inq_dimlen(ncid, dim_time, &nrec));
    check(nrec == (MPI_Offset)RECORDS_PER_RANK * nranks, "records", (long)nrec,
          (long)RECORDS_PER_RANK * nranks);
    int other = (rank + 1) % nranks;
    for (int i = 0; i < RECORDS_PER_RANK; i++) {
        double rec[COLS];
        MPI_Offset t = other + (MPI_Offset)i * nranks;
        MPI_Offset start[2] = {t, 0}, count[2] = {1, COLS};
        NCOK(ncmpi_get_vara_double_all(ncid, v->series, start, count, rec));
        for (int c = 0; c < COLS; c++)
            check(rec[c] == series_at(t, c), "series", (long)t, c);
    }
}

/* Independently, each rank reads one row block of flags, and the scalar. */
static void check_independent(int ncid, const struct vars *v) {
    NCOK(ncmpi_begin_indep_data(ncid));
    short flags[ROWS_PER_RANK * COLS];
    MPI_Offset r0 = (MPI_Offset)((rank + 1) % nranks) * ROWS_PER_RANK;
    MPI_Offset start[2] = {r0, 0}, count[2] = {ROWS_PER_RANK, COLS};
    NCOK(ncmpi_get_vara_short(ncid, v->flags, start, count, flags));
    for (int r = 0; r < ROWS_PER_RANK; r++)
        for (int c = 0; c < COLS; c++)
            check(flags[r * COLS + c] == flag_at(r0 + r, c), "flags", flags[r * COLS + c],
                  flag_at(r0 + r, c));
    int step = 0;
    NCOK(ncmpi_get_var_int(ncid, v->step, &step));
    check(step == 42, "step", step, 42);
    NCOK(ncmpi_end_indep_data(ncid));
}

static void read_phase(const char *path) {
    int ncid;
    struct vars v;
    NCOK(ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, MPI_INFO_NULL, &ncid));
    NCOK(ncmpi_inq_varid(ncid, "speed", &v.speed));
    NCOK(ncmpi_inq_varid(ncid, "ids", &v.ids));
    NCOK(ncmpi_inq_varid(ncid, "series", &v.series));
    NCOK(ncmpi_inq_varid(ncid, "flags", &v.flags));
    NCOK(ncmpi_inq_varid(ncid, "step", &v.step));
    check_attributes(ncid, v.speed);
    check_fixed_collective(ncid, &v);
    check_records(ncid, &v);
    check_independent(ncid, &v);
    NCOK(ncmpi_close(ncid));
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
    snprintf(path, sizeof path, "%s/pnetcdf_client.nc", argv[1]);
    if (rank == 0)
        printf("backend: %s\n", dlsym(RTLD_DEFAULT, "pario_mpiio_active") ? "pario" : "system");

    write_phase(path);
    MPI_Barrier(MPI_COMM_WORLD);
    read_phase(path);

    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("pnetcdf_client: %d ranks, %d failed checks\n", nranks, total);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
