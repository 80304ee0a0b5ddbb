/* The open-file object shared by every io feature folder. */
#ifndef PARIO_IO_FILE_H
#define PARIO_IO_FILE_H

#include <mpi.h>
#include <pthread.h>
#include "io/cost/cost.h"
#include "io/driver/driver.h"
#include "io/hints/hints.h"
#include "io/trace/trace.h"
#include "io/view/view.h"
#include "pario/io.h"

/* `count` file blocks of `len` bytes, `stride` apart from `off`, whose data
 * sits back to back from byte `at` of the chunk being transferred. */
typedef struct io_run {
    int64_t off, len, stride, count;
    int64_t at;
} io_run;

/* Buffers kept between calls so data access does not allocate each time. */
typedef struct io_scratch {
    char *stage; /* packed user data (noncontiguous memory) */
    int64_t stage_len;
    char *window; /* data sieving window */
    int64_t window_len;
    struct io_run *runs; /* runs of file blocks of one window */
    int64_t runs_len;
} io_scratch;

/* Grow a scratch buffer to at least len bytes; PARIO_ERR_NO_MEM on failure. */
int io_scratch_reserve(char **buf, int64_t *cap, int64_t len);
void io_scratch_free(io_scratch *s);

/* Prefetch: a rank reading the streams of its small reads of a read-only file
 * ahead of them, as the aggregator of collective calls or on its own
 * (prefetch.c). A stream holds the bytes [start, start + held) as its last
 * prefetch returned them, and where its last read ended, to tell reads that
 * follow on from jumps. */
#define IO_PREFETCH_STREAMS 4
typedef struct io_prefetch_stream {
    char *buf;
    int64_t cap;
    int64_t start, held;
    int64_t next;   /* where the stream's last read ended (-1: none) */
    int64_t origin; /* where its first read started */
    int64_t size; /* its last prefetch's length; grows while reads follow on */
    int64_t used; /* when it last served a read (io_prefetch.clock) */
} io_prefetch_stream;
typedef struct io_prefetch {
    pthread_mutex_t lock; /* reads of several threads (independent, nonblocking) */
    io_prefetch_stream s[IO_PREFETCH_STREAMS];
    int64_t max;   /* all streams' prefetches together at most this (0: no prefetch) */
    int64_t small; /* reads up to this long are prefetched (their request costs most) */
    int64_t clock;
} io_prefetch;

/* Reads len bytes at off into dst through a (a plain read when a is NULL or
 * off): from a stream's bytes when they are all there; where the read
 * follows on from a stream's last read (at or a little past where it ended)
 * and is small against the stream's share of a->max, one read at off of four
 * times its length, then of twice the stream's last, up to that share, kept
 * for the next reads; else a read of its own, which starts a new stream in
 * place of the one used longest ago. An aggregator (reading for other
 * ranks) reads large prefetches in parts side by side. *got as pread's
 * (short at end of file). */
int io_prefetch_pread(io_handle *io, io_prefetch *a, char *dst, int64_t len, int64_t off,
                      int aggregator, int64_t *got, pario_error *err);
/* Forgets the bytes held (another client's writes may show from here on). */
void io_prefetch_drop(io_prefetch *a);
void io_prefetch_init(io_prefetch *a);
void io_prefetch_free(io_prefetch *a);

typedef struct io_async io_async;

/* Room for the count of every route a collective call can take. */
#define IO_COLL_ROUTES_MAX 8

/* What one agreement step carries besides the outcome: values every rank
 * must have passed alike (call, what and path name them in the error), and
 * flags, each ORed over the ranks (any[] holds the OR on return). */
#define IO_VOTE_SAME 2
#define IO_VOTE_ANY 10
typedef struct io_vote {
    long long same[IO_VOTE_SAME];
    int nsame;
    int any[IO_VOTE_ANY];
    int nany;
    const char *call, *what, *path;
} io_vote;

/* Collective, one allreduce: io_agree's outcome (the lowest failing rank's
 * error on every rank), then PARIO_ERR_NOT_SAME when the same values
 * differ; v->any gets the flags ORed over the ranks. */
