/* A data call on one rank as a job: the parts it moves, grouped into rounds of
 * parts that do not overlap in the file, each round one collective access of
 * the io layer through a view made of its parts' file pieces. */
#include "pgas/io/pgas_io_internal.h"
#include "pgas/pgas_internal.h"

#include <limits.h>
#include <stdlib.h>

static int grow(void **array, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap)
        return PARIO_OK;
    size_t cap2 = *cap ? *cap * 2 : 8;
    while (cap2 < need)
        cap2 *= 2;
    void *p = realloc(*array, cap2 * elem);
    if (!p)
        return PARIO_ERR_NO_MEM;
    *array = p;
    *cap = cap2;
    return PARIO_OK;
}

void pio_job_free(pio_job *job) {
    for (int r = 0; r < job->nrounds; r++) {
        if (job->rounds[r].filetype != MPI_DATATYPE_NULL)
            MPI_Type_free(&job->rounds[r].filetype);
        if (job->rounds[r].memtype != MPI_DATATYPE_NULL)
            MPI_Type_free(&job->rounds[r].memtype);
    }
    free(job->rounds);
    free(job->parts);
    free(job->mem);
    *job = (pio_job){0};
}

int pio_job_add_part(pio_job *job, const pio_part *part) {
    int rc = grow((void **)&job->parts, &job->cap_parts, job->nparts + 1, sizeof *part);
    if (rc == PARIO_OK)
        job->parts[job->nparts++] = *part;
    return rc;
}

int pio_job_add_mem(pio_job *job, void *addr, uint64_t len) {
    int rc = grow((void **)&job->mem, &job->cap_mem, job->nmem + 1, sizeof *job->mem);
    if (rc == PARIO_OK)
        job->mem[job->nmem++] = (pio_mem){.addr = addr, .len = len};
    return rc;
}

static uint64_t part_bytes(const pio_part *p) {
    return p->head_len + p->body_count * p->body_block + p->tail_len;
}

int pio_job_from_patterns(pario_pgas_file *fd, pio_job *job, const pio_pattern *pats,
                          size_t npats) {
    const pario_pgas_local_map *map = pario_pgas_map(fd->ctx);
    for (size_t i = 0; i < npats; i++) {
        pio_part part;
        uint64_t addr = 0;
        if (!pio_pattern_part(&pats[i], map->nranks, map->rank, &part, &addr))
            continue;
        uint64_t bytes = part_bytes(&part);
        if (addr < map->heap_lo || addr > map->heap_hi || bytes > map->heap_hi - addr)
            return pio_fail(fd, PARIO_ERR_ARG,
                            "pgas io %s: a shared buffer runs past the heap of rank %u", fd->name,
                            map->rank);
        part.mem_first = job->nmem;
        part.mem_count = 1;
        if (pio_job_add_mem(job, map->base[map->rank] + addr, bytes) != PARIO_OK ||
            pio_job_add_part(job, &part) != PARIO_OK)
            return pio_fail(fd, PARIO_ERR_NO_MEM, "pgas io %s: out of memory", fd->name);
    }
    return PARIO_OK;
}

/* ---- rounds ---------------------------------------------------------------------- */

static uint64_t part_end(const pio_part *p) {
    if (p->tail_len)
        return p->tail_off + p->tail_len;
    if (p->body_count)
        return p->body_off + (p->body_count - 1) * p->body_stride + p->body_block;
    return p->head_off + p->head_len;
}

static int by_file_offset(const void *a, const void *b) {
    const pio_part *x = a, *y = b;
    return (x->head_off > y->head_off) - (x->head_off < y->head_off);
}

/* First fit: a part goes to the first round whose last part ends before it. */
static int assign_rounds(pio_job *job, uint64_t **ends, size_t *nends) {
    if (job->nparts > 1)
        qsort(job->parts, job->nparts, sizeof *job->parts, by_file_offset);
    size_t cap = 0;
    *nends = 0;
    for (size_t i = 0; i < job->nparts; i++) {
        pio_part *p = &job->parts[i];
        size_t r = 0;
        while (r < *nends && (*ends)[r] > p->head_off)
            r++;
        if (r == *nends) {
            if (grow((void **)ends, &cap, *nends + 1, sizeof **ends) != PARIO_OK)
                return PARIO_ERR_NO_MEM;
            (*nends)++;
        }
        (*ends)[r] = part_end(p);
        p->round = (int)r;
    }
    return PARIO_OK;
}

/* ---- the types of one round --------------------------------------------------------- */

/* Blocks of a struct type under construction. */
typedef struct type_list {
    int n;
    int *lens;
    MPI_Aint *disps;
    MPI_Datatype *types;
} type_list;

