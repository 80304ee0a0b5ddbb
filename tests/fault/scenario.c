/* Fault-injection scenarios (tests/fault/README.md), MPI API only: run with
 * libpario-mpiio preloaded and PARIO_FAULT set by run_fault.py.
 *
 *   fault_scenario NAME DIR     run scenario NAME on DIR/file.dat
 *   fault_scenario --list       print the scenarios
 *
 * Rank 0 first fills the file with a known pattern through plain POSIX (no
 * storage call of pario, so nothing of it is counted or fails). Then every
 * rank runs the scenario's steps on one file: collective or independent
 * writes and reads at explicit offsets through one view, syncs, set_size,
 * preallocate (a striped scenario's file is a layout record and its objects,
 * made the same way). Every byte a step writes is pattern(step, file offset), so
 * the file's expected image follows from the steps alone. Each rank
 * records, per step, the error class and message it got (DIR/result.RANK,
 * flushed line by line, so a hung run still shows where each rank was);
 * reads are compared with the image the steps so far give, and a read that
 * succeeds with other bytes is recorded as bad. Rank 0 writes the plan
 * (DIR/plan): each step's kind, how its failures are reported (agreed:
 * the same on every rank; deferred: on the failing rank at once, on every
 * rank by the next sync or close; local: on the calling rank only) and the
 * file extents each rank writes. The driver judges the run from these.
 *
 * After its first error (or wrong read) a rank issues no more reads or
 * writes, as a program would; the collective steps without data (sync,
 * set_size, preallocate) and the close it still makes, like every rank.
 * Ranks that learn of a failure at different steps therefore make
 * different calls, which on a path that needs messages may hang: that is
 * one of the failures the driver looks for (bounded by its timeout). A
 * deferred step is followed by a sync before any collective call that
 * sends messages: only there must the other ranks know of its failure. */
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_STEPS 16
#define MAX_HINTS 8
/* Bytes past the last one any step writes, never written: they must keep
 * the prefill pattern. */
#define TAIL 1024

enum kind { WRITE_ALL, READ_ALL, WRITE_AT, READ_AT, SYNC, SET_SIZE, PREALLOCATE, END };
static const char *const kind_names[] = {"write_at_all", "read_at_all", "write_at",   "read_at",
                                         "sync",         "set_size",    "preallocate"};

/* How a failed storage call of a step is reported (see the top). */
enum mode { AGREED, DEFERRED, LOCAL };
static const char *const mode_names[] = {"agreed", "deferred", "local"};

/* One step: each rank moves len bytes from byte pos of its view; for
 * set_size and preallocate, len is added to the prefilled size. */
typedef struct step {
    enum kind kind;
    int64_t pos, len;
} step;

typedef struct scenario {
    const char *name, *what;
    int64_t disp;   /* the view's displacement */
    int64_t block;  /* > 0: the ranks' blocks of this size interleave in the file */
    int64_t region; /* block 0: each rank's view is one region of this size */
    enum mode coll_write, coll_read;
    const char *hints[2 * MAX_HINTS + 1]; /* key, value, ..., NULL */
    step steps[MAX_STEPS];                /* ended by END */
} scenario;

#define KB ((int64_t)1024)

