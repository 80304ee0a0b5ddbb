/* coll3d: the 3-D array experiment of the MPI-IO/ROMIO seed.
 *
 * A global NX x NY x NZ array of doubles (C order) is block-distributed over a
 * process grid from MPI_Dims_create; every rank's file view is the darray type of
 * its block, its memory holds the block contiguously. Variants:
 *   indep       MPI_File_write / MPI_File_read, data sieving disabled
 *   sieve-4m    independent with data sieving, ind_wr/rd_buffer_size 4 MiB
 *   sieve-512k  ... 512 KiB
 *   sieve-64k   ... 64 KiB
 *   coll        MPI_File_write_all / MPI_File_read_all (collective buffering)
 * --size N or NXxNYxNZ sets the global array (default 320); NXxNYxNZ/PXxPYxPZ also
 * sets the process grid (PX*PY*PZ ranks), e.g. 128x256x256/1x2x2 splits the
 * fastest dimension, so a rank's contiguous pieces are NZ/PZ doubles long, as with
 * the seed's hundreds of processes (MPI_Dims_create never splits it at 4 ranks).
 * The element at global index g holds the double g + salt * 2^30, exact while
 * g < 2^30. */
#include "iobench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Global edge length when --size is not given: 320^3 doubles = 250 MiB, so that one
 * collective write takes well over 0.2 s on the 2-core development machine. */
#define COLL3D_DEFAULT_EDGE 320
/* Largest global element count: values g + salt * 2^30 stay exact in a double. */
#define COLL3D_MAX_ELEMENTS (1LL << 30)

enum coll3d_kind { KIND_INDEP, KIND_SIEVE_4M, KIND_SIEVE_512K, KIND_SIEVE_64K, KIND_COLL };

typedef struct grid {
    int gsizes[3];
    int psizes[3];
    int coords[3];
    int starts[3];
    int lsizes[3];
    long long local_count;
} grid;

static const char *const kind_names[] = {"indep", "sieve-4m", "sieve-512k", "sieve-64k", "coll"};

/* Hints per variant: ROMIO's names, which pario also reads. */
static const char *const hints_indep[] = {"romio_ds_write", "disable", "romio_ds_read", "disable",
                                          NULL};
static const char *const hints_4m[] = {"romio_ds_write",
                                       "enable",
                                       "romio_ds_read",
                                       "enable",
                                       "ind_wr_buffer_size",
                                       "4194304",
                                       "ind_rd_buffer_size",
                                       "4194304",
                                       NULL};
static const char *const hints_512k[] = {"romio_ds_write",
                                         "enable",
                                         "romio_ds_read",
                                         "enable",
                                         "ind_wr_buffer_size",
                                         "524288",
                                         "ind_rd_buffer_size",
                                         "524288",
                                         NULL};
static const char *const hints_64k[] = {"romio_ds_write",
                                        "enable",
                                        "romio_ds_read",
                                        "enable",
                                        "ind_wr_buffer_size",
                                        "65536",
                                        "ind_rd_buffer_size",
                                        "65536",
                                        NULL};
static const char *const hints_coll[] = {"romio_cb_write", "enable", "romio_cb_read", "enable",
                                         NULL};
static const char *const *const kind_hints[] = {hints_indep, hints_4m, hints_512k, hints_64k,
                                                hints_coll};

/* Parses "N", "NXxNYxNZ" or "NXxNYxNZ/PXxPYxPZ" into the edges g and the grid p
 * (all 0 when not given); returns 0 or -1. */
