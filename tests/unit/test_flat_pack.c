/* Flattening by packing (src/io/flat/flat_pack.c) and packed staging of memory
 * datatypes (src/io/memstage): the types HDF5 builds anew for every call.
 *
 * - A struct of thousands of derived types (HDF5's linked-chunk I/O) is
 *   flattened by flat_get_committed with a handful of MPI_Type_get_contents
 *   calls instead of one per derived node, to the same blocks as the decoder,
 *   also through MPI_Type_dup (a view keeps a duplicate).
 * - Random types inside such structs: the same blocks either way.
 * - A handle freed and reused for a different type gets its own form.
 * - Types that do not qualify are decoded.
 * - Staging: which calls are packed, the data packed in typemap order, a read
 *   unpacked over the caller's buffer, and no flattened form left on the type.
 *
 * MPI_Type_get_contents is wrapped here (calls from pario's objects linked in
 * resolve to it) to count the decoding steps. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/flat/flat.h"
#include "io/memstage/memstage.h"
#include "pario/pario.h"
#include "ptest.h"
#include "test_flat.h"

/* Members of the linked-chunk-like struct: one derived type per chunk. */
#define CHUNKS 3000
/* Chunks stored back to back before the file has a gap (an index node). */
#define CHUNK_RUN 512
#define CHUNK_BYTES 4
#define CHUNK_GAP 1216
/* Random types checked inside a struct of STRUCT_MEMBERS copies. */
#define RANDOM_TYPES 300
#define STRUCT_MEMBERS 16

static long contents_calls;

int MPI_Type_get_contents(MPI_Datatype type, int ni, int na, int nd, int ints[], MPI_Aint addrs[],
                          MPI_Datatype types[]) {
    contents_calls++;
    return PMPI_Type_get_contents(type, ni, na, nd, ints, addrs, types);
}

static void check_msg(bool ok, const char *label, const char *what, int line) {
    char text[256];
    snprintf(text, sizeof text, "%s: %s", label, what);
    ptest_check(ok, text, __FILE__, line);
}
#define CHECK(label, expr) check_msg((expr), (label), #expr, __LINE__)

/* Same blocks in the same order, and the same bounds. */
static bool same_form(const flat_type *a, const flat_type *b) {
    if (a->size != b->size || a->lb != b->lb || a->extent != b->extent ||
        a->true_lb != b->true_lb || a->true_extent != b->true_extent ||
        a->monotonic != b->monotonic)
        return false;
    flat_iter ia, ib;
    if (flat_iter_init(&ia, a, 0, 1, 0) != PARIO_OK)
        return false;
    if (flat_iter_init(&ib, b, 0, 1, 0) != PARIO_OK) {
        flat_iter_free(&ia);
        return false;
    }
    bool same = true, more;
    do {
        int64_t oa = 0, la = 0, ob = 0, lb = 0;
        more = flat_iter_next(&ia, INT64_MAX, &oa, &la);
        same =
            more == flat_iter_next(&ib, INT64_MAX, &ob, &lb) && (!more || (oa == ob && la == lb));
    } while (same && more);
    flat_iter_free(&ia);
    flat_iter_free(&ib);
    return same;
}

/* One chunk's type as HDF5 makes it for a one-element selection:
 * resized(hindexed(1, hvector(1, contiguous(4, MPI_BYTE)))). */
static MPI_Datatype chunk_type(void) {
    MPI_Datatype elem, vec, idx, out;
    MPI_Type_contiguous(CHUNK_BYTES, MPI_BYTE, &elem);
    MPI_Type_create_hvector(1, 1, CHUNK_BYTES, elem, &vec);
    int one = 1;
    MPI_Aint zero = 0;
    MPI_Type_create_hindexed(1, &one, &zero, vec, &idx);
    MPI_Type_create_resized(idx, 0, CHUNK_BYTES, &out);
    MPI_Type_free(&elem);
    MPI_Type_free(&vec);
    MPI_Type_free(&idx);
    return out;
}

/* The struct of `chunks` chunk types at file addresses with a gap after
 * every CHUNK_RUN chunks (first_gap shifts the gaps: another layout). */