static const scenario scenarios[] = {
    {"kept",
     "collective writes of contiguous views on one node, kept behind; a 64 KiB well-formed "
     "part written at once by its rank",
     4096,
     0,
     128 * KB,
     DEFERRED,
     DEFERRED,
     {NULL},
     {{WRITE_ALL, 0, 1000},
      {WRITE_ALL, 1000, 3000},
      {SYNC, 0, 0},
      {WRITE_ALL, 4096, 64 * KB},
      {WRITE_ALL, 200, 500},
      {SYNC, 0, 0},
      {WRITE_ALL, 70000, 5000},
      {SYNC, 0, 0},
      {END, 0, 0}}},
    {"keptsmall",
     "kept collective writes overflowing small slices (cb_buffer_size=8192: 1 KiB halves, "
     "3 calls each), so ranks write each other's pieces during their calls, 10 calls between "
     "syncs",
     4096,
     0,
     16 * KB,
     DEFERRED,
     DEFERRED,
     {"cb_buffer_size", "8192", NULL},
     {{WRITE_ALL, 0, 300},
      {WRITE_ALL, 300, 300},
      {WRITE_ALL, 600, 300},
      {WRITE_ALL, 900, 300},
      {WRITE_ALL, 1200, 300},
      {WRITE_ALL, 1500, 300},
      {WRITE_ALL, 1800, 300},
      {WRITE_ALL, 2100, 300},
      {WRITE_ALL, 2400, 300},
      {WRITE_ALL, 2700, 300},
      {SYNC, 0, 0},
      {WRITE_ALL, 3000, 300},
      {WRITE_ALL, 3300, 300},
      {WRITE_ALL, 3600, 300},
      {SYNC, 0, 0},
      {END, 0, 0}}},
    {"funnel",
     "collective writes of views with holes (512 B blocks): small parts through the funnel "
     "(rank 0 writes all), an 80 KiB part through two-phase, half blocks (parts apart: each "
     "rank its own where write calls are request-bound)",
     256,
     512,
     0,
     AGREED,
     AGREED,
     {NULL},
     {{WRITE_ALL, 0, 2048},
      {WRITE_ALL, 2048, 1024},
      {SYNC, 0, 0},
      {WRITE_ALL, 3072, 80 * KB},
      {WRITE_ALL, 90 * KB, 256},
      {WRITE_ALL, 1024, 512},
      {SYNC, 0, 0},
      {END, 0, 0}}},
    {"twophase",
     "two-phase writes and reads forced (romio_cb_write/read=enable, cb_buffer_size=4096: "
     "several cycles, reads pipelined too), 1 KiB blocks interleaved",
     256,
     1024,
     0,
     AGREED,
     AGREED,
     {"romio_cb_write", "enable", "romio_cb_read", "enable", "cb_buffer_size", "4096",
      "pario_cb_read_pipeline", "enable", NULL},
     {{WRITE_ALL, 0, 4096},
      {WRITE_ALL, 4096, 2048},
      {SYNC, 0, 0},
      {SYNC, 0, 0},
      {READ_ALL, 0, 6144},
      {WRITE_ALL, 1024, 2048},
      {SYNC, 0, 0},
      {SYNC, 0, 0},
      {READ_ALL, 0, 6144},
      {END, 0, 0}}},
    {"twophase1",
     "two-phase forced on one node with one aggregator (cb_nodes=1, cb_buffer_size=4096), "
     "reads in turn (not pipelined), 512 B blocks interleaved",
     256,
     512,
     0,
     AGREED,
     AGREED,
     {"romio_cb_write", "enable", "romio_cb_read", "enable", "cb_buffer_size", "4096", "cb_nodes",
      "1", "pario_cb_read_pipeline", "disable", NULL},
     {{WRITE_ALL, 0, 2048},
      {WRITE_ALL, 2048, 1024},
      {SYNC, 0, 0},
      {SYNC, 0, 0},
      {READ_ALL, 0, 3072},
      {WRITE_ALL, 512, 1024},
      {SYNC, 0, 0},
      {END, 0, 0}}},
    {"settled",
     "two-phase reads forced on contiguous views over two nodes, each in one cycle "
     "(romio_cb_read=enable, cb_nodes=2), plain calls: quick reads, no counts, each "
     "aggregator's outcome beside its data",
     256,
     0,
     16 * KB,
     AGREED,
     AGREED,
     {"romio_cb_write", "enable", "romio_cb_read", "enable", "cb_nodes", "2", NULL},
     {{WRITE_ALL, 0, 6000},
      {SYNC, 0, 0},
      {SYNC, 0, 0},
      {READ_ALL, 0, 6000},
      {READ_ALL, 1000, 3000},
      {WRITE_ALL, 6000, 2000},
      {SYNC, 0, 0},
      {SYNC, 0, 0},
      {READ_ALL, 0, 8000},
      {END, 0, 0}}},
    {"stripe",
     "two-phase writes and reads forced on a file striped over 2 targets with 1000-byte "
     "units, 4 aggregators (two per target, each reaching its target only), "
     "cb_buffer_size=4096 (windows of two stripes), 700 B blocks interleaved",
     300,
     700,
     0,
     AGREED,
     AGREED,
     {"romio_cb_write", "enable", "romio_cb_read", "enable", "cb_buffer_size", "4096", "cb_nodes",
      "4", "cb_config_list", "*:*", "pario_cb_read_pipeline", "enable", NULL},
     {{WRITE_ALL, 0, 4200},
      {WRITE_ALL, 4200, 2100},
      {SYNC, 0, 0},
      {SYNC, 0, 0},
      {READ_ALL, 0, 6300},
      {WRITE_ALL, 700, 2100},
      {SYNC, 0, 0},
      {SYNC, 0, 0},
      {READ_ALL, 0, 6300},
      {END, 0, 0}}},
    {"nodes",
     "contiguous views over several nodes (not kept): a small collective write through the "
     "funnel, a large one and collective reads each rank's own access with agreed outcome",
     256,
     0,
     96 * KB,
     AGREED,
     AGREED,
     {NULL},
     {{WRITE_ALL, 0, 1000},
      {WRITE_ALL, 1000, 70000},
      {SYNC, 0, 0},
      {SYNC, 0, 0},
      {READ_ALL, 0, 71000},
      {READ_ALL, 1000, 5000},
      {READ_ALL, 0, 9000},
      {END, 0, 0}}},
    {"readonly",
     "a file open read-only over two nodes, contiguous views: after a collective read each "
     "rank made on its own, the next ones read ahead of the allgather (no agreement when "
     "all succeed); one whose ranges overlap goes two-phase and forgets its read ahead; "
     "then a stream of small reads (prefetched where the prefetch is on)",
     256,
     0,
     16 * KB,
     AGREED,
     AGREED,
     {NULL},
     {{READ_ALL, 0, 6000},
      {READ_ALL, 1000, 3000},
      {SYNC, 0, 0},
      {READ_ALL, 0, 9000},
      {READ_ALL, 0, 20000},
      {READ_ALL, 500, 3000},
      {READ_ALL, 4000, 2000},
      {READ_ALL, 6000, 1000},
      {READ_ALL, 7000, 1000},
      {READ_ALL, 8000, 1000},
      {READ_ALL, 9000, 1000},
      {READ_ALL, 10000, 1000},
      {SYNC, 0, 0},
      {END, 0, 0}}},
    {"ownread",
     "collective reads on one node, each rank's own (sieved) read, of 512 B blocks "
     "interleaved, written by independent sieved writes",
     256,
     512,
     0,
     AGREED,
     DEFERRED,
     {NULL},
     {{WRITE_AT, 0, 4096},
      {SYNC, 0, 0},
      {SYNC, 0, 0},
      {READ_ALL, 0, 4096},
      {READ_ALL, 1024, 2048},
      {READ_ALL, 0, 512},
      {END, 0, 0}}},
    {"sieved",
     "collective writes on one node of 16 B blocks interleaved, over 64 per part (not the "
     "funnel): each rank's sieved write with agreed outcome; collective reads each rank's own",
     256,
     16,
     0,
     AGREED,
     DEFERRED,
     {NULL},
     {{WRITE_ALL, 0, 2048},
      {WRITE_ALL, 2048, 2048},
      {SYNC, 0, 0},
      {SYNC, 0, 0},
      {READ_ALL, 0, 4096},
      {SYNC, 0, 0},
      {WRITE_ALL, 512, 1536},
      {SYNC, 0, 0},
      {END, 0, 0}}},
    {"indep",
     "independent contiguous writes and reads, set_size to the same size, a growing "
     "preallocate",
     256,
     0,
     64 * KB,
     AGREED,
     AGREED,
     {NULL},
     {{WRITE_AT, 0, 4000},
      {WRITE_AT, 4000, 40000},
      {SYNC, 0, 0},
      {SYNC, 0, 0},
      {READ_AT, 0, 44000},
      {SET_SIZE, 0, 0},
      {WRITE_AT, 100, 300},
      {SYNC, 0, 0},
      {PREALLOCATE, 0, 8192},
      {SYNC, 0, 0},
      {END, 0, 0}}},
    {"indepsieve",
     "independent sieved writes and reads of 64 B blocks interleaved",
     256,
     64,
     0,
     AGREED,
     AGREED,
     {NULL},
     {{WRITE_AT, 0, 2048},
      {WRITE_AT, 2048, 1024},
      {SYNC, 0, 0},
      {SYNC, 0, 0},
      {READ_AT, 0, 3072},
      {WRITE_AT, 64, 128},
      {SYNC, 0, 0},
      {END, 0, 0}}},
    {"indepspan",
     "independent sieved writes and reads of 64 B blocks interleaved in windows of 512 B, "
     "each write under one lock over its span (pario_lock_span=enable, as off local disks)",
     256,
     64,
     0,
     AGREED,
     AGREED,
     {"pario_lock_span", "enable", "ind_wr_buffer_size", "512", "ind_rd_buffer_size", "512", NULL},
     {{WRITE_AT, 0, 2048},
      {WRITE_AT, 2048, 1024},
      {SYNC, 0, 0},
      {READ_AT, 0, 3072},
      {WRITE_AT, 64, 128},
      {WRITE_AT, 1024, 2048},
      {SYNC, 0, 0},
      {END, 0, 0}}},
};
#define NSCENARIOS ((int)(sizeof scenarios / sizeof scenarios[0]))

