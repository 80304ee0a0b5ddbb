#include "io/cost/mount.h"

#include <libgen.h>
#include <limits.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The mount table, as this process sees it (its mount namespace). */
#define MOUNT_TABLE "/proc/self/mounts"
/* Room for one line of the table: two paths and the options. */
#define MOUNT_LINE_MAX (2 * PATH_MAX + 1024)

/* path made absolute with every symbolic link followed, or its directory's
 * when the path itself does not exist (a file about to be created). */
static int resolve(const char *path, char *out) {
    if (realpath(path, out))
        return 0;
    char dir[PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir)
        return -1;
    return realpath(dirname(dir), out) ? 0 : -1;
}

/* Length of mount point mnt when it contains the absolute path, else 0. */
static size_t covered_by(const char *mnt, const char *path) {
    size_t n = strlen(mnt);
    if (n == 1 && mnt[0] == '/')
        return 1;
    if (n == 0 || strncmp(path, mnt, n) != 0)
        return 0;
    return path[n] == '\0' || path[n] == '/' ? n : 0;
}

static int copy_name(char *dst, size_t len, const char *src) {
    return snprintf(dst, len, "%s", src) < (int)len ? 0 : -1;
}

int io_mount_of(const char *path, char *mount, size_t mount_len, char *type, size_t type_len) {
    char abs[PATH_MAX];
    if (!path || resolve(path, abs) != 0)
        return -1;
    FILE *f = setmntent(MOUNT_TABLE, "r");
    if (!f)
        return -1;
    char line[MOUNT_LINE_MAX];
    struct mntent ent;
    size_t best = 0;
    int rc = -1;
    while (getmntent_r(f, &ent, line, sizeof line)) {
        size_t n = covered_by(ent.mnt_dir, abs);
        if (n == 0 || n < best)
            continue;
        best = n;
        rc = copy_name(mount, mount_len, ent.mnt_dir) | copy_name(type, type_len, ent.mnt_type);
    }
    endmntent(f);
    return rc;
}
