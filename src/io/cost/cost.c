#include "io/cost/cost.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/cost/mount.h"

/* Longest file system type name kept (Linux's are far shorter). */
#define COST_TYPE_MAX 64

/* One file system's costs as read from one record file. */
typedef struct cost_entry {
    struct cost_entry *next;
    char *file; /* the record file read */
    char *mount;
    char type[COST_TYPE_MAX];
    uint64_t dev; /* the device of the file system last found at mount, 0: none yet */
    io_costs costs;
} cost_entry;

/* The records this process has read: looked up at every open, extended at
 * the first open on a file system; never shrinks. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static cost_entry *registry;

void io_costs_default(io_costs *c) {
    *c = (io_costs){.write_call_bytes = IO_WRITE_CALL_BYTES,
                    .read_call_bytes = IO_READ_CALL_BYTES,
                    .reserve = IO_RESERVE_UNMEASURED,
                    .recorded = 0};
}

int io_costs_reserve_pays(const io_costs *c, int fs_default) {
    if (c->reserve == IO_RESERVE_UNMEASURED)
        return fs_default;
    return c->reserve == IO_RESERVE_PAYS;
}

int io_costs_file(char *path, size_t len) {
    const char *costs = getenv("PARIO_COSTS");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n = -1;
    if (costs && *costs)
        n = snprintf(path, len, "%s", costs);
    else if (xdg && *xdg)
        n = snprintf(path, len, "%s/pario/costs", xdg);
    else if (home && *home)
        n = snprintf(path, len, "%s/.cache/pario/costs", home);
    return n > 0 && (size_t)n < len;
}

/* A call cost: decimal digits only, 1 to IO_CALL_BYTES_MAX. */
static int parse_call_bytes(const char *v, int64_t *out) {
    if (*v < '0' || *v > '9')
        return 0;
    errno = 0;
    char *end = NULL;
    long long x = strtoll(v, &end, 10);
    if (errno || *end != '\0' || x <= 0 || x > IO_CALL_BYTES_MAX)
        return 0;
    *out = x;
    return 1;
}

static int parse_reserve(const char *v, io_reserve *out) {
    if (!strcmp(v, "yes"))
        *out = IO_RESERVE_PAYS;
    else if (!strcmp(v, "no"))
        *out = IO_RESERVE_DOES_NOT_PAY;
    else
        return 0;
    return 1;
}

/* Copy v to out, turning \ooo octal escapes into their bytes; 0 when a
 * backslash starts no such escape or out is too small. */
static int unescape(const char *v, char *out, size_t len) {
    size_t n = 0;
    for (; *v; n++) {
        if (n + 1 >= len)
            return 0;
        if (*v != '\\') {
            out[n] = *v++;
            continue;
        }
        int code = 0;
        for (int i = 1; i <= 3; i++) {
            if (v[i] < '0' || v[i] > '7')
                return 0;
            code = code * 8 + (v[i] - '0');
        }
        if (code == 0 || code > UCHAR_MAX)
            return 0;
        out[n] = (char)code;
        v += 4;
    }
    out[n] = '\0';
    return n > 0;
}

/* Which of a record's required fields have been seen. */
enum { SEEN_MOUNT = 1, SEEN_TYPE = 2, SEEN_WRITE = 4, SEEN_READ = 8, SEEN_RESERVE = 16 };
#define SEEN_ALL 31

/* Take one key=value field; the bit of a required field read well, 0 for
 * any other key, -1 for a malformed field. */
static int record_field(char *field, char *mount, size_t mount_len, char *type, size_t type_len,
                        io_costs *c) {
    char *eq = strchr(field, '=');
    if (!eq || eq == field)
        return -1;
    *eq = '\0';
    const char *k = field, *v = eq + 1;
    if (!strcmp(k, "mount"))
        return unescape(v, mount, mount_len) && mount[0] == '/' ? SEEN_MOUNT : -1;
    if (!strcmp(k, "type"))
        return *v && snprintf(type, type_len, "%s", v) < (int)type_len ? SEEN_TYPE : -1;
    if (!strcmp(k, "write_call_bytes"))
        return parse_call_bytes(v, &c->write_call_bytes) ? SEEN_WRITE : -1;
    if (!strcmp(k, "read_call_bytes"))
        return parse_call_bytes(v, &c->read_call_bytes) ? SEEN_READ : -1;
    if (!strcmp(k, "reserve"))
        return parse_reserve(v, &c->reserve) ? SEEN_RESERVE : -1;
    return 0;
}

