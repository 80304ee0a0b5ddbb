/* The run's trace document: one JSON object per run, the files closed so
 * far with their ranks merged. The first traced close writes it (to a
 * temporary name, then renamed); every later one appends its file's entry
 * in place of the closing "]}" and closes the document again, so each close
 * writes only its own entry, the document on disk is complete between
 * closes and the last close leaves the whole run. (Writing the whole
 * document at every close made a run's closes quadratic in its files.)
 *
 * Registry (process-wide, the folder's own; guarded by doc.lock): the
 * documents this process writes, each with the place of its closing "]}".
 * A process writes the entries of the files it is rank 0 of. World rank 0
 * writes PATH; a process that is rank 0 of some file but not of the world
 * (files opened on sub-communicators) writes PATH.<world rank>, which
 * `pario report` reads together with PATH. Files still open at MPI_Finalize
 * (no collective call is possible there) are written by each rank alone,
 * its own part, to PATH.open.<world rank>. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "io/coll/coll.h"
#include "io/file/file.h"
#include "io/trace/trace_internal.h"

/* One document this process writes. */
typedef struct trace_doc {
    struct trace_doc *next;
    char *target; /* its path */
    long tail;    /* the offset of its closing "]}\n" */
} trace_doc;

static struct {
    pthread_mutex_t lock;
    trace_doc *docs;
} doc = {PTHREAD_MUTEX_INITIALIZER, NULL};

/* The documents' tails: "]}" and a newline. */
static const char doc_tail[] = "]}\n";

static const char *const phys_names[IO_TRACE_PHYS_OPS] = {"pread", "pwrite", "sync",
                                                          "trunc", "alloc",  "lock"};
static const char *const dir_names[2] = {"read", "write"};

static void put_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void put_stat(FILE *f, const io_trace_stat *s) {
    fprintf(f,
            "{\"calls\":%lld,\"bytes\":%lld,\"failed\":%lld,\"aligned_unit\":%lld,"
            "\"aligned_page\":%lld,\"first\":%lld,\"end\":%lld,\"time\":%.9g,\"hist\":[",
            (long long)s->calls, (long long)s->bytes, (long long)s->failed,
            (long long)s->aligned_unit, (long long)s->aligned_page, (long long)s->first,
            (long long)s->end, s->time);
    int last = IO_TRACE_HIST - 1;
    while (last >= 0 && s->hist[last] == 0)
        last--;
    for (int b = 0; b <= last; b++)
        fprintf(f, "%s%lld", b ? "," : "", (long long)s->hist[b]);
    fputs("]}", f);
}

static void put_views(FILE *f, const io_trace_rec *r) {
    fputs(",\"views\":[", f);
    for (int i = 0; i < r->nviews; i++) {
        const io_trace_view *v = &r->views[i];
        fprintf(f,
                "%s{\"disp\":%lld,\"size\":%lld,\"extent\":%lld,\"blocks\":%lld,"
                "\"block_min\":%lld,\"block_max\":%lld,\"contiguous\":%s,\"calls\":%lld}",
                i ? "," : "", (long long)v->disp, (long long)v->size, (long long)v->extent,
                (long long)v->blocks, (long long)v->block_min, (long long)v->block_max,
                v->contiguous ? "true" : "false", (long long)v->calls);
    }
    fputc(']', f);
}

