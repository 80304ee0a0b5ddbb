/* pgas io data calls: local and shared buffers, lists, and their asynchronous
 * forms. Each call checks its arguments on every rank, agrees, and moves its
 * bytes as a job (job.c): every rank its own memory, through views. */
#include "pgas/io/pgas_io_internal.h"
#include "pgas/pgas_internal.h"

#include <stdlib.h>
#include <string.h>

static int check_sync(pario_pgas_file *fd, const pio_call *c) {
    int s = c->sync;
    if (!pgas_sync_flags_valid(s))
        return pio_fail(fd, PARIO_ERR_ARG, "%s %s: invalid synchronisation flags 0x%x", c->what,
                        fd->name, s);
    return PARIO_OK;
}

/* The checks every data call makes first. */
static int check_call(pario_pgas_file *fd, const pio_call *c) {
    int rc = pio_check_usable(fd, c->what);
    if (rc != PARIO_OK)
        return rc;
    int need = c->write ? PARIO_PGAS_WRONLY | PARIO_PGAS_RDWR : PARIO_PGAS_RDONLY | PARIO_PGAS_RDWR;
    if (!(fd->flags & need))
        return pio_fail(fd, PARIO_ERR_FILE, "%s %s: the file is not open for %s", c->what, fd->name,
                        c->write ? "writing" : "reading");
    return check_sync(fd, c);
}

static int own_entry(pio_call *c, pario_pgas_off offset, uint64_t len) {
    pario_pgas_filevec *p = realloc(c->own, (c->nown + 1) * sizeof *p);
    if (!p)
        return PARIO_ERR_NO_MEM;
    c->own = p;
    c->own[c->nown++] = (pario_pgas_filevec){.offset = offset, .len = len};
    return PARIO_OK;
}

static int add_pattern(pio_call *c, const pio_pattern *pat) {
    pio_pattern *p = realloc(c->pats, (c->npats + 1) * sizeof *p);
    if (!p)
        return PARIO_ERR_NO_MEM;
    c->pats = p;
    c->pats[c->npats++] = *pat;
    return PARIO_OK;
}

static void free_call(pio_call *c) {
    free(c->pats);
    free(c->own);
    pio_job_free(&c->job);
}

static int mul_ok(size_t a, size_t b, uint64_t *out) {
    return !__builtin_mul_overflow((uint64_t)a, (uint64_t)b, out) && *out <= (uint64_t)INT64_MAX;
}

/* ---- the steps after the local checks ---------------------------------------------------- */

/* Every rank's patterns, to every rank. */
static int exchange_patterns(pario_pgas_file *fd, pio_call *c, pio_pattern **all, size_t *nall) {
    int mine = (int)(c->npats * PIO_PATTERN_WORDS), total = 0;
    int *counts = calloc((size_t)fd->nranks, sizeof *counts);
    int *displs = calloc((size_t)fd->nranks, sizeof *displs);
    int rc = counts && displs ? PARIO_OK : PARIO_ERR_NO_MEM;
    if (MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, fd->comm) != MPI_SUCCESS)
        rc = PARIO_ERR_COMM;
    for (int r = 0; r < fd->nranks && rc == PARIO_OK; r++) {
        displs[r] = total;
        total += counts[r];
    }
    *all = rc == PARIO_OK ? malloc(((size_t)total + 1) * sizeof(uint64_t)) : NULL;
    if (rc == PARIO_OK && !*all)
        rc = PARIO_ERR_NO_MEM;
    if (rc != PARIO_OK)
        pio_fail(fd, rc, "%s %s: cannot exchange the requests", c->what, fd->name);
    rc = pio_agree(fd, rc, NULL, 0);
    if (rc == PARIO_OK && MPI_Allgatherv(c->pats, mine, MPI_UINT64_T, *all, counts, displs,
                                         MPI_UINT64_T, fd->comm) != MPI_SUCCESS)
        rc = pio_fail(fd, PARIO_ERR_COMM, "%s %s: cannot exchange the requests", c->what, fd->name);
    *nall = (size_t)total / PIO_PATTERN_WORDS;
    free(counts);
    free(displs);
    return rc;
}

/* The job of this rank: its parts of every rank's patterns (exchange) or of
 * its own; then rounds and types, and the number of rounds all ranks make. */
