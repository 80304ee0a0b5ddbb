#include "io/hints/hints.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/cost/cost.h"
#include "pario/pario.h"

/* Collective buffer per aggregator: large enough for well-formed writes on
 * striped storage, small enough to stay far from memory limits. */
#define IO_DEFAULT_CB_BUFFER ((int64_t)16 << 20)
/* Window of one two-phase cycle: small windows stay in the CPU cache between
 * the exchange that fills them and the write that drains them. Measured on a
 * 2-core node (coll3d collective write, 4 ranks, medians of 5, three runs
 * each): 1 MiB 2061/2612/2125 MiB/s, 512 KiB 2156/2106, 2 MiB 1526/1589/1865,
 * 4 MiB 898; reads were the same at 1 and 2 MiB. */
#define IO_DEFAULT_CB_CYCLE ((int64_t)1 << 20)
/* Data sieving windows. Writes keep ROMIO's 512 KiB. Reads use 256 KiB, not
 * ROMIO's 4 MiB: a window read and then copied out stays in the CPU cache.
 * Measured (pario bench noncontig, 4 ranks on 2 cores, cached, medians of 5,
 * MiB/s for 8 B, 64 B and 512 B blocks interleaved in the file): 4 MiB 1216,
 * 1225, 2732; 1 MiB 5180, 5408, 5504; 512 KiB 5765, 8200, 7631; 256 KiB 7282,
 * 7919, 10599. Sieving writes were the same at 256 KiB, 512 KiB and 1 MiB. */
#define IO_DEFAULT_IND_RD_BUFFER ((int64_t)256 << 10)
#define IO_DEFAULT_IND_WR_BUFFER ((int64_t)512 << 10)
/* Smallest write whose file blocks are reserved (fallocate, size kept)
 * before it is written, by default. On ext4 a buffered write into reserved
 * blocks skips the per-page reservation of delayed allocation. Measured (one
 * process, 32 MiB of fresh file from a cached buffer, MiB/s, plain vs
 * reserved first): 16 KiB calls 2536 vs 1622, 64 KiB 4095 vs 4049, 256 KiB
 * 4990 vs 6403, 1 MiB 5730 vs 8296, 20 records of 47,008 B per pwritev 5140
 * vs 6919; the same 47,008 B runs with fsync timed 1415 vs 1478. On tmpfs
 * it does not pay (1 MiB calls 2733 vs 2598). Other file systems reserve
 * only when asked (pario_prealloc_writes=enable): on a network file system
 * each reservation may be a round trip to a server. */
#define IO_PREALLOC_MIN ((int64_t)256 << 10)
/* Milliseconds within which the kept bytes of a collective write every rank
 * has finished reach the operating system, even when the program makes no
 * further call (io/coll/kept.c): a program killed then loses none of them.
 * A background thread writes them every half of it; waiting lets a stream of
 * small calls coalesce into long runs first, and calls in a stream make room
 * for themselves much sooner anyway. */
#define IO_DEFAULT_BEHIND_DELAY 1000
/* Aggregators per node by default: copying into the page cache scales with
 * the cores of a node, so one aggregator per node (ROMIO's default) leaves
 * most of a node's memory bandwidth unused; more than a few adds exchange
 * messages without adding bandwidth. */
#define IO_AGGREGATORS_PER_NODE 4
/* The global cache (io/cache): pages of 1 MiB, the request size of
 * well-formed I/O on most parallel file systems, 64 of them per process
 * (64 MiB). A page is moved in one RMA call, so at most 1 GiB. */
#define IO_DEFAULT_CACHE_PAGE ((int64_t)1 << 20)
#define IO_DEFAULT_CACHE_PAGES 64
#define IO_CACHE_PAGE_MAX ((int64_t)1 << 30)
/* Reading once per node keeps the whole file in shared memory: up to 1 GiB
 * by default; larger files are read as usual. */
#define IO_DEFAULT_READ_ONCE_MAX ((int64_t)1 << 30)
/* Longest line read from a $PARIO_HINTS file. */
#define IO_HINT_LINE_MAX 1024