int io_agree_vote(MPI_Comm comm, int rc, io_vote *v, pario_error *err);

struct pario_file {
    MPI_Comm comm; /* private duplicate, MPI_ERRORS_RETURN */
    int rank, nranks;
    int nnodes;    /* shared-memory nodes spanned by comm */
    int node_rank; /* this rank's index among the ranks of its node */
    int one_host;  /* MPI sees every rank of comm on one machine (PARIO_NODE_SIZE
                      may still cut it into several nodes) */
    int *cb_ranks; /* ranks cb_config_list lets aggregate, ascending (io/coll/place.c) */
    int ncb_ranks;
    struct coll_range *coll_ranges; /* every rank's range in a collective call (nranks) */
    int64_t *coll_share;            /* the allgather of ranges (nranks * SHARE_N) */
    int64_t *coll_counts;           /* two-phase cycles' counts per rank: two slots of
                                       (pieces, bytes) sent and received (nranks * 8) */
    int *coll_aggr;                 /* a two-phase plan's aggregators (nranks at most) */
    int64_t *coll_domains;          /* and their domains' starts and ends (2 * nranks) */
    MPI_Request *coll_requests;     /* a two-phase call's messages (nranks * 4) */
    int sieve_writers;              /* some rank may sieve a write (its view has holes and
                                       romio_ds_write allows it): plain writes then lock */
    int plain_views;                /* every rank's view is contiguous in the file and the
                                       file is a regular file (agreed, io_file_settle) */
    int tiny_holes;                 /* some rank's view has holes, and every such view's
                                       blocks average under COLL_TINY_BLOCK (agreed) */
    int dense_views;                /* every rank's view spreads its data at most
                                       COLL_MAX_SPREAD times (agreed) */
    int overlapping_views;          /* some rank's view has overlapping blocks (read-only
                                       files; agreed): collective reads go independent */
    int request_bound_reads;        /* some rank's read call costs at least
                                       IO_REQUEST_BOUND_READ bytes (agreed, io/coll/route.c) */
    int once_judged;                /* a collective read's pattern was judged for reading
                                       once per node (agreed, io/coll/route.c) */
    int reads_alone;                /* the last collective read since the view went each
                                       rank on its own (agreed): the next reads ahead
                                       (io/coll/coll.c) */
    struct kept_window *kept;       /* kept collective writes (io/coll/kept.c) */
    struct kept_window *kept_idle;  /* a window that waits with comm for the next file */
    int kept_pending;               /* a collective write was kept on some rank since the
                                      last flush (the same on every rank) */
    int kept_failed;                /* no shared window could be made: keep nothing */
    struct funnel_kept *funnel_kept; /* the funnel's kept run (rank 0; io/coll/funnel_kept.c) */
    int funnel_kept_pending;         /* the funnel's last answer: it keeps writes (the same
                                        on every rank) */
    int funnel_kept_waited;          /* this rank waited for them since that answer */
    int64_t funnel_kept_lo, funnel_kept_hi; /* the range the funnel holds locked meanwhile */
    int own_kept_pending; /* ranks keep their own parts since the last collective point
                             (the same on every rank) */
    int64_t own_kept_end; /* how far those parts reach in the file (every rank's) */
    /* Collective calls per route taken (io/coll/route.h), for get_info. */
    int64_t coll_routes[IO_COLL_ROUTES_MAX];
    char *path;       /* the name opened, without a driver prefix */
    int stripe_named; /* the name had the "stripe:" prefix (io/file/name.c, io/driver/select.c) */
    int amode;
    const io_driver *driver; /* the name's prefix chose it (io/file/name.c) */
    io_handle io;
    io_hints hints;
    io_costs costs;           /* the file system's: its calibration record, else defaults */
    int64_t write_call_bytes; /* in effect for sieving: the hint, else costs (settle) */
    int64_t read_call_bytes;
    io_view view;
    MPI_Offset fp;                  /* individual file pointer, in etypes of the view */
    int atomic;                     /* atomic mode (set_atomicity) */
    pario_error last;               /* last failure on this file */
    pario_error held;               /* a failed access of a collective call that sent no message
                                       (each rank's own collective read): the next sync or close
                                       reports it on every rank (io_report_held) */
    io_scratch scratch;             /* buffers reused by data access on this file */
    io_prefetch prefetch;           /* this rank's prefetch (read-only files where reads
                                       are request-bound: io_file_apply_costs) */
    MPI_Win shared_win;             /* the shared file pointer: one int64 on rank 0 */
    void *shared_mem;               /* its memory when MPI could not allocate the window itself */
    int shared_fd;                  /* or, where one-sided calls fail, its side file (-1: none) */
    char *shared_side;              /* that file's name, on rank 0, which removes it */
    struct io_async *async;         /* background thread of nonblocking access (io/async) */
    struct pario_file *next_open;   /* the registry of open files (registry.c) */
    struct io_trace *trace;         /* the file's trace, or NULL (io/trace) */
    io_trace_pending trace_pending; /* closed files' traces to merge on comm (io/trace) */
    struct io_parked *parked;       /* what opens on the program's communicator reuse */
    int shared_moved;               /* the shared pointer may be off 0 (same on every rank) */
    MPI_Comm sync_host;             /* the ranks of comm on this machine, made at the first sync
                                       that may share an fsync (io/file/sync.c); parked with
                                       comm */
    int sync_host_state;            /* 0: not made yet; 1: sync_host is made; -1: each rank
                                       syncs on its own (same on every rank) */
    _Atomic int64_t size_floor;     /* the file is at least this long: the largest size this
                                       rank learnt since open, its last sync or set_size (only
                                       those can make a file shorter under MPI's rules) */
};

