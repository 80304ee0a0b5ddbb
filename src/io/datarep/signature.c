/* Type signatures: the sequence of predefined types a datatype's data holds,
 * in typemap order, decoded with MPI_Type_get_envelope/get_contents. Every
 * combiner with one old type (contiguous, vector, indexed, subarray, darray,
 * resized, dup, ...) repeats its old type's signature size/oldsize times, so
 * only structs need their members' runs laid out; repetition is kept as a
 * count, not expanded. */
#include <stdlib.h>
#include <string.h>
#include "common/error.h"
#include "io/datarep/datarep.h"

typedef struct sig_builder {
    datarep_sig *sig;
    int cap;
} sig_builder;

static bool is_named(MPI_Datatype t) {
    int ni, na, nd, combiner;
    MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    return combiner == MPI_COMBINER_NAMED;
}

/* Append items of one predefined type, merging with the last run. */
static int sig_push(sig_builder *b, const sig_run *r) {
    datarep_sig *s = b->sig;
    if (r->items == 0)
        return PARIO_OK;
    if (s->nruns > 0 && s->runs[s->nruns - 1].basic == r->basic) {
        s->runs[s->nruns - 1].items += r->items;
        return PARIO_OK;
    }
    if (s->nruns == DATAREP_SIG_MAX_RUNS)
        return PARIO_ERR_UNSUPPORTED_DATAREP;
    if (s->nruns == b->cap) {
        int cap = b->cap ? b->cap * 2 : 4;
        sig_run *runs = realloc(s->runs, (size_t)cap * sizeof *runs);
        if (!runs)
            return PARIO_ERR_NO_MEM;
        s->runs = runs;
        b->cap = cap;
    }
    s->runs[s->nruns++] = *r;
    return PARIO_OK;
}

/* Append `times` copies of the whole signature child. */
static int sig_append(sig_builder *b, const datarep_sig *child, int64_t times) {
    int64_t copies = times * child->reps;
    if (child->nruns == 1) {
        sig_run r = child->runs[0];
        r.items *= copies;
        return sig_push(b, &r);
    }
    if (child->nruns > 0 && copies > DATAREP_SIG_MAX_RUNS / child->nruns)
        return PARIO_ERR_UNSUPPORTED_DATAREP;
    int rc = PARIO_OK;
    for (int64_t k = 0; k < copies && rc == PARIO_OK; k++)
        for (int j = 0; j < child->nruns && rc == PARIO_OK; j++)
            rc = sig_push(b, &child->runs[j]);
    return rc;
}

static int sig_build_rec(MPI_Datatype t, datarep_sig *sig, MPI_Datatype *bad);

static int sig_of_named(MPI_Datatype t, datarep_sig *sig, MPI_Datatype *bad) {
    const datarep_basic *basic = datarep_basic_find(t);
    if (!basic) {
        *bad = t;
        return PARIO_ERR_UNSUPPORTED_DATAREP;
    }
    sig->runs = malloc(sizeof *sig->runs);
    if (!sig->runs)
        return PARIO_ERR_NO_MEM;
    sig->runs[0] = (sig_run){basic, datarep_basic_size(basic), 1};
    sig->nruns = 1;
    sig->reps = 1;
    return PARIO_OK;
}

/* The contents of a derived type; derived members are freed by contents_free. */
typedef struct type_contents {
    int ni, na, nd, combiner;
    int *ints;
    MPI_Aint *addrs;
    MPI_Datatype *types;
} type_contents;

static void contents_free(type_contents *c) {
    for (int i = 0; c->types && i < c->nd; i++)
        if (c->types[i] != MPI_DATATYPE_NULL && !is_named(c->types[i]))
            MPI_Type_free(&c->types[i]);
    free(c->ints);
    free(c->addrs);
    free(c->types);
}

static int contents_get(MPI_Datatype t, type_contents *c) {
    memset(c, 0, sizeof *c);
    MPI_Type_get_envelope(t, &c->ni, &c->na, &c->nd, &c->combiner);
    c->ints = malloc(((size_t)c->ni + 1) * sizeof *c->ints);
    c->addrs = malloc(((size_t)c->na + 1) * sizeof *c->addrs);
    c->types = calloc((size_t)c->nd + 1, sizeof *c->types);
    if (!c->ints || !c->addrs || !c->types) {
        free(c->types);
        c->types = NULL;
        contents_free(c);
        return PARIO_ERR_NO_MEM;
    }
    if (MPI_Type_get_contents(t, c->ni, c->na, c->nd, c->ints, c->addrs, c->types) != MPI_SUCCESS) {
        memset(c->types, 0, ((size_t)c->nd + 1) * sizeof *c->types);
        contents_free(c);
        return PARIO_ERR_TYPE;
    }
    return PARIO_OK;
}

/* A struct: each member's signature, block length times, in order. */
static int sig_of_struct(const type_contents *c, datarep_sig *sig, MPI_Datatype *bad) {
    sig_builder b = {sig, 0};
    sig->reps = 1;
    int count = c->ints[0], rc = PARIO_OK;
    for (int i = 0; i < count && rc == PARIO_OK; i++) {
        if (c->ints[1 + i] <= 0)
            continue;
        datarep_sig member;
        rc = sig_build_rec(c->types[i], &member, bad);
        if (rc == PARIO_OK)
            rc = sig_append(&b, &member, c->ints[1 + i]);
        datarep_sig_free(&member);
    }
    return rc;
}

