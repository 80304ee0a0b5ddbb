/* Flattening by packing: the typemap of a committed type read back from
 * MPI_Pack instead of decoded constructor by constructor.
 *
 * A buffer over the type's true extent holds, at every byte, one digit (base
 * 256) of that byte's offset; packing one instance gathers the digits in
 * typemap order, so two or three packs give every data byte's offset, and
 * runs of consecutive offsets are the blocks. This costs O(true extent +
 * size) and a few MPI calls, where decoding costs an MPI_Type_get_contents
 * per derived node (Open MPI duplicates every derived member type it
 * returns): for a struct of thousands of derived types, as HDF5 builds for
 * linked-chunk I/O, packing is two orders of magnitude cheaper.
 *
 * It relies on MPI_Pack copying bytes verbatim in typemap order (no header,
 * no conversion), which the MPI libraries do on a homogeneous system; a probe
 * checks it once per process on a struct of several predefined types against
 * the decoder, and packing is never used where the probe disagreed. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "io/flat/flat_internal.h"
#include "pario/pario.h"

/* Largest true extent (three digits of offset) and data size read this way. */
#define PACK_MAX_EXTENT ((int64_t)1 << 24)

/* The digit of every byte's offset at `shift` bits, for n bytes: runs of
 * 2^shift equal bytes, so whole runs are set at once (the lowest digit is
 * the pattern 0..255 repeated). */
static void fill_digits(unsigned char *src, int64_t n, int shift) {
    if (shift == 0) {
        unsigned char ramp[256];
        for (int k = 0; k < 256; k++)
            ramp[k] = (unsigned char)k;
        for (int64_t k = 0; k < n; k += 256)
            memcpy(src + k, ramp, (size_t)(n - k < 256 ? n - k : 256));
        return;
    }
    int64_t run = (int64_t)1 << shift;
    for (int64_t k = 0; k < n; k += run)
        memset(src + k, (unsigned char)(k >> shift), (size_t)(n - k < run ? n - k : run));
}

static int digits_for(int64_t extent) {
    int d = 1;
    while (d < 3 && extent > ((int64_t)1 << (8 * d)))
        d++;
    return d;
}

/* offs[j] = offset (from true_lb) of data byte j of one instance. */
static int pack_offsets(MPI_Datatype type, MPI_Comm comm, int64_t tlb, int64_t textent,
                        int64_t size, int32_t *offs) {
    unsigned char *src = malloc((size_t)textent);
    unsigned char *packed = malloc((size_t)size);
    int rc = src && packed ? PARIO_OK : PARIO_ERR_NO_MEM;
    memset(offs, 0, (size_t)size * sizeof *offs);
    for (int d = 0; rc == PARIO_OK && d < digits_for(textent); d++) {
        fill_digits(src, textent, 8 * d);
        int position = 0;
        if (MPI_Pack(src - tlb, 1, type, packed, (int)size, &position, comm) != MPI_SUCCESS ||
            position != size) {
            rc = PARIO_ERR_TYPE;
            break;
        }
        for (int64_t j = 0; j < size; j++)
            offs[j] |= (int32_t)packed[j] << (8 * d);
    }
    free(src);
    free(packed);
    return rc;
}

/* Leaves for the runs of consecutive offsets (the builder folds progressions). */
static int push_runs(flat_builder *b, const int32_t *offs, int64_t size, int64_t tlb) {
    int64_t j = 0;
    while (j < size) {
        int64_t k = j + 1;
        while (k < size && offs[k] == offs[k - 1] + 1)
            k++;
        int rc = builder_push(b, (flat_node){tlb + offs[j], 1, 0, k - j, NULL});
        if (rc)
            return rc;
        j = k;
    }
    return PARIO_OK;
}

static int build_by_packing(MPI_Datatype type, MPI_Comm comm, int64_t tlb, int64_t textent,
                            int64_t size, flat_type **out) {
    int32_t *offs = malloc((size_t)size * sizeof *offs);
    if (!offs)
        return PARIO_ERR_NO_MEM;
    flat_builder b;
    builder_init(&b);
    int rc = pack_offsets(type, comm, tlb, textent, size, offs);
    if (rc == PARIO_OK)
        rc = push_runs(&b, offs, size, tlb);
    if (rc == PARIO_OK)
        rc = flat_finish_mpi_type(type, &b, out);
    builder_discard(&b);
    free(offs);
    return rc;
}

/* ---- the probe ------------------------------------------------------------------- */

