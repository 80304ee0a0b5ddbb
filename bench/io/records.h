/* Records of one size at computed offsets, written and read with
 * independent explicit-offset calls under given hints, timed with open and
 * close (and the sync, durable mode): the access of the cache scenarios
 * (wellformed, cyclic). */
#ifndef PARIO_BENCH_RECORDS_H
#define PARIO_BENCH_RECORDS_H

#include <stdlib.h>
#include <string.h>
#include "iobench.h"

/* A rank's records: count of them, len bytes each (a multiple of 8); the
 * i-th at file offset at(c, i, param). */
typedef struct rec_set {
    long long count, len;
    long long (*at)(const ib_ctx *c, long long i, int param);
    int param;
    const char *const *hints; /* key, value, ..., NULL */
} rec_set;

static inline double rec_timed(const ib_ctx *c, const rec_set *s, char *buf, int write) {
    MPI_File fh;
    MPI_Info info = ib_info(s->hints);
    int amode = write ? MPI_MODE_CREATE | MPI_MODE_RDWR : MPI_MODE_RDONLY;
    double t0 = ib_start(c->comm);
    ib_mpi_check(MPI_File_open(c->comm, c->path, amode, info, &fh), "MPI_File_open");
    ib_note_file(c, fh);
    for (long long i = 0; i < s->count; i++) {
        MPI_Offset off = s->at(c, i, s->param);
        char *rec = buf + i * s->len;
        int rc = write ? MPI_File_write_at(fh, off, rec, (int)s->len, MPI_BYTE, MPI_STATUS_IGNORE)
                       : MPI_File_read_at(fh, off, rec, (int)s->len, MPI_BYTE, MPI_STATUS_IGNORE);
        ib_mpi_check(rc, write ? "MPI_File_write_at" : "MPI_File_read_at");
    }
    if (write && c->mode == IB_DURABLE)
        ib_mpi_check(MPI_File_sync(fh), "MPI_File_sync");
    ib_mpi_check(MPI_File_close(&fh), "MPI_File_close");
    double took = MPI_Wtime() - t0;
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    return took;
}

static inline int rec_write(const ib_ctx *c, const rec_set *s, ib_timing *t) {
    char *buf = ib_alloc((size_t)(s->count * s->len));
    for (long long i = 0; i < s->count; i++)
        ib_fill(buf + i * s->len, (size_t)s->len, s->at(c, i, s->param), c->salt);
    t->seconds = rec_timed(c, s, buf, 1);
    free(buf);
    return MPI_SUCCESS;
}

static inline int rec_read(const ib_ctx *c, const rec_set *s, ib_timing *t) {
    char *buf = ib_alloc((size_t)(s->count * s->len));
    memset(buf, 0, (size_t)(s->count * s->len));
    t->seconds = rec_timed(c, s, buf, 0);
    for (long long i = 0; i < s->count; i++)
        t->bad += ib_check(buf + i * s->len, (size_t)s->len, s->at(c, i, s->param), c->salt);
    free(buf);
    return MPI_SUCCESS;
}

#endif