void io_hints_block_size(io_hints *h, int64_t block_size) {
    if (!(h->striping_given & IO_STRIPING_UNIT_GIVEN))
        h->striping_unit = block_size > 0 ? block_size : 4096;
}

void io_hints_defaults(io_hints *h, int64_t block_size, int nranks, int nnodes) {
    memset(h, 0, sizeof *h);
    h->cb_buffer_size = IO_DEFAULT_CB_BUFFER;
    h->cb_cycle_size = IO_DEFAULT_CB_CYCLE;
    nnodes = nnodes > 0 ? nnodes : 1;
    int per_node = (nranks + nnodes - 1) / nnodes;
    h->cb_nodes =
        nnodes * (per_node < IO_AGGREGATORS_PER_NODE ? per_node : IO_AGGREGATORS_PER_NODE);
    snprintf(h->cb_config_list, sizeof h->cb_config_list, "*:%d", IO_AGGREGATORS_PER_NODE);
    h->cb_read = h->cb_write = h->cb_read_pipeline = h->cb_write_behind = IO_AUTOMATIC;
    h->cb_prefetch = IO_AUTOMATIC;
    h->cb_write_behind_delay = IO_DEFAULT_BEHIND_DELAY;
    h->prealloc_writes = IO_AUTOMATIC;
    h->ds_read = h->ds_write = IO_AUTOMATIC;
    h->ind_rd_buffer_size = IO_DEFAULT_IND_RD_BUFFER;
    h->ind_wr_buffer_size = IO_DEFAULT_IND_WR_BUFFER;
    io_hints_block_size(h, block_size);
    h->striping_factor = 1;
    h->cache = h->read_once = IO_AUTOMATIC;
    h->cache_page_size = IO_DEFAULT_CACHE_PAGE;
    h->cache_pages = IO_DEFAULT_CACHE_PAGES;
    h->read_once_max = IO_DEFAULT_READ_ONCE_MAX;
    const char *targets = getenv("PARIO_STRIPE_TARGETS");
    if (targets && strlen(targets) < sizeof h->stripe_targets)
        snprintf(h->stripe_targets, sizeof h->stripe_targets, "%s", targets);
}

static int parse_positive(const char *v, int64_t *out) {
    errno = 0;
    char *end = NULL;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end != '\0' || x <= 0)
        return 0;
    *out = x;
    return 1;
}

/* One entry of a cb_config_list: [p, end) is "name" or "name:count". Sets
 * *matches when name is host or "*" and *count to its count; 0 when the
 * entry is malformed. */
static int cb_entry(const char *p, const char *end, const char *host, int *matches, int *count) {
    const char *colon = memchr(p, ':', (size_t)(end - p));
    const char *name_end = colon ? colon : end;
    size_t name_len = (size_t)(name_end - p);
    if (name_len == 0)
        return 0;
    *matches =
        (name_len == 1 && *p == '*') || (strlen(host) == name_len && !strncmp(p, host, name_len));
    *count = 1;
    if (!colon)
        return 1;
    if (end - colon == 2 && colon[1] == '*') {
        *count = IO_CB_ALL;
        return 1;
    }
    char num[16];
    size_t len = (size_t)(end - colon - 1);
    if (len == 0 || len >= sizeof num)
        return 0;
    memcpy(num, colon + 1, len);
    num[len] = '\0';
    int64_t n = 0;
    if (!parse_positive(num, &n) || n > IO_CB_ALL)
        return 0;
    *count = (int)n;
    return 1;
}

int io_hints_cb_count(const char *list, const char *host) {
    int found = -1;
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        int matches = 0, count = 0;
        if (!cb_entry(p, end, host, &matches, &count))
            return -1;
        if (matches && found < 0)
            found = count;
        p = *end ? end + 1 : end;
    }
    return found < 0 ? 0 : found;
}

static int parse_switch(const char *v, io_switch *out) {
    if (!strcmp(v, "enable") || !strcmp(v, "true"))
        *out = IO_ENABLE;
    else if (!strcmp(v, "disable") || !strcmp(v, "false"))
        *out = IO_DISABLE;
    else if (!strcmp(v, "automatic"))
        *out = IO_AUTOMATIC;
    else
        return 0;
    return 1;
}

