/* pario pgas io: collective file I/O of shared arrays (UPC-IO 1.0) on the io layer.
 *
 *   UPC-IO                                 pgas io
 *   upc_file_t *                           pario_pgas_file *
 *   upc_off_t, upc_hint_t                  pario_pgas_off, pario_pgas_hint
 *   upc_local_memvec_t, upc_shared_memvec_t, upc_filevec_t
 *                                          pario_pgas_local_memvec, _shared_memvec, _filevec
 *   upc_all_fopen / fclose / fsync         pario_pgas_fopen / fclose / fsync
 *   upc_all_fseek / fset_size / fget_size / fpreallocate / fcntl
 *                                          pario_pgas_fseek / ... / fcntl
 *   upc_all_fread_local / fwrite_local     pario_pgas_fread_local / fwrite_local
 *   upc_all_fread_shared / fwrite_shared   pario_pgas_fread_shared / fwrite_shared
 *   upc_all_f{read,write}_list_{local,shared}   pario_pgas_f{read,write}_list_{local,shared}
 *   the _async forms, upc_all_fwait_async, upc_all_ftest_async
 *                                          the same names with _async, fwait_async, ftest_async
 *   UPC_RDONLY ... UPC_DELETE_ON_CLOSE     PARIO_PGAS_RDONLY ... (the same bits)
 *   UPC_GET_CA_SEMANTICS ... UPC_ASYNC_OUTSTANDING   PARIO_PGAS_GET_CA_SEMANTICS ...
 *   UPC_IN_ALLSYNC ... UPC_OUT_NOSYNC      PARIO_PGAS_IN_ALLSYNC ...
 *
 * Every function is collective over the ranks of the pgas context the file was
 * opened with, returns PARIO_OK or a pario_err code, and returns the same code
 * on every rank: arguments are checked on every rank and agreed on before any
 * byte moves, so a bad argument on one rank fails the call everywhere (with that
 * rank's message) and moves nothing. The message is in pario_pgas_file_last_error
 * (in err for fopen and fclose). UPC-IO reports errors as -1 and errno;
 * pario_pgas_io_errno gives the errno value of a code.
 *
 * ---- How shared arrays reach the file ------------------------------------------
 * A read or write of a shared buffer is one collective access of the io layer.
 * Each rank accesses only the elements it owns: from its own memory (one
 * contiguous run per buffer) to their places in the file, which follow from the
 * layout (element size, block factor, rank count, the buffer's first rank and
 * phase) as a file view of at most three pieces (a partial first block, a vector
 * of whole blocks, a partial last block). The file holds the buffer in index
 * order whatever its layout, so an array written with one block factor and rank
 * count reads back with another. Two-phase aggregation, data sieving and the
 * hints of the io layer apply as to any MPI-IO access; no rank gathers data of
 * others. Lists and buffers of other ranks (individual file pointers) are
 * exchanged as descriptions (a few words each), never as data.
 *
 * ---- File pointers -------------------------------------------------------------
 * UPC_INDIVIDUAL_FP: each rank its own pointer. UPC_COMMON_FP: one pointer; every
 * rank passes the same arguments to calls that use it (else PARIO_ERR_NOT_SAME).
 * _local reads and writes need individual pointers (PARIO_ERR_UNSUPPORTED_OPERATION
 * otherwise); list calls use explicit offsets and leave the pointers alone.
 * A successful read or write advances the pointer by the bytes it moved.
 *
 * ---- Consistency ---------------------------------------------------------------
 * Weak (default): the io layer's nonatomic mode; data written by one rank is seen
 * by others after fsync or close, or when they do not overlap. UPC_STRONG_CA: the
 * io layer's atomic mode (each access is atomic with respect to the others).
 *
 * ---- Synchronisation flags -----------------------------------------------------
 * The same on every rank (else PARIO_ERR_NOT_SAME). IN_ALLSYNC and IN_MYSYNC
 * start the call with a pgas barrier (every shared access before the call is
 * complete); IN_NOSYNC does not. The OUT_ flags end
 * it the same way. Without OUT_ALLSYNC/MYSYNC a shared buffer read into is
 * complete on its owners when they return; other ranks see it after the next
 * barrier.
 *
 * ---- Asynchronous calls --------------------------------------------------------
 * At most one per file. The _async call checks and agrees on its arguments,
 * makes the IN synchronisation, starts the transfer and returns: each rank's
 * bytes move in the background (the io layer's nonblocking accesses, in the
 * file's own thread) while the program goes on. Until the call completes the
 * program must not touch the private buffers, nor the shared array's elements
 * the call reads or writes. fwait_async completes it: waits for every rank's
 * bytes, agrees on the outcome (a failure on one rank, of the arguments or of
 * the transfer, is every rank's code and message), makes the OUT
 * synchronisation and advances the pointer; ftest_async does the same once
 * every rank's bytes have moved, else sets *flag = 0. The outcome, argument
 * errors included, comes from the wait or test; the starting call itself fails
 * only when a call is already outstanding (PARIO_ERR_REQUEST on every rank,
 * the outstanding call untouched). Any other call on the file while one is
 * outstanding fails with PARIO_ERR_REQUEST (except fcntl ASYNC_OUTSTANDING);
 * fclose completes it first, as fwait_async would, and returns its failure.
 */