int io_costs_parse_record(const char *line, char *mount, size_t mount_len, char *type,
                          size_t type_len, io_costs *c) {
    const char *start = line + strspn(line, " \t");
    if (*start == '#')
        return 0;
    char *copy = strdup(start);
    if (!copy)
        return 0;
    io_costs got;
    io_costs_default(&got);
    int seen = 0, bad = 0;
    char *save = NULL;
    for (char *f = strtok_r(copy, " \t\r\n", &save); f && !bad;
         f = strtok_r(NULL, " \t\r\n", &save)) {
        int bit = record_field(f, mount, mount_len, type, type_len, &got);
        bad = bit < 0 || (seen & bit);
        seen |= bit > 0 ? bit : 0;
    }
    free(copy);
    if (bad || seen != SEEN_ALL)
        return 0;
    got.recorded = 1;
    *c = got;
    return 1;
}

/* The last valid record for (mount, type) in the file at path; 0 when there
 * is none or the file cannot be read. */
static int read_record(const char *path, const char *mount, const char *type, io_costs *c) {
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char *line = NULL;
    size_t cap = 0;
    int found = 0;
    while (getline(&line, &cap, f) >= 0) {
        char m[PATH_MAX], t[COST_TYPE_MAX];
        io_costs rec;
        if (io_costs_parse_record(line, m, sizeof m, t, sizeof t, &rec) && !strcmp(m, mount) &&
            !strcmp(t, type)) {
            *c = rec;
            found = 1;
        }
    }
    free(line);
    fclose(f);
    return found;
}

/* The entry a file on device dev was last looked up in (dev 0: none):
 * reading the mount table at every open costs more than the rest of it. */
static cost_entry *registry_find_dev(const char *file, uint64_t dev) {
    for (cost_entry *e = dev ? registry : NULL; e; e = e->next)
        if (e->dev == dev && !strcmp(e->file, file))
            return e;
    return NULL;
}

static cost_entry *registry_find(const char *file, const char *mount, const char *type) {
    for (cost_entry *e = registry; e; e = e->next)
        if (!strcmp(e->file, file) && !strcmp(e->mount, mount) && !strcmp(e->type, type))
            return e;
    return NULL;
}

/* Remember costs read for (file, mount, type); without memory they are
 * simply read again next time. Called with registry_lock held. */
static void registry_add(const char *file, const char *mount, const char *type, const io_costs *c) {
    cost_entry *e = calloc(1, sizeof *e);
    if (!e)
        return;
    e->file = strdup(file);
    e->mount = strdup(mount);
    if (!e->file || !e->mount) {
        free(e->file);
        free(e->mount);
        free(e);
        return;
    }
    snprintf(e->type, sizeof e->type, "%s", type);
    e->costs = *c;
    e->next = registry;
    registry = e;
}

void io_costs_lookup(const char *path, uint64_t dev, io_costs *c) {
    io_costs_default(c);
    char file[PATH_MAX], mount[PATH_MAX], type[COST_TYPE_MAX];
    if (!io_costs_file(file, sizeof file))
        return;
    pthread_mutex_lock(&registry_lock);
    cost_entry *e = registry_find_dev(file, dev);
    pthread_mutex_unlock(&registry_lock);
    if (e) { /* entries are never freed nor changed but for dev */
        *c = e->costs;
        return;
    }
    if (io_mount_of(path, mount, sizeof mount, type, sizeof type) != 0)
        return;
    pthread_mutex_lock(&registry_lock);
    e = registry_find(file, mount, type);
    if (!e) {
        read_record(file, mount, type, c);
        registry_add(file, mount, type, c);
        e = registry_find(file, mount, type);
    }
    if (e) {
        *c = e->costs;
        e->dev = dev;
    }
    pthread_mutex_unlock(&registry_lock);
}