/* A call cost in bytes, or "automatic" (0: the file system's figure). */
static int parse_call_bytes(const char *v, int64_t *out) {
    int64_t n = 0;
    if (!strcmp(v, "automatic"))
        *out = 0;
    else if (parse_positive(v, &n) && n <= IO_CALL_BYTES_MAX)
        *out = n;
    else
        return 0;
    return 1;
}

static const char *switch_name(io_switch s) {
    return s == IO_ENABLE ? "enable" : s == IO_DISABLE ? "disable" : "automatic";
}

/* The hints of the global cache and of reading once per node (io/cache). */
static void hints_set_cache(io_hints *h, const char *key, const char *val) {
    int64_t n = 0;
    if (!strcmp(key, "pario_cache"))
        parse_switch(val, &h->cache);
    else if (!strcmp(key, "pario_cache_page_size") && parse_positive(val, &n) &&
             n <= IO_CACHE_PAGE_MAX)
        h->cache_page_size = n;
    else if (!strcmp(key, "pario_cache_pages") && parse_positive(val, &n) && n <= INT32_MAX)
        h->cache_pages = n;
    else if (!strcmp(key, "pario_read_once"))
        parse_switch(val, &h->read_once);
    else if (!strcmp(key, "pario_read_once_max") && parse_positive(val, &n))
        h->read_once_max = n;
}

/* Set one hint by key; unknown keys and bad values leave h unchanged. */
static void hints_set(io_hints *h, const char *key, const char *val) {
    int64_t n = 0;
    if (!strcmp(key, "cb_buffer_size") && parse_positive(val, &n))
        h->cb_buffer_size = n;
    else if (!strcmp(key, "pario_cb_cycle_size") && parse_positive(val, &n)) {
        h->cb_cycle_size = n;
        h->cb_cycle_given = 1;
    } else if (!strcmp(key, "cb_nodes") && parse_positive(val, &n) && n <= INT32_MAX) {
        h->cb_nodes = (int)n;
        h->cb_given |= IO_CB_NODES_GIVEN;
    } else if (!strcmp(key, "cb_config_list") && val[0] && strlen(val) < sizeof h->cb_config_list &&
               io_hints_cb_count(val, "") >= 0) {
        snprintf(h->cb_config_list, sizeof h->cb_config_list, "%s", val);
        h->cb_given |= IO_CB_CONFIG_GIVEN;
    } else if (!strcmp(key, "romio_cb_read"))
        parse_switch(val, &h->cb_read);
    else if (!strcmp(key, "romio_cb_write"))
        parse_switch(val, &h->cb_write);
    else if (!strcmp(key, "pario_cb_read_pipeline"))
        parse_switch(val, &h->cb_read_pipeline);
    else if (!strcmp(key, "pario_cb_prefetch"))
        parse_switch(val, &h->cb_prefetch);
    else if (!strcmp(key, "pario_cb_write_behind"))
        parse_switch(val, &h->cb_write_behind);
    else if (!strcmp(key, "pario_cb_write_behind_delay") && parse_positive(val, &n) &&
             n <= INT32_MAX)
        h->cb_write_behind_delay = n;
    else if (!strcmp(key, "pario_prealloc_writes"))
        parse_switch(val, &h->prealloc_writes);
    else if (!strcmp(key, "romio_ds_read"))
        parse_switch(val, &h->ds_read);
    else if (!strcmp(key, "romio_ds_write"))
        parse_switch(val, &h->ds_write);
    else if (!strcmp(key, "ind_rd_buffer_size") && parse_positive(val, &n))
        h->ind_rd_buffer_size = n;
    else if (!strcmp(key, "ind_wr_buffer_size") && parse_positive(val, &n))
        h->ind_wr_buffer_size = n;
    else if (!strcmp(key, "pario_lock_span") && strcmp(val, "disable") && strcmp(val, "false"))
        parse_switch(val, &h->lock_span); /* not off: the span lock stays (indep/access.c) */
    else if (!strcmp(key, "pario_client_cache"))
        parse_switch(val, &h->client_cache);
    else if (!strcmp(key, "pario_write_call_bytes"))
        parse_call_bytes(val, &h->write_call_bytes);
    else if (!strcmp(key, "pario_read_call_bytes"))
        parse_call_bytes(val, &h->read_call_bytes);
    else if (!strcmp(key, "striping_unit") && parse_positive(val, &n)) {
        h->striping_unit = n;
        h->striping_given |= IO_STRIPING_UNIT_GIVEN;
    } else if (!strcmp(key, "striping_factor") && parse_positive(val, &n) && n <= INT32_MAX) {
        h->striping_factor = (int)n;
        h->striping_given |= IO_STRIPING_FACTOR_GIVEN;
    } else if (!strcmp(key, "pario_stripe_targets") && strlen(val) < sizeof h->stripe_targets) {
        snprintf(h->stripe_targets, sizeof h->stripe_targets, "%s", val);
    } else if (!strcmp(key, "romio_no_indep_rw") &&
               (!strcmp(val, "true") || !strcmp(val, "false"))) {
        h->no_indep_rw = !strcmp(val, "true");
    } else if (!io_hints_set_romio(h, key, val))
        hints_set_cache(h, key, val);
}