/* What the opens on one communicator make once (parked.c): the file's
 * communicator and shared-pointer window, kept for the next open when a
 * file closes; the node layout; the last aggregator placement. Kept as an
 * attribute of the program's communicator and freed with it. */
typedef struct io_parked io_parked;
/* Collective on comm: fh->comm, fh->shared_win, fh->nnodes and
 * fh->node_rank, from a parked set when there is one (no MPI call; returns
 * PARIO_OK whatever rc is, so the caller's later steps agree on rc), else
 * made (a fixed number of collective calls; returns their outcome agreed
 * with rc, the same on every rank). */
int io_parked_take(pario_file *fh, MPI_Comm comm, int rc, pario_error *err);
/* At close, after the last agreement: parks fh's communicator and window
 * for the next open, else frees them (collective). */
void io_parked_give(pario_file *fh);
/* The aggregator ranks last placed under cb_config_list list, or NULL. */
const int *io_parked_placement(const pario_file *fh, const char *list, int *n);
void io_parked_keep_placement(pario_file *fh, const char *list, const int *ranks, int n);
/* MPI_Finalize has begun: parked sets are forgotten, not freed. */
int io_files_finalizing(void);
/* At the start of MPI_Finalize (collective, as it is): frees every parked
 * communicator and window, oldest first; later opens park nothing. */
void io_parked_finalize(void);

/* The registry of files open in this process (registry.c): a file is in it
 * from the end of a successful open to the start of its close. */
void io_files_add(pario_file *fh);
void io_files_remove(pario_file *fh);
/* Calls fn for every open file with the registry held: meanwhile no file is
 * closed, and no file's kept-write window replaced. */
void io_files_each(void (*fn)(pario_file *fh, void *arg), void *arg);
/* Hold the registry while changing what a walk reads of an open file. */
void io_files_lock(void);
void io_files_unlock(void);
/* Whether MPI_Finalize will finish every open file's nonblocking accesses
 * and write its kept collective writes: sets, once, the attribute of
 * MPI_COMM_SELF whose deletion does that. */
int io_files_watch_finalize(void);

/* Shared file pointer window (collective, agreed): made by the first open
 * on a communicator, parked and reused by later ones (parked.c), freed with
 * the communicator. Open sets the pointer on rank 0 before its last step. */
int io_shared_create(pario_file *fh, pario_error *err);
void io_shared_free(pario_file *fh);
/* Set the shared pointer (called by one rank; the caller synchronizes). */
int io_shared_set(pario_file *fh, int64_t etypes);
/* Read the shared pointer. */
int io_shared_get(pario_file *fh, int64_t *etypes);