#ifndef PARIO_PGAS_IO_H
#define PARIO_PGAS_IO_H

#include <stddef.h>
#include <stdint.h>
#include "pario/pgas.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pario_pgas_file pario_pgas_file;
typedef int64_t pario_pgas_off; /* upc_off_t: file offsets and sizes in bytes */

/* fopen flags (UPC-IO 1.0 values). Exactly one of RDONLY, WRONLY, RDWR and
 * exactly one of INDIVIDUAL_FP, COMMON_FP. */
#define PARIO_PGAS_RDONLY (1 << 0)
#define PARIO_PGAS_WRONLY (1 << 1)
#define PARIO_PGAS_RDWR (1 << 2)
#define PARIO_PGAS_INDIVIDUAL_FP (1 << 3)
#define PARIO_PGAS_COMMON_FP (1 << 4)
#define PARIO_PGAS_APPEND (1 << 5)           /* pointers start at the end of the file */
#define PARIO_PGAS_CREATE (1 << 6)           /* create the file if it does not exist */
#define PARIO_PGAS_EXCL (1 << 7)             /* fail if it exists */
#define PARIO_PGAS_STRONG_CA (1 << 8)        /* strong consistency and atomicity */
#define PARIO_PGAS_TRUNC (1 << 9)            /* size 0 at open (needs write access) */
#define PARIO_PGAS_DELETE_ON_CLOSE (1 << 10) /* removed by fclose */

/* fcntl commands (UPC-IO 1.0 values); arg and *result as noted. */
#define PARIO_PGAS_GET_CA_SEMANTICS (1 << 0)        /* *result: STRONG_CA or 0 (weak) */
#define PARIO_PGAS_SET_WEAK_CA_SEMANTICS (1 << 1)   /* collective */
#define PARIO_PGAS_SET_STRONG_CA_SEMANTICS (1 << 2) /* collective */
#define PARIO_PGAS_GET_FP (1 << 3)                  /* *result: COMMON_FP or INDIVIDUAL_FP */
#define PARIO_PGAS_SET_COMMON_FP (1 << 4)           /* collective; pointers set to 0 */
#define PARIO_PGAS_SET_INDIVIDUAL_FP (1 << 5)       /* collective; pointers set to 0 */
#define PARIO_PGAS_GET_FL (1 << 6)                  /* *result: the flags in effect */
#define PARIO_PGAS_GET_FN (1 << 7)                  /* arg: const char **, the file name */
#define PARIO_PGAS_GET_HINTS (1 << 8)          /* arg: const pario_pgas_hint **; *result: count */
#define PARIO_PGAS_SET_HINT (1 << 9)           /* arg: const pario_pgas_hint *; collective */
#define PARIO_PGAS_ASYNC_OUTSTANDING (1 << 10) /* *result: 1 if an async call is outstanding */

