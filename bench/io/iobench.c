/* Shared driver for the I/O benchmark programs: options, the variant x mode loop,
 * timing reduction, the data pattern and its verification. See iobench.h. */
#include "iobench.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Most variants one program defines (ior has 13, noncontig 24). */
#define IB_MAX_VARIANTS 64

static const char *const mode_names[IB_NMODES] = {"cached", "durable"};

typedef struct ib_options {
    const char *dir;
    const char *size;
    const char *variants; /* comma-separated fnmatch patterns, NULL = all */
    int rep;
    int plan;
    int modes[IB_NMODES];
    long long max_calls;
} ib_options;

/* Calls per rank and variant when --max-calls is not given: keeps collective
 * per-transfer patterns short on an oversubscribed machine. */
#define IB_DEFAULT_MAX_CALLS 512

void ib_mpi_check(int rc, const char *what) {
    if (rc == MPI_SUCCESS)
        return;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "MPI-ERROR rank %d: %s: %s\n", rank, what, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 4);
}

void *ib_alloc(size_t len) {
    void *p = NULL;
    if (posix_memalign(&p, 4096, len ? len : 8) != 0) {
        fprintf(stderr, "out of memory allocating %zu bytes\n", len);
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    return p;
}

double ib_start(MPI_Comm comm) {
    sync(); /* untimed: earlier runs' writeback must not land in this region */
    ib_mpi_check(MPI_Barrier(comm), "MPI_Barrier");
    return MPI_Wtime();
}

void ib_fill(void *buf, size_t len, long long off, uint64_t salt) {
    uint64_t *w = buf;
    for (size_t i = 0; i < len / 8; i++)
        w[i] = ib_word(off + (long long)(8 * i), salt);
}

long long ib_check(const void *buf, size_t len, long long off, uint64_t salt) {
    const uint64_t *w = buf;
    long long bad = 0;
    for (size_t i = 0; i < len / 8; i++)
        bad += w[i] != ib_word(off + (long long)(8 * i), salt);
    return bad;
}

long long ib_check_fill(const void *buf, size_t len, unsigned char value) {
    const unsigned char *b = buf;
    long long bad = 0;
    for (size_t i = 0; i < len; i++)
        bad += b[i] != value;
    return bad;
}

long long ib_parse_bytes(const char *s) {
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (end == s || v < 0)
        return -1;
    switch (*end) {
    case 'k':
    case 'K':
        v <<= 10;
        end++;
        break;
    case 'm':
    case 'M':
        v <<= 20;
        end++;
        break;
    case 'g':
    case 'G':
        v <<= 30;
        end++;
        break;
    default:
        break;
    }
    return *end ? -1 : v;
}

void ib_drop_cache(const char *path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return;
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
}

MPI_Info ib_info(const char *const *kv) {
    if (!kv || !kv[0])
        return MPI_INFO_NULL;
    MPI_Info info;
    ib_mpi_check(MPI_Info_create(&info), "MPI_Info_create");
    for (; kv[0] && kv[1]; kv += 2)
        ib_mpi_check(MPI_Info_set(info, kv[0], kv[1]), "MPI_Info_set");
    return info;
}

/* Prints `s` as a JSON string. */
static void print_json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", (unsigned char)*s);
        else
            putchar(*s);
    }
    putchar('"');
}

/* Set once the info keys of a file were printed: one INFO-KEYS line per program run
 * (process-local; only rank 0 of a benchmark program touches it). */
static int info_keys_printed;

void ib_note_file(const ib_ctx *c, MPI_File fh) {
    if (c->rank != 0 || info_keys_printed)
        return;
    info_keys_printed = 1;
    MPI_Info info;
    if (MPI_File_get_info(fh, &info) != MPI_SUCCESS)
        return;
    int nkeys = 0;
    MPI_Info_get_nkeys(info, &nkeys);
    printf("INFO-KEYS {\"keys\": [");
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1];
        MPI_Info_get_nthkey(info, i, key);
        printf(i ? ", " : "");
        print_json_string(key);
    }
    printf("]}\n");
    fflush(stdout);
    MPI_Info_free(&info);
}

static void usage(const char *program) {
    fprintf(stderr,
            "usage: %s --dir DIR [--rep R] [--size S] [--modes cached,durable]\n"
            "          [--variants PATTERN,...] [--max-calls N] [--plan]\n",
            program);
}