static int parse_edges(const char *s, int nranks, int g[3], int p[3]) {
    p[0] = p[1] = p[2] = 0;
    if (!s) {
        g[0] = g[1] = g[2] = COLL3D_DEFAULT_EDGE;
        return 0;
    }
    int n = sscanf(s, "%dx%dx%d", &g[0], &g[1], &g[2]);
    if (n == 1)
        g[1] = g[2] = g[0];
    else if (n != 3)
        return -1;
    const char *slash = strchr(s, '/');
    if (slash && (n != 3 || sscanf(slash + 1, "%dx%dx%d", &p[0], &p[1], &p[2]) != 3 || p[0] < 1 ||
                  p[1] < 1 || p[2] < 1 || p[0] * p[1] * p[2] != nranks))
        return -1;
    long long total = (long long)g[0] * g[1] * g[2];
    return (g[0] > 0 && g[1] > 0 && g[2] > 0 && total <= COLL3D_MAX_ELEMENTS) ? 0 : -1;
}

/* The rank's block of the block darray distribution over the grid p (from
 * MPI_Dims_create where p is all 0). */
static void compute_grid(const ib_ctx *c, const int g[3], const int p[3], grid *gr) {
    memset(gr, 0, sizeof(*gr));
    memcpy(gr->gsizes, g, sizeof(gr->gsizes));
    memcpy(gr->psizes, p, sizeof(gr->psizes));
    MPI_Dims_create(c->nranks, 3, gr->psizes);
    int rest = c->rank;
    gr->local_count = 1;
    for (int d = 2; d >= 0; d--) {
        gr->coords[d] = rest % gr->psizes[d];
        rest /= gr->psizes[d];
    }
    for (int d = 0; d < 3; d++) {
        int block = (g[d] + gr->psizes[d] - 1) / gr->psizes[d];
        int start = gr->coords[d] * block;
        int len = g[d] - start < block ? g[d] - start : block;
        gr->starts[d] = start;
        gr->lsizes[d] = len > 0 ? len : 0;
        gr->local_count *= gr->lsizes[d];
    }
}

static MPI_Datatype make_filetype(const ib_ctx *c, const grid *gr) {
    int distribs[3] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
    int dargs[3] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG};
    MPI_Datatype t;
    ib_mpi_check(MPI_Type_create_darray(c->nranks, c->rank, 3, gr->gsizes, distribs, dargs,
                                        (int *)gr->psizes, MPI_ORDER_C, MPI_DOUBLE, &t),
                 "MPI_Type_create_darray");
    ib_mpi_check(MPI_Type_commit(&t), "MPI_Type_commit");
    return t;
}

static double element_value(long long g, uint64_t salt) {
    return (double)g + (double)salt * (double)COLL3D_MAX_ELEMENTS;
}

/* Global index of the first element of local row (i, j). */
static long long row_start(const grid *gr, int i, int j) {
    long long gi = gr->starts[0] + i, gj = gr->starts[1] + j;
    return (gi * gr->gsizes[1] + gj) * gr->gsizes[2] + gr->starts[2];
}

/* Stores the pattern value of every element of the local block, in C order. */
static void fill_block(const grid *gr, double *a, uint64_t salt) {
    long long l = 0;
    for (int i = 0; i < gr->lsizes[0]; i++)
        for (int j = 0; j < gr->lsizes[1]; j++) {
            long long row = row_start(gr, i, j);
            for (int k = 0; k < gr->lsizes[2]; k++)
                a[l++] = element_value(row + k, salt);
        }
}

/* Counts local elements that differ from the pattern. */
static long long check_block(const grid *gr, const double *a, uint64_t salt) {
    long long l = 0, bad = 0;
    for (int i = 0; i < gr->lsizes[0]; i++)
        for (int j = 0; j < gr->lsizes[1]; j++) {
            long long row = row_start(gr, i, j);
            for (int k = 0; k < gr->lsizes[2]; k++)
                bad += a[l++] != element_value(row + k, salt);
        }
    return bad;
}

static int grid_of(const ib_ctx *c, grid *gr) {
    int g[3], p[3];
    if (parse_edges(c->size, c->nranks, g, p) != 0)
        return -1;
    compute_grid(c, g, p, gr);
    return 0;
}