static MPI_Datatype linked_chunks(int chunks, int first_gap) {
    MPI_Datatype *types = malloc(sizeof *types * (size_t)chunks);
    MPI_Aint *disps = malloc(sizeof *disps * (size_t)chunks);
    int *lens = malloc(sizeof *lens * (size_t)chunks);
    MPI_Aint at = 0;
    for (int u = 0; u < chunks; u++) {
        if (u > 0 && (u + first_gap) % CHUNK_RUN == 0)
            at += CHUNK_GAP;
        types[u] = chunk_type();
        disps[u] = at;
        lens[u] = 1;
        at += CHUNK_BYTES;
    }
    MPI_Datatype t;
    MPI_Type_create_struct(chunks, lens, disps, types, &t);
    MPI_Type_commit(&t);
    for (int u = 0; u < chunks; u++)
        MPI_Type_free(&types[u]);
    free(types);
    free(disps);
    free(lens);
    return t;
}

static void test_linked_chunks(void) {
    const char *label = "linked chunks";
    MPI_Datatype t = linked_chunks(CHUNKS, 0), d;
    flat_type *decoded = NULL;
    long before = contents_calls;
    CHECK(label, flat_build(t, &decoded) == PARIO_OK);
    long decode_calls = contents_calls - before;
    CHECK(label, decode_calls > CHUNKS);

    const flat_type *packed = NULL;
    flat_get_committed(t, MPI_COMM_WORLD, &packed); /* the probe runs once here */
    CHECK(label, packed && decoded && same_form(packed, decoded));
    CHECK(label, packed && packed->nnodes <= CHUNKS / CHUNK_RUN + 1);

    /* A view keeps a duplicate: packed as well, with a few calls. */
    MPI_Datatype fresh = linked_chunks(CHUNKS, 0);
    MPI_Type_dup(fresh, &d);
    const flat_type *via_dup = NULL;
    before = contents_calls;
    CHECK(label, flat_get_committed(d, MPI_COMM_WORLD, &via_dup) == PARIO_OK);
    CHECK(label, contents_calls - before <= 2);
    CHECK(label, via_dup && decoded && same_form(via_dup, decoded));
    MPI_Type_free(&fresh);
    /* The plain flat_get still decodes (no communicator to pack with). */
    MPI_Datatype t2 = linked_chunks(CHUNKS, 0);
    const flat_type *plain = NULL;
    before = contents_calls;
    CHECK(label, flat_get(t2, &plain) == PARIO_OK);
    CHECK(label, contents_calls - before > CHUNKS);
    MPI_Type_free(&t2);
    MPI_Type_free(&d);
    MPI_Type_free(&t);
    flat_release(decoded);
}

/* A new type on a handle that a freed type had: its own form, not the old one. */
static void test_reused_handle(void) {
    const char *label = "reused handle";
    int64_t live = flat_live_count();
    MPI_Datatype a = linked_chunks(CHUNKS / 4, 0);
    const flat_type *fa = NULL;
    CHECK(label, flat_get_committed(a, MPI_COMM_WORLD, &fa) == PARIO_OK);
    MPI_Datatype old = a;
    MPI_Type_free(&a);
    CHECK(label, flat_live_count() == live);
    MPI_Datatype b = linked_chunks(CHUNKS / 4, 100); /* gaps elsewhere */
    if (b != old)
        printf("reused handle: MPI gave a new handle value (still checked)\n");
    flat_type *decoded = NULL;
    const flat_type *fb = NULL;
    CHECK(label, flat_build(b, &decoded) == PARIO_OK);
    CHECK(label, flat_get_committed(b, MPI_COMM_WORLD, &fb) == PARIO_OK);
    CHECK(label, fb && decoded && same_form(fb, decoded));
    MPI_Type_free(&b);
    flat_release(decoded);
    CHECK(label, flat_live_count() == live);
}

/* Many member types but an extent too large for their number: decoded. */
static void test_declined(void) {
    const char *label = "declined";
    int n = STRUCT_MEMBERS;
    MPI_Datatype types[STRUCT_MEMBERS];
    MPI_Aint disps[STRUCT_MEMBERS];
    int lens[STRUCT_MEMBERS];
    for (int i = 0; i < n; i++) {
        types[i] = chunk_type();
        disps[i] = (MPI_Aint)i * 1024 * 1024;
        lens[i] = 1;
    }
    MPI_Datatype t;
    MPI_Type_create_struct(n, lens, disps, types, &t);
    MPI_Type_commit(&t);
    for (int i = 0; i < n; i++)
        MPI_Type_free(&types[i]);
    flat_type *decoded = NULL;
    const flat_type *got = NULL;
    CHECK(label, flat_build(t, &decoded) == PARIO_OK);
    long before = contents_calls;
    CHECK(label, flat_get_committed(t, MPI_COMM_WORLD, &got) == PARIO_OK);
    CHECK(label, contents_calls - before >= n);
    CHECK(label, got && decoded && same_form(got, decoded));
    flat_release(decoded);
    MPI_Type_free(&t);
}

