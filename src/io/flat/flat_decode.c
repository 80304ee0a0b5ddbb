/* Decoding MPI datatypes into flat_types with MPI_Type_get_envelope and
 * MPI_Type_get_contents, one function per combiner. */
#include "io/flat/flat_internal.h"

#include <stddef.h>
#include <stdlib.h>

#include "pario/pario.h"

/* The MPI-1 combiners for Fortran integer displacements exist in MPICH's
 * header and in Open MPI's only when built with MPI-1 compatibility. */
#if defined(MPICH_VERSION) || (defined(OMPI_ENABLE_MPI1_COMPAT) && OMPI_ENABLE_MPI1_COMPAT)
#define FLAT_HAVE_MPI1_COMBINERS 1
#else
#define FLAT_HAVE_MPI1_COMBINERS 0
#endif

static int decode(MPI_Datatype type, flat_type **out);

/* ---- predefined types ------------------------------------------------------------ */

/* A predefined pair type whose second member (an int) does not follow the
 * first one directly: e.g. MPI_SHORT_INT has 2 bytes of padding. */
typedef struct pair_layout {
    MPI_Datatype pair, first;
    int64_t int_offset;
} pair_layout;

struct short_int_pair {
    short a;
    int b;
};
struct float_int_pair {
    float a;
    int b;
};
struct long_int_pair {
    long a;
    int b;
};
struct double_int_pair {
    double a;
    int b;
};
struct long_double_int_pair {
    long double a;
    int b;
};

static int decode_pair(MPI_Datatype type, flat_builder *b) {
    const pair_layout pairs[] = {
        {MPI_SHORT_INT, MPI_SHORT, offsetof(struct short_int_pair, b)},
        {MPI_FLOAT_INT, MPI_FLOAT, offsetof(struct float_int_pair, b)},
        {MPI_LONG_INT, MPI_LONG, offsetof(struct long_int_pair, b)},
        {MPI_DOUBLE_INT, MPI_DOUBLE, offsetof(struct double_int_pair, b)},
        {MPI_LONG_DOUBLE_INT, MPI_LONG_DOUBLE, offsetof(struct long_double_int_pair, b)},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        if (pairs[i].pair != type)
            continue;
        MPI_Count first = 0;
        if (MPI_Type_size_x(pairs[i].first, &first) != MPI_SUCCESS)
            return PARIO_ERR_TYPE;
        int rc = builder_push(b, (flat_node){0, 1, 0, first, NULL});
        if (!rc)
            rc = builder_push(b, (flat_node){pairs[i].int_offset, 1, 0, sizeof(int), NULL});
        return rc;
    }
    return PARIO_ERR_TYPE;
}

/* Predefined types (and Fortran parameterized ones): their bytes are one run
 * from the true lower bound, except for the padded pair types. */
static int decode_named(MPI_Datatype type, flat_builder *b) {
    MPI_Count size = 0, tlb = 0, textent = 0;
    if (MPI_Type_size_x(type, &size) != MPI_SUCCESS ||
        MPI_Type_get_true_extent_x(type, &tlb, &textent) != MPI_SUCCESS)
        return PARIO_ERR_TYPE;
    if (size == textent)
        return builder_push(b, (flat_node){tlb, 1, 0, size, NULL});
    return decode_pair(type, b);
}

/* ---- MPI_Type_get_contents ------------------------------------------------------- */

typedef struct type_contents {
    int combiner, ni, na, nd;
    int *ints;
    MPI_Aint *addrs;
    MPI_Datatype *types;
    flat_type **kids; /* kids[i]: flattened types[i] */
} type_contents;

static bool combiner_is_predefined(int combiner) {
    return combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL ||
           combiner == MPI_COMBINER_F90_COMPLEX || combiner == MPI_COMBINER_F90_INTEGER;
}

/* Predefined types (and the Fortran parameterized ones, which must not be
 * freed either) come back from MPI_Type_get_contents as themselves. */
bool flat_type_is_predefined(MPI_Datatype t) {
    int ni, na, nd, combiner;
    return MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
           combiner_is_predefined(combiner);
}

static void contents_free(type_contents *c) {
    for (int i = 0; i < c->nd; i++) {
        if (c->kids && c->kids[i])
            flat_release(c->kids[i]);
        if (c->types && c->types[i] != MPI_DATATYPE_NULL && !flat_type_is_predefined(c->types[i]))
            MPI_Type_free(&c->types[i]);
    }
    free(c->ints);
    free(c->addrs);
    free(c->types);
    free(c->kids);
}