static int build_job(pario_pgas_file *fd, pio_call *c, int *nrounds) {
    int rc = PARIO_OK;
    if (c->exchange) {
        pio_pattern *all = NULL;
        size_t nall = 0;
        rc = exchange_patterns(fd, c, &all, &nall);
        if (rc != PARIO_OK) {
            free(all);
            return rc;
        }
        rc = pio_job_from_patterns(fd, &c->job, all, nall);
        free(all);
    } else if (c->npats) {
        rc = pio_job_from_patterns(fd, &c->job, c->pats, c->npats);
    }
    if (rc == PARIO_OK)
        rc = pio_job_prepare(fd, &c->job);
    uint64_t most = ~(uint64_t)c->job.nrounds; /* the minimum of ~n is the maximum of n */
    rc = pio_agree(fd, rc, &most, 1);
    *nrounds = (int)~most;
    return rc;
}

/* What a read returns: the bytes of this rank's file entries before the end of file. */
static int read_result(pario_pgas_file *fd, const pio_call *c, pario_pgas_off *result) {
    MPI_Offset size = 0;
    int rc = pario_file_get_size(fd->fh, &size);
    if (rc != PARIO_OK)
        return pio_io_failed(fd, rc);
    *result = 0;
    for (size_t i = 0; i < c->nown; i++) {
        pario_pgas_off end = c->own[i].offset + (pario_pgas_off)c->own[i].len;
        pario_pgas_off stop = end < size ? end : size;
        if (stop > c->own[i].offset)
            *result += stop - c->own[i].offset;
    }
    return PARIO_OK;
}

static pario_pgas_off requested(const pio_call *c) {
    pario_pgas_off n = 0;
    for (size_t i = 0; i < c->nown; i++)
        n += (pario_pgas_off)c->own[i].len;
    return n;
}

int pio_call_finish(pario_pgas_file *fd, pio_call *c, int rc, pario_pgas_off *bytes) {
    pario_pgas_off result = 0;
    if (rc == PARIO_OK) {
        result = requested(c);
        if (!c->write)
            rc = pio_agree(fd, read_result(fd, c, &result), NULL, 0);
    }
    if (rc == PARIO_OK && !(c->sync & PARIO_PGAS_OUT_NOSYNC))
        rc = pio_barrier(fd);
    if (rc == PARIO_OK && c->use_pointer)
        fd->pos += result;
    if (bytes)
        *bytes = rc == PARIO_OK ? result : -1;
    free_call(c);
    return rc;
}

/* Agreement, IN synchronisation, the job; then the access and the end of
 * the call, or, for an asynchronous call, the start of the access (the
 * wait ends it). rc is the local checks'. */
static int run_call(pario_pgas_file *fd, pio_call *c, int rc, pario_pgas_off *bytes) {
    int nrounds = 0;
    MPI_Count moved = 0;
    uint64_t same[5] = {(uint64_t)(unsigned)c->sync};
    memcpy(same + 1, c->same, (size_t)c->nsame * sizeof *same);
    rc = pio_agree_same(fd, rc, same, 1 + c->nsame, c->what);
    if (rc == PARIO_OK && !(c->sync & PARIO_PGAS_IN_NOSYNC))
        rc = pio_barrier(fd);
    else if (rc == PARIO_OK)
        pario_pgas_fence(fd->ctx);
    if (rc == PARIO_OK)
        rc = build_job(fd, c, &nrounds);
    if (c->async)
        return pio_async_start(fd, c, rc, nrounds);
    if (rc == PARIO_OK)
        rc = pio_job_run(fd, &c->job, nrounds, c->write, &moved);
    return pio_call_finish(fd, c, rc, bytes);
}

/* ---- local buffers ------------------------------------------------------------------------ */

int pio_local_call(pario_pgas_file *fd, pio_call *c, void *buffer, size_t size, size_t nmemb,
                   pario_pgas_off *bytes) {
    uint64_t len = 0;
    int rc = check_call(fd, c);
    if (rc == PARIO_OK && !(fd->flags & PARIO_PGAS_INDIVIDUAL_FP))
        rc = pio_fail(fd, PARIO_ERR_UNSUPPORTED_OPERATION,
                      "%s %s: local buffers need individual file pointers", c->what, fd->name);
    if (rc == PARIO_OK && !mul_ok(size, nmemb, &len))
        rc = pio_fail(fd, PARIO_ERR_COUNT_ARG, "%s %s: %zu elements of %zu bytes is too many",
                      c->what, fd->name, nmemb, size);
    if (rc == PARIO_OK && len && !buffer)
        rc = pio_fail(fd, PARIO_ERR_ARG, "%s %s: NULL buffer", c->what, fd->name);
    pio_part part = {.head_off = (uint64_t)fd->pos, .head_len = len, .mem_count = 1};
    if (rc == PARIO_OK && (own_entry(c, fd->pos, len) != PARIO_OK ||
                           (len && (pio_job_add_mem(&c->job, buffer, len) != PARIO_OK ||
                                    pio_job_add_part(&c->job, &part) != PARIO_OK))))
        rc = pio_fail(fd, PARIO_ERR_NO_MEM, "%s %s: out of memory", c->what, fd->name);
    return run_call(fd, c, rc, bytes);
}