/* Any combiner with one old type: the old signature, size/oldsize times. */
static int sig_of_repeat(MPI_Datatype t, MPI_Datatype old, datarep_sig *sig, MPI_Datatype *bad) {
    MPI_Count size = 0, old_size = 0;
    MPI_Type_size_x(t, &size);
    MPI_Type_size_x(old, &old_size);
    int rc = sig_build_rec(old, sig, bad);
    if (rc == PARIO_OK)
        sig->reps = old_size > 0 ? sig->reps * (int64_t)(size / old_size) : 0;
    return rc;
}

static bool is_fortran_parameterized(int combiner) {
    return combiner == MPI_COMBINER_F90_REAL || combiner == MPI_COMBINER_F90_COMPLEX ||
           combiner == MPI_COMBINER_F90_INTEGER;
}

/* MPI-1's STRUCT_INTEGER (Fortran integer displacements) exists in MPICH's
 * header and in Open MPI's only when built with MPI-1 compatibility. */
static bool is_struct(int combiner) {
#if defined(MPICH_VERSION) || (defined(OMPI_ENABLE_MPI1_COMPAT) && OMPI_ENABLE_MPI1_COMPAT)
    if (combiner == MPI_COMBINER_STRUCT_INTEGER)
        return true;
#endif
    return combiner == MPI_COMBINER_STRUCT;
}

static int sig_build_rec(MPI_Datatype t, datarep_sig *sig, MPI_Datatype *bad) {
    memset(sig, 0, sizeof *sig);
    int ni, na, nd, combiner;
    if (MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return PARIO_ERR_TYPE;
    if (combiner == MPI_COMBINER_NAMED)
        return sig_of_named(t, sig, bad);
    if (is_fortran_parameterized(combiner)) {
        *bad = t;
        return PARIO_ERR_UNSUPPORTED_DATAREP;
    }
    type_contents c;
    int rc = contents_get(t, &c);
    if (rc != PARIO_OK)
        return rc;
    if (is_struct(combiner))
        rc = sig_of_struct(&c, sig, bad);
    else if (c.nd >= 1)
        rc = sig_of_repeat(t, c.types[0], sig, bad);
    else
        rc = PARIO_ERR_TYPE;
    contents_free(&c);
    return rc;
}

/* Folds a single run's repetition into it and fills the prefix sums. */
static int sig_finish(datarep_sig *s) {
    if (s->nruns == 1) {
        s->runs[0].items *= s->reps;
        s->reps = 1;
    }
    if (s->nruns == 0 || s->reps == 0) {
        s->nruns = 0;
        s->reps = 0;
    }
    s->byte_before = malloc(((size_t)s->nruns + 1) * sizeof *s->byte_before);
    s->item_before = malloc(((size_t)s->nruns + 1) * sizeof *s->item_before);
    if (!s->byte_before || !s->item_before)
        return PARIO_ERR_NO_MEM;
    s->byte_before[0] = s->item_before[0] = 0;
    for (int j = 0; j < s->nruns; j++) {
        s->byte_before[j + 1] = s->byte_before[j] + s->runs[j].items * s->runs[j].size;
        s->item_before[j + 1] = s->item_before[j] + s->runs[j].items;
    }
    s->period_bytes = s->byte_before[s->nruns];
    s->period_items = s->item_before[s->nruns];
    return PARIO_OK;
}

int datarep_sig_build(MPI_Datatype t, datarep_sig *sig, MPI_Datatype *bad_type) {
    *bad_type = MPI_DATATYPE_NULL;
    int rc = sig_build_rec(t, sig, bad_type);
    if (rc == PARIO_OK)
        rc = sig_finish(sig);
    if (rc != PARIO_OK)
        datarep_sig_free(sig);
    return rc;
}

void datarep_sig_free(datarep_sig *sig) {
    free(sig->runs);
    free(sig->byte_before);
    free(sig->item_before);
    memset(sig, 0, sizeof *sig);
}

sig_pos datarep_sig_locate(const datarep_sig *sig, int64_t at) {
    sig_pos p = {0, 0, 0, 0};
    if (sig->period_bytes <= 0)
        return p;
    p.period = at / sig->period_bytes;
    int64_t rem = at % sig->period_bytes;
    int lo = 0, hi = sig->nruns - 1; /* the last run starting at or below rem */
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (sig->byte_before[mid] <= rem)
            lo = mid;
        else
            hi = mid - 1;
    }
    int64_t in_run = rem - sig->byte_before[lo];
    p.run = lo;
    p.item = in_run / sig->runs[lo].size;
    p.byte = in_run % sig->runs[lo].size;
    return p;
}

int64_t datarep_sig_item_index(const datarep_sig *sig, sig_pos p) {
    return p.period * sig->period_items + sig->item_before[p.run] + p.item;
}

void datarep_sig_swap(const datarep_sig *sig, sig_pos p, char *data, int64_t n) {
    while (n > 0 && sig->nruns > 0) {
        const sig_run *r = &sig->runs[p.run];
        int64_t take = r->items - p.item;
        if (take > n / r->size)
            take = n / r->size;
        if (take == 0)
            return; /* a partial item: callers end chunks on item boundaries */
        datarep_basic_swap(r->basic, data, take);
        data += take * r->size;
        n -= take * r->size;
        p.item += take;
        if (p.item == r->items) {
            p.item = 0;
            if (++p.run == sig->nruns)
                p.run = 0;
        }
    }
}
