/* The layout record of a striped file and the layout of a new one. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/error.h"
#include "io/driver/stripe.h"
#include "io/driver/sys.h"

void io_stripe_layout_free(io_stripe_layout *l) {
    for (int i = 0; i < IO_STRIPE_MAX_FACTOR; i++) {
        free(l->objects[i]);
        l->objects[i] = NULL;
    }
}

static int bad_record(pario_error *err, const char *path, const char *why) {
    return pario_fail(err, PARIO_ERR_BAD_FILE, "open %s: bad stripe layout record: %s", path, why);
}

/* The value of "<key> <number>\n" at *p; advances *p past the line. */
static int parse_number_line(const char **p, const char *key, int64_t *out) {
    size_t k = strlen(key);
    if (strncmp(*p, key, k) != 0 || (*p)[k] != ' ')
        return 0;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(*p + k + 1, &end, 10);
    if (errno || end == *p + k + 1 || *end != '\n' || v <= 0)
        return 0;
    *out = v;
    *p = end + 1;
    return 1;
}

static int parse_objects(io_stripe_layout *l, const char *p, const char *path, pario_error *err) {
    for (int i = 0; i < l->factor; i++) {
        const char *nl = strchr(p, '\n');
        if (strncmp(p, "object /", 8) != 0 || !nl)
            return bad_record(err, path, "an object line is missing or not an absolute path");
        l->objects[i] = strndup(p + 7, (size_t)(nl - p - 7));
        if (!l->objects[i])
            return pario_fail(err, PARIO_ERR_NO_MEM, "open %s: out of memory", path);
        p = nl + 1;
    }
    return *p ? bad_record(err, path, "text after the last object") : PARIO_OK;
}

int io_stripe_layout_parse(io_stripe_layout *l, const char *text, const char *path,
                           pario_error *err) {
    memset(l, 0, sizeof *l);
    size_t m = strlen(IO_STRIPE_MAGIC);
    if (strncmp(text, IO_STRIPE_MAGIC, m) != 0)
        return bad_record(err, path, "no layout header");
    const char *p = text + m;
    int64_t factor = 0;
    if (!parse_number_line(&p, "unit", &l->unit) || !parse_number_line(&p, "factor", &factor) ||
        factor > IO_STRIPE_MAX_FACTOR)
        return bad_record(err, path, "unit or factor missing or out of range");
    l->factor = (int)factor;
    int rc = parse_objects(l, p, path, err);
    if (rc != PARIO_OK)
        io_stripe_layout_free(l);
    return rc;
}

int64_t io_stripe_layout_format(const io_stripe_layout *l, char *buf, int64_t cap) {
    int64_t n = snprintf(buf, (size_t)cap, "%sunit %lld\nfactor %d\n", IO_STRIPE_MAGIC,
                         (long long)l->unit, l->factor);
    for (int i = 0; i < l->factor && n < cap; i++)
        n += snprintf(buf + n, (size_t)(cap - n), "object %s\n", l->objects[i]);
    return n < cap ? n : -1;
}

int io_stripe_is_record(int fd) {
    struct stat st;
    char head[sizeof IO_STRIPE_MAGIC];
    size_t m = strlen(IO_STRIPE_MAGIC);
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)m ||
        st.st_size > IO_STRIPE_RECORD_MAX)
        return 0;
    return pread(fd, head, m, 0) == (ssize_t)m && memcmp(head, IO_STRIPE_MAGIC, m) == 0;
}

int io_stripe_layout_read(int fd, io_stripe_layout *l, const char *path, pario_error *err) {
    memset(l, 0, sizeof *l);
    if (!io_stripe_is_record(fd))
        return bad_record(err, path, "the file holds no layout");
    char *text = malloc((size_t)IO_STRIPE_RECORD_MAX + 1);
    if (!text)
        return pario_fail(err, PARIO_ERR_NO_MEM, "open %s: out of memory", path);
    int64_t got = 0;
    ssize_t n;
    while (got < IO_STRIPE_RECORD_MAX &&
           (n = io_sys_pread(fd, text + got, (size_t)(IO_STRIPE_RECORD_MAX - got), got)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            free(text);
            return pario_fail_errno(err, errno, "read layout of", path);
        }
        got += n;
    }
    text[got] = '\0';
    int rc = io_stripe_layout_parse(l, text, path, err);
    free(text);
    return rc;
}

/* FNV-1a of s: tells apart files of one base name in different directories. */
static uint32_t name_hash(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* The absolute path of the logical file (its directory resolved). */
static void absolute_path(const char *path, char *out, size_t cap) {
    char dir[PATH_MAX], base[PATH_MAX], real[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    snprintf(base, sizeof base, "%s", path);
    int n = -1;
    if (realpath(dirname(dir), real))
        n = snprintf(out, cap, "%s/%s", real, basename(base));
    if (n < 0 || (size_t)n >= cap)
        snprintf(out, cap, "%s", path);
}

/* The next comma-separated target of *list as an absolute directory. */
static int next_target(const char **list, char *out, const char *path, pario_error *err) {
    const char *p = *list, *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    char name[PATH_MAX];
    if (len == 0 || len >= sizeof name)
        return pario_fail(err, PARIO_ERR_ARG, "open %s: empty or too long stripe target in \"%s\"",
                          path, *list);
    memcpy(name, p, len);
    name[len] = '\0';
    *list = comma ? comma + 1 : p + len;
    struct stat st;
    if (!realpath(name, out) || stat(out, &st) != 0)
        return pario_fail(err, pario_err_from_errno(errno), "open %s: stripe target %s: %s", path,
                          name, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return pario_fail(err, PARIO_ERR_ARG, "open %s: stripe target %s is not a directory", path,
                          name);
    return PARIO_OK;
}

int io_stripe_layout_plan(io_stripe_layout *l, const io_stripe_wish *w, const char *path,
                          pario_error *err) {
    memset(l, 0, sizeof *l);
    char abs[PATH_MAX], base[PATH_MAX], dir[PATH_MAX];
    absolute_path(path, abs, sizeof abs);
    snprintf(base, sizeof base, "%s", path);
    const char *name = basename(base);
    uint32_t tag = name_hash(abs);
    const char *list = w->targets;
    int want = w->factor > 0 && w->factor < IO_STRIPE_MAX_FACTOR ? w->factor : IO_STRIPE_MAX_FACTOR;
    l->unit = w->unit > 0 ? w->unit : IO_STRIPE_DEFAULT_UNIT;
    int rc = PARIO_OK;
    while (rc == PARIO_OK && *list && l->factor < want) {
        rc = next_target(&list, dir, path, err);
        if (rc != PARIO_OK)
            break;
        char obj[PATH_MAX + 64];
        snprintf(obj, sizeof obj, "%s/%s.%08x.%d", dir, name, tag, l->factor);
        l->objects[l->factor] = strdup(obj);
        if (!l->objects[l->factor++])
            rc = pario_fail(err, PARIO_ERR_NO_MEM, "open %s: out of memory", path);
    }
    if (rc == PARIO_OK && l->factor == 0)
        rc = pario_fail(err, PARIO_ERR_ARG, "open %s: no stripe targets given", path);
    if (rc != PARIO_OK)
        io_stripe_layout_free(l);
    return rc;
}