/* Collective, whenever the hints change (set_info, set_view with hints):
 * rank 0's hints (one broadcast), this rank's costs and the aggregators
 * (io_file_settle_local), then one io_file_vote. */
int io_file_settle(pario_file *fh, pario_error *err);
/* This rank's call costs and block reservation from its hints and
 * fh->costs, and the aggregators (collective only when the placement under
 * this cb_config_list is not parked yet; call it on every rank). */
int io_file_settle_local(pario_file *fh, pario_error *err);
/* A striped file's unit and factor are its layout's, whatever the hints
 * say after open (domains of two-phase I/O align to its stripes). */
void io_file_pin_striping(pario_file *fh);
/* This rank's call costs and block reservation alone (open: once the file
 * and its costs record are known). */
void io_file_apply_costs(pario_file *fh);
/* rc, or where it is PARIO_OK the outcome of flushing what this rank wrote
 * to the storage (a client that caches between opens: io_driver.flush), so
 * that other clients see it once the call that wrote it returns. */
int io_file_flushed(pario_file *fh, int rc);
/* Drops what this rank's client caches of the file (io_driver.drop_cached;
 * nothing where the client caches nothing). */
void io_file_drop_cached(pario_file *fh);
/* Before a collective call whose bytes other ranks may read or write for
 * this one, where the client caches between opens: this rank's earlier
 * writes flushed and its cached pages dropped. */
int io_file_meet_storage(pario_file *fh);
/* The file's size as a read ending at byte `end` (exclusive) needs it: at
 * least `end` from what this rank already knows, without a storage call
 * (on a network file system a round trip per rank per call), else asked of
 * the driver. Atomic mode always asks. */
int io_file_size_for_read(pario_file *fh, int64_t end, int64_t *size);
/* Forgets what is known of the size (sync, set_size). */
void io_file_size_forget(pario_file *fh);
/* Collective, one step: io_agree_vote of rc and v, with the flags of the
 * ranks' views (view: this rank's, the one being set) appended to v's;
 * on success they decide fh's sieve_writers, plain_views, tiny_holes and
 * dense_views, overlapping_views and request_bound_reads. v->nany + 7 flags at most. */
int io_file_vote(pario_file *fh, const io_view *view, int rc, io_vote *v, pario_error *err);

/* View position of the end of file, in whole etypes (rounded up). */
int io_eof_position(pario_file *fh, MPI_Offset *etypes);

/* Collective agreement on the outcome of a step every rank took: returns
 * PARIO_OK on all ranks if all succeeded, else on every rank the code and
 * message of the lowest failing rank (copied into err). */
int io_agree(MPI_Comm comm, int rc, pario_error *err);

/* Collective: PARIO_OK when every rank passed the same n values (n <= 4),
 * else PARIO_ERR_NOT_SAME with "<call> <path>: ranks passed different <what>". */
int io_check_same(MPI_Comm comm, const long long *vals, int n, const char *call, const char *what,
                  const char *path, pario_error *err);

/* A collective call that sent no message failed in its access on this rank
 * (fh->last): keep the failure for the next sync or close, where every rank
 * agrees on the outcome anyway, so the other ranks learn of it without a
 * message in the call itself. The first one is kept. */
void io_hold_failure(pario_file *fh);
/* At a sync or close whose own outcome on this rank is rc: a held failure
 * becomes the outcome when rc is PARIO_OK (copied into err, which may be
 * NULL) and is then forgotten. Returns the outcome to agree on. */
int io_report_held(pario_file *fh, int rc, pario_error *err);

/* Record a failure in fh->last and return its code (PARIO_OK clears it). */
int io_file_result(pario_file *fh, int rc);

/* Checks shared by data-access calls. */
int io_check_readable(pario_file *fh, const char *op);
int io_check_writable(pario_file *fh, const char *op);
int io_check_explicit_offset(pario_file *fh, MPI_Offset offset, const char *op);
int io_check_buffer(pario_file *fh, MPI_Count count, MPI_Datatype type, const char *op);

#endif
