/* File names with ROMIO's file-system prefixes (name.c). */
#ifndef PARIO_IO_FILE_NAME_H
#define PARIO_IO_FILE_NAME_H

#include "io/driver/driver.h"
#include "pario/pario.h"

/* A name as the program gave it, resolved: the path to open and the
 * driver to open it with. */
typedef struct io_name {
    const char *path;        /* inside the given name: after its prefix, if any */
    const io_driver *driver; /* the prefix's, else posix; $ROMIO_FSTYPE_FORCE wins */
} io_name;

/* Resolves name for the call op ("open", "delete"): a prefix ROMIO knows
 * ("ufs:", "nfs:", "lustre:", "gpfs:", "pvfs2:", "testfs:", ... either case)
 * is stripped and selects its driver; an unknown prefix, or a
 * $ROMIO_FSTYPE_FORCE naming no known type, is PARIO_ERR_IO (ROMIO's class);
 * nothing after the prefix is PARIO_ERR_BAD_FILE. A prefix is the text
 * before the first ':' when it holds no '/'. */
int io_name_resolve(const char *name, const char *op, io_name *out, pario_error *err);

#endif
