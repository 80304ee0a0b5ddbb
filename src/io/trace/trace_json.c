/* The run's trace document: one JSON object per run, the files closed so
 * far with their ranks merged, written again whole (to a temporary name,
 * then renamed) at every traced close, so the document on disk is always
 * complete and the last close leaves the whole run.
 *
 * Registry (process-wide, the folder's own; guarded by doc.lock): the
 * entries of the files this process wrote as their rank 0. World rank 0
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

typedef struct entry_list {
    char **entries;
    int n;
} entry_list;

static struct {
    pthread_mutex_t lock;
    entry_list closed;   /* merged entries of files closed */
    entry_list unclosed; /* this rank's part of files open at MPI_Finalize */
} doc = {PTHREAD_MUTEX_INITIALIZER, {NULL, 0}, {NULL, 0}};

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

static void put_events(FILE *f, const io_trace_event *ev, const int *ev_bytes, int nranks,
                       double t0) {
    fputs(",\"events\":[", f);
    const char *sep = "";
    for (int r = 0; r < nranks; r++) {
        int n = ev_bytes[r] / (int)sizeof *ev;
        for (int i = 0; i < n; i++, ev++) {
            fprintf(f, "%s[%d,%d,%d,%.9f,%.9f,%lld,%lld,%d,%d]", sep, r, ev->layer, ev->op,
                    ev->t - t0, (double)ev->dur, (long long)ev->off, (long long)ev->bytes,
                    ev->flags, ev->view);
            sep = ",";
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

/* Writes the document of list l (doc.lock held): PATH on world rank 0 and
 * PATH.<rank> elsewhere for closed files, PATH.open.<rank> for the rest. */
static void write_document(const char *path, const entry_list *l) {
    char tmp[4200], prog[1024];
    int world = 0, nworld = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    MPI_Comm_size(MPI_COMM_WORLD, &nworld);
    char target[4100];
    if (l == &doc.unclosed)
        snprintf(target, sizeof target, "%s.open.%d", path, world);
    else if (world == 0)
        snprintf(target, sizeof target, "%s", path);
    else
        snprintf(target, sizeof target, "%s.%d", path, world);
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", target, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "pario: cannot write the trace %s\n", tmp);
        return;
    }
    program_name(prog, sizeof prog);
    fputs("{\"kind\":\"pario-trace\",\"version\":1,\"program\":", f);
    put_string(f, prog);
    fprintf(f, ",\"world_ranks\":%d,\"writer\":%d,\"files\":[\n", nworld, world);
    for (int i = 0; i < l->n; i++)
        fprintf(f, "%s%s\n", i ? "," : "", l->entries[i]);
    fputs("]}\n", f);
    if (fclose(f) != 0 || rename(tmp, target) != 0) {
        fprintf(stderr, "pario: cannot write the trace %s\n", target);
        unlink(tmp);
    }
}

/* Adds entry to list l and writes l's document again. */
static void add_entry(entry_list *l, char *entry, const char *path) {
    if (!entry)
        return;
    pthread_mutex_lock(&doc.lock);
    char **grown = realloc(l->entries, (size_t)(l->n + 1) * sizeof *grown);
    if (grown) {
        l->entries = grown;
        l->entries[l->n++] = entry;
        write_document(path, l);
    } else
        free(entry);
    pthread_mutex_unlock(&doc.lock);
}

void io_trace_write_file(const pario_file *fh, const io_trace *t, const io_trace_rec *recs,
                         const io_trace_event *events, const int *ev_bytes) {
    add_entry(&doc.closed, file_entry(fh, t, recs, events, ev_bytes, fh->nranks, -1), t->doc_path);
}

void io_trace_write_unclosed(const pario_file *fh, const io_trace *t) {
    int ev_bytes = (int)(t->rec.nevents * (int64_t)sizeof(io_trace_event));
    add_entry(&doc.unclosed, file_entry(fh, t, &t->rec, t->events, &ev_bytes, 1, fh->rank),
              t->doc_path);
}