/* Parses the common options; returns 0 or -1 on a usage error. */
static int parse_options(int argc, char **argv, ib_options *o) {
    memset(o, 0, sizeof(*o));
    o->modes[IB_CACHED] = o->modes[IB_DURABLE] = 1;
    o->max_calls = IB_DEFAULT_MAX_CALLS;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--plan")) {
            o->plan = 1;
            continue;
        }
        if (!val)
            return -1;
        i++;
        if (!strcmp(a, "--dir"))
            o->dir = val;
        else if (!strcmp(a, "--size"))
            o->size = val;
        else if (!strcmp(a, "--variants"))
            o->variants = val;
        else if (!strcmp(a, "--rep"))
            o->rep = atoi(val);
        else if (!strcmp(a, "--max-calls"))
            o->max_calls = atoll(val);
        else if (!strcmp(a, "--modes")) {
            o->modes[IB_CACHED] = strstr(val, "cached") != NULL;
            o->modes[IB_DURABLE] = strstr(val, "durable") != NULL;
        } else
            return -1;
    }
    if (o->max_calls < 1)
        return -1;
    return (o->plan || o->dir) ? 0 : -1;
}

/* Whether `name` matches one of the comma-separated patterns (NULL: all). */
static int variant_selected(const char *patterns, const char *name) {
    if (!patterns)
        return 1;
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s", patterns);
    char *save = NULL;
    for (char *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save))
        if (fnmatch(p, name, 0) == 0)
            return 1;
    return 0;
}

/* The shared object that provides MPI_File_open to this program: the MPI library, or
 * libpario-mpiio.so when it is preloaded. Lets the caller see a preload that did not
 * take effect instead of silently measuring the system's MPI-IO. */
static const char *file_open_provider(void) {
    Dl_info info;
    if (dladdr((void *)MPI_File_open, &info) && info.dli_fname)
        return info.dli_fname;
    return "unknown";
}

static void print_library_info(int nranks) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    char *nl = strchr(lib, '\n');
    if (nl)
        *nl = '\0';
    printf("INFO {\"mpi_library\": ");
    print_json_string(lib);
    printf(", \"file_open_from\": ");
    print_json_string(file_open_provider());
    printf(", \"ranks\": %d}\n", nranks);
}