/* Opens the file with the variant's hints and the darray view. */
static MPI_File open_with_view(const ib_ctx *c, const ib_variant *v, const grid *gr, int amode,
                               MPI_Datatype *ftype) {
    MPI_Info info = ib_info(kind_hints[v->param]);
    MPI_File fh;
    ib_mpi_check(MPI_File_open(c->comm, c->path, amode, info, &fh), "MPI_File_open");
    ib_note_file(c, fh);
    *ftype = make_filetype(c, gr);
    ib_mpi_check(MPI_File_set_view(fh, 0, MPI_DOUBLE, *ftype, "native", info), "MPI_File_set_view");
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    return fh;
}

static int coll3d_write(const ib_ctx *c, const ib_variant *v, ib_timing *t) {
    grid gr;
    grid_of(c, &gr);
    double *a = ib_alloc((size_t)gr.local_count * sizeof(double));
    fill_block(&gr, a, c->salt);
    MPI_Datatype ftype;
    MPI_File fh = open_with_view(c, v, &gr, MPI_MODE_CREATE | MPI_MODE_WRONLY, &ftype);
    int count = (int)gr.local_count;
    double t0 = ib_start(c->comm);
    if (v->param == KIND_COLL)
        ib_mpi_check(MPI_File_write_all(fh, a, count, MPI_DOUBLE, MPI_STATUS_IGNORE),
                     "MPI_File_write_all");
    else
        ib_mpi_check(MPI_File_write(fh, a, count, MPI_DOUBLE, MPI_STATUS_IGNORE), "MPI_File_write");
    if (c->mode == IB_DURABLE)
        ib_mpi_check(MPI_File_sync(fh), "MPI_File_sync");
    ib_mpi_check(MPI_File_close(&fh), "MPI_File_close"); /* writes may end at close */
    t->seconds = MPI_Wtime() - t0;
    MPI_Type_free(&ftype);
    free(a);
    return MPI_SUCCESS;
}

static int coll3d_read(const ib_ctx *c, const ib_variant *v, ib_timing *t) {
    grid gr;
    grid_of(c, &gr);
    double *a = ib_alloc((size_t)gr.local_count * sizeof(double));
    memset(a, 0, (size_t)gr.local_count * sizeof(double));
    MPI_Datatype ftype;
    MPI_File fh = open_with_view(c, v, &gr, MPI_MODE_RDONLY, &ftype);
    int count = (int)gr.local_count;
    double t0 = ib_start(c->comm);
    if (v->param == KIND_COLL)
        ib_mpi_check(MPI_File_read_all(fh, a, count, MPI_DOUBLE, MPI_STATUS_IGNORE),
                     "MPI_File_read_all");
    else
        ib_mpi_check(MPI_File_read(fh, a, count, MPI_DOUBLE, MPI_STATUS_IGNORE), "MPI_File_read");
    t->seconds = MPI_Wtime() - t0;
    ib_mpi_check(MPI_File_close(&fh), "MPI_File_close");
    MPI_Type_free(&ftype);
    t->bad = check_block(&gr, a, c->salt);
    free(a);
    return MPI_SUCCESS;
}

static int coll3d_setup(const ib_ctx *c, ib_variant *vars, int max_vars, int *nvars) {
    grid gr;
    if (grid_of(c, &gr) != 0)
        return -1;
    long long bytes = (long long)gr.gsizes[0] * gr.gsizes[1] * gr.gsizes[2] * 8;
    int n = (int)(sizeof(kind_names) / sizeof(kind_names[0]));
    for (int i = 0; i < n && i < max_vars; i++) {
        snprintf(vars[i].name, sizeof(vars[i].name), "%s", kind_names[i]);
        vars[i].bytes = bytes;
        vars[i].param = i;
        vars[i].write = coll3d_write;
        vars[i].read = coll3d_read;
    }
    *nvars = n;
    return 0;
}

int main(int argc, char **argv) {
    return ib_main(argc, argv, "coll3d", coll3d_setup);
}