/* Flatten every member type; a member repeated from the previous slot (struct
 * of one type) is flattened once. */
static int contents_flatten_members(type_contents *c) {
    for (int i = 0; i < c->nd; i++) {
        if (i > 0 && c->types[i] == c->types[i - 1]) {
            flat_retain(c->kids[i - 1]);
            c->kids[i] = c->kids[i - 1];
            continue;
        }
        int rc = decode(c->types[i], &c->kids[i]);
        if (rc)
            return rc;
    }
    return PARIO_OK;
}

/* calloc that never asks for 0 bytes (some envelopes have empty arrays). */
static void *calloc_at_least_one(int n, size_t size) {
    return calloc(n > 0 ? (size_t)n : 1, size);
}

static int contents_load(MPI_Datatype type, const int envelope[4], type_contents *c) {
    *c = (type_contents){envelope[3], envelope[0], envelope[1], envelope[2], 0, 0, 0, 0};
    c->ints = calloc_at_least_one(c->ni, sizeof *c->ints);
    c->addrs = calloc_at_least_one(c->na, sizeof *c->addrs);
    c->types = calloc_at_least_one(c->nd, sizeof *c->types);
    c->kids = calloc_at_least_one(c->nd, sizeof *c->kids);
    if (!c->ints || !c->addrs || !c->types || !c->kids) {
        c->nd = 0;
        return PARIO_ERR_NO_MEM;
    }
    for (int i = 0; i < c->nd; i++)
        c->types[i] = MPI_DATATYPE_NULL;
    if (MPI_Type_get_contents(type, c->ni, c->na, c->nd, c->ints, c->addrs, c->types) !=
        MPI_SUCCESS)
        return PARIO_ERR_TYPE;
    return contents_flatten_members(c);
}

/* ---- combiners ------------------------------------------------------------------- */

/* Blocks of blocklens[i] consecutive elements at byte displacements disps(i). */
typedef int64_t (*disp_at)(const type_contents *c, int i);

static int push_indexed(flat_builder *b, const type_contents *c, int count, const int *blocklens,
                        int blocklen_all, disp_at disp) {
    const flat_type *k = c->kids[0];
    for (int i = 0; i < count; i++) {
        int64_t bl = blocklens ? blocklens[i] : blocklen_all;
        int rc = builder_push_repeat(b, disp(c, i), bl, k->extent, k);
        if (rc)
            return rc;
    }
    return PARIO_OK;
}

/* INDEXED: ints = count, blocklens[count], displs[count] (in extents). */
static int64_t indexed_disp(const type_contents *c, int i) {
    return (int64_t)c->ints[1 + c->ints[0] + i] * c->kids[0]->extent;
}
/* HINDEXED: ints = count, blocklens[count]; addrs = displs (bytes). */
static int64_t hindexed_disp(const type_contents *c, int i) {
    return c->addrs[i];
}
/* INDEXED_BLOCK: ints = count, blocklen, displs[count] (in extents). */
static int64_t indexed_block_disp(const type_contents *c, int i) {
    return (int64_t)c->ints[2 + i] * c->kids[0]->extent;
}
#if FLAT_HAVE_MPI1_COMBINERS
/* HINDEXED_INTEGER: ints = count, blocklens[count], displs[count] (bytes). */
static int64_t hindexed_integer_disp(const type_contents *c, int i) {
    return c->ints[1 + c->ints[0] + i];
}
#endif

/* STRUCT: ints = count, blocklens; addrs (or, for STRUCT_INTEGER, ints after
 * the blocklens) = byte displacements; types = member types. */
static int push_struct(flat_builder *b, const type_contents *c, bool int_disps) {
    int count = c->ints[0];
    for (int i = 0; i < count; i++) {
        const flat_type *k = c->kids[i];
        int64_t disp = int_disps ? c->ints[1 + count + i] : c->addrs[i];
        int rc = builder_push_repeat(b, disp, c->ints[1 + i], k->extent, k);
        if (rc)
            return rc;
    }
    return PARIO_OK;
}

