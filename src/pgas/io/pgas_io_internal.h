/* Internal structures of pgas io (UPC-IO on the io layer). */
#ifndef PARIO_PGAS_IO_INTERNAL_H
#define PARIO_PGAS_IO_INTERNAL_H

#include <mpi.h>
#include <stdint.h>
#include "pario/io.h"
#include "pario/pgas_io.h"

/* A byte range of shared memory in array order and the file offset of its
 * first byte: what one rank asks for, sent to every owner as words. */
typedef struct pio_pattern {
    uint64_t addr;  /* segment offset of the first byte on rank */
    uint64_t phase; /* byte phase of the first byte in its block */
    uint64_t block; /* bytes per block; 0 = all on rank */
    uint64_t len;
    uint64_t file; /* file offset of the first byte */
    uint64_t rank;
} pio_pattern;
#define PIO_PATTERN_WORDS (sizeof(pio_pattern) / sizeof(uint64_t))

/* What this rank moves for one request: at most three pieces of file (a
 * partial first block, body_count whole blocks body_stride apart, a partial
 * last block) and mem_count pieces of its memory in the same order. */
typedef struct pio_part {
    uint64_t head_off, head_len;
    uint64_t body_off, body_count, body_block, body_stride;
    uint64_t tail_off, tail_len;
    size_t mem_first, mem_count; /* in the job's memory pieces */
    int round;                   /* which collective access carries it */
} pio_part;

typedef struct pio_mem {
    unsigned char *addr;
    uint64_t len;
} pio_mem;

/* One collective access: this rank's file pieces and memory pieces. */
typedef struct pio_round {
    MPI_Datatype filetype; /* absolute file offsets: the view's displacement is 0 */
    MPI_Datatype memtype;  /* relative to base */
    unsigned char *base;
    MPI_Count count; /* 0 when the rank moves nothing in this round */
} pio_round;

/* Everything one data call moves on this rank. */
typedef struct pio_job {
    pio_part *parts;
    size_t nparts, cap_parts;
    pio_mem *mem;
    size_t nmem, cap_mem;
    pio_round *rounds;
    int nrounds;
} pio_job;

/* One data call as the steps of data.c see it. */
typedef struct pio_call {
    const char *what;
    int write;
    int sync;
    int async;         /* started by an _async call: completed by fwait/ftest_async */
    int use_pointer;   /* reads or writes at the pointer and advances it */
    int exchange;      /* patterns go to every rank (other ranks own the memory) */
    uint64_t same[4];  /* arguments every rank passes alike (common pointer) */
    int nsame;         /* the sync flags are always compared: they decide the barriers */
    pio_pattern *pats; /* this rank's shared requests */
    size_t npats;
    pario_pgas_filevec *own; /* this rank's file entries: the result of a read */
    size_t nown;
    pio_job job;
} pio_call;

/* The outstanding asynchronous call of a file: the call (kept for its
 * result, pointer and OUT synchronisation), the io layer's requests moving
 * this rank's bytes, and what went wrong on this rank while starting it. */
typedef struct pio_async {
    int outstanding; /* the same on every rank */
    pio_call call;
    pario_request **reqs;
    int nreqs;
    int rc;
    pario_error err;
} pio_async;

struct pario_pgas_file {
    pario_pgas *ctx;
    pario_file *fh;
    MPI_Comm comm; /* private duplicate: the agreements of this layer */
    int rank, nranks;
    int flags;          /* in effect: fcntl changes the pointer type and CA bits */
    pario_pgas_off pos; /* this rank's pointer, or its copy of the common one */
    char *name;
    pario_pgas_hint *hints; /* the hints in effect (GET_HINTS), strings owned */
    size_t nhints;
    pio_async async;
    MPI_Datatype empty; /* a filetype without data: the view of a rank with nothing to move */
    pario_error last;
};

