/* pario io: parallel file I/O with MPI-IO semantics.
 *
 * A pario_file is opened collectively over an MPI communicator. Offsets are in
 * bytes unless stated "in etypes" (the MPI-IO convention for view-relative
 * offsets). Access modes are MPI's MPI_MODE_* bits; hints are MPI_Info keys
 * (ROMIO's names where they mean the same thing, pario's own prefixed pario_).
 *
 * Every function returns PARIO_OK or a pario_err code. Functions on an open
 * file record the message of their last failure in the file
 * (pario_file_last_error). Collective functions return the same code on every
 * rank: when one rank fails, all ranks report that failure.
 *
 * Transfers report the number of bytes moved in *bytes (short reads at end of
 * file report fewer bytes than requested; this is not an error).
 */
#ifndef PARIO_IO_H
#define PARIO_IO_H

#include <mpi.h>
#include "pario/pario.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pario_file pario_file;

/* ---- open / close / file-level operations ---------------------------------- */

/* Collective over comm. amode: exactly one of MPI_MODE_RDONLY, WRONLY, RDWR,
 * plus any of CREATE, EXCL, DELETE_ON_CLOSE, UNIQUE_OPEN, SEQUENTIAL, APPEND.
 * info may be MPI_INFO_NULL. On failure *fh is NULL and err holds the reason. */
int pario_file_open(MPI_Comm comm, const char *path, int amode, MPI_Info info, pario_file **fh,
                    pario_error *err);
/* Collective. Frees the handle and sets *fh = NULL, even on error; err gets
 * the reason for a failure (e.g. a failed flush of written data). */
int pario_file_close(pario_file **fh, pario_error *err);
/* Not collective. */
int pario_file_delete(const char *path, MPI_Info info, pario_error *err);

/* The last failure recorded on this file (code PARIO_OK if none). */
const pario_error *pario_file_last_error(const pario_file *fh);
const char *pario_file_path(const pario_file *fh);
MPI_Comm pario_file_comm(const pario_file *fh); /* the file's private duplicate */

int pario_file_sync(pario_file *fh);                         /* collective; fsync */
int pario_file_get_size(pario_file *fh, MPI_Offset *size);   /* bytes */
int pario_file_set_size(pario_file *fh, MPI_Offset size);    /* collective */
int pario_file_preallocate(pario_file *fh, MPI_Offset size); /* collective */
int pario_file_get_amode(const pario_file *fh, int *amode);
int pario_file_get_group(const pario_file *fh, MPI_Group *group); /* caller frees */
int pario_file_get_info(pario_file *fh, MPI_Info *info); /* hints in effect; caller frees */
int pario_file_set_info(pario_file *fh, MPI_Info info);  /* collective */
int pario_file_set_atomicity(pario_file *fh, int flag);  /* collective */
int pario_file_get_atomicity(const pario_file *fh, int *flag);

/* ---- views ------------------------------------------------------------------ */

/* Collective. datarep: "native", "internal" (the same layout), "external32" or
 * a name registered with pario_register_datarep (see "data representations"
 * below); others give PARIO_ERR_UNSUPPORTED_DATAREP. Resets the individual file pointer
 * to 0. The filetype must be built from the etype (its size a multiple of the
 * etype's size) and have non-negative, monotonically non-decreasing offsets. */
int pario_file_set_view(pario_file *fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                        const char *datarep, MPI_Info info);
/* etype and filetype are the file's own handles (named types as given,
 * derived types as private duplicates), valid while the view is in effect;
 * the caller must not free them. datarep must hold MPI_MAX_DATAREP_STRING bytes. */
int pario_file_get_view(const pario_file *fh, MPI_Offset *disp, MPI_Datatype *etype,
                        MPI_Datatype *filetype, char *datarep);

/* Individual file pointer, in etypes relative to the view. whence is
 * MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END. */
int pario_file_seek(pario_file *fh, MPI_Offset offset, int whence);
int pario_file_get_position(const pario_file *fh, MPI_Offset *offset);
/* Absolute byte offset of a view-relative offset in etypes. */
int pario_file_get_byte_offset(pario_file *fh, MPI_Offset offset, MPI_Offset *disp);
int pario_file_get_type_extent(const pario_file *fh, MPI_Datatype type, MPI_Aint *extent);

/* ---- data access -------------------------------------------------------------- */

/* Independent, explicit offset (in etypes, relative to the view). */
int pario_file_read_at(pario_file *fh, MPI_Offset offset, void *buf, MPI_Count count,
                       MPI_Datatype type, MPI_Count *bytes);
int pario_file_write_at(pario_file *fh, MPI_Offset offset, const void *buf, MPI_Count count,
                        MPI_Datatype type, MPI_Count *bytes);
/* Independent, individual file pointer (advanced by the data moved). */
int pario_file_read(pario_file *fh, void *buf, MPI_Count count, MPI_Datatype type,
                    MPI_Count *bytes);
int pario_file_write(pario_file *fh, const void *buf, MPI_Count count, MPI_Datatype type,
                     MPI_Count *bytes);
/* Collective forms: every rank of the file's communicator calls them. */
int pario_file_read_at_all(pario_file *fh, MPI_Offset offset, void *buf, MPI_Count count,
                           MPI_Datatype type, MPI_Count *bytes);
int pario_file_write_at_all(pario_file *fh, MPI_Offset offset, const void *buf, MPI_Count count,
                            MPI_Datatype type, MPI_Count *bytes);
int pario_file_read_all(pario_file *fh, void *buf, MPI_Count count, MPI_Datatype type,
                        MPI_Count *bytes);
int pario_file_write_all(pario_file *fh, const void *buf, MPI_Count count, MPI_Datatype type,
                         MPI_Count *bytes);