/* Scenarios whose file is striped: over `stripes` objects DIR/0/o, DIR/1/o,
 * ... (short names: an error message names the file and the object), with
 * this unit. */
static const struct striping {
    const char *name;
    int stripes;
    int64_t unit;
} stripings[] = {{"stripe", 2, 1000}};

/* The striping of scenario sc, or NULL for a plain file. */
static const struct striping *striping_of(const scenario *sc) {
    for (size_t i = 0; i < sizeof stripings / sizeof stripings[0]; i++)
        if (strcmp(stripings[i].name, sc->name) == 0)
            return &stripings[i];
    return NULL;
}

/* The byte that step writes at file offset off (step 0: the prefill). The
 * driver computes the same (run_fault.py: pattern). */
static unsigned char pattern(int step, int64_t off) {
    return (unsigned char)((off * 31 + step * 97 + 11) % 251);
}

static int rank, nranks;

/* File offset of byte k of rank r's view. */
static int64_t file_offset(const scenario *sc, int r, int64_t k) {
    if (sc->block == 0)
        return sc->disp + r * sc->region + k;
    return sc->disp + (k / sc->block) * nranks * sc->block + r * sc->block + k % sc->block;
}

/* Length of the run of bytes of rank r's view from byte k that is
 * contiguous in the file, at most left. */
