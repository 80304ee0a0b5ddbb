/* Hints: the tuning values a file is opened with.
 *
 * Sources, later ones overriding earlier ones: built-in defaults, the file
 * named by $ROMIO_HINTS (ROMIO's format: romio.c), the file named by
 * $PARIO_HINTS (lines "key value", '#' starts a comment), the MPI_Info passed
 * by the program, and $PARIO_HINT_<key> variables (an operator's override
 * for programs that cannot be changed). Keys use ROMIO's names where they
 * mean the same thing; ROMIO's hints pario does not act on are kept and
 * reported. Unknown keys and malformed values are ignored, as MPI requires
 * of hints. */
#ifndef PARIO_IO_HINTS_H
#define PARIO_IO_HINTS_H

#include <mpi.h>
#include <stdint.h>

typedef enum io_switch { IO_AUTOMATIC = 0, IO_ENABLE, IO_DISABLE } io_switch;

/* Longest cb_config_list value kept. */
#define IO_HINT_STR_MAX 256
/* ROMIO hints accepted and reported but not acted on (romio.c), and the
 * longest value kept of each. */
#define IO_ROMIO_KEYS 13
#define IO_ROMIO_VAL_MAX 64
/* Longest pario_stripe_targets value kept. */
#define IO_STRIPE_TARGETS_MAX 1024

typedef struct io_hints {
    int64_t cb_buffer_size; /* bytes an aggregator holds at most */
    int64_t cb_cycle_size;  /* pario_cb_cycle_size: window an aggregator moves per cycle */
    int cb_nodes;           /* number of aggregators */
    char cb_config_list[IO_HINT_STR_MAX];
    io_switch cb_read, cb_write; /* romio_cb_read / romio_cb_write */
    io_switch cb_read_pipeline;  /* pario_cb_read_pipeline: read the next cycle meanwhile */
    io_switch cb_prefetch;       /* pario_cb_prefetch: an aggregator reads a read-only
                                    file's stream ahead of small calls (io/file/prefetch.c) */
    io_switch cb_write_behind;   /* pario_cb_write_behind: keep small collective writes */
    /* pario_cb_write_behind_delay: ms within which the kept bytes of a collective write
     * every rank finished are written */
    int64_t cb_write_behind_delay;
    io_switch prealloc_writes;   /* pario_prealloc_writes: reserve a write's blocks first */
    io_switch ds_read, ds_write; /* romio_ds_read / romio_ds_write: data sieving */
    int64_t ind_rd_buffer_size;  /* data sieving window for independent reads */
    int64_t ind_wr_buffer_size;  /* data sieving window for independent writes */
    io_switch lock_span;         /* pario_lock_span: enable: a write that locks takes
                                    its span once everywhere, not only off local disks */
    io_switch client_cache;      /* pario_client_cache: enable: the file system's client
                                    caches data between opens (close-to-open, as NFS);
                                    automatic: its type says (io/driver/posix.c) */
    int64_t write_call_bytes;    /* pario_write_call_bytes: what one write call costs in
                                    bytes of transfer, for the sieving decision; 0: the
                                    file system's figure (io/cost) */
    int64_t read_call_bytes;     /* pario_read_call_bytes: the same for a read call */
    int64_t striping_unit;       /* bytes; file domains align to it */
    int striping_factor;         /* number of storage targets */
    int trace; /* the file is traced: rank 0 asked, agreed with the hints (io/trace) */
    char romio[IO_ROMIO_KEYS][IO_ROMIO_VAL_MAX]; /* other ROMIO hints as given; "" unset */
    io_switch cache;                             /* pario_cache: the global page cache (io/cache);
                                                    automatic: off until measured to pay */
    int64_t cache_page_size; /* pario_cache_page_size: bytes of one cache page */
    int64_t cache_pages;     /* pario_cache_pages: pages each process holds */
    io_switch read_once;     /* pario_read_once: a read-only file is read once per
                                node into shared memory (io/cache/once.c) */
    int64_t read_once_max;   /* pario_read_once_max: larger files are read as usual */
    int striping_given;      /* IO_STRIPING_UNIT_GIVEN | IO_STRIPING_FACTOR_GIVEN: set
                                by a hint, not a default (a new striped file's layout) */
    /* pario_stripe_targets: directories a new file is striped over (comma-separated;
     * default $PARIO_STRIPE_TARGETS); empty: files are created plain (io/driver/stripe.h) */
    char stripe_targets[IO_STRIPE_TARGETS_MAX];
    int no_indep_rw;    /* romio_no_indep_rw: the program promises collective
                           access only; at open, only aggregators open the file
                           (deferred open) and collective buffering is enabled */
    int cb_given;       /* IO_CB_NODES_GIVEN | IO_CB_CONFIG_GIVEN: set by a hint */
    int cb_cycle_given; /* pario_cb_cycle_size set by a hint, not the default */
} io_hints;

