/* File views: displacement, etype and filetype, and the mapping from a
 * position in the view's data stream (bytes of visible data) to absolute file
 * offsets. The filetype tiles the file from `disp`, one instance every
 * `extent` bytes; only its data bytes are visible. */
#ifndef PARIO_IO_VIEW_H
#define PARIO_IO_VIEW_H

#include <mpi.h>
#include <stdbool.h>
#include "io/datarep/datarep.h"
#include "io/flat/flat.h"
#include "pario/pario.h"

typedef struct io_view {
    MPI_Offset disp;
    MPI_Datatype etype, filetype; /* private duplicates of derived types; named as given */
    int64_t etype_size;
    const flat_type *flat; /* the filetype, flattened (cached on filetype) */
    bool empty;            /* the filetype holds no data: nothing to read or write */
    bool linear;           /* data stream maps to [disp + base, ...) without gaps */
    bool overlapping;      /* some blocks overlap (a file opened read-only) */
    int64_t linear_base;   /* byte of stream position 0 relative to disp, when linear */
    char datarep[MPI_MAX_DATAREP_STRING];
    const io_datarep *rep; /* NULL for "native" and "internal" */
} io_view;

/* PARIO_OK when t is a datatype pario can use: not null and committed.
 * MPI errors are raised on comm, which must have MPI_ERRORS_RETURN.
 * op/what/path name the call, the argument and the file in the message. */
int io_check_type(MPI_Comm comm, MPI_Datatype t, const char *op, const char *what, const char *path,
                  pario_error *err);

/* The default view: displacement 0, etype and filetype MPI_BYTE, "native". */
int view_init_default(io_view *v, MPI_Comm comm, const char *path, pario_error *err);
/* Validate a view and make it in *out without installing it (on error
 * *out holds nothing to free), so that a collective set_view can agree
 * before any rank changes its view. With read_only (a file opened
 * MPI_MODE_RDONLY) the filetype's blocks may overlap, as MPI allows. */
int view_make(io_view *out, MPI_Comm comm, MPI_Offset disp, MPI_Datatype etype,
              MPI_Datatype filetype, const char *datarep, const char *path, bool read_only,
              pario_error *err);
/* Replace v with a view view_make made (which is left empty). */
void view_install(io_view *v, io_view *made);
void view_free(io_view *v);
/* The extent of type in the file under the view's data representation
 * (MPI_File_get_type_extent). */
int view_type_extent(const io_view *v, MPI_Datatype type, MPI_Aint *extent, pario_error *err);

/* Start a file-extent iterator at data-stream byte `pos`. */
int view_iter_init(const io_view *v, flat_iter *it, int64_t pos);
/* Absolute file offset of data-stream byte `pos`. */
int view_byte_of_pos(const io_view *v, int64_t pos, int64_t *off);
/* Number of data-stream bytes that lie below absolute file offset `off`. */
int view_pos_of_byte(const io_view *v, int64_t off, int64_t *pos);

#endif