static int64_t run_length(const scenario *sc, int64_t k, int64_t left) {
    int64_t run = sc->block == 0 ? left : sc->block - k % sc->block;
    return run < left ? run : left;
}

static int is_write(enum kind k) {
    return k == WRITE_ALL || k == WRITE_AT;
}

static int is_read(enum kind k) {
    return k == READ_ALL || k == READ_AT;
}

static enum mode mode_of(const scenario *sc, enum kind k) {
    if (k == WRITE_ALL)
        return sc->coll_write;
    if (k == READ_ALL)
        return sc->coll_read;
    return k == WRITE_AT || k == READ_AT ? LOCAL : AGREED;
}

/* Bytes the prefill covers: past every byte any step touches, plus TAIL. */
static int64_t file_size_of(const scenario *sc) {
    int64_t end = 0;
    for (const step *s = sc->steps; s->kind != END; s++)
        for (int r = 0; r < nranks && (is_write(s->kind) || is_read(s->kind)); r++) {
            int64_t last = file_offset(sc, r, s->pos + s->len - 1) + 1;
            end = last > end ? last : end;
        }
    return end + TAIL;
}

/* ---- the plan and the records ------------------------------------------------------ */

static void write_plan(const scenario *sc, const char *dir, int64_t size) {
    char path[4096];
    snprintf(path, sizeof path, "%s/plan", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fprintf(f, "ranks %d\nsize %lld\n", nranks, (long long)size);
    int i = 1;
    for (const step *s = sc->steps; s->kind != END; s++, i++) {
        fprintf(f, "step %d %s %s\n", i, kind_names[s->kind], mode_names[mode_of(sc, s->kind)]);
        if (s->kind == SET_SIZE || s->kind == PREALLOCATE)
            fprintf(f, "resize %d %lld\n", i, (long long)(size + s->len));
        for (int r = 0; r < nranks && is_write(s->kind); r++)
            for (int64_t k = s->pos, n; k < s->pos + s->len; k += n) {
                n = run_length(sc, k, s->pos + s->len - k);
                fprintf(f, "ext %d %d %lld %lld\n", i, r, (long long)file_offset(sc, r, k),
                        (long long)n);
            }
    }
    fprintf(f, "steps %d\n", i - 1);
    fclose(f);
}

static FILE *records;

static const char *class_name(int cls) {
    static const struct {
        int cls;
        const char *name;
    } names[] = {
        {MPI_SUCCESS, "SUCCESS"},   {MPI_ERR_NO_SPACE, "NO_SPACE"}, {MPI_ERR_IO, "IO"},
        {MPI_ERR_OTHER, "OTHER"},   {MPI_ERR_QUOTA, "QUOTA"},       {MPI_ERR_ARG, "ARG"},
        {MPI_ERR_FILE, "FILE"},     {MPI_ERR_INTERN, "INTERN"},     {MPI_ERR_NO_MEM, "NO_MEM"},
        {MPI_ERR_ACCESS, "ACCESS"}, {MPI_ERR_NOT_SAME, "NOT_SAME"}, {MPI_ERR_COUNT, "COUNT"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].cls == cls)
            return names[i].name;
    return "UNKNOWN";
}

/* One record line: step, kind, status (ok, err, skip, bad), class, text. */
static void record(int i, const char *kind, const char *status, const char *cls, const char *text) {
    char clean[MPI_MAX_ERROR_STRING + 64];
    snprintf(clean, sizeof clean, "%s", text);
    for (char *c = clean; *c; c++)
        if (*c == '\t' || *c == '\n')
            *c = ' ';
    fprintf(records, "%d\t%s\t%s\t%s\t%s\n", i, kind, status, cls, clean);
    fflush(records);
}

/* Records an MPI return code; 1 when it is an error. */
static int record_rc(int i, const char *kind, int rc) {
    if (rc == MPI_SUCCESS) {
        record(i, kind, "ok", "SUCCESS", "");
        return 0;
    }
    int cls = MPI_ERR_UNKNOWN, len = 0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, msg, &len);
    record(i, kind, "err", class_name(cls), msg);
    return 1;
}