static void put_rec(FILE *f, const io_trace_rec *r) {
    fputs("{\"logical\":{", f);
    for (int d = 0; d < 2; d++) {
        fprintf(f, "%s\"%s\":", d ? "," : "", dir_names[d]);
        put_stat(f, &r->logical[d]);
    }
    fputs("},\"kinds\":{", f);
    for (int d = 0; d < 2; d++)
        fprintf(f,
                "%s\"%s\":{\"indep\":%lld,\"coll\":%lld,\"indep_nonblocking\":%lld,"
                "\"coll_nonblocking\":%lld,\"noncontig\":%lld}",
                d ? "," : "", dir_names[d], (long long)r->kinds[d][0], (long long)r->kinds[d][1],
                (long long)r->kinds[d][2], (long long)r->kinds[d][3], (long long)r->noncontig[d]);
    fputs("},\"physical\":{", f);
    for (int o = 0; o < IO_TRACE_PHYS_OPS; o++) {
        fprintf(f, "%s\"%s\":", o ? "," : "", phys_names[o]);
        put_stat(f, &r->phys[o]);
    }
    fprintf(f, "},\"pwritev\":%lld,\"sieve\":{", (long long)r->vectored);
    for (int d = 0; d < 2; d++)
        fprintf(f, "%s\"%s\":{\"windows\":%lld,\"span\":%lld,\"data\":%lld}", d ? "," : "",
                dir_names[d], (long long)r->sieve_windows[d], (long long)r->sieve_span[d],
                (long long)r->sieve_data[d]);
    fprintf(f,
            "},\"twophase\":{\"calls\":%lld,\"domains\":%lld,\"domain_bytes\":%lld,"
            "\"domain_max\":%lld,\"cycle_bytes\":%lld,\"cycles\":%lld,\"exchange_bytes\":%lld},"
            "\"time\":{\"open\":%.9g,\"logical\":%.9g,\"storage\":%.9g,\"exchange\":%.9g},"
            "\"events\":%lld,\"dropped\":%lld",
            (long long)r->tp_calls, (long long)r->tp_domains, (long long)r->tp_domain_bytes,
            (long long)r->tp_domain_max, (long long)r->tp_cycle_bytes, (long long)r->tp_cycles,
            (long long)r->exchange_bytes, r->t_close - r->t_open,
            r->logical[0].time + r->logical[1].time, r->storage_time_in_calls, r->exchange_time,
            (long long)r->nevents, (long long)r->dropped);
    put_views(f, r);
    fputc('}', f);
}

static void stat_merge(io_trace_stat *into, const io_trace_stat *s) {
    into->calls += s->calls;
    into->bytes += s->bytes;
    into->failed += s->failed;
    into->aligned_unit += s->aligned_unit;
    into->aligned_page += s->aligned_page;
    into->time += s->time;
    for (int b = 0; b < IO_TRACE_HIST; b++)
        into->hist[b] += s->hist[b];
    if (s->first >= 0 && (into->first < 0 || s->first < into->first))
        into->first = s->first;
    if (s->end > into->end)
        into->end = s->end;
}

static int64_t max64(int64_t a, int64_t b) {
    return a > b ? a : b;
}

/* Sums of every rank's counters (times in rank-seconds); the two-phase
 * calls and cycle size are the same on every rank, so their maximum. */
static void rec_merge(io_trace_rec *into, const io_trace_rec *r) {
    for (int d = 0; d < 2; d++) {
        stat_merge(&into->logical[d], &r->logical[d]);
        for (int k = 0; k < 4; k++)
            into->kinds[d][k] += r->kinds[d][k];
        into->noncontig[d] += r->noncontig[d];
        into->sieve_windows[d] += r->sieve_windows[d];
        into->sieve_span[d] += r->sieve_span[d];
        into->sieve_data[d] += r->sieve_data[d];
    }
    for (int o = 0; o < IO_TRACE_PHYS_OPS; o++)
        stat_merge(&into->phys[o], &r->phys[o]);
    into->vectored += r->vectored;
    into->tp_calls = max64(into->tp_calls, r->tp_calls);
    into->tp_cycle_bytes = max64(into->tp_cycle_bytes, r->tp_cycle_bytes);
    into->tp_cycles = max64(into->tp_cycles, r->tp_cycles);
    into->tp_domains += r->tp_domains;
    into->tp_domain_bytes += r->tp_domain_bytes;
    into->tp_domain_max = max64(into->tp_domain_max, r->tp_domain_max);
    into->exchange_bytes += r->exchange_bytes;
    into->exchange_time += r->exchange_time;
    into->storage_time_in_calls += r->storage_time_in_calls;
    into->t_open = into->t_open == 0 || r->t_open < into->t_open ? r->t_open : into->t_open;
    into->t_close = r->t_close > into->t_close ? r->t_close : into->t_close;
    into->nevents += r->nevents;
    into->dropped += r->dropped;
}