/* Random types as members of a struct of STRUCT_MEMBERS copies (each its own
 * duplicate, in order, one extent apart, or reversed with a gap): the packed
 * form equals the decoded one. Returns whether this one was packed. */
static bool check_random_struct(uint64_t seed) {
    char label[64];
    snprintf(label, sizeof label, "random struct seed %" PRIu64, seed);
    MPI_Datatype inner = random_type(seed, 3);
    MPI_Aint lb = 0, extent = 0;
    MPI_Type_get_extent(inner, &lb, &extent);
    MPI_Datatype types[STRUCT_MEMBERS];
    MPI_Aint disps[STRUCT_MEMBERS];
    int lens[STRUCT_MEMBERS];
    bool reversed = seed % 3 == 0;
    for (int i = 0; i < STRUCT_MEMBERS; i++) {
        MPI_Type_dup(inner, &types[i]);
        int slot = reversed ? STRUCT_MEMBERS - 1 - i : i;
        disps[i] = (MPI_Aint)slot * (extent > 0 ? extent : 1) + (reversed ? 3 : 0);
        lens[i] = 1 + (int)(seed % 2);
    }
    MPI_Datatype t;
    MPI_Type_create_struct(STRUCT_MEMBERS, lens, disps, types, &t);
    MPI_Type_commit(&t);
    for (int i = 0; i < STRUCT_MEMBERS; i++)
        MPI_Type_free(&types[i]);
    MPI_Type_free(&inner);
    flat_type *decoded = NULL;
    const flat_type *got = NULL;
    CHECK(label, flat_build(t, &decoded) == PARIO_OK);
    long before = contents_calls;
    CHECK(label, flat_get_committed(t, MPI_COMM_WORLD, &got) == PARIO_OK);
    bool packed = contents_calls - before <= 1;
    CHECK(label, got && decoded && same_form(got, decoded));
    flat_release(decoded);
    MPI_Type_free(&t);
    return packed;
}

static void test_random_structs(void) {
    int packed = 0;
    for (uint64_t s = 0; s < RANDOM_TYPES; s++)
        packed += check_random_struct(20261127u + s);
    printf("random structs: %d of %d flattened by packing\n", packed, RANDOM_TYPES);
    CHECK("random structs", packed >= RANDOM_TYPES / 4);
}

/* ---- staging ------------------------------------------------------------------- */

