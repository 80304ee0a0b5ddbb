/* The run's trace document: one JSON object per run, the files merged so
 * far (io_trace_flush) with their ranks merged. The first merge writes it
 * (to a temporary name, then renamed); every later one appends its file's
 * entry in place of the closing "]}" and closes the document again, so
 * each merge writes only its own entry, the document on disk is complete
 * between merges and the last leaves the whole run. (Writing the whole
 * document at every merge made a run's merges quadratic in its files.)
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

/* ---- text ------------------------------------------------------------------
 * Formatted by hand into a growing buffer: fprintf of each counter and of
 * every event's fields was most of what a traced close cost. */

/* Room for n more bytes (and a terminating NUL); 0 once memory ran out. */
static int text_room(io_trace_text *b, size_t n) {
    if (b->failed)
        return 0;
    if (b->len + n + 1 <= b->cap)
        return 1;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n + 1)
        cap *= 2;
    char *grown = realloc(b->s, cap);
    if (!grown) {
        b->failed = 1;
        return 0;
    }
    b->s = grown;
    b->cap = cap;
    return 1;
}

int io_trace_text_reserve(io_trace_text *b, size_t n) {
    return text_room(b, n);
}

void io_trace_text_free(io_trace_text *b) {
    free(b->s);
    *b = (io_trace_text){0};
}