/* ---- shared file pointer ---------------------------------------------------------
 * One pointer per open file, shared by all ranks, in etypes of the view (all
 * ranks must use the same view). Independent calls advance it atomically by
 * the amount requested, in no particular order between ranks; ordered calls
 * are collective and access in rank order. set_view resets it to 0. */
int pario_file_read_shared(pario_file *fh, void *buf, MPI_Count count, MPI_Datatype type,
                           MPI_Count *bytes);
int pario_file_write_shared(pario_file *fh, const void *buf, MPI_Count count, MPI_Datatype type,
                            MPI_Count *bytes);
int pario_file_read_ordered(pario_file *fh, void *buf, MPI_Count count, MPI_Datatype type,
                            MPI_Count *bytes);
int pario_file_write_ordered(pario_file *fh, const void *buf, MPI_Count count, MPI_Datatype type,
                             MPI_Count *bytes);
/* Collective; every rank passes the same offset and whence. */
int pario_file_seek_shared(pario_file *fh, MPI_Offset offset, int whence);
int pario_file_get_position_shared(pario_file *fh, MPI_Offset *offset);

/* ---- nonblocking independent access ---------------------------------------------
 * The call checks its arguments (errors are returned by the call itself) and
 * advances the individual or shared pointer by the amount requested; the
 * bytes then move in a background thread of the file, which makes no MPI
 * call, in the order the requests were started. The buffer belongs to the
 * request until it has been waited for. */
typedef struct pario_request pario_request;

int pario_file_iread_at(pario_file *fh, MPI_Offset offset, void *buf, MPI_Count count,
                        MPI_Datatype type, pario_request **req);
int pario_file_iwrite_at(pario_file *fh, MPI_Offset offset, const void *buf, MPI_Count count,
                         MPI_Datatype type, pario_request **req);
int pario_file_iread(pario_file *fh, void *buf, MPI_Count count, MPI_Datatype type,
                     pario_request **req);
int pario_file_iwrite(pario_file *fh, const void *buf, MPI_Count count, MPI_Datatype type,
                      pario_request **req);
int pario_file_iread_shared(pario_file *fh, void *buf, MPI_Count count, MPI_Datatype type,
                            pario_request **req);
int pario_file_iwrite_shared(pario_file *fh, const void *buf, MPI_Count count, MPI_Datatype type,
                             pario_request **req);
/* *done = 1 once the request has finished; never blocks, makes no MPI call. */
int pario_request_test(const pario_request *req, int *done);
/* Blocks until the request has finished, then frees it and returns its
 * outcome: PARIO_OK or the access's error code (its message copied into err
 * when err is not NULL); *bytes gets the bytes moved. */
int pario_request_wait(pario_request *req, MPI_Count *bytes, pario_error *err);
/* Gives the request up without waiting: the access still runs (close waits
 * for it), its outcome is not reported. */
void pario_request_free(pario_request *req);

/* ---- data representations ------------------------------------------------------
 * set_view accepts "native" (and "internal", the same layout), "external32"
 * (big-endian IEEE, MPI 3.1 section 13.5.2) and every name registered with
 * pario_register_datarep. pario keeps a view's file layout: every predefined
 * type used through a non-native view must have the same size in the file as
 * in memory, else PARIO_ERR_UNSUPPORTED_DATAREP (external32: MPI_LONG,
 * MPI_UNSIGNED_LONG, MPI_WCHAR, MPI_LONG_DOUBLE and the pair types are
 * refused). MPI_BYTE and MPI_PACKED data is never converted. */

/* Converts count items of the typemap of datatype (tiled over userbuf),
 * starting at typemap item `position`, between userbuf and the packed filebuf
 * (same contract as MPI_Datarep_conversion_function). Returns MPI_SUCCESS or
 * an error code, which fails the access with PARIO_ERR_CONVERSION. */
typedef int pario_datarep_conversion_fn(void *userbuf, MPI_Datatype datatype, int count,
                                        void *filebuf, MPI_Offset position, void *extra_state);
/* The size in the file of the predefined datatype (MPI_Datarep_extent_function). */
typedef int pario_datarep_extent_fn(MPI_Datatype datatype, MPI_Aint *file_extent,
                                    void *extra_state);

/* Not collective. Registers a representation for the rest of the process;
 * read_fn/write_fn may be NULL (no conversion in that direction), extent_fn
 * may not. PARIO_ERR_DUP_DATAREP when the name is taken (the predefined ones
 * included), PARIO_ERR_ARG for a NULL, empty or too long name or a NULL
 * extent_fn, PARIO_ERR_NO_MEM when the registry is full. Thread safe. */
int pario_register_datarep(const char *name, pario_datarep_conversion_fn *read_fn,
                           pario_datarep_conversion_fn *write_fn,
                           pario_datarep_extent_fn *extent_fn, void *extra_state, pario_error *err);
/* The same with large-count conversion functions (MPI 4's
 * MPI_Datarep_conversion_function_c): count is an MPI_Count. */
typedef int pario_datarep_conversion_c_fn(void *userbuf, MPI_Datatype datatype, MPI_Count count,
                                          void *filebuf, MPI_Offset position, void *extra_state);
int pario_register_datarep_c(const char *name, pario_datarep_conversion_c_fn *read_fn,
                             pario_datarep_conversion_c_fn *write_fn,
                             pario_datarep_extent_fn *extent_fn, void *extra_state,
                             pario_error *err);
/* The extent of type in files of representation `datarep`: a predefined type's
 * size there, a derived type's native extent when all its types keep their
 * size (else PARIO_ERR_UNSUPPORTED_DATAREP). */
int pario_datarep_type_extent(const char *datarep, MPI_Datatype type, MPI_Aint *extent,
                              pario_error *err);

#ifdef __cplusplus
}
#endif

#endif
