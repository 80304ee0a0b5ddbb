/* File names as ROMIO reads them: an optional file-system prefix ("ufs:",
 * "nfs:", "lustre:", ...) names the driver, and $ROMIO_FSTYPE_FORCE names it
 * for every file. */
#include "io/file/name.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "common/error.h"
#include "io/driver/stripe.h"

/* clang-format off */
/* Prefix -> driver. The prefixes are ROMIO's (pario reaches all those file
 * systems through their POSIX interface) and pario's own "stripe" (a file
 * striped over target directories, io/driver/stripe.c). A new driver adds a
 * row. */
static const struct io_prefix {
    const char *name;
    const io_driver *driver;
} io_prefixes[] = {
    {"stripe", &io_driver_stripe},
    {"ufs", &io_driver_posix},
    {"nfs", &io_driver_posix},
    {"xfs", &io_driver_posix},
    {"lustre", &io_driver_posix},
    {"gpfs", &io_driver_posix},
    {"pvfs2", &io_driver_posix},
    {"panfs", &io_driver_posix},
    {"daos", &io_driver_posix},
    {"ime", &io_driver_posix},
    {"quobytefs", &io_driver_posix},
    {"testfs", &io_driver_posix},
    {"bg", &io_driver_posix},
    {"bglockless", &io_driver_posix},
    {"pfs", &io_driver_posix},
    {"piofs", &io_driver_posix},
    {"hfs", &io_driver_posix},
    {"sfs", &io_driver_posix},
    {"ntfs", &io_driver_posix},
};
/* clang-format on */
#define IO_NPREFIXES (sizeof io_prefixes / sizeof io_prefixes[0])

/* The row whose name is the len bytes at s (either case, as ROMIO), or NULL. */
static const struct io_prefix *prefix_find(const char *s, size_t len) {
    for (size_t i = 0; i < IO_NPREFIXES; i++)
        if (strlen(io_prefixes[i].name) == len && !strncasecmp(io_prefixes[i].name, s, len))
            return &io_prefixes[i];
    return NULL;
}

/* Length of name's prefix without its ':': the text before the first ':'
 * when it is not empty and holds no '/'; 0 for a plain path. ROMIO takes any
 * ':' as the end of a prefix, so "/data/run:1" fails there; here such a
 * name is a path. */
static size_t prefix_length(const char *name) {
    const char *colon = strchr(name, ':');
    if (!colon || colon == name)
        return 0;
    const char *slash = memchr(name, '/', (size_t)(colon - name));
    return slash ? 0 : (size_t)(colon - name);
}

/* Longest list of the known prefixes in a message. */
#define IO_PREFIX_LIST_MAX 512

/* PARIO_ERR_IO (ROMIO's class) for a file system type named by `what`
 * (a prefix of the name, or $ROMIO_FSTYPE_FORCE) that pario does not know;
 * the message lists the ones it does. */
static int fail_unknown_type(const char *op, const char *name, const char *what, pario_error *err) {
    char known[IO_PREFIX_LIST_MAX];
    size_t used = 0;
    known[0] = '\0';
    for (size_t i = 0; i < IO_NPREFIXES && used < sizeof known; i++)
        used += (size_t)snprintf(known + used, sizeof known - used, "%s%s:", i ? " " : "",
                                 io_prefixes[i].name);
    return pario_fail(err, PARIO_ERR_IO, "%s %s: %s is not a file system type pario knows (%s)", op,
                      name, what, known);
}

/* The driver $ROMIO_FSTYPE_FORCE names ("nfs:" or "nfs"), NULL when unset. */
static int forced_driver(const char *op, const char *name, const io_driver **drv,
                         pario_error *err) {
    const char *force = getenv("ROMIO_FSTYPE_FORCE");
    *drv = NULL;
    if (!force || !*force)
        return PARIO_OK;
    size_t len = strcspn(force, ":");
    const struct io_prefix *p = prefix_find(force, len);
    if (!p) {
        char what[IO_PREFIX_LIST_MAX];
        snprintf(what, sizeof what, "ROMIO_FSTYPE_FORCE=%s", force);
        return fail_unknown_type(op, name, what, err);
    }
    *drv = p->driver;
    return PARIO_OK;
}

int io_name_resolve(const char *name, const char *op, io_name *out, pario_error *err) {
    out->path = name;
    out->driver = &io_driver_posix;
    size_t len = prefix_length(name);
    if (len > 0) {
        const struct io_prefix *p = prefix_find(name, len);
        if (!p) {
            char what[IO_PREFIX_LIST_MAX];
            snprintf(what, sizeof what,
                     "the prefix '%.*s:' (put ufs: in front of a name whose "
                     "first part holds ':')",
                     (int)len, name);
            return fail_unknown_type(op, name, what, err);
        }
        out->path = name + len + 1;
        out->driver = p->driver;
    }
    if (!*out->path)
        return pario_fail(err, PARIO_ERR_BAD_FILE, "%s %s: no file name after the prefix", op,
                          name);
    const io_driver *forced = NULL;
    int rc = forced_driver(op, name, &forced, err);
    if (forced)
        out->driver = forced;
    return rc;
}