int pario_pgas_fread_local(pario_pgas_file *fd, void *buffer, size_t size, size_t nmemb, int sync,
                           pario_pgas_off *bytes) {
    if (!fd)
        return PARIO_ERR_FILE;
    pio_call c = {.what = "pario_pgas_fread_local", .sync = sync, .use_pointer = 1};
    return pio_local_call(fd, &c, buffer, size, nmemb, bytes);
}

int pario_pgas_fwrite_local(pario_pgas_file *fd, const void *buffer, size_t size, size_t nmemb,
                            int sync, pario_pgas_off *bytes) {
    if (!fd)
        return PARIO_ERR_FILE;
    pio_call c = {.what = "pario_pgas_fwrite_local", .write = 1, .sync = sync, .use_pointer = 1};
    return pio_local_call(fd, &c, (void *)buffer, size, nmemb, bytes);
}

/* ---- shared buffers ---------------------------------------------------------------------- */

int pio_shared_call(pario_pgas_file *fd, pio_call *c, pario_pgas_ptr buffer, size_t blocksize,
                    size_t size, size_t nmemb, pario_pgas_off *bytes) {
    uint64_t len = 0, block = 0;
    int common = (fd->flags & PARIO_PGAS_COMMON_FP) != 0;
    int rc = check_call(fd, c);
    if (rc == PARIO_OK && (!mul_ok(size, nmemb, &len) || !mul_ok(size, blocksize, &block)))
        rc = pio_fail(fd, PARIO_ERR_COUNT_ARG,
                      "%s %s: %zu elements of %zu bytes in blocks of %zu is too many", c->what,
                      fd->name, nmemb, size, blocksize);
    pio_pattern pat = pio_pattern_of(buffer, block, len, (uint64_t)fd->pos);
    if (rc == PARIO_OK && len && buffer.nranks != (uint32_t)fd->nranks)
        rc = pio_fail(fd, PARIO_ERR_ARG, "%s %s: the buffer is not a pointer of this context",
                      c->what, fd->name);
    if (rc == PARIO_OK)
        rc = pio_check_pattern(fd, &pat, c->what);
    if (rc == PARIO_OK && (own_entry(c, fd->pos, len) != PARIO_OK || add_pattern(c, &pat)))
        rc = pio_fail(fd, PARIO_ERR_NO_MEM, "%s %s: out of memory", c->what, fd->name);
    /* A common pointer: one request, the same on every rank, that each owner
     * serves from its copy; individual pointers: every rank's own request. */
    c->exchange = !common;
    if (common) {
        uint64_t same[4] = {pat.addr ^ (pat.rank << 48), pat.phase, pat.block, pat.len};
        memcpy(c->same, same, sizeof same);
        c->nsame = 4;
    }
    return run_call(fd, c, rc, bytes);
}

int pario_pgas_fread_shared(pario_pgas_file *fd, pario_pgas_ptr buffer, size_t blocksize,
                            size_t size, size_t nmemb, int sync, pario_pgas_off *bytes) {
    if (!fd)
        return PARIO_ERR_FILE;
    pio_call c = {.what = "pario_pgas_fread_shared", .sync = sync, .use_pointer = 1};
    return pio_shared_call(fd, &c, buffer, blocksize, size, nmemb, bytes);
}

int pario_pgas_fwrite_shared(pario_pgas_file *fd, pario_pgas_ptr buffer, size_t blocksize,
                             size_t size, size_t nmemb, int sync, pario_pgas_off *bytes) {
    if (!fd)
        return PARIO_ERR_FILE;
    pio_call c = {.what = "pario_pgas_fwrite_shared", .write = 1, .sync = sync, .use_pointer = 1};
    return pio_shared_call(fd, &c, buffer, blocksize, size, nmemb, bytes);
}

/* ---- lists -------------------------------------------------------------------------------- */