/* fseek origins. */
#define PARIO_PGAS_SEEK_SET (1 << 0)
#define PARIO_PGAS_SEEK_CUR (1 << 1)
#define PARIO_PGAS_SEEK_END (1 << 2)

/* Synchronisation flags of data calls: PARIO_PGAS_IN_* / OUT_* of pgas.h (UPC's
 * upc_flag_t); no IN or OUT flag is ALLSYNC on that side. */

/* A hint, passed to the io layer as an MPI-IO hint (key, value). */
typedef struct pario_pgas_hint {
    const char *key;
    const char *value;
} pario_pgas_hint;

/* Lists: len bytes at baseaddr (a private buffer, or a shared buffer whose
 * blocks hold blocksize bytes, 0 = all on baseaddr's rank) and len bytes at file
 * offset `offset`. The memory and the file lists hold the same total; the data
 * fills the file entries in order from the memory entries in order. File
 * offsets are non-decreasing (reads) or increasing without overlap (writes). */
typedef struct pario_pgas_local_memvec {
    void *baseaddr;
    size_t len;
} pario_pgas_local_memvec;
typedef struct pario_pgas_shared_memvec {
    pario_pgas_ptr baseaddr;
    size_t blocksize;
    size_t len;
} pario_pgas_shared_memvec;
typedef struct pario_pgas_filevec {
    pario_pgas_off offset;
    size_t len;
} pario_pgas_filevec;

/* ---- files ------------------------------------------------------------------ */

/* hints may be NULL when numhints is 0. On failure *fd is NULL, err has the cause. */
int pario_pgas_fopen(pario_pgas *ctx, const char *fname, int flags, size_t numhints,
                     const pario_pgas_hint *hints, pario_pgas_file **fd, pario_error *err);
/* Frees the handle and sets *fd = NULL, even on error (a failed flush). */
int pario_pgas_fclose(pario_pgas_file **fd, pario_error *err);
int pario_pgas_fsync(pario_pgas_file *fd);
/* Moves the pointer; *pos (may be NULL) gets the new position. A position below 0:
 * PARIO_ERR_ARG. */
int pario_pgas_fseek(pario_pgas_file *fd, pario_pgas_off offset, int origin, pario_pgas_off *pos);
int pario_pgas_fset_size(pario_pgas_file *fd, pario_pgas_off size);
int pario_pgas_fget_size(pario_pgas_file *fd, pario_pgas_off *size);
int pario_pgas_fpreallocate(pario_pgas_file *fd, pario_pgas_off size);
/* result may be NULL for commands that give none. */
int pario_pgas_fcntl(pario_pgas_file *fd, int cmd, void *arg, int *result);
const pario_error *pario_pgas_file_last_error(const pario_pgas_file *fd);
/* errno value UPC-IO gives for a pario code (EINVAL, ENOENT, EEXIST, EIO...). */
int pario_pgas_io_errno(int code);

/* ---- data ------------------------------------------------------------------ */
/* *bytes (may be NULL) gets the bytes moved by this rank's request (common
 * pointer: by the call, the same on every rank); reads stop at end of file. */

int pario_pgas_fread_local(pario_pgas_file *fd, void *buffer, size_t size, size_t nmemb, int sync,
                           pario_pgas_off *bytes);
int pario_pgas_fwrite_local(pario_pgas_file *fd, const void *buffer, size_t size, size_t nmemb,
                            int sync, pario_pgas_off *bytes);
/* nmemb elements of size bytes from buffer on in array order, blocksize elements
 * per block (0: all on buffer's rank). buffer's phase counts when its type has
 * the same block of bytes (blocksize * size), else the buffer starts at phase 0. */