static int push_combiner(flat_builder *b, const type_contents *c) {
    const flat_type *k = c->nd > 0 ? c->kids[0] : NULL;
    const int *ints = c->ints;
    if (!k)
        return PARIO_ERR_TYPE; /* every derived combiner has a member type */
    switch (c->combiner) {
    case MPI_COMBINER_CONTIGUOUS:
        return builder_push_repeat(b, 0, ints[0], k->extent, k);
    case MPI_COMBINER_VECTOR:
        return builder_push_vector(b, 0, ints[0], ints[1], (int64_t)ints[2] * k->extent, k->extent,
                                   k);
    case MPI_COMBINER_HVECTOR:
        return builder_push_vector(b, 0, ints[0], ints[1], c->addrs[0], k->extent, k);
    case MPI_COMBINER_INDEXED:
        return push_indexed(b, c, ints[0], ints + 1, 0, indexed_disp);
    case MPI_COMBINER_HINDEXED:
        return push_indexed(b, c, ints[0], ints + 1, 0, hindexed_disp);
    case MPI_COMBINER_INDEXED_BLOCK:
        return push_indexed(b, c, ints[0], NULL, ints[1], indexed_block_disp);
    case MPI_COMBINER_HINDEXED_BLOCK:
        return push_indexed(b, c, ints[0], NULL, ints[1], hindexed_disp);
    case MPI_COMBINER_STRUCT:
        return push_struct(b, c, false);
    case MPI_COMBINER_SUBARRAY:
        return flat_array_subarray(b, ints, k);
    case MPI_COMBINER_DARRAY:
        return flat_array_darray(b, ints, k);
    case MPI_COMBINER_RESIZED:
        return builder_append_instance(b, 0, k);
#if FLAT_HAVE_MPI1_COMBINERS
    case MPI_COMBINER_HVECTOR_INTEGER:
        return builder_push_vector(b, 0, ints[0], ints[1], ints[2], k->extent, k);
    case MPI_COMBINER_HINDEXED_INTEGER:
        return push_indexed(b, c, ints[0], ints + 1, 0, hindexed_integer_disp);
    case MPI_COMBINER_STRUCT_INTEGER:
        return push_struct(b, c, true);
#endif
    default:
        return PARIO_ERR_TYPE;
    }
}

/* ---- the result ------------------------------------------------------------------ */

/* Make the flat_type of an MPI type: the extent comes from MPI (it carries
 * resized bounds and alignment padding); the data size must agree. */
int flat_finish_mpi_type(MPI_Datatype type, flat_builder *b, flat_type **out) {
    MPI_Count size = 0, lb = 0, extent = 0, tlb = 0, textent = 0;
    if (MPI_Type_size_x(type, &size) != MPI_SUCCESS ||
        MPI_Type_get_extent_x(type, &lb, &extent) != MPI_SUCCESS ||
        MPI_Type_get_true_extent_x(type, &tlb, &textent) != MPI_SUCCESS)
        return PARIO_ERR_TYPE;
    flat_type *t;
    int rc = builder_finish(b, &t);
    if (rc)
        return rc;
    if (t->size != size) {
        flat_release(t);
        return PARIO_ERR_INTERN;
    }
    t->lb = lb;
    t->extent = extent;
    if (t->size == 0) {
        t->true_lb = tlb;
        t->true_extent = textent;
    }
    *out = t;
    return PARIO_OK;
}

static int decode(MPI_Datatype type, flat_type **out) {
    int env[4];
    if (MPI_Type_get_envelope(type, &env[0], &env[1], &env[2], &env[3]) != MPI_SUCCESS)
        return PARIO_ERR_TYPE;
    flat_builder b;
    builder_init(&b);
    int rc;
    if (combiner_is_predefined(env[3])) {
        rc = decode_named(type, &b);
    } else {
        type_contents c;
        rc = contents_load(type, env, &c);
        if (!rc && env[3] == MPI_COMBINER_DUP) {
            /* Same typemap and bounds: share the member's form. */
            flat_retain(c.kids[0]);
            *out = c.kids[0];
            contents_free(&c);
            return PARIO_OK;
        }
        if (!rc)
            rc = push_combiner(&b, &c);
        contents_free(&c);
    }
    if (!rc)
        rc = flat_finish_mpi_type(type, &b, out);
    builder_discard(&b);
    return rc;
}

int flat_decode(MPI_Datatype type, flat_type **out) {
    return decode(type, out);
}

int flat_build(MPI_Datatype type, flat_type **out) {
    if (!out)
        return PARIO_ERR_ARG;
    *out = NULL;
    if (type == MPI_DATATYPE_NULL)
        return PARIO_ERR_TYPE;
    return decode(type, out);
}