void io_hints_set(io_hints *h, const char *key, const char *val) {
    hints_set(h, key, val);
}

void io_hints_apply_info(io_hints *h, MPI_Info info) {
    if (info == MPI_INFO_NULL)
        return;
    int nkeys = 0;
    MPI_Info_get_nkeys(info, &nkeys);
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        MPI_Info_get_nthkey(info, i, key);
        MPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag);
        if (flag)
            hints_set(h, key, val);
    }
}

static char *trim(char *s) {
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

static void apply_hints_file(io_hints *h, const char *path) {
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[IO_HINT_LINE_MAX];
    while (fgets(line, sizeof line, f)) {
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *key = trim(line);
        char *sp = key;
        while (*sp && !isspace((unsigned char)*sp))
            sp++;
        if (!*sp)
            continue;
        *sp = '\0';
        hints_set(h, key, trim(sp + 1));
    }
    fclose(f);
}

extern char **environ;

/* The PARIO_HINT_<key> variables, in one pass over the environment (a
 * getenv per key cost more than the rest of an open); unknown keys are
 * ignored like unknown hints. */
static void apply_hint_env(io_hints *h) {
    static const char prefix[] = "PARIO_HINT_";
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, prefix, sizeof prefix - 1) != 0)
            continue;
        const char *key = *e + sizeof prefix - 1, *eq = strchr(key, '=');
        char name[96];
        if (!eq || (size_t)(eq - key) >= sizeof name)
            continue;
        memcpy(name, key, (size_t)(eq - key));
        name[eq - key] = '\0';
        hints_set(h, name, eq + 1);
    }
}

void io_hints_resolve(io_hints *h, MPI_Info info) {
    io_hints_apply_romio_file(h);
    const char *file = getenv("PARIO_HINTS");
    if (file && *file)
        apply_hints_file(h, file);
    io_hints_update(h, info);
}

void io_hints_update(io_hints *h, MPI_Info info) {
    io_hints_apply_info(h, info);
    apply_hint_env(h); /* the operator's override stays on top */
}

int io_hints_agree(io_hints *h, MPI_Comm comm) {
    io_hints first = *h;
    if (MPI_Bcast(&first, (int)sizeof first, MPI_BYTE, 0, comm) != MPI_SUCCESS)
        return PARIO_ERR_COMM;
    io_hints_adopt(h, &first);
    return PARIO_OK;
}

void io_hints_adopt(io_hints *h, const io_hints *rank0) {
    io_hints first = *rank0;
    first.ds_read = h->ds_read;
    first.ds_write = h->ds_write;
    first.ind_rd_buffer_size = h->ind_rd_buffer_size;
    first.ind_wr_buffer_size = h->ind_wr_buffer_size;
    first.prealloc_writes = h->prealloc_writes;
    first.lock_span = h->lock_span;
    first.write_call_bytes = h->write_call_bytes;
    first.read_call_bytes = h->read_call_bytes;
    *h = first;
}