/* The file list: offsets >= 0, non-decreasing (reads) or increasing without
 * overlap (writes); its total in *total. */
static int check_filevec(pario_pgas_file *fd, pio_call *c, size_t n, const pario_pgas_filevec *fv,
                         uint64_t *total) {
    *total = 0;
    if (n && !fv)
        return pio_fail(fd, PARIO_ERR_ARG, "%s %s: NULL file list", c->what, fd->name);
    uint64_t prev_off = 0, prev_end = 0;
    for (size_t i = 0; i < n; i++) {
        if (fv[i].offset < 0 || fv[i].len > (uint64_t)INT64_MAX - (uint64_t)fv[i].offset)
            return pio_fail(fd, PARIO_ERR_ARG, "%s %s: file entry %zu: offset %lld", c->what,
                            fd->name, i, (long long)fv[i].offset);
        uint64_t off = (uint64_t)fv[i].offset;
        if (fv[i].len && i && (off < prev_off || (c->write && off < prev_end)))
            return pio_fail(fd, PARIO_ERR_ARG,
                            "%s %s: file entry %zu at %lld is before the previous one%s", c->what,
                            fd->name, i, (long long)off, c->write ? " ends (or overlaps it)" : "");
        if (fv[i].len) {
            prev_off = off;
            prev_end = off + fv[i].len;
        }
        *total += fv[i].len;
        if (own_entry(c, fv[i].offset, fv[i].len) != PARIO_OK)
            return pio_fail(fd, PARIO_ERR_NO_MEM, "%s %s: out of memory", c->what, fd->name);
    }
    return PARIO_OK;
}

/* Bytes of memory entry i of a local (shared = 0) or shared list. */
static uint64_t mem_len(const void *memvec, int shared, size_t i) {
    return shared ? ((const pario_pgas_shared_memvec *)memvec)[i].len
                  : ((const pario_pgas_local_memvec *)memvec)[i].len;
}

/* Walks the memory and file lists together, cutting where either entry
 * ends; cut(i, at, file, len) gets memory entry i from byte at. */
typedef int (*pio_cut_fn)(pio_call *c, const void *memvec, size_t i, uint64_t at, uint64_t file,
                          uint64_t len);

static int walk_lists(pio_call *c, size_t nm, const void *memvec, int shared,
                      const pario_pgas_filevec *fv, size_t nf, pio_cut_fn cut) {
    size_t i = 0, j = 0;
    uint64_t at = 0, fat = 0;
    while (i < nm && j < nf) {
        uint64_t mlen = mem_len(memvec, shared, i);
        uint64_t n = mlen - at < fv[j].len - fat ? mlen - at : fv[j].len - fat;
        if (n) {
            int rc = cut(c, memvec, i, at, (uint64_t)fv[j].offset + fat, n);
            if (rc != PARIO_OK)
                return rc;
        }
        at += n;
        fat += n;
        if (at == mlen) {
            i++;
            at = 0;
        }
        if (fat == fv[j].len) {
            j++;
            fat = 0;
        }
    }
    return PARIO_OK;
}

static int cut_local(pio_call *c, const void *memvec, size_t i, uint64_t at, uint64_t file,
                     uint64_t len) {
    const pario_pgas_local_memvec *m = memvec;
    pio_part part = {.head_off = file, .head_len = len, .mem_first = c->job.nmem, .mem_count = 1};
    if (pio_job_add_mem(&c->job, (unsigned char *)m[i].baseaddr + at, len) != PARIO_OK)
        return PARIO_ERR_NO_MEM;
    return pio_job_add_part(&c->job, &part);
}

static int cut_shared(pio_call *c, const void *memvec, size_t i, uint64_t at, uint64_t file,
                      uint64_t len) {
    const pario_pgas_shared_memvec *m = memvec;
    pio_pattern whole = pio_pattern_of(m[i].baseaddr, m[i].blocksize, m[i].len, 0);
    pario_pgas_ptr start = {.addr = whole.addr,
                            .phase = whole.phase,
                            .block = whole.block,
                            .elem_size = 1,
                            .rank = (uint32_t)whole.rank,
                            .nranks = m[i].baseaddr.nranks};
    start = pario_pgas_ptr_add(start, (int64_t)at);
    return add_pattern(c, &(pio_pattern){.addr = start.addr,
                                         .phase = start.phase,
                                         .block = whole.block,
                                         .len = len,
                                         .file = file,
                                         .rank = start.rank});
}

