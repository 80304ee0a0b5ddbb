/* Which mounted file system holds a path. Plain C and libc only, so the
 * calibration program (tools/calibrate.c) and the library name a file
 * system the same way. */
#ifndef PARIO_IO_COST_MOUNT_H
#define PARIO_IO_COST_MOUNT_H

#include <stddef.h>

/* The mount point holding path and its file system type: the longest mount
 * point in /proc/self/mounts that contains path resolved (symbolic links
 * followed; a path that does not exist yet is resolved through its
 * directory); of mounts stacked on one point, the last. 0 on success, -1
 * when the path cannot be resolved, the table cannot be read, or a name does
 * not fit. */
int io_mount_of(const char *path, char *mount, size_t mount_len, char *type, size_t type_len);

#endif
