/* Data representations other than "native": the predefined "external32" and
 * the ones a program registers (pario_register_datarep, MPI_Register_datarep).
 *
 * pario keeps the file layout of a view unchanged by the representation: every
 * predefined type used through a non-native view (in the etype, the filetype
 * or the memory type) must take exactly as many bytes in the file as in
 * memory. A type whose size differs (external32: MPI_LONG, MPI_UNSIGNED_LONG,
 * MPI_WCHAR; MPI_LONG_DOUBLE, whose 80-bit format is not the standard's
 * 128-bit IEEE one; a user extent function that disagrees with the native
 * size) is refused with PARIO_ERR_UNSUPPORTED_DATAREP and a message naming
 * the file and the type. Pair types (MPI_2INT, MPI_DOUBLE_INT, ...) are
 * refused the same way. MPI_BYTE and MPI_PACKED data is moved unconverted.
 *
 * Data moves through a staging buffer of at most DATAREP_STAGE_BYTES (larger
 * only when one etype does not fit): a write converts a chunk of the user's
 * data into the file representation there and writes it as MPI_BYTE through
 * the ordinary entry points (io_rw_independent, io_rw_collective); a read
 * reads a chunk and converts it back. Collective calls make every rank call
 * the collective entry the same number of times. */
#ifndef PARIO_IO_DATAREP_H
#define PARIO_IO_DATAREP_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include "pario/io.h"

/* Target size of the staging buffer a conversion uses per chunk: large
 * enough that each chunk is one efficient file access, small enough to keep
 * the extra memory of a conversion modest. */
#define DATAREP_STAGE_BYTES (4 << 20)

/* A data representation; NULL stands for "native" (and "internal"). Entries
 * live for the whole process and never change once published. */
typedef struct io_datarep {
    char name[MPI_MAX_DATAREP_STRING];
    bool external32;                                 /* the built-in big-endian representation */
    pario_datarep_conversion_fn *read_fn, *write_fn; /* user datareps; NULL: no conversion */
    pario_datarep_conversion_c_fn *read_fn_c, *write_fn_c; /* the same, registered by
                                                              MPI_Register_datarep_c */
    pario_datarep_extent_fn *extent_fn;
    void *extra;
} io_datarep;

/* The representation named `name`: *rep = NULL for "native" and "internal";
 * PARIO_ERR_UNSUPPORTED_DATAREP (message naming op and path) when unknown. */
int io_datarep_find(const char *name, const io_datarep **rep, const char *op, const char *path,
                    pario_error *err);

/* PARIO_OK when every predefined type in t can be used through rep (t named
 * `what` in messages); PARIO_ERR_UNSUPPORTED_DATAREP otherwise. */
int io_datarep_check_type(const io_datarep *rep, MPI_Datatype t, const char *op, const char *what,
                          const char *path, pario_error *err);

/* Decodes t into *sig and checks it as io_datarep_check_type does (rep not
 * NULL: it names the representation in messages); *sig is freed on failure. */
typedef struct datarep_sig datarep_sig;
int io_datarep_build_sig(const io_datarep *rep, MPI_Datatype t, datarep_sig *sig, const char *op,
                         const char *what, const char *path, pario_error *err);

/* The extent of t in files of representation rep (NULL: native). A predefined
 * type gets its size in the representation; a derived one its native extent
 * when every type in it keeps its size, else PARIO_ERR_UNSUPPORTED_DATAREP. */
int io_datarep_type_extent(const io_datarep *rep, MPI_Datatype t, MPI_Aint *extent,
                           pario_error *err);

/* ---- predefined types (basic.c) ----------------------------------------------- */

/* One predefined type pario can convert. */
typedef struct datarep_basic {
    MPI_Datatype type;
    const char *name;
    int ext32_size; /* bytes in external32 (MPI 3.1 table 13.2) */
    int unit;       /* bytes of each big-endian field (complex types have two) */
    bool swappable; /* external32 is the host format with each field's bytes reversed */
} datarep_basic;

/* The entry for a predefined type, or NULL when pario does not know it. */
const datarep_basic *datarep_basic_find(MPI_Datatype t);
/* Native size of a known predefined type. */
int datarep_basic_size(const datarep_basic *b);
/* Reverse the byte order of n items of b in place (host <-> big-endian). */
void datarep_basic_swap(const datarep_basic *b, char *data, int64_t n);
/* A name for any predefined type, for messages. */
const char *datarep_type_name(MPI_Datatype t, char *buf, int len);

/* ---- type signatures (signature.c) ---------------------------------------------- */

/* A run of `items` consecutive items of one predefined type. */
typedef struct sig_run {
    const datarep_basic *basic;
    int size; /* native bytes per item */
    int64_t items;
} sig_run;

/* The type signature of one instance of a datatype: `runs` repeated `reps`
 * times. Prefix sums locate a byte of the packed data in O(log nruns). */
struct datarep_sig {
    sig_run *runs;
    int nruns;
    int64_t reps;
    int64_t period_bytes, period_items; /* one pass over the runs */
    int64_t *byte_before, *item_before; /* nruns + 1 prefix sums */
};

/* Longest list of runs a signature may have (a struct of many differing
 * members repeated inside another struct): bounds the memory one decoding
 * takes. Longer ones give PARIO_ERR_UNSUPPORTED_DATAREP. */
#define DATAREP_SIG_MAX_RUNS 65536

/* Decodes t; an unknown predefined type gives PARIO_ERR_UNSUPPORTED_DATAREP
 * with the type's name in *bad_type. */
int datarep_sig_build(MPI_Datatype t, datarep_sig *sig, MPI_Datatype *bad_type);
void datarep_sig_free(datarep_sig *sig);

/* A place in the packed data of instances of a signature. */
typedef struct sig_pos {
    int64_t period; /* index of the pass over the runs */
    int run;
    int64_t item; /* within the run */
    int64_t byte; /* within the item; 0 at an item boundary */
} sig_pos;

/* The place of packed byte `at`. */
sig_pos datarep_sig_locate(const datarep_sig *sig, int64_t at);
/* Index of the item at p in the typemap tiled over the instances. */
int64_t datarep_sig_item_index(const datarep_sig *sig, sig_pos p);
/* Byte-swap the n packed bytes starting at place p for external32 (n ends on
 * an item boundary and p is on one). */
void datarep_sig_swap(const datarep_sig *sig, sig_pos p, char *data, int64_t n);

#endif