int64_t io_hints_prealloc_min(const io_hints *h, int pays) {
    if (h->prealloc_writes == IO_DISABLE)
        return -1;
    if (h->prealloc_writes == IO_ENABLE)
        return 0;
    return pays ? IO_PREALLOC_MIN : -1;
}

int io_hints_to_info(const io_hints *h, MPI_Info *info) {
    if (MPI_Info_create(info) != MPI_SUCCESS)
        return PARIO_ERR_NO_MEM;
    char v[64];
    snprintf(v, sizeof v, "%lld", (long long)h->cb_buffer_size);
    MPI_Info_set(*info, "cb_buffer_size", v);
    snprintf(v, sizeof v, "%lld", (long long)h->cb_cycle_size);
    MPI_Info_set(*info, "pario_cb_cycle_size", v);
    snprintf(v, sizeof v, "%d", h->cb_nodes);
    MPI_Info_set(*info, "cb_nodes", v);
    MPI_Info_set(*info, "cb_config_list", h->cb_config_list);
    MPI_Info_set(*info, "romio_cb_read", switch_name(h->cb_read));
    MPI_Info_set(*info, "romio_cb_write", switch_name(h->cb_write));
    MPI_Info_set(*info, "romio_no_indep_rw", h->no_indep_rw ? "true" : "false");
    MPI_Info_set(*info, "pario_cb_read_pipeline", switch_name(h->cb_read_pipeline));
    MPI_Info_set(*info, "pario_cb_prefetch", switch_name(h->cb_prefetch));
    MPI_Info_set(*info, "pario_cb_write_behind", switch_name(h->cb_write_behind));
    snprintf(v, sizeof v, "%lld", (long long)h->cb_write_behind_delay);
    MPI_Info_set(*info, "pario_cb_write_behind_delay", v);
    MPI_Info_set(*info, "pario_prealloc_writes", switch_name(h->prealloc_writes));
    MPI_Info_set(*info, "romio_ds_read", switch_name(h->ds_read));
    MPI_Info_set(*info, "romio_ds_write", switch_name(h->ds_write));
    snprintf(v, sizeof v, "%lld", (long long)h->ind_rd_buffer_size);
    MPI_Info_set(*info, "ind_rd_buffer_size", v);
    snprintf(v, sizeof v, "%lld", (long long)h->ind_wr_buffer_size);
    MPI_Info_set(*info, "ind_wr_buffer_size", v);
    MPI_Info_set(*info, "pario_lock_span", switch_name(h->lock_span));
    MPI_Info_set(*info, "pario_client_cache", switch_name(h->client_cache));
    snprintf(v, sizeof v, "%lld", (long long)h->striping_unit);
    MPI_Info_set(*info, "striping_unit", v);
    snprintf(v, sizeof v, "%d", h->striping_factor);
    MPI_Info_set(*info, "striping_factor", v);
    io_hints_romio_to_info(h, *info);
    MPI_Info_set(*info, "pario_cache", switch_name(h->cache));
    snprintf(v, sizeof v, "%lld", (long long)h->cache_page_size);
    MPI_Info_set(*info, "pario_cache_page_size", v);
    snprintf(v, sizeof v, "%lld", (long long)h->cache_pages);
    MPI_Info_set(*info, "pario_cache_pages", v);
    MPI_Info_set(*info, "pario_read_once", switch_name(h->read_once));
    snprintf(v, sizeof v, "%lld", (long long)h->read_once_max);
    MPI_Info_set(*info, "pario_read_once_max", v);
    /* A list from $PARIO_STRIPE_TARGETS may be longer than an info value
     * can be (setting one is an error MPI handles as fatal): left out. */
    size_t targets_len = strlen(h->stripe_targets);
    if (targets_len > 0 && targets_len < MPI_MAX_INFO_VAL)
        MPI_Info_set(*info, "pario_stripe_targets", h->stripe_targets);
    return PARIO_OK;
}