/* Decimal digits of v at p; the end. */
static char *put_u64(char *p, uint64_t v) {
    char digits[20];
    int n = 0;
    do
        digits[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (n > 0)
        *p++ = digits[--n];
    return p;
}

static char *put_i64(char *p, int64_t v) {
    if (v < 0) {
        *p++ = '-';
        return put_u64(p, -(uint64_t)v);
    }
    return put_u64(p, (uint64_t)v);
}

/* Seconds with 9 decimals, as "%.9f" prints them. */
static char *put_seconds(char *p, double s) {
    if (s < 0) {
        *p++ = '-';
        s = -s;
    }
    uint64_t ns = (uint64_t)(s * 1e9 + 0.5);
    p = put_u64(p, ns / 1000000000u);
    *p++ = '.';
    uint64_t frac = ns % 1000000000u;
    for (uint64_t d = 100000000u; d > 0; d /= 10)
        *p++ = (char)('0' + frac / d % 10);
    return p;
}

/* The event logs, one array per event. Formatted by hand: a run's closes
 * format up to IO_TRACE_EVENTS per rank, and fprintf of two doubles per
 * event made that the largest part of what tracing cost. */
static void put_events(FILE *f, const io_trace_event *ev, const int *ev_bytes, int nranks,
                       double t0) {
    fputs(",\"events\":[", f);
    char line[256];
    int first = 1;
    for (int r = 0; r < nranks; r++) {
        int n = ev_bytes[r] / (int)sizeof *ev;
        for (int i = 0; i < n; i++, ev++) {
            char *p = line;
            if (!first)
                *p++ = ',';
            first = 0;
            const int64_t ints[3] = {r, ev->layer, ev->op};
            *p++ = '[';
            for (int k = 0; k < 3; k++) {
                p = put_i64(p, ints[k]);
                *p++ = ',';
            }
            p = put_seconds(p, ev->t - t0);
            *p++ = ',';
            p = put_seconds(p, (double)ev->dur);
            const int64_t rest[4] = {ev->off, ev->bytes, ev->flags, ev->view};
            for (int k = 0; k < 4; k++) {
                *p++ = ',';
                p = put_i64(p, rest[k]);
            }
            *p++ = ']';
            fwrite(line, 1, (size_t)(p - line), f);
        }
    }
    fputc(']', f);
}

static void put_hints(FILE *f, const pario_file *fh, const io_trace *t) {
    const io_hints *h = &fh->hints;
    fprintf(f,
            ",\"stripe_unit\":%lld,\"page\":4096,\"hints\":{\"cb_buffer_size\":%lld,"
            "\"cb_nodes\":%d,\"pario_cb_cycle_size\":%lld,\"ind_wr_buffer_size\":%lld,"
            "\"ind_rd_buffer_size\":%lld,\"striping_unit\":%lld}",
            (long long)t->unit, (long long)h->cb_buffer_size, h->cb_nodes,
            (long long)h->cb_cycle_size, (long long)h->ind_wr_buffer_size,
            (long long)h->ind_rd_buffer_size, (long long)h->striping_unit);
}

/* The file's entry as one JSON object (malloc'd), or NULL: nranks records
 * and event logs; unclosed_rank >= 0 marks one rank's part of a file left
 * open at MPI_Finalize. */
static char *file_entry(const pario_file *fh, const io_trace *t, const io_trace_rec *recs,
                        const io_trace_event *events, const int *ev_bytes, int nranks,
                        int unclosed_rank) {
    char *text = NULL, routes[256];
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    io_trace_rec total;
    memset(&total, 0, sizeof total);
    total.logical[0].first = total.logical[1].first = -1;
    for (int o = 0; o < IO_TRACE_PHYS_OPS; o++)
        total.phys[o].first = -1;
    for (int r = 0; r < nranks; r++)
        rec_merge(&total, &recs[r]);
    if (io_coll_routes_text(fh, routes, sizeof routes) != PARIO_OK)
        routes[0] = '\0';
    fputs("{\"path\":", f);
    put_string(f, fh->path);
    fprintf(f,
            ",\"nranks\":%d,\"nnodes\":%d,\"unclosed_rank\":%d,\"t_open\":%.6f,"
            "\"t_close\":%.6f,\"routes\":",
            nranks, fh->nnodes, unclosed_rank, total.t_open, total.t_close);
    put_string(f, routes);
    put_hints(f, fh, t);
    fputs(",\"total\":", f);
    put_rec(f, &total);
    fputs(",\"ranks\":[", f);
    for (int r = 0; r < nranks; r++) {
        fputs(r ? "," : "", f);
        put_rec(f, &recs[r]);
    }
    fputc(']', f);
    put_events(f, events, ev_bytes, nranks, total.t_open);
    fputc('}', f);
    return fclose(f) == 0 ? text : (free(text), NULL);
}

static void program_name(char *out, size_t len) {
    FILE *f = fopen("/proc/self/cmdline", "r");
    size_t n = f ? fread(out, 1, len - 1, f) : 0;
    if (f)
        fclose(f);
    out[n] = '\0';
    for (size_t i = 0; n > 0 && i < n - 1; i++) /* arguments separated by spaces */
        if (out[i] == '\0')
            out[i] = ' ';
}

/* The path of the document an entry goes to: PATH on world rank 0 and
 * PATH.<rank> elsewhere for closed files, PATH.open.<rank> for the rest. */
static void doc_target(const char *path, int unclosed, char *target, size_t len) {
    int world = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    if (unclosed)
        snprintf(target, len, "%s.open.%d", path, world);
    else if (world == 0)
        snprintf(target, len, "%s", path);
    else
        snprintf(target, len, "%s.%d", path, world);
}

/* A new document at target holding entry (doc.lock held); its tail's
 * offset, or -1 when it cannot be written. */
static long doc_create(const char *target, const char *entry) {
    char tmp[4200], prog[1024];
    int world = 0, nworld = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    MPI_Comm_size(MPI_COMM_WORLD, &nworld);
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", target, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    program_name(prog, sizeof prog);
    fputs("{\"kind\":\"pario-trace\",\"version\":1,\"program\":", f);
    put_string(f, prog);
    fprintf(f, ",\"world_ranks\":%d,\"writer\":%d,\"files\":[\n%s\n", nworld, world, entry);
    long tail = ftell(f);
    fputs(doc_tail, f);
    if (fclose(f) != 0 || rename(tmp, target) != 0) {
        unlink(tmp);
        return -1;
    }
    return tail;
}

/* Appends entry to the document d (doc.lock held): over its tail, then the
 * tail again. 0 when it cannot. */
static int doc_append(trace_doc *d, const char *entry) {
    FILE *f = fopen(d->target, "r+");
    if (!f)
        return 0;
    int ok = fseek(f, d->tail, SEEK_SET) == 0 && fprintf(f, ",%s\n", entry) >= 0;
    long tail = ok ? ftell(f) : -1;
    ok = ok && tail >= 0 && fputs(doc_tail, f) >= 0;
    ok = fclose(f) == 0 && ok;
    if (ok)
        d->tail = tail;
    return ok;
}

/* The document this process writes at target, or NULL (doc.lock held). */
static trace_doc *doc_find(const char *target) {
    for (trace_doc *d = doc.docs; d; d = d->next)
        if (!strcmp(d->target, target))
            return d;
    return NULL;
}

/* Adds entry (freed here) to the document of path. */
static void add_entry(char *entry, const char *path, int unclosed) {
    if (!entry)
        return;
    char target[4100];
    doc_target(path, unclosed, target, sizeof target);
    pthread_mutex_lock(&doc.lock);
    trace_doc *d = doc_find(target);
    int ok = d ? doc_append(d, entry) : 0;
    if (!d) {
        d = calloc(1, sizeof *d);
        char *name = d ? strdup(target) : NULL;
        long tail = name ? doc_create(target, entry) : -1;
        ok = tail >= 0;
        if (ok) {
            *d = (trace_doc){.next = doc.docs, .target = name, .tail = tail};
            doc.docs = d;
        } else {
            free(name);
            free(d);
        }
    }
    pthread_mutex_unlock(&doc.lock);
    if (!ok)
        fprintf(stderr, "pario: cannot write the trace %s\n", target);
    free(entry);
}

void io_trace_write_file(const pario_file *fh, const io_trace *t, const io_trace_rec *recs,
                         const io_trace_event *events, const int *ev_bytes) {
    add_entry(file_entry(fh, t, recs, events, ev_bytes, fh->nranks, -1), t->doc_path, 0);
}

void io_trace_write_unclosed(const pario_file *fh, const io_trace *t) {
    int ev_bytes = (int)(t->rec.nevents * (int64_t)sizeof(io_trace_event));
    add_entry(file_entry(fh, t, &t->rec, t->events, &ev_bytes, 1, fh->rank), t->doc_path, 1);
}