int pario_pgas_fread_shared(pario_pgas_file *fd, pario_pgas_ptr buffer, size_t blocksize,
                            size_t size, size_t nmemb, int sync, pario_pgas_off *bytes);
int pario_pgas_fwrite_shared(pario_pgas_file *fd, pario_pgas_ptr buffer, size_t blocksize,
                             size_t size, size_t nmemb, int sync, pario_pgas_off *bytes);
int pario_pgas_fread_list_local(pario_pgas_file *fd, size_t memvec_entries,
                                const pario_pgas_local_memvec *memvec, size_t filevec_entries,
                                const pario_pgas_filevec *filevec, int sync, pario_pgas_off *bytes);
int pario_pgas_fwrite_list_local(pario_pgas_file *fd, size_t memvec_entries,
                                 const pario_pgas_local_memvec *memvec, size_t filevec_entries,
                                 const pario_pgas_filevec *filevec, int sync,
                                 pario_pgas_off *bytes);
int pario_pgas_fread_list_shared(pario_pgas_file *fd, size_t memvec_entries,
                                 const pario_pgas_shared_memvec *memvec, size_t filevec_entries,
                                 const pario_pgas_filevec *filevec, int sync,
                                 pario_pgas_off *bytes);
int pario_pgas_fwrite_list_shared(pario_pgas_file *fd, size_t memvec_entries,
                                  const pario_pgas_shared_memvec *memvec, size_t filevec_entries,
                                  const pario_pgas_filevec *filevec, int sync,
                                  pario_pgas_off *bytes);

/* ---- asynchronous data calls ----------------------------------------------- */

int pario_pgas_fread_local_async(pario_pgas_file *fd, void *buffer, size_t size, size_t nmemb,
                                 int sync);
int pario_pgas_fwrite_local_async(pario_pgas_file *fd, const void *buffer, size_t size,
                                  size_t nmemb, int sync);
int pario_pgas_fread_shared_async(pario_pgas_file *fd, pario_pgas_ptr buffer, size_t blocksize,
                                  size_t size, size_t nmemb, int sync);
int pario_pgas_fwrite_shared_async(pario_pgas_file *fd, pario_pgas_ptr buffer, size_t blocksize,
                                   size_t size, size_t nmemb, int sync);
int pario_pgas_fread_list_local_async(pario_pgas_file *fd, size_t memvec_entries,
                                      const pario_pgas_local_memvec *memvec, size_t filevec_entries,
                                      const pario_pgas_filevec *filevec, int sync);
int pario_pgas_fwrite_list_local_async(pario_pgas_file *fd, size_t memvec_entries,
                                       const pario_pgas_local_memvec *memvec,
                                       size_t filevec_entries, const pario_pgas_filevec *filevec,
                                       int sync);
int pario_pgas_fread_list_shared_async(pario_pgas_file *fd, size_t memvec_entries,
                                       const pario_pgas_shared_memvec *memvec,
                                       size_t filevec_entries, const pario_pgas_filevec *filevec,
                                       int sync);
int pario_pgas_fwrite_list_shared_async(pario_pgas_file *fd, size_t memvec_entries,
                                        const pario_pgas_shared_memvec *memvec,
                                        size_t filevec_entries, const pario_pgas_filevec *filevec,
                                        int sync);
/* Completes the outstanding call: its code (the same on every rank) and bytes.
 * No outstanding call: PARIO_ERR_REQUEST. */
int pario_pgas_fwait_async(pario_pgas_file *fd, pario_pgas_off *bytes);
/* *flag = 1 and the outcome as fwait_async when the call has completed (it then
 * is no longer outstanding); *flag = 0 otherwise. */
int pario_pgas_ftest_async(pario_pgas_file *fd, int *flag, pario_pgas_off *bytes);

#ifdef __cplusplus
}
#endif

#endif
