/* meta: what the metadata path of MPI-IO costs, per call (seed 001's
 * task farms open, access and close files at start-up; HDF5 and PnetCDF
 * programs open, re-open and query files often). Uses only the MPI API, so
 * it runs on pario (preloaded), OMPIO and ROMIO alike.
 *
 *   io_meta --dir D [--iters N] [--hints k=v,...]
 *
 * Each case runs N times after one untimed round; a barrier starts the
 * timing and the figure is the slowest rank's mean microseconds per round:
 *   open_close_own     MPI_COMM_SELF open + close of the rank's own file
 *   open_write_own     the same with 64 bytes written (write_at) between
 *   open_close_shared  open + close of one file on MPI_COMM_WORLD
 *   open_write_shared  the same with each rank's 64 bytes (write_at) between
 *   set_view           set_view to a rank's 64-byte slot, alternately two
 *                      displacements (a new view each time)
 *   get_size           get_size on every rank
 *   sync_clean         sync of a file nothing was written to since the last
 *
 * Output lines: RESULT {"case": ..., "ranks": n, "us": t}. Every written
 * file is checked at the end (rank 0 reads it back); a mismatch exits 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Bytes each rank writes in the write cases: HDF5's superblock and small headers are this size. */
#define META_BYTES 64
#define META_DEFAULT_ITERS 200

typedef struct meta_ctx {
    int rank, nranks, iters;
    char dir[3072];
    MPI_Info info;
} meta_ctx;

static void check(int rc, const char *what) {
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "io_meta: %s failed: %s\n", what, msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void report(const meta_ctx *c, const char *name, double seconds) {
    double worst = 0;
    MPI_Reduce(&seconds, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (c->rank == 0)
        printf("RESULT {\"case\": \"%s\", \"ranks\": %d, \"us\": %.3f}\n", name, c->nranks,
               worst / c->iters * 1e6);
}

static void path_of(const meta_ctx *c, const char *name, int own, char *out, size_t len) {
    if (own)
        snprintf(out, len, "%s/%s.%d", c->dir, name, c->rank);
    else
        snprintf(out, len, "%s/%s", c->dir, name);
}

/* One round of open (+ write) + close on comm. */
static void open_round(const meta_ctx *c, MPI_Comm comm, const char *path, int write, int own) {
    MPI_File fh;
    unsigned char buf[META_BYTES];
    check(MPI_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_RDWR, c->info, &fh), "open");
    if (write) {
        memset(buf, (unsigned char)(c->rank + 1), sizeof buf);
        MPI_Offset at = own ? 0 : (MPI_Offset)c->rank * META_BYTES;
        check(MPI_File_write_at(fh, at, buf, META_BYTES, MPI_BYTE, MPI_STATUS_IGNORE), "write_at");
    }
    check(MPI_File_close(&fh), "close");
}

static double time_open_case(const meta_ctx *c, const char *name, int write, int own) {
    char path[3200];
    path_of(c, name, own, path, sizeof path);
    MPI_Comm comm = own ? MPI_COMM_SELF : MPI_COMM_WORLD;
    open_round(c, comm, path, write, own); /* untimed: creates the file */
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < c->iters; i++)
        open_round(c, comm, path, write, own);
    return MPI_Wtime() - t0;
}

/* Rank 0 checks each rank's bytes of a write case's file (own: its file). */
static int check_written(const meta_ctx *c, const char *name, int own) {
    int bad = 0;
    char path[3200];
    path_of(c, name, own, path, sizeof path);
    unsigned char buf[META_BYTES];
    FILE *f = fopen(path, "rb");
    long at = own ? 0 : (long)c->rank * META_BYTES;
    if (!f || fseek(f, at, SEEK_SET) != 0 || fread(buf, 1, sizeof buf, f) != sizeof buf)
        bad = 1;
    for (int i = 0; !bad && i < META_BYTES; i++)
        bad = buf[i] != (unsigned char)(c->rank + 1);
    if (f)
        fclose(f);
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any && c->rank == 0)
        fprintf(stderr, "VERIFY-FAIL io_meta: %s holds wrong bytes\n", name);
    return any;
}

typedef enum { FILE_SET_VIEW, FILE_GET_SIZE, FILE_SYNC } file_case;

static void file_call(const meta_ctx *c, MPI_File fh, file_case k, int i) {
    MPI_Offset size = 0;
    if (k == FILE_SET_VIEW) {
        MPI_Offset disp = ((MPI_Offset)(i & 1) * c->nranks + c->rank) * META_BYTES;
        check(MPI_File_set_view(fh, disp, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), "set_view");
    } else if (k == FILE_GET_SIZE) {
        check(MPI_File_get_size(fh, &size), "get_size");
    } else {
        check(MPI_File_sync(fh), "sync");
    }
}

static double time_file_case(const meta_ctx *c, const char *name, file_case k) {
    char path[3200];
    path_of(c, name, 0, path, sizeof path);
    MPI_File fh;
    check(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, c->info, &fh),
          "open");
    file_call(c, fh, k, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < c->iters; i++)
        file_call(c, fh, k, i + 1);
    double t = MPI_Wtime() - t0;
    check(MPI_File_close(&fh), "close");
    return t;
}

static void parse_hints(meta_ctx *c, const char *list) {
    char *copy = strdup(list), *save = NULL;
    for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (eq) {
            *eq = '\0';
            MPI_Info_set(c->info, kv, eq + 1);
        }
    }
    free(copy);
}

static void parse_args(meta_ctx *c, int argc, char **argv) {
    c->iters = META_DEFAULT_ITERS;
    snprintf(c->dir, sizeof c->dir, "/tmp");
    MPI_Info_create(&c->info);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--dir"))
            snprintf(c->dir, sizeof c->dir, "%s", argv[i + 1]);
        else if (!strcmp(argv[i], "--iters"))
            c->iters = atoi(argv[i + 1]) > 0 ? atoi(argv[i + 1]) : META_DEFAULT_ITERS;
        else if (!strcmp(argv[i], "--hints"))
            parse_hints(c, argv[i + 1]);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    meta_ctx c;
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.nranks);
    parse_args(&c, argc, argv);
    report(&c, "open_close_own", time_open_case(&c, "oco", 0, 1));
    report(&c, "open_write_own", time_open_case(&c, "owo", 1, 1));
    report(&c, "open_close_shared", time_open_case(&c, "ocs", 0, 0));
    report(&c, "open_write_shared", time_open_case(&c, "ows", 1, 0));
    report(&c, "set_view", time_file_case(&c, "sv", FILE_SET_VIEW));
    report(&c, "get_size", time_file_case(&c, "gs", FILE_GET_SIZE));
    report(&c, "sync_clean", time_file_case(&c, "sc", FILE_SYNC));
    int bad = check_written(&c, "owo", 1) | check_written(&c, "ows", 0);
    MPI_Info_free(&c.info);
    MPI_Finalize();
    return bad ? 1 : 0;
}