/* Memory entries: no NULL base with data, the same total as the file list. */
static int check_memvec(pario_pgas_file *fd, pio_call *c, size_t n, const void *memvec, int shared,
                        uint64_t file_total) {
    uint64_t total = 0;
    if (n && !memvec)
        return pio_fail(fd, PARIO_ERR_ARG, "%s %s: NULL memory list", c->what, fd->name);
    for (size_t i = 0; i < n; i++) {
        uint64_t len = mem_len(memvec, shared, i);
        if (len && !shared && !((const pario_pgas_local_memvec *)memvec)[i].baseaddr)
            return pio_fail(fd, PARIO_ERR_ARG, "%s %s: memory entry %zu: NULL address", c->what,
                            fd->name, i);
        if (len && shared) {
            const pario_pgas_shared_memvec *s = &((const pario_pgas_shared_memvec *)memvec)[i];
            pio_pattern p = pio_pattern_of(s->baseaddr, s->blocksize, len, 0);
            if (s->baseaddr.nranks != (uint32_t)fd->nranks)
                return pio_fail(fd, PARIO_ERR_ARG,
                                "%s %s: memory entry %zu is not a pointer of this context", c->what,
                                fd->name, i);
            int rc = pio_check_pattern(fd, &p, c->what);
            if (rc != PARIO_OK)
                return rc;
        }
        total += len;
    }
    if (total != file_total)
        return pio_fail(fd, PARIO_ERR_ARG,
                        "%s %s: the memory list holds %llu bytes, the file list %llu", c->what,
                        fd->name, (unsigned long long)total, (unsigned long long)file_total);
    return PARIO_OK;
}

int pio_list_call(pario_pgas_file *fd, pio_call *c, size_t nm, const void *memvec, int shared,
                  size_t nf, const pario_pgas_filevec *fv, pario_pgas_off *bytes) {
    uint64_t total = 0;
    int rc = check_call(fd, c);
    if (rc == PARIO_OK)
        rc = check_filevec(fd, c, nf, fv, &total);
    if (rc == PARIO_OK)
        rc = check_memvec(fd, c, nm, memvec, shared, total);
    if (rc == PARIO_OK &&
        walk_lists(c, nm, memvec, shared, fv, nf, shared ? cut_shared : cut_local))
        rc = pio_fail(fd, PARIO_ERR_NO_MEM, "%s %s: out of memory", c->what, fd->name);
    c->exchange = shared;
    return run_call(fd, c, rc, bytes);
}

/* The entry of every list call. */
static int list_entry(pario_pgas_file *fd, const char *what, int write, size_t nm,
                      const void *memvec, int shared, size_t nf, const pario_pgas_filevec *fv,
                      int sync, pario_pgas_off *bytes) {
    if (!fd)
        return PARIO_ERR_FILE;
    pio_call c = {.what = what, .write = write, .sync = sync};
    return pio_list_call(fd, &c, nm, memvec, shared, nf, fv, bytes);
}

int pario_pgas_fread_list_local(pario_pgas_file *fd, size_t nm,
                                const pario_pgas_local_memvec *memvec, size_t nf,
                                const pario_pgas_filevec *fv, int sync, pario_pgas_off *bytes) {
    return list_entry(fd, "pario_pgas_fread_list_local", 0, nm, memvec, 0, nf, fv, sync, bytes);
}

int pario_pgas_fwrite_list_local(pario_pgas_file *fd, size_t nm,
                                 const pario_pgas_local_memvec *memvec, size_t nf,
                                 const pario_pgas_filevec *fv, int sync, pario_pgas_off *bytes) {
    return list_entry(fd, "pario_pgas_fwrite_list_local", 1, nm, memvec, 0, nf, fv, sync, bytes);
}

int pario_pgas_fread_list_shared(pario_pgas_file *fd, size_t nm,
                                 const pario_pgas_shared_memvec *memvec, size_t nf,
                                 const pario_pgas_filevec *fv, int sync, pario_pgas_off *bytes) {
    return list_entry(fd, "pario_pgas_fread_list_shared", 0, nm, memvec, 1, nf, fv, sync, bytes);
}

int pario_pgas_fwrite_list_shared(pario_pgas_file *fd, size_t nm,
                                  const pario_pgas_shared_memvec *memvec, size_t nf,
                                  const pario_pgas_filevec *fv, int sync, pario_pgas_off *bytes) {
    return list_entry(fd, "pario_pgas_fwrite_list_shared", 1, nm, memvec, 1, nf, fv, sync, bytes);
}