/* Same blocks in the same order. */
static bool same_blocks(const flat_type *a, const flat_type *b) {
    flat_iter ia, ib;
    bool same = a->size == b->size && flat_iter_init(&ia, a, 0, 1, 0) == PARIO_OK;
    if (!same)
        return false;
    if (flat_iter_init(&ib, b, 0, 1, 0) != PARIO_OK) {
        flat_iter_free(&ia);
        return false;
    }
    int64_t oa, la, ob, lb;
    bool more_a, more_b;
    do {
        more_a = flat_iter_next(&ia, INT64_MAX, &oa, &la);
        more_b = flat_iter_next(&ib, INT64_MAX, &ob, &lb);
        same = more_a == more_b && (!more_a || (oa == ob && la == lb));
    } while (same && more_a);
    flat_iter_free(&ia);
    flat_iter_free(&ib);
    return same;
}

/* A struct of predefined types of several sizes, out of order and with a
 * gap, resized: what the decoder and the packer must see alike. */
static int probe_type(MPI_Datatype *out) {
    int lens[5] = {2, 1, 3, 1, 1};
    MPI_Aint disps[5] = {24, 0, 40, 13, 64};
    MPI_Datatype types[5] = {MPI_DOUBLE, MPI_INT, MPI_SHORT, MPI_CHAR, MPI_LONG_DOUBLE};
    MPI_Datatype s;
    if (MPI_Type_create_struct(5, lens, disps, types, &s) != MPI_SUCCESS)
        return PARIO_ERR_TYPE;
    int rc = MPI_Type_create_resized(s, -8, 128, out) == MPI_SUCCESS &&
                     MPI_Type_commit(out) == MPI_SUCCESS
                 ? PARIO_OK
                 : PARIO_ERR_TYPE;
    MPI_Type_free(&s);
    return rc;
}

static bool pack_is_verbatim(MPI_Comm comm) {
    MPI_Datatype t;
    if (probe_type(&t) != PARIO_OK)
        return false;
    flat_type *decoded = NULL, *packed = NULL;
    MPI_Count size = 0, tlb = 0, textent = 0;
    bool ok = flat_decode(t, &decoded) == PARIO_OK && MPI_Type_size_x(t, &size) == MPI_SUCCESS &&
              MPI_Type_get_true_extent_x(t, &tlb, &textent) == MPI_SUCCESS &&
              build_by_packing(t, comm, tlb, textent, size, &packed) == PARIO_OK &&
              same_blocks(decoded, packed) && decoded->lb == packed->lb &&
              decoded->extent == packed->extent;
    flat_release(decoded);
    flat_release(packed);
    MPI_Type_free(&t);
    return ok;
}

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static bool probe_verbatim;

static void probe_run(void) {
    probe_verbatim = pack_is_verbatim(MPI_COMM_SELF);
}

/* ---- entry ----------------------------------------------------------------------- */

/* Member types of the constructor that made type, looking through
 * MPI_Type_dup (a view keeps a duplicate of the filetype); -1 on failure. */
static int member_types(MPI_Datatype type) {
    int ni, na, nd, combiner;
    if (MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return -1;
    if (combiner != MPI_COMBINER_DUP)
        return combiner == MPI_COMBINER_NAMED ? 0 : nd;
    MPI_Datatype inner = MPI_DATATYPE_NULL;
    int no_ints[1];
    MPI_Aint no_addrs[1];
    if (MPI_Type_get_contents(type, 0, 0, 1, no_ints, no_addrs, &inner) != MPI_SUCCESS)
        return -1;
    int n = member_types(inner);
    if (!flat_type_is_predefined(inner))
        MPI_Type_free(&inner);
    return n;
}

/* Worth it: a type with many member types (decoding duplicates each), whose
 * true extent is small next to that count and within three offset digits. */
static bool pack_pays(MPI_Datatype type, int64_t textent, int64_t size) {
    if (size <= 0 || textent <= 0 || textent > PACK_MAX_EXTENT || size > PACK_MAX_EXTENT)
        return false;
    int nd = member_types(type);
    return nd >= FLAT_PACK_MIN_MEMBERS && textent <= (int64_t)nd * FLAT_PACK_EXTENT_PER_MEMBER;
}

int flat_pack_try(MPI_Datatype type, MPI_Comm comm, flat_type **out) {
    MPI_Count size = 0, tlb = 0, textent = 0;
    int psize = 0;
    if (MPI_Type_size_x(type, &size) != MPI_SUCCESS ||
        MPI_Type_get_true_extent_x(type, &tlb, &textent) != MPI_SUCCESS ||
        !pack_pays(type, textent, size) || MPI_Pack_size(1, type, comm, &psize) != MPI_SUCCESS ||
        psize != size)
        return FLAT_PACK_DECLINED;
    pthread_once(&probe_once, probe_run);
    if (!probe_verbatim)
        return FLAT_PACK_DECLINED;
    int rc = build_by_packing(type, comm, tlb, textent, size, out);
    /* No memory for the offsets, or MPI_Pack refused: the decoder decides. */
    return rc == PARIO_ERR_TYPE || rc == PARIO_ERR_NO_MEM ? FLAT_PACK_DECLINED : rc;
}