/* Every other int of n: a derived type that a call would otherwise flatten. */
static MPI_Datatype every_other_int(int n) {
    MPI_Datatype t;
    MPI_Type_vector(n, 1, 2, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

static void test_stage_write(void) {
    const char *label = "stage write";
    int user[64];
    for (int i = 0; i < 64; i++)
        user[i] = i * 7 + 1;
    MPI_Datatype t = every_other_int(16);
    mem_stage st;
    mem_stage_open(&st, MPI_COMM_WORLD, true, user, 2, t);
    CHECK(label, st.active);
    CHECK(label, mem_stage_type(&st, t) == MPI_BYTE);
    CHECK(label, mem_stage_count(&st, 2) == 2 * 16 * (MPI_Count)sizeof(int));
    const int *packed = mem_stage_buf(&st, user);
    bool in_order = true;
    for (int i = 0; i < 32; i++) /* instance 1 starts one extent (31 ints) on */
        in_order = in_order && packed[i] == user[i < 16 ? 2 * i : 31 + 2 * (i - 16)];
    CHECK(label, in_order);
    CHECK(label, mem_stage_close(&st) == PARIO_OK);
    CHECK(label, !flat_is_cached(t)); /* nothing decoded, nothing attached */
    MPI_Type_free(&t);
}

/* A read puts the stage back over the caller's buffer in typemap order; the
 * holes and whatever the call did not fill keep their values. */
static void test_stage_read(void) {
    const char *label = "stage read";
    int user[32];
    for (int i = 0; i < 32; i++)
        user[i] = -1 - i;
    MPI_Datatype t = every_other_int(16);
    mem_stage st;
    mem_stage_open(&st, MPI_COMM_WORLD, false, user, 1, t);
    CHECK(label, st.active);
    int *stage = mem_stage_buf(&st, user);
    for (int i = 0; i < 10; i++) /* a short read: 10 of 16 ints arrived */
        stage[i] = 1000 + i;
    CHECK(label, mem_stage_close(&st) == PARIO_OK);
    bool right = true;
    for (int i = 0; i < 32; i++) {
        int want = (i % 2 == 0 && i / 2 < 10) ? 1000 + i / 2 : -1 - i;
        right = right && user[i] == want;
    }
    CHECK(label, right);
    CHECK(label, !flat_is_cached(t));
    MPI_Type_free(&t);
}

/* Not staged: predefined types, types already flattened, large transfers of
 * types with few members; large ones with many members are. */
static void test_stage_declines(void) {
    const char *label = "stage declines";
    static int big[MEMSTAGE_SMALL_BYTES / sizeof(int) * 2 + 4096];
    mem_stage st;
    mem_stage_open(&st, MPI_COMM_WORLD, true, big, 8, MPI_INT);
    CHECK(label,
          !st.active && mem_stage_buf(&st, big) == big && mem_stage_type(&st, MPI_INT) == MPI_INT);
    mem_stage_close(&st);

    MPI_Datatype t = every_other_int(8);
    const flat_type *f = NULL;
    CHECK(label, flat_get(t, &f) == PARIO_OK);
    mem_stage_open(&st, MPI_COMM_WORLD, true, big, 1, t);
    CHECK(label, !st.active); /* the cached form costs nothing more */
    mem_stage_close(&st);
    MPI_Type_free(&t);

    int n = (int)(MEMSTAGE_SMALL_BYTES / sizeof(int)) + 16;
    t = every_other_int(n); /* over the small bound, one member type */
    mem_stage_open(&st, MPI_COMM_WORLD, true, big, 1, t);
    CHECK(label, !st.active);
    mem_stage_close(&st);
    MPI_Type_free(&t);

    /* Over the small bound with many member types: staged. */
    MPI_Datatype members[MEMSTAGE_MANY_MEMBERS];
    MPI_Aint disps[MEMSTAGE_MANY_MEMBERS];
    int lens[MEMSTAGE_MANY_MEMBERS];
    int per = (int)(MEMSTAGE_SMALL_BYTES / sizeof(int) / MEMSTAGE_MANY_MEMBERS) + 16;
    for (int i = 0; i < MEMSTAGE_MANY_MEMBERS; i++) {
        members[i] = every_other_int(per);
        disps[i] = (MPI_Aint)i * 2 * per * (MPI_Aint)sizeof(int);
        lens[i] = 1;
    }
    MPI_Type_create_struct(MEMSTAGE_MANY_MEMBERS, lens, disps, members, &t);
    MPI_Type_commit(&t);
    for (int i = 0; i < MEMSTAGE_MANY_MEMBERS; i++)
        MPI_Type_free(&members[i]);
    mem_stage_open(&st, MPI_COMM_WORLD, true, big, 1, t);
    CHECK(label, st.active && st.bytes > MEMSTAGE_SMALL_BYTES);
    mem_stage_close(&st);
    MPI_Type_free(&t);
}

/* A type used again is staged only the first time: its later calls take the
 * flattened form, cached on the type, and move the program's memory in place
 * (a program that reuses its memory type pays no copy per call). A dup is a
 * new type and is staged once too. */
static void test_stage_once(void) {
    const char *label = "stage once";
    int user[64] = {0};
    MPI_Datatype t = every_other_int(16);
    mem_stage st;
    mem_stage_open(&st, MPI_COMM_WORLD, true, user, 1, t);
    CHECK(label, st.active);
    mem_stage_close(&st);
    mem_stage_open(&st, MPI_COMM_WORLD, true, user, 1, t);
    CHECK(label, !st.active && mem_stage_buf(&st, user) == user);
    mem_stage_close(&st);
    MPI_Datatype d;
    MPI_Type_dup(t, &d);
    mem_stage_open(&st, MPI_COMM_WORLD, false, user, 1, d);
    CHECK(label, st.active);
    mem_stage_close(&st);
    MPI_Type_free(&d);
    MPI_Type_free(&t);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    ptest_init();
    test_linked_chunks();
    test_reused_handle();
    test_declined();
    test_random_structs();
    test_stage_write();
    test_stage_read();
    test_stage_declines();
    test_stage_once();
    return ptest_finish();
}