/* ---- the file ------------------------------------------------------------------------ */

/* Rank 0 writes the prefill pattern with POSIX. */
/* A striped file made with plain POSIX: the layout record at path (the
 * format of src/io/driver/stripe.h) and object i at DIR/i/o holding the
 * logical bytes of buf that RAID-0 places there. */
static int write_striped(const struct striping *sc, const char *path, const unsigned char *buf,
                         int64_t size) {
    char dir[4096], obj[4300];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    FILE *rec = fopen(path, "w");
    if (!rec)
        return 0;
    fprintf(rec, "pario-stripe-layout 1\nunit %lld\nfactor %d\n", (long long)sc->unit, sc->stripes);
    int ok = 1;
    for (int i = 0; ok && i < sc->stripes; i++) {
        snprintf(obj, sizeof obj, "%s/%d", dir, i);
        mkdir(obj, 0755);
        snprintf(obj, sizeof obj, "%s/%d/o", dir, i);
        fprintf(rec, "object %s\n", obj);
        int fd = open(obj, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ok = fd >= 0;
        for (int64_t s = i, o = 0; ok && s * sc->unit < size; s += sc->stripes, o += sc->unit) {
            int64_t at = s * sc->unit, n = size - at < sc->unit ? size - at : sc->unit;
            ok = pwrite(fd, buf + at, (size_t)n, o) == (ssize_t)n;
        }
        if (fd >= 0)
            close(fd);
    }
    return fclose(rec) == 0 && ok;
}

static int prefill(const scenario *scenario, const char *path, int64_t size) {
    const struct striping *sc = striping_of(scenario);
    int ok = 1;
    if (rank == 0) {
        unsigned char *buf = malloc((size_t)size);
        unlink(path);
        int fd = sc ? -1 : open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ok = buf && (fd >= 0 || sc);
        for (int64_t o = 0; ok && o < size; o++)
            buf[o] = pattern(0, o);
        if (sc)
            ok = ok && write_striped(sc, path, buf, size);
        else
            ok = ok && pwrite(fd, buf, (size_t)size, 0) == (ssize_t)size;
        if (fd >= 0)
            close(fd);
        free(buf);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return ok;
}

/* Scenarios whose file is opened read-only (their steps only read and sync). */
static const char *const read_only[] = {"readonly"};

static int is_read_only(const scenario *sc) {
    for (size_t i = 0; i < sizeof read_only / sizeof read_only[0]; i++)
        if (strcmp(read_only[i], sc->name) == 0)
            return 1;
    return 0;
}

static int open_file(const scenario *sc, const char *path, MPI_File *fh) {
    MPI_Info info;
    MPI_Info_create(&info);
    for (const char *const *kv = sc->hints; kv[0]; kv += 2)
        MPI_Info_set(info, kv[0], kv[1]);
    int amode = is_read_only(sc) ? MPI_MODE_RDONLY : MPI_MODE_RDWR;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, amode, info, fh);
    MPI_Info_free(&info);
    return rc;
}

static int set_view(const scenario *sc, MPI_File fh) {
    if (sc->block == 0)
        return MPI_File_set_view(fh, sc->disp + rank * sc->region, MPI_BYTE, MPI_BYTE, "native",
                                 MPI_INFO_NULL);
    MPI_Datatype one, ft;
    int len = (int)sc->block;
    MPI_Aint at = (MPI_Aint)(rank * sc->block);
    MPI_Type_create_hindexed(1, &len, &at, MPI_BYTE, &one);
    MPI_Type_create_resized(one, 0, (MPI_Aint)(nranks * sc->block), &ft);
    MPI_Type_commit(&ft);
    int rc = MPI_File_set_view(fh, sc->disp, MPI_BYTE, ft, "native", MPI_INFO_NULL);
    MPI_Type_free(&one);
    MPI_Type_free(&ft);
    return rc;
}

/* ---- steps --------------------------------------------------------------------------- */

/* The image every rank expects: the prefill, then every write so far. */
typedef struct model {
    unsigned char *image;
} model;

static void model_apply(model *m, const scenario *sc, const step *s, int i) {
    for (int r = 0; r < nranks; r++)
        for (int64_t k = s->pos; k < s->pos + s->len; k++) {
            int64_t o = file_offset(sc, r, k);
            m->image[o] = pattern(i, o);
        }
}

/* What this rank writes or expects to read in step i, byte by byte. */
static void fill_expected(const scenario *sc, const step *s, int i, const model *m,
                          unsigned char *buf) {
    for (int64_t k = 0; k < s->len; k++) {
        int64_t o = file_offset(sc, rank, s->pos + k);
        buf[k] = is_write(s->kind) ? pattern(i, o) : m->image[o];
    }
}

static int data_call(MPI_File fh, const step *s, unsigned char *buf, MPI_Status *st) {
    int n = (int)s->len;
    switch (s->kind) {
    case WRITE_ALL:
        return MPI_File_write_at_all(fh, s->pos, buf, n, MPI_BYTE, st);
    case WRITE_AT:
        return MPI_File_write_at(fh, s->pos, buf, n, MPI_BYTE, st);
    case READ_ALL:
        return MPI_File_read_at_all(fh, s->pos, buf, n, MPI_BYTE, st);
    default:
        return MPI_File_read_at(fh, s->pos, buf, n, MPI_BYTE, st);
    }
}

/* A data step; 1 when this rank saw an error (or read wrong bytes). */
static int data_step(const scenario *sc, MPI_File fh, const step *s, int i, model *m) {
    unsigned char *buf = malloc((size_t)s->len), *want = malloc((size_t)s->len);
    if (!buf || !want) {
        record(i, kind_names[s->kind], "bad", "", "the test is out of memory");
        free(buf);
        free(want);
        return 1;
    }
    fill_expected(sc, s, i, m, want);
    if (is_write(s->kind))
        memcpy(buf, want, (size_t)s->len);
    else
        memset(buf, 0xee, (size_t)s->len);
    MPI_Status st;
    int rc = data_call(fh, s, buf, &st), bad = rc != MPI_SUCCESS, count = 0;
    if (rc == MPI_SUCCESS && is_read(s->kind)) {
        MPI_Get_count(&st, MPI_BYTE, &count);
        int64_t k = 0;
        while (k < s->len && buf[k] == want[k])
            k++;
        char what[160];
        snprintf(what, sizeof what, "read %d of %lld bytes; first wrong byte at file offset %lld",
                 count, (long long)s->len,
                 k < s->len ? (long long)file_offset(sc, rank, s->pos + k) : -1LL);
        if (count != s->len || k < s->len) {
            record(i, kind_names[s->kind], "bad", "SUCCESS", what);
            bad = 1;
        }
    }
    if (!bad || rc != MPI_SUCCESS)
        record_rc(i, kind_names[s->kind], rc);
    if (is_write(s->kind))
        model_apply(m, sc, s, i);
    free(buf);
    free(want);
    return bad;
}

static int other_step(MPI_File fh, const step *s, int i, int64_t size) {
    int rc = MPI_SUCCESS;
    if (s->kind == SYNC)
        rc = MPI_File_sync(fh);
    else if (s->kind == SET_SIZE)
        rc = MPI_File_set_size(fh, size + s->len);
    else
        rc = MPI_File_preallocate(fh, size + s->len);
    return record_rc(i, kind_names[s->kind], rc);
}

/* The steps; after this rank's first error, no more reads or writes. */
static void run_steps(const scenario *sc, MPI_File fh, int64_t size, model *m) {
    int stopped = 0, i = 1;
    for (const step *s = sc->steps; s->kind != END; s++, i++) {
        int data = is_write(s->kind) || is_read(s->kind);
        if (data && stopped)
            record(i, kind_names[s->kind], "skip", "", "");
        else
            stopped |= data ? data_step(sc, fh, s, i, m) : other_step(fh, s, i, size);
    }
}

static const scenario *find(const char *name) {
    for (int i = 0; i < NSCENARIOS; i++)
        if (strcmp(scenarios[i].name, name) == 0)
            return &scenarios[i];
    return NULL;
}

static int run(const scenario *sc, const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/result.%d", dir, rank);
    records = fopen(path, "w");
    if (!records)
        return 1;
    int64_t size = file_size_of(sc);
    if (rank == 0)
        write_plan(sc, dir, size);
    snprintf(path, sizeof path, "%s/file.dat", dir);
    model m = {calloc((size_t)size, 1)};
    if (!m.image) {
        record(0, "model", "err", "", "the test is out of memory");
        fclose(records);
        return 1;
    }
    for (int64_t o = 0; o < size; o++)
        m.image[o] = pattern(0, o);
    MPI_File fh = MPI_FILE_NULL;
    int nsteps = 0;
    while (sc->steps[nsteps].kind != END)
        nsteps++;
    if (!prefill(sc, path, size)) {
        record(0, "prefill", "err", "", "cannot write the prefill pattern");
    } else if (record_rc(0, "open", open_file(sc, path, &fh)) == 0) {
        if (record_rc(0, "set_view", set_view(sc, fh)) == 0)
            run_steps(sc, fh, size, &m);
        record_rc(nsteps + 1, "close", MPI_File_close(&fh));
    }
    fprintf(records, "end\n");
    fclose(records);
    free(m.image);
    return 0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int rc = 2;
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (int i = 0; rank == 0 && i < NSCENARIOS; i++)
            printf("%-12s %s\n", scenarios[i].name, scenarios[i].what);
        rc = 0;
    } else if (argc == 3 && find(argv[1])) {
        rc = run(find(argv[1]), argv[2]);
    } else if (rank == 0) {
        fprintf(stderr, "usage: fault_scenario NAME DIR | --list\n");
    }
    MPI_Finalize();
    return rc;
}