/* ---- errors and agreement (file.c) ---- */
int pio_fail(pario_pgas_file *fd, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The io layer's last error on this file, as this file's. */
int pio_io_failed(pario_pgas_file *fd, int rc);
/* One allreduce: rc of every rank (the lowest failing rank's code and message
 * reach all) and the minimum of each of n values (n <= PIO_AGREE_MAX). */
#define PIO_AGREE_MAX 12
int pio_agree(pario_pgas_file *fd, int rc, uint64_t *min_values, int n);
/* Every rank passes the same n values (n <= PIO_AGREE_MAX / 2) and rc: the
 * agreed rc, or PARIO_ERR_NOT_SAME naming what differs. */
int pio_agree_same(pario_pgas_file *fd, int rc, const uint64_t *values, int n, const char *what);
/* Usable for the call: a handle, no asynchronous call outstanding. */
int pio_check_usable(pario_pgas_file *fd, const char *what);
int pio_barrier(pario_pgas_file *fd);

/* ---- layout (layout.c) ---- */
/* This rank's part of the pattern (rank o, the owner), 0 when it owns none;
 * *mem_addr the segment offset of its first byte. */
int pio_pattern_part(const pio_pattern *p, uint32_t nranks, uint32_t o, pio_part *part,
                     uint64_t *mem_addr);
/* The pattern of len bytes of shared memory from ptr (blocks of block_bytes). */
pio_pattern pio_pattern_of(pario_pgas_ptr ptr, uint64_t block_bytes, uint64_t len, uint64_t file);
/* Checks that the pattern's first and last bytes are shared memory of fd's context. */
int pio_check_pattern(pario_pgas_file *fd, const pio_pattern *p, const char *what);

/* ---- jobs (job.c) ---- */
void pio_job_free(pio_job *job);
int pio_job_add_part(pio_job *job, const pio_part *part);
int pio_job_add_mem(pio_job *job, void *addr, uint64_t len);
/* Parts of every pattern this rank owns, its own memory as their memory. */
int pio_job_from_patterns(pario_pgas_file *fd, pio_job *job, const pio_pattern *pats, size_t npats);
/* Groups the parts into rounds that do not overlap in the file and makes each
 * round's types (job->nrounds of them). */
int pio_job_prepare(pario_pgas_file *fd, pio_job *job);
/* Carries out the job: nrounds >= job->nrounds collective accesses, the same
 * number on every rank; *moved gets the bytes the io layer moved. */
int pio_job_run(pario_pgas_file *fd, pio_job *job, int nrounds, int write, MPI_Count *moved);
/* Starts the job in the background: the same nrounds views on every rank,
 * each round's access handed to the io layer's nonblocking calls (reqs has
 * room for nrounds requests; *nreqs gets how many were started). A set_view
 * waits for the requests of earlier rounds. Returns the first failure: an
 * agreed one (set_view) or this rank's own (the start of a request). */
int pio_job_start(pario_pgas_file *fd, pio_job *job, int nrounds, int write, pario_request **reqs,
                  int *nreqs);

/* ---- data calls (data.c) ---- */
/* The end of a data call once its bytes have moved (rc agreed on every
 * rank): the result (reads: the bytes before end of file), the OUT
 * synchronisation, the pointer; frees the call. */
int pio_call_finish(pario_pgas_file *fd, pio_call *c, int rc, pario_pgas_off *bytes);
/* The data calls after their entry: c names the call and its direction,
 * sync flags, pointer use and whether it is asynchronous (bytes unused). */
int pio_local_call(pario_pgas_file *fd, pio_call *c, void *buffer, size_t size, size_t nmemb,
                   pario_pgas_off *bytes);
int pio_shared_call(pario_pgas_file *fd, pio_call *c, pario_pgas_ptr buffer, size_t blocksize,
                    size_t size, size_t nmemb, pario_pgas_off *bytes);
/* shared: memvec is pario_pgas_shared_memvec[], else pario_pgas_local_memvec[]. */
int pio_list_call(pario_pgas_file *fd, pio_call *c, size_t nm, const void *memvec, int shared,
                  size_t nf, const pario_pgas_filevec *fv, pario_pgas_off *bytes);

/* ---- asynchronous calls (async.c) ---- */
/* Keeps the call c (agreed and built up to its job when rc is PARIO_OK) as
 * fd's outstanding call and starts its bytes moving; its outcome is the
 * wait's. */
int pio_async_start(pario_pgas_file *fd, pio_call *c, int rc, int nrounds);
/* Completes fd's outstanding call (collective): its agreed code, *bytes. */
int pio_async_complete(pario_pgas_file *fd, pario_pgas_off *bytes);

#endif
