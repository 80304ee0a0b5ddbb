/* Hints: the tuning values a file is opened with.
 *
 * Sources, later ones overriding earlier ones: built-in defaults, the file
 * named by $PARIO_HINTS (lines "key value", '#' starts a comment), the MPI_Info
 * passed by the program, and $PARIO_HINT_<key> variables (an operator's
 * override for programs that cannot be changed). Keys use ROMIO's names where
 * they mean the same thing. Unknown keys and malformed values are ignored, as
 * MPI requires of hints. */
#ifndef PARIO_IO_HINTS_H
#define PARIO_IO_HINTS_H

#include <mpi.h>
#include <stdint.h>

typedef enum io_switch { IO_AUTOMATIC = 0, IO_ENABLE, IO_DISABLE } io_switch;

/* Longest cb_config_list value kept. */
#define IO_HINT_STR_MAX 256

typedef struct io_hints {
    int64_t cb_buffer_size; /* bytes an aggregator holds at most */
    int64_t cb_cycle_size;  /* pario_cb_cycle_size: window an aggregator moves per cycle */
    int cb_nodes;           /* number of aggregators */
    char cb_config_list[IO_HINT_STR_MAX];
    io_switch cb_read, cb_write; /* romio_cb_read / romio_cb_write */
    io_switch cb_read_pipeline;  /* pario_cb_read_pipeline: prefetch the next read cycle */
    io_switch cb_write_behind;   /* pario_cb_write_behind: keep small collective writes */
    /* pario_cb_write_behind_delay: ms within which the kept bytes of a collective write
     * every rank finished are written */
    int64_t cb_write_behind_delay;
    io_switch prealloc_writes;   /* pario_prealloc_writes: reserve a write's blocks first */
    io_switch ds_read, ds_write; /* romio_ds_read / romio_ds_write: data sieving */
    int64_t ind_rd_buffer_size;  /* data sieving window for independent reads */
    int64_t ind_wr_buffer_size;  /* data sieving window for independent writes */
    int64_t write_call_bytes;    /* pario_write_call_bytes: what one write call costs in
                                    bytes of transfer, for the sieving decision; 0: the
                                    file system's figure (io/cost) */
    int64_t read_call_bytes;     /* pario_read_call_bytes: the same for a read call */
    int64_t striping_unit;       /* bytes; file domains align to it */
    int striping_factor;         /* number of storage targets */
    int no_indep_rw;             /* romio_no_indep_rw: the program promises collective
                                    access only; at open, only aggregators open the file
                                    (deferred open) and collective buffering is enabled */
} io_hints;

/* Aggregator processes cb_config_list allows on the host named `host`: the
 * count of the first entry ("name:count", count a number or "*", ":count"
 * omitted means 1) whose name is `host` or "*"; IO_CB_ALL for "*"; 0 when no
 * entry matches. -1 when the list is malformed. */
#define IO_CB_ALL INT32_MAX
int io_hints_cb_count(const char *list, const char *host);

/* Defaults for a file at path opened by nranks ranks on nnodes nodes. */
void io_hints_defaults(io_hints *h, int64_t block_size, int nranks, int nnodes);
/* Apply $PARIO_HINTS, then info (may be MPI_INFO_NULL), then $PARIO_HINT_*. */
void io_hints_resolve(io_hints *h, MPI_Info info);
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