static int list_add(type_list *l, uint64_t len, uint64_t disp, MPI_Datatype type) {
    if (len > INT_MAX)
        return PARIO_ERR_ARG;
    l->lens[l->n] = (int)len;
    l->disps[l->n] = (MPI_Aint)disp;
    l->types[l->n++] = type;
    return PARIO_OK;
}

/* The whole blocks of a part as one type: a vector of bytes. */
/* count whole blocks of a part as one type: a vector of bytes. */
static int body_type(const pio_part *p, uint64_t count, MPI_Datatype *t) {
    if (count > INT_MAX || p->body_block > INT_MAX)
        return PARIO_ERR_ARG;
    return MPI_Type_create_hvector((int)count, (int)p->body_block, (MPI_Aint)p->body_stride,
                                   MPI_BYTE, t) == MPI_SUCCESS
               ? PARIO_OK
               : PARIO_ERR_TYPE;
}

/* A first block that is whole joins the vector: most parts are then one
 * vector (or one run), which the io layer walks fastest. */
static int add_file_pieces(type_list *l, const pio_part *p, MPI_Datatype *body) {
    int rc = PARIO_OK;
    int joined = p->body_count && p->head_len == p->body_block &&
                 p->head_off + p->body_stride == p->body_off;
    if (p->head_len && !joined)
        rc = list_add(l, p->head_len, p->head_off, MPI_BYTE);
    if (rc == PARIO_OK && p->body_count) {
        rc = body_type(p, p->body_count + (uint64_t)joined, body);
        if (rc == PARIO_OK)
            rc = list_add(l, 1, joined ? p->head_off : p->body_off, *body);
    }
    if (rc == PARIO_OK && p->tail_len)
        rc = list_add(l, p->tail_len, p->tail_off, MPI_BYTE);
    return rc;
}

static int commit_struct(type_list *l, MPI_Datatype *out) {
    if (l->n == 0)
        return MPI_Type_contiguous(0, MPI_BYTE, out) == MPI_SUCCESS &&
                       MPI_Type_commit(out) == MPI_SUCCESS
                   ? PARIO_OK
                   : PARIO_ERR_TYPE;
    if (MPI_Type_create_struct(l->n, l->lens, l->disps, l->types, out) != MPI_SUCCESS)
        return PARIO_ERR_TYPE;
    return MPI_Type_commit(out) == MPI_SUCCESS ? PARIO_OK : PARIO_ERR_TYPE;
}

/* The filetype of round r: its parts' pieces at their file offsets (the view's
 * displacement is 0), in file order. */
static int round_filetype(const pio_job *job, int r, type_list *l, MPI_Datatype *bodies,
                          MPI_Datatype *out) {
    int rc = PARIO_OK, nbodies = 0;
    l->n = 0;
    for (size_t i = 0; i < job->nparts && rc == PARIO_OK; i++)
        if (job->parts[i].round == r)
            rc = add_file_pieces(l, &job->parts[i], &bodies[nbodies++]);
    if (rc == PARIO_OK)
        rc = commit_struct(l, out);
    for (int i = 0; i < nbodies; i++)
        if (bodies[i] != MPI_DATATYPE_NULL)
            MPI_Type_free(&bodies[i]);
    return rc;
}

/* The memory of round r: its parts' memory pieces relative to the lowest one. */
static int round_memtype(const pio_job *job, int r, type_list *l, pio_round *round) {
    unsigned char *base = NULL;
    for (size_t i = 0; i < job->nparts; i++) {
        const pio_part *p = &job->parts[i];
        for (size_t m = p->mem_first; p->round == r && m < p->mem_first + p->mem_count; m++)
            if (!base || job->mem[m].addr < base)
                base = job->mem[m].addr;
    }
    int rc = PARIO_OK;
    l->n = 0;
    for (size_t i = 0; i < job->nparts && rc == PARIO_OK; i++) {
        const pio_part *p = &job->parts[i];
        for (size_t m = p->mem_first; p->round == r && m < p->mem_first + p->mem_count; m++)
            if (job->mem[m].len && rc == PARIO_OK)
                rc = list_add(l, job->mem[m].len, (uint64_t)(job->mem[m].addr - base), MPI_BYTE);
    }
    round->base = base;
    round->count = l->n ? 1 : 0;
    return rc == PARIO_OK ? commit_struct(l, &round->memtype) : rc;
}

