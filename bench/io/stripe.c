/* stripe: user striping over target directories (seed 002), through MPI-IO.
 * One shared file, each rank its own contiguous block, written and read with
 * collective calls in transfers of 4 MiB per rank, as a checkpoint is:
 *   plain        no striping hints (the file is one plain file)
 *   fF-uU        striping_factor F over the target directories DIR/t0..t3
 *                (or $PARIO_BENCH_STRIPE_TARGETS, comma-separated, for targets
 *                on other disks or bricks), striping_unit U
 * pario stores the striped variants as F objects (its stripe driver); other
 * MPI-IOs ignore pario_stripe_targets and write one file, so they show what
 * the same calls cost unstriped. The timed region includes open and close. */
#include "iobench.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Bytes per rank when --size is not given: 64 MiB, 256 MiB over 4 ranks. */
#define STRIPE_DEFAULT_BYTES_PER_RANK (64LL << 20)
/* Bytes per rank and collective call. */
#define STRIPE_TRANSFER (4LL << 20)
/* Target directories made under --dir. */
#define STRIPE_MAX_TARGETS 4
/* Longest list of target directories. */
#define STRIPE_TARGETS_MAX (STRIPE_MAX_TARGETS * IB_PATH_MAX)

static const long long units[] = {64LL << 10, 1LL << 20};
enum { NUNITS = sizeof units / sizeof units[0] };

static long long bytes_per_rank(const ib_ctx *c) {
    long long b = c->size ? ib_parse_bytes(c->size) : STRIPE_DEFAULT_BYTES_PER_RANK;
    return b / 8 * 8;
}

/* The first `factor` targets: $PARIO_BENCH_STRIPE_TARGETS, else DIR/t0..
 * (rank 0 makes them). */
static void target_list(const ib_ctx *c, int factor, char *out, size_t cap) {
    const char *env = getenv("PARIO_BENCH_STRIPE_TARGETS");
    out[0] = '\0';
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        return;
    }
    for (int i = 0; i < factor; i++) {
        char dir[IB_PATH_MAX + 16];
        snprintf(dir, sizeof dir, "%s/t%d", c->dir, i);
        if (c->rank == 0 && mkdir(dir, 0755) != 0 && errno != EEXIST)
            fprintf(stderr, "stripe: cannot make %s\n", dir);
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s%s", i ? "," : "", dir);
    }
    ib_mpi_check(MPI_Barrier(c->comm), "MPI_Barrier");
}

/* The variant's hints: none for plain, else factor, unit and targets. */
static MPI_Info variant_info(const ib_ctx *c, const ib_variant *v) {
    if (v->param < 0)
        return MPI_INFO_NULL;
    static char targets[STRIPE_TARGETS_MAX], factor[16], unit[32];
    int f = v->param / NUNITS + 1;
    snprintf(factor, sizeof factor, "%d", f);
    snprintf(unit, sizeof unit, "%lld", units[v->param % NUNITS]);
    target_list(c, f, targets, sizeof targets);
    const char *kv[] = {"striping_factor", factor, "striping_unit", unit, "pario_stripe_targets",
                        targets,           NULL};
    return ib_info(kv);
}

/* Collective transfers of this rank's block, STRIPE_TRANSFER bytes a call. */
static void transfer(MPI_File fh, char *buf, long long len, long long base, int write) {
    for (long long off = 0; off < len; off += STRIPE_TRANSFER) {
        int n = (int)(len - off < STRIPE_TRANSFER ? len - off : STRIPE_TRANSFER);
        int rc =
            write ? MPI_File_write_at_all(fh, base + off, buf + off, n, MPI_BYTE, MPI_STATUS_IGNORE)
                  : MPI_File_read_at_all(fh, base + off, buf + off, n, MPI_BYTE, MPI_STATUS_IGNORE);
        ib_mpi_check(rc, write ? "MPI_File_write_at_all" : "MPI_File_read_at_all");
    }
}

static int stripe_write(const ib_ctx *c, const ib_variant *v, ib_timing *t) {
    long long len = bytes_per_rank(c);
    char *buf = ib_alloc((size_t)len);
    ib_fill(buf, (size_t)len, (long long)c->rank * len, c->salt);
    MPI_Info info = variant_info(c, v);
    MPI_File fh;
    double t0 = ib_start(c->comm);
    ib_mpi_check(MPI_File_open(c->comm, c->path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh),
                 "MPI_File_open");
    transfer(fh, buf, len, (long long)c->rank * len, 1);
    if (c->mode == IB_DURABLE)
        ib_mpi_check(MPI_File_sync(fh), "MPI_File_sync");
    ib_mpi_check(MPI_File_close(&fh), "MPI_File_close");
    t->seconds = MPI_Wtime() - t0;
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    free(buf);
    return MPI_SUCCESS;
}

static int stripe_read(const ib_ctx *c, const ib_variant *v, ib_timing *t) {
    (void)v;
    long long len = bytes_per_rank(c);
    char *buf = ib_alloc((size_t)len);
    memset(buf, 0, (size_t)len);
    MPI_File fh;
    double t0 = ib_start(c->comm);
    ib_mpi_check(MPI_File_open(c->comm, c->path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                 "MPI_File_open");
    ib_note_file(c, fh);
    transfer(fh, buf, len, (long long)c->rank * len, 0);
    ib_mpi_check(MPI_File_close(&fh), "MPI_File_close");
    t->seconds = MPI_Wtime() - t0;
    t->bad = ib_check(buf, (size_t)len, (long long)c->rank * len, c->salt);
    free(buf);
    return MPI_SUCCESS;
}

static int stripe_setup(const ib_ctx *c, ib_variant *vars, int max_vars, int *nvars) {
    int n = 0;
    if (bytes_per_rank(c) < 8 || max_vars < 1 + STRIPE_MAX_TARGETS * NUNITS)
        return -1;
    for (int p = -1; p < STRIPE_MAX_TARGETS * NUNITS; p++) {
        ib_variant *v = &vars[n++];
        if (p < 0)
            snprintf(v->name, sizeof v->name, "plain");
        else
            snprintf(v->name, sizeof v->name, "f%d-u%lldk", p / NUNITS + 1,
                     units[p % NUNITS] >> 10);
        v->param = p;
        v->bytes = bytes_per_rank(c) * c->nranks;
        v->write = stripe_write;
        v->read = stripe_read;
    }
    *nvars = n;
    return 0;
}

int main(int argc, char **argv) {
    return ib_main(argc, argv, "stripe", stripe_setup);
}
