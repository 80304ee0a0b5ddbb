/* cyclic: seed 002's cyclic page mapping. Records of one cache page (1 MiB)
 * each; with the global cache on, page k belongs to rank k mod P. In
 * "follow" rank r's records are the pages it owns (r, r + P, ...), so every
 * access stays with its own pages; in "across" they are the pages of rank
 * r + 1, so every access goes to another process. The same two patterns
 * with the cache off are the reference (pario_cache* hints; other MPI-IOs
 * ignore them). */
#include <stdio.h>
#include "records.h"

/* Bytes per rank when --size is not given. */
#define CY_DEFAULT_BYTES_PER_RANK (32LL << 20)
/* The record and the page. */
#define CY_PAGE (1LL << 20)

enum { FOLLOW_ON, ACROSS_ON, FOLLOW_OFF, ACROSS_OFF, NCASES };
static const char *const names[NCASES] = {"follow-cache", "across-cache", "follow-off",
                                          "across-off"};

static long long cyclic_at(const ib_ctx *c, long long i, int param) {
    int shift = param == ACROSS_ON || param == ACROSS_OFF;
    return (i * c->nranks + (c->rank + shift) % c->nranks) * CY_PAGE;
}

static long long records_per_rank(const ib_ctx *c) {
    long long bytes = c->size ? ib_parse_bytes(c->size) : CY_DEFAULT_BYTES_PER_RANK;
    return bytes / CY_PAGE > 0 ? bytes / CY_PAGE : 1;
}

static rec_set cy_set(const ib_ctx *c, const ib_variant *v, const char **kv, char *pages) {
    int k = 0;
    snprintf(pages, 32, "%lld", records_per_rank(c)); /* every record stays cached */
    if (v->param == FOLLOW_ON || v->param == ACROSS_ON) {
        kv[k++] = "pario_cache", kv[k++] = "enable";
        kv[k++] = "pario_cache_page_size", kv[k++] = "1048576";
        kv[k++] = "pario_cache_pages", kv[k++] = pages;
    }
    kv[k] = NULL;
    return (rec_set){records_per_rank(c), CY_PAGE, cyclic_at, v->param, kv};
}

static int cy_write(const ib_ctx *c, const ib_variant *v, ib_timing *t) {
    const char *kv[8];
    char pages[32];
    rec_set s = cy_set(c, v, kv, pages);
    return rec_write(c, &s, t);
}

static int cy_read(const ib_ctx *c, const ib_variant *v, ib_timing *t) {
    const char *kv[8];
    char pages[32];
    rec_set s = cy_set(c, v, kv, pages);
    return rec_read(c, &s, t);
}

static int cy_setup(const ib_ctx *c, ib_variant *vars, int max_vars, int *nvars) {
    if (max_vars < NCASES)
        return -1;
    for (int i = 0; i < NCASES; i++) {
        snprintf(vars[i].name, sizeof vars[i].name, "%s", names[i]);
        vars[i].param = i;
        vars[i].bytes = records_per_rank(c) * CY_PAGE * c->nranks;
        vars[i].write = cy_write;
        vars[i].read = cy_read;
    }
    *nvars = NCASES;
    return 0;
}

int main(int argc, char **argv) {
    return ib_main(argc, argv, "cyclic", cy_setup);
}