enum { IO_STRIPING_UNIT_GIVEN = 1, IO_STRIPING_FACTOR_GIVEN = 2 };
enum { IO_CB_NODES_GIVEN = 1, IO_CB_CONFIG_GIVEN = 2 };

/* Aggregator processes cb_config_list allows on the host named `host`: the
 * count of the first entry ("name:count", count a number or "*", ":count"
 * omitted means 1) whose name is `host` or "*"; IO_CB_ALL for "*"; 0 when no
 * entry matches. -1 when the list is malformed. */
#define IO_CB_ALL INT32_MAX
int io_hints_cb_count(const char *list, const char *host);

/* Defaults for a file at path opened by nranks ranks on nnodes nodes. */
void io_hints_defaults(io_hints *h, int64_t block_size, int nranks, int nnodes);
/* Unless a hint gave striping_unit: the file system's block size (4096 when
 * unknown, block_size <= 0), the default unit of file domains. */
void io_hints_block_size(io_hints *h, int64_t block_size);
/* Apply the $ROMIO_HINTS file, the $PARIO_HINTS file, then info (may be
 * MPI_INFO_NULL), then $PARIO_HINT_*. As in ROMIO (MPICH 4.0), the program's
 * MPI_Info wins over the ROMIO_HINTS file. */
void io_hints_resolve(io_hints *h, MPI_Info info);
/* Set one hint by key, as from MPI_Info; unknown keys and bad values leave
 * h unchanged. */
void io_hints_set(io_hints *h, const char *key, const char *val);

/* ---- ROMIO's conventions (romio.c) ---------------------------------------- */

/* Apply the file $ROMIO_HINTS names, as ROMIO reads it: "key value" lines,
 * a key given twice keeps its first value, lines of another shape and a
 * missing file are ignored. */
void io_hints_apply_romio_file(io_hints *h);
/* Keeps key when it is one of the other ROMIO hints (romio_cb_pfr, ...):
 * returns 1, else 0. */
int io_hints_set_romio(io_hints *h, const char *key, const char *val);
/* Adds those hints to info: the value given, else ROMIO's default. */
void io_hints_romio_to_info(const io_hints *h, MPI_Info info);
/* Apply only info. */
void io_hints_apply_info(io_hints *h, MPI_Info info);
/* Apply info, then $PARIO_HINT_* again (set_info, set_view): the operator's
 * variables win over the program's hints at every call, not only at open. */
void io_hints_update(io_hints *h, MPI_Info info);
/* Collective: every hint that decides which path a collective call takes,
 * its buffers or its aggregators (cb_*, romio_cb_*, pario_cb_*, striping_*)
 * takes rank 0's value on every rank, so ranks given different values (in
 * MPI_Info, $PARIO_HINTS or $PARIO_HINT_*) still take the same path and
 * get_info reports one value. Hints that only steer a rank's own accesses
 * (romio_ds_*, ind_*_buffer_size, pario_prealloc_writes,
 * pario_write/read_call_bytes) stay per rank:
 * where the ranks must agree on their effect (whether any rank may sieve a
 * write), the views' agreement combines them. */
int io_hints_agree(io_hints *h, MPI_Comm comm);
/* io_hints_agree's step without the broadcast: take rank 0's values of the
 * hints that must agree, keep this rank's own of the others. */
void io_hints_adopt(io_hints *h, const io_hints *rank0);
/* The smallest write whose blocks the driver reserves before writing it
 * (pario_prealloc_writes): enable 0, disable -1; automatic IO_PREALLOC_MIN
 * on a file system where that was measured to pay (pays: its calibration
 * record says so, or without one it is ext4), else -1. */
int64_t io_hints_prealloc_min(const io_hints *h, int pays);
/* A new MPI_Info holding every hint in effect that does not depend on the
 * file (pario_file_get_info adds cb_nodes and the call costs in effect). */
int io_hints_to_info(const io_hints *h, MPI_Info *info);

#endif
