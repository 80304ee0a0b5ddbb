/* wellformed: seed 002's well-formed I/O. Every rank writes, then reads, its
 * records of one shared file, interleaved among the ranks (record j at
 * j x size, on rank j mod P), with requests of 800,000 B (malformed: they
 * straddle pages and file system blocks) or 1 MiB (well-formed), with the
 * global cache off or on at page sizes of 256 KiB, 1 MiB and 4 MiB and 16
 * or 64 pages per process (pario_cache* hints; other MPI-IOs ignore them,
 * so their cache-on variants repeat the cache-off ones). */
#include <stdio.h>
#include "records.h"

/* Bytes per rank when --size is not given. */
#define WF_DEFAULT_BYTES_PER_RANK (32LL << 20)

typedef struct wf_case {
    const char *name;
    long long request;
    const char *page, *pages; /* NULL: cache off */
} wf_case;

static const wf_case cases[] = {
    {"800k-off", 800000, NULL, NULL},           {"1m-off", 1 << 20, NULL, NULL},
    {"800k-p1m-n16", 800000, "1048576", "16"},  {"1m-p1m-n16", 1 << 20, "1048576", "16"},
    {"800k-p1m-n64", 800000, "1048576", "64"},  {"1m-p1m-n64", 1 << 20, "1048576", "64"},
    {"800k-p256k-n64", 800000, "262144", "64"}, {"1m-p256k-n64", 1 << 20, "262144", "64"},
    {"800k-p4m-n16", 800000, "4194304", "16"},  {"1m-p4m-n16", 1 << 20, "4194304", "16"},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

static long long interleaved_at(const ib_ctx *c, long long i, int param) {
    return (i * c->nranks + c->rank) * cases[param].request;
}

static long long records_per_rank(const ib_ctx *c, int param) {
    long long bytes = c->size ? ib_parse_bytes(c->size) : WF_DEFAULT_BYTES_PER_RANK;
    long long n = bytes / cases[param].request;
    return n > 0 ? n : 1;
}

static rec_set wf_set(const ib_ctx *c, const ib_variant *v, const char **kv) {
    const wf_case *w = &cases[v->param];
    int k = 0;
    if (w->page) {
        kv[k++] = "pario_cache", kv[k++] = "enable";
        kv[k++] = "pario_cache_page_size", kv[k++] = w->page;
        kv[k++] = "pario_cache_pages", kv[k++] = w->pages;
    }
    kv[k] = NULL;
    return (rec_set){records_per_rank(c, v->param), w->request, interleaved_at, v->param, kv};
}

static int wf_write(const ib_ctx *c, const ib_variant *v, ib_timing *t) {
    const char *kv[8];
    rec_set s = wf_set(c, v, kv);
    return rec_write(c, &s, t);
}

static int wf_read(const ib_ctx *c, const ib_variant *v, ib_timing *t) {
    const char *kv[8];
    rec_set s = wf_set(c, v, kv);
    return rec_read(c, &s, t);
}

static int wf_setup(const ib_ctx *c, ib_variant *vars, int max_vars, int *nvars) {
    if (max_vars < NCASES)
        return -1;
    for (int i = 0; i < NCASES; i++) {
        snprintf(vars[i].name, sizeof vars[i].name, "%s", cases[i].name);
        vars[i].param = i;
        vars[i].bytes = records_per_rank(c, i) * cases[i].request * c->nranks;
        vars[i].write = wf_write;
        vars[i].read = wf_read;
    }
    *nvars = NCASES;
    return 0;
}

int main(int argc, char **argv) {
    return ib_main(argc, argv, "wellformed", wf_setup);
}