static void put_bytes(io_trace_text *b, const char *s, size_t n) {
    if (!text_room(b, n))
        return;
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void put(io_trace_text *b, const char *s) {
    put_bytes(b, s, strlen(s));
}

/* "00" to "99": numbers are written two digits at a time. */
static const char digit_pairs[] = "00010203040506070809101112131415161718192021222324252627282930"
                                  "31323334353637383940414243444546474849505152535455565758596061"
                                  "6263646566676869707172737475767778798081828384858687888990919293"
                                  "949596979899";

/* 10^k, k = 0..19. */
static const uint64_t powers_of_ten[20] = {1ull,
                                           10ull,
                                           100ull,
                                           1000ull,
                                           10000ull,
                                           100000ull,
                                           1000000ull,
                                           10000000ull,
                                           100000000ull,
                                           1000000000ull,
                                           10000000000ull,
                                           100000000000ull,
                                           1000000000000ull,
                                           10000000000000ull,
                                           100000000000000ull,
                                           1000000000000000ull,
                                           10000000000000000ull,
                                           100000000000000000ull,
                                           1000000000000000000ull,
                                           10000000000000000000ull};

/* How many decimal digits v has: from its bit length (log10(2) is about
 * 1233/4096, which gives the digits or one more), then one comparison; no
 * division. */
static int decimal_len(uint64_t v) {
    int bits = 64 - __builtin_clzll(v | 1);
    int n = (bits * 1233) >> 12;
    return n + 1 - (v < powers_of_ten[n] && v != 0);
}

/* Decimal digits of v at p, written from the last one back; the end. */
static char *digits_u64(char *p, uint64_t v) {
    if (v < 10) { /* ranks, layers, operations, views, whole seconds: mostly one digit */
        *p = (char)('0' + v);
        return p + 1;
    }
    char *end = p + decimal_len(v), *q = end;
    while (v >= 100) {
        uint64_t r = v % 100;
        v /= 100;
        q -= 2;
        memcpy(q, digit_pairs + 2 * r, 2);
    }
    if (v >= 10)
        memcpy(q - 2, digit_pairs + 2 * v, 2);
    else
        q[-1] = (char)('0' + v);
    return end;
}

static char *digits_i64(char *p, int64_t v) {
    if (v < 0) {
        *p++ = '-';
        return digits_u64(p, -(uint64_t)v);
    }
    return digits_u64(p, (uint64_t)v);
}

/* Exactly 9 digits of f (< 10^9), leading zeros kept. */
static char *digits_nine(char *p, uint32_t f) {
    *p++ = (char)('0' + f / 100000000u);
    f %= 100000000u;
    uint32_t hi = f / 10000u, lo = f % 10000u;
    memcpy(p, digit_pairs + 2 * (hi / 100u), 2);
    memcpy(p + 2, digit_pairs + 2 * (hi % 100u), 2);
    memcpy(p + 4, digit_pairs + 2 * (lo / 100u), 2);
    memcpy(p + 6, digit_pairs + 2 * (lo % 100u), 2);
    return p + 8;
}

/* Seconds with 9 decimals, as "%.9f" prints them. */
static char *digits_seconds(char *p, double s) {
    if (s < 0) {
        *p++ = '-';
        s = -s;
    }
    uint64_t ns = (uint64_t)(s * 1e9 + 0.5);
    p = digits_u64(p, ns / 1000000000u);
    *p++ = '.';
    return digits_nine(p, (uint32_t)(ns % 1000000000u));
}

static void put_int(io_trace_text *b, int64_t v) {
    if (!text_room(b, 21))
        return;
    b->len = (size_t)(digits_i64(b->s + b->len, v) - b->s);
    b->s[b->len] = '\0';
}

static void put_seconds(io_trace_text *b, double s) {
    if (!text_room(b, 32))
        return;
    b->len = (size_t)(digits_seconds(b->s + b->len, s) - b->s);
    b->s[b->len] = '\0';
}

/* "key": then the value: `,"key":v` (first: no comma). */
static void put_key(io_trace_text *b, const char *key, int first) {
    put(b, first ? "\"" : ",\"");
    put(b, key);
    put(b, "\":");
}

static void put_key_int(io_trace_text *b, const char *key, int64_t v, int first) {
    put_key(b, key, first);
    put_int(b, v);
}

static void put_key_seconds(io_trace_text *b, const char *key, double v, int first) {
    put_key(b, key, first);
    put_seconds(b, v);
}

static void put_string(io_trace_text *b, const char *s) {
    put(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            put_bytes(b, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            put(b, esc);
        } else {
            put_bytes(b, (const char *)&c, 1);
        }
    }
    put(b, "\"");
}

/* ---- records ---------------------------------------------------------------- */

static void put_stat(io_trace_text *b, const io_trace_stat *s) {
    put(b, "{");
    put_key_int(b, "calls", s->calls, 1);
    put_key_int(b, "bytes", s->bytes, 0);
    put_key_int(b, "failed", s->failed, 0);
    put_key_int(b, "aligned_unit", s->aligned_unit, 0);
    put_key_int(b, "aligned_page", s->aligned_page, 0);
    put_key_int(b, "first", s->first, 0);
    put_key_int(b, "end", s->end, 0);
    put_key_seconds(b, "time", s->time, 0);
    put(b, ",\"hist\":[");
    int last = IO_TRACE_HIST - 1;
    while (last >= 0 && s->hist[last] == 0)
        last--;
    for (int c = 0; c <= last; c++) {
        if (c)
            put(b, ",");
        put_int(b, s->hist[c]);
    }
    put(b, "]}");
}

static void put_views(io_trace_text *b, const io_trace_rec *r) {
    put(b, ",\"views\":[");
    for (int i = 0; i < r->nviews; i++) {
        const io_trace_view *v = &r->views[i];
        put(b, i ? ",{" : "{");
        put_key_int(b, "disp", v->disp, 1);
        put_key_int(b, "size", v->size, 0);
        put_key_int(b, "extent", v->extent, 0);
        put_key_int(b, "blocks", v->blocks, 0);
        put_key_int(b, "block_min", v->block_min, 0);
        put_key_int(b, "block_max", v->block_max, 0);
        put_key(b, "contiguous", 0);
        put(b, v->contiguous ? "true" : "false");
        put_key_int(b, "calls", v->calls, 0);
        put(b, "}");
    }
    put(b, "]");
}

static void put_kinds(io_trace_text *b, const io_trace_rec *r) {
    static const char *const kind_names[4] = {"indep", "coll", "indep_nonblocking",
                                              "coll_nonblocking"};
    put(b, ",\"kinds\":{");
    for (int d = 0; d < 2; d++) {
        put_key(b, dir_names[d], d == 0);
        put(b, "{");
        for (int k = 0; k < 4; k++)
            put_key_int(b, kind_names[k], r->kinds[d][k], k == 0);
        put_key_int(b, "noncontig", r->noncontig[d], 0);
        put(b, "}");
    }
    put(b, "}");
}

static void put_twophase(io_trace_text *b, const io_trace_rec *r) {
    put(b, ",\"twophase\":{");
    put_key_int(b, "calls", r->tp_calls, 1);
    put_key_int(b, "domains", r->tp_domains, 0);
    put_key_int(b, "domain_bytes", r->tp_domain_bytes, 0);
    put_key_int(b, "domain_max", r->tp_domain_max, 0);
    put_key_int(b, "cycle_bytes", r->tp_cycle_bytes, 0);
    put_key_int(b, "cycles", r->tp_cycles, 0);
    put_key_int(b, "exchange_bytes", r->exchange_bytes, 0);
    put(b, "},\"time\":{");
    put_key_seconds(b, "open", r->t_close - r->t_open, 1);
    put_key_seconds(b, "logical", r->logical[0].time + r->logical[1].time, 0);
    put_key_seconds(b, "storage", r->storage_time_in_calls, 0);
    put_key_seconds(b, "exchange", r->exchange_time, 0);
    put(b, "}");
}

static void put_rec(io_trace_text *b, const io_trace_rec *r) {
    put(b, "{\"logical\":{");
    for (int d = 0; d < 2; d++) {
        put_key(b, dir_names[d], d == 0);
        put_stat(b, &r->logical[d]);
    }
    put(b, "}");
    put_kinds(b, r);
    put(b, ",\"physical\":{");
    for (int o = 0; o < IO_TRACE_PHYS_OPS; o++) {
        put_key(b, phys_names[o], o == 0);
        put_stat(b, &r->phys[o]);
    }
    put(b, "}");
    put_key_int(b, "pwritev", r->vectored, 0);
    put(b, ",\"sieve\":{");
    for (int d = 0; d < 2; d++) {
        put_key(b, dir_names[d], d == 0);
        put(b, "{");
        put_key_int(b, "windows", r->sieve_windows[d], 1);
        put_key_int(b, "span", r->sieve_span[d], 0);
        put_key_int(b, "data", r->sieve_data[d], 0);
        put(b, "}");
    }
    put(b, "}");
    put_twophase(b, r);
    put_key_int(b, "events", r->nevents, 0);
    put_key_int(b, "dropped", r->dropped, 0);
    put_views(b, r);
    put(b, "}");
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

/* ---- events ------------------------------------------------------------------ */

/* Longest text of one event: 11 numbers of at most 31 characters, brackets, commas. */
#define EVENT_TEXT_MAX 400

/* One event as [rank, layer, op, t, seconds, offset, bytes, flags, view], a
 * folded one with [..., physical t, physical seconds] after; the end. */
static char *event_text(char *p, const io_trace_event *e, int rank, double t0) {
    *p++ = '[';
    p = digits_i64(p, rank);
    *p++ = ',';
    p = digits_i64(p, e->layer);
    *p++ = ',';
    p = digits_i64(p, e->op);
    *p++ = ',';
    p = digits_seconds(p, e->t - t0);
    *p++ = ',';
    p = digits_seconds(p, (double)e->dur);
    const int64_t rest[4] = {e->off, e->bytes, e->flags, e->view};
    for (int k = 0; k < 4; k++) {
        *p++ = ',';
        p = digits_i64(p, rest[k]);
    }
    if (e->flags & IO_TRACE_FOLDED) {
        *p++ = ',';
        p = digits_seconds(p, e->t - t0 + (double)e->phys_lag);
        *p++ = ',';
        p = digits_seconds(p, (double)e->phys_dur);
    }
    *p++ = ']';
    return p;
}

/* Typical text of one event (an IOR call folded with its request: about 70). */
#define EVENT_TEXT_TYPICAL 96

void io_trace_format_events(const io_trace *t, int rank, double t0, io_trace_text *out) {
    text_room(out, (size_t)t->rec.nevents * EVENT_TEXT_TYPICAL); /* one allocation, mostly */
    for (int64_t i = 0; i < t->rec.nevents; i++) {
        if (!text_room(out, EVENT_TEXT_MAX))
            return;
        char *p = out->s + out->len;
        if (i)
            *p++ = ',';
        p = event_text(p, &t->events[i], rank, t0);
        out->len = (size_t)(p - out->s);
        out->s[out->len] = '\0';
    }
}

/* ---- the file's entry ---------------------------------------------------------- */

static void put_hints(io_trace_text *b, const io_trace *t) {
    const io_trace_facts *f = &t->facts;
    put_key_int(b, "stripe_unit", t->unit, 0);
    put(b, ",\"page\":4096,\"hints\":{");
    put_key_int(b, "cb_buffer_size", f->cb_buffer_size, 1);
    put_key_int(b, "cb_nodes", f->cb_nodes, 0);
    put_key_int(b, "pario_cb_cycle_size", f->cb_cycle_size, 0);
    put_key_int(b, "ind_wr_buffer_size", f->ind_wr_buffer_size, 0);
    put_key_int(b, "ind_rd_buffer_size", f->ind_rd_buffer_size, 0);
    put_key_int(b, "striping_unit", f->striping_unit, 0);
    put(b, "}");
}

/* A file's entry: its head, everything but the events (formatted here),
 * then every rank's formatted events, written as they are. */
typedef struct trace_entry {
    io_trace_text head;
    const io_trace_part *parts; /* parts[r].events_len bytes of events from rank r */
    const char *events;         /* back to back */
    int nranks;
} trace_entry;

/* The entry's head up to its events: nranks records; unclosed_rank >= 0
 * marks one rank's part of a file left open at MPI_Finalize. 0 when memory
 * runs out. */
static int entry_head(trace_entry *e, const io_trace *t, int unclosed_rank) {
    io_trace_text *b = &e->head;
    io_trace_rec total;
    memset(&total, 0, sizeof total);
    total.logical[0].first = total.logical[1].first = -1;
    for (int o = 0; o < IO_TRACE_PHYS_OPS; o++)
        total.phys[o].first = -1;
    for (int r = 0; r < e->nranks; r++)
        rec_merge(&total, &e->parts[r].rec);
    put(b, "{\"path\":");
    put_string(b, t->facts.path);
    put_key_int(b, "nranks", e->nranks, 0);
    put_key_int(b, "nnodes", t->facts.nnodes, 0);
    put_key_int(b, "read_only", t->facts.read_only, 0);
    put_key_int(b, "request_bound_reads", t->facts.request_bound_reads, 0);
    put_key_int(b, "read_once", t->facts.read_once, 0);
    put_key_int(b, "unclosed_rank", unclosed_rank, 0);
    put_key_seconds(b, "t_open", total.t_open + IO_TRACE_EPOCH, 0); /* since 1970 */
    put_key_seconds(b, "t_close", total.t_close + IO_TRACE_EPOCH, 0);
    put(b, io_trace_clock_is_tsc() ? ",\"clock\":\"tsc\"" : ",\"clock\":\"system\"");
    put(b, ",\"routes\":");
    put_string(b, t->facts.routes);
    put_hints(b, t);
    put(b, ",\"total\":");
    put_rec(b, &total);
    put(b, ",\"ranks\":[");
    for (int r = 0; r < e->nranks; r++) {
        if (r)
            put(b, ",");
        put_rec(b, &e->parts[r].rec);
    }
    put(b, "],\"events\":[");
    return !b->failed;
}

/* The entry at f's position; 0 when a write fails. */
static int entry_write(FILE *f, const trace_entry *e) {
    int ok = fwrite(e->head.s, 1, e->head.len, f) == e->head.len;
    const char *ev = e->events;
    int first = 1;
    for (int r = 0; r < e->nranks && ok; r++) {
        size_t n = (size_t)e->parts[r].events_len;
        if (n == 0)
            continue;
        ok = (first || fputc(',', f) != EOF) && fwrite(ev, 1, n, f) == n;
        first = 0;
        ev += n;
    }
    return ok && fputs("]}", f) != EOF;
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
static long doc_create(const char *target, const trace_entry *entry) {
    char tmp[4200], prog[1024];
    int world = 0, nworld = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    MPI_Comm_size(MPI_COMM_WORLD, &nworld);
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", target, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    program_name(prog, sizeof prog);
    io_trace_text head = {0};
    put(&head, "{\"kind\":\"pario-trace\",\"version\":2,\"program\":");
    put_string(&head, prog);
    if (head.failed) {
        fclose(f);
        unlink(tmp);
        return -1;
    }
    int ok = fprintf(f, "%s,\"world_ranks\":%d,\"writer\":%d,\"files\":[\n", head.s, nworld,
                     world) >= 0 &&
             entry_write(f, entry) && fputc('\n', f) != EOF;
    io_trace_text_free(&head);
    long tail = ok ? ftell(f) : -1;
    ok = ok && tail >= 0 && fputs(doc_tail, f) != EOF;
    if (fclose(f) != 0 || !ok || rename(tmp, target) != 0) {
        unlink(tmp);
        return -1;
    }
    return tail;
}

/* Appends entry to the document d (doc.lock held): over its tail, then the
 * tail again. 0 when it cannot. */
static int doc_append(trace_doc *d, const trace_entry *entry) {
    FILE *f = fopen(d->target, "r+");
    if (!f)
        return 0;
    int ok = fseek(f, d->tail, SEEK_SET) == 0 && fputc(',', f) != EOF && entry_write(f, entry) &&
             fputc('\n', f) != EOF;
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

/* Adds entry to the document of path. */
static void add_entry(const trace_entry *entry, const char *path, int unclosed) {
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
}

/* Writes t's entry made of nranks parts (with their events) to its document. */
static void write_entry(const io_trace *t, const io_trace_part *parts, const char *events,
                        int nranks, int unclosed_rank) {
    trace_entry e = {.parts = parts, .events = events, .nranks = nranks};
    if (entry_head(&e, t, unclosed_rank))
        add_entry(&e, t->doc_path, unclosed_rank >= 0);
    else
        fprintf(stderr, "pario: cannot write the trace of %s: out of memory\n", t->facts.path);
    io_trace_text_free(&e.head);
}

void io_trace_write_file(const io_trace *t, const io_trace_part *parts, const char *events,
                         int nranks) {
    write_entry(t, parts, events, nranks, -1);
}

void io_trace_write_unclosed(const io_trace *t, int rank) {
    io_trace_part part = {.rec = t->rec};
    io_trace_text events = {0};
    io_trace_format_events(t, 0, t->rec.t_open, &events);
    if (events.failed) {
        fprintf(stderr, "pario: cannot write the trace of %s: out of memory\n", t->facts.path);
        io_trace_text_free(&events);
        return;
    }
    part.events_len = (int64_t)events.len;
    write_entry(t, &part, events.s, 1, rank);
    io_trace_text_free(&events);
}