/* The variant's shared file: DIR/PROGRAM.VARIANT.dat. */
static void set_variant_path(ib_ctx *c, const char *program, const char *variant) {
    int n = snprintf(c->path, sizeof(c->path), "%s/%s.%s.dat", c->dir, program, variant);
    if (n < 0 || (size_t)n >= sizeof(c->path)) {
        fprintf(stderr, "benchmark path too long: %s\n", c->dir);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* Removes the variant's shared file (rank 0) and waits for it. */
static void remove_shared_file(const ib_ctx *c) {
    if (c->rank == 0)
        MPI_File_delete(c->path, MPI_INFO_NULL);
    ib_mpi_check(MPI_Barrier(c->comm), "MPI_Barrier");
}

/* Starts a new peak of this process's resident memory (Linux: writing 5 to
 * clear_refs resets VmHWM), so each operation reports its own peak, not that of
 * whichever variant ran before it in the repetition's order. */
static void peak_rss_reset(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

/* Peak resident memory of this process since the last reset, in KiB (VmHWM); the
 * process's peak so far where /proc does not say. */
static long long peak_rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long long kib = -1;
    while (f && kib < 0 && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %lld kB", &kib) != 1)
            kib = -1;
    if (f)
        fclose(f);
    struct rusage ru;
    if (kib < 0)
        kib = getrusage(RUSAGE_SELF, &ru) == 0 ? (long long)ru.ru_maxrss : 0;
    return kib;
}

/* Reduces one timing over the ranks and prints it; returns the words that failed
 * verification on any rank. */
static long long report(const ib_ctx *c, const ib_variant *v, const char *op, const ib_timing *t) {
    double slowest = 0;
    long long bad = 0, rss_kib = peak_rss_kib(), rss_max = 0;
    ib_mpi_check(MPI_Reduce(&t->seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, c->comm),
                 "MPI_Reduce");
    ib_mpi_check(MPI_Reduce(&rss_kib, &rss_max, 1, MPI_LONG_LONG, MPI_MAX, 0, c->comm),
                 "MPI_Reduce");
    ib_mpi_check(MPI_Allreduce(&t->bad, &bad, 1, MPI_LONG_LONG, MPI_SUM, c->comm), "MPI_Allreduce");
    if (c->rank != 0)
        return bad;
    if (bad)
        fprintf(stderr, "VERIFY-FAIL variant %s %s %s: %lld words differ from the pattern\n",
                v->name, op, mode_names[c->mode], bad);
    if (!t->skipped)
        printf("RESULT {\"variant\": \"%s\", \"op\": \"%s\", \"mode\": \"%s\", "
               "\"bytes\": %lld, \"seconds\": %.9f, \"peak_rss_mib\": %.1f}\n",
               v->name, op, mode_names[c->mode], v->bytes, slowest, rss_max / 1024.0);
    fflush(stdout);
    fflush(stderr);
    return bad;
}

/* Writes then reads one variant in one mode; returns the mismatching words. */
static long long run_variant_mode(ib_ctx *c, const ib_variant *v) {
    remove_shared_file(c);
    peak_rss_reset();
    ib_timing t = {0};
    ib_mpi_check(v->write(c, v, &t), v->name);
    report(c, v, "write", &t);
    if (c->mode == IB_DURABLE && c->rank == 0)
        ib_drop_cache(c->path);
    peak_rss_reset();
    memset(&t, 0, sizeof(t));
    ib_mpi_check(v->read(c, v, &t), v->name);
    long long bad = report(c, v, "read", &t);
    remove_shared_file(c);
    return bad;
}

/* Rank 0 prints the MPI library and the selected variants with their sizes. */
static void print_plan(const ib_ctx *c, const ib_options *o, const ib_variant *vars, int nvars) {
    if (c->rank != 0)
        return;
    print_library_info(c->nranks);
    for (int i = 0; i < nvars; i++)
        if (variant_selected(o->variants, vars[i].name))
            printf("PLAN {\"variant\": \"%s\", \"bytes\": %lld}\n", vars[i].name, vars[i].bytes);
    fflush(stdout);
}

/* The next number of the splitmix64 sequence from *state. */
static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* The selected variants in the order of repetition `rep`: groups of the table (a
 * variant and those that follow it, ib_variant.follows) shuffled by a generator seeded
 * with `rep`, so every back end of one repetition runs them in the same order and the
 * order changes from one repetition to the next: whatever a variant's place in a run
 * costs (the first one pays the run's first connections and page faults; the one after
 * a large write meets its writeback) does not stay with one variant, as it would in the
 * table's order or a rotation of it. Rep 0 (the plan) keeps the table's order. Returns
 * how many. */
static int run_order(const ib_options *o, const ib_variant *vars, int nvars, int *order) {
    int sel[IB_MAX_VARIANTS], starts[IB_MAX_VARIANTS + 1], perm[IB_MAX_VARIANTS];
    int nsel = 0, ngroups = 0;
    for (int i = 0; i < nvars; i++) {
        if (!variant_selected(o->variants, vars[i].name))
            continue;
        if (!(vars[i].follows && nsel > 0 && sel[nsel - 1] == i - 1))
            starts[ngroups++] = nsel;
        sel[nsel++] = i;
    }
    starts[ngroups] = nsel;
    uint64_t state = (uint64_t)(o->rep > 0 ? o->rep : 0);
    for (int g = 0; g < ngroups; g++)
        perm[g] = g;
    for (int g = ngroups - 1; g > 0 && o->rep > 0; g--) { /* Fisher-Yates */
        int j = (int)(splitmix64(&state) % (uint64_t)(g + 1));
        int t = perm[g];
        perm[g] = perm[j];
        perm[j] = t;
    }
    int n = 0;
    for (int g = 0; g < ngroups; g++)
        for (int k = starts[perm[g]]; k < starts[perm[g] + 1]; k++)
            order[n++] = sel[k];
    return n;
}

/* Runs every selected variant in every selected mode, in the repetition's order;
 * stops at the first variant that read back wrong data and returns its mismatch count
 * (0: all verified). */
static long long run_all(ib_ctx *c, const ib_options *o, const char *program,
                         const ib_variant *vars, int nvars) {
    int order[IB_MAX_VARIANTS];
    int n = run_order(o, vars, nvars, order);
    long long bad = 0;
    for (int k = 0; k < n && !bad; k++) {
        int i = order[k];
        set_variant_path(c, program, vars[i].name);
        for (int m = 0; m < IB_NMODES && !bad; m++) {
            if (!o->modes[m])
                continue;
            c->mode = (enum ib_mode)m;
            c->salt = (uint64_t)o->rep * 7919u + (uint64_t)i * 31u + (uint64_t)m + 1u;
            bad = run_variant_mode(c, &vars[i]);
        }
    }
    return bad;
}

int ib_main(int argc, char **argv, const char *program,
            int (*setup)(const ib_ctx *c, ib_variant *vars, int max_vars, int *nvars)) {
    MPI_Init(&argc, &argv);
    ib_ctx c = {.comm = MPI_COMM_WORLD};
    MPI_Comm_rank(c.comm, &c.rank);
    MPI_Comm_size(c.comm, &c.nranks);
    ib_options o;
    if (parse_options(argc, argv, &o) != 0) {
        if (c.rank == 0)
            usage(program);
        MPI_Finalize();
        return 2;
    }
    c.size = o.size;
    c.max_calls = o.max_calls;
    snprintf(c.dir, sizeof(c.dir), "%s", o.dir ? o.dir : ".");
    static ib_variant vars[IB_MAX_VARIANTS];
    int nvars = 0;
    if (setup(&c, vars, IB_MAX_VARIANTS, &nvars) != 0) {
        if (c.rank == 0)
            fprintf(stderr, "%s: invalid --size '%s'\n", program, o.size ? o.size : "");
        MPI_Finalize();
        return 2;
    }
    print_plan(&c, &o, vars, nvars);
    long long bad = o.plan ? 0 : run_all(&c, &o, program, vars, nvars);
    MPI_Finalize();
    return bad ? 3 : 0;
}