static int make_rounds(pio_job *job, int nrounds) {
    size_t most = job->nmem > 3 * job->nparts ? job->nmem : 3 * job->nparts;
    type_list l = {.lens = malloc((most + 1) * sizeof *l.lens),
                   .disps = malloc((most + 1) * sizeof *l.disps),
                   .types = malloc((most + 1) * sizeof *l.types)};
    MPI_Datatype *bodies = malloc((job->nparts + 1) * sizeof *bodies);
    job->rounds = calloc((size_t)nrounds + 1, sizeof *job->rounds);
    int rc = l.lens && l.disps && l.types && bodies && job->rounds ? PARIO_OK : PARIO_ERR_NO_MEM;
    for (int r = 0; r < nrounds && rc == PARIO_OK; r++) {
        job->rounds[r].filetype = job->rounds[r].memtype = MPI_DATATYPE_NULL;
        job->nrounds = r + 1;
        for (size_t i = 0; i < job->nparts; i++)
            bodies[i] = MPI_DATATYPE_NULL;
        rc = round_filetype(job, r, &l, bodies, &job->rounds[r].filetype);
        if (rc == PARIO_OK)
            rc = round_memtype(job, r, &l, &job->rounds[r]);
    }
    free(l.lens);
    free(l.disps);
    free(l.types);
    free(bodies);
    return rc;
}

int pio_job_prepare(pario_pgas_file *fd, pio_job *job) {
    uint64_t *ends = NULL;
    size_t nends = 0;
    int rc = assign_rounds(job, &ends, &nends);
    free(ends);
    if (rc == PARIO_OK)
        rc = make_rounds(job, (int)nends);
    if (rc == PARIO_ERR_ARG)
        return pio_fail(fd, rc, "pgas io %s: a piece of more than %d bytes", fd->name, INT_MAX);
    if (rc != PARIO_OK)
        return pio_fail(fd, rc, "pgas io %s: cannot describe the access (%s)", fd->name,
                        pario_err_name(rc));
    return PARIO_OK;
}

/* ---- running ---------------------------------------------------------------------- */

static int run_round(pario_pgas_file *fd, const pio_round *round, MPI_Datatype empty, int write,
                     MPI_Count *moved) {
    MPI_Datatype ft = round ? round->filetype : empty;
    int rc = pario_file_set_view(fd->fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL);
    if (rc != PARIO_OK)
        return pio_io_failed(fd, rc);
    void *buf = round ? round->base : NULL;
    MPI_Count count = round ? round->count : 0;
    MPI_Datatype mt = round && round->count ? round->memtype : MPI_BYTE;
    MPI_Count bytes = 0;
    rc = write ? pario_file_write_at_all(fd->fh, 0, buf, count, mt, &bytes)
               : pario_file_read_at_all(fd->fh, 0, buf, count, mt, &bytes);
    if (rc != PARIO_OK)
        return pio_io_failed(fd, rc);
    *moved += bytes;
    return PARIO_OK;
}

int pio_job_run(pario_pgas_file *fd, pio_job *job, int nrounds, int write, MPI_Count *moved) {
    int rc = PARIO_OK;
    *moved = 0;
    for (int r = 0; r < nrounds && rc == PARIO_OK; r++)
        rc = run_round(fd, r < job->nrounds ? &job->rounds[r] : NULL, fd->empty, write, moved);
    return rc;
}

/* Hands this rank's part of one round to the io layer's background thread. */
static int start_round(pario_pgas_file *fd, const pio_round *round, int write,
                       pario_request **req) {
    int rc = write ? pario_file_iwrite_at(fd->fh, 0, round->base, round->count, round->memtype, req)
                   : pario_file_iread_at(fd->fh, 0, round->base, round->count, round->memtype, req);
    return rc == PARIO_OK ? rc : pio_io_failed(fd, rc);
}

int pio_job_start(pario_pgas_file *fd, pio_job *job, int nrounds, int write, pario_request **reqs,
                  int *nreqs) {
    int mine = reqs
                   ? PARIO_OK
                   : pio_fail(fd, PARIO_ERR_NO_MEM, "pgas io %s: no memory for requests", fd->name);
    *nreqs = 0;
    for (int r = 0; r < nrounds; r++) {
        const pio_round *round = r < job->nrounds ? &job->rounds[r] : NULL;
        /* Collective and agreed: every rank takes every round's view, even
         * one whose own start failed, so no rank waits for another. */
        int rc = pario_file_set_view(fd->fh, 0, MPI_BYTE, round ? round->filetype : fd->empty,
                                     "native", MPI_INFO_NULL);
        if (rc != PARIO_OK)
            return pio_io_failed(fd, rc);
        if (mine == PARIO_OK && round && round->count) {
            mine = start_round(fd, round, write, &reqs[*nreqs]);
            if (mine == PARIO_OK)
                (*nreqs)++;
        }
    }
    return mine;
}
