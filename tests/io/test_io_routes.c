/* The route each collective call takes (io/coll/route.c), as get_info
 * reports it in pario_coll_routes: kept writes and each rank's own reads on
 * one node, the small-write funnel, each rank's own sieved write for tiny
 * holes, two-phase and independent access by the hints and the ranges, and
 * the bytes each route leaves in the file. Runs on one node and with every
 * rank its own node (PARIO_NODE_SIZE=1), where the no-message routes must
 * not be taken. */
#include <stdlib.h>
#include "io_test.h"

enum { KEPT, OWN_READ, FUNNEL, TWOPHASE, OWN_SIEVED, INDEPENDENT, ROUTES };
static const char *const names[ROUTES] = {"kept",     "own_read",   "funnel",
                                          "twophase", "own_sieved", "independent"};

static int rank, nranks, one_node;

/* The counts get_info reports, by route. */
static void routes_of(pario_file *fh, long long *count) {
    char v[256];
    PT_CHECK(iot_coll_routes(fh, v, (int)sizeof v));
    for (int r = 0; r < ROUTES; r++) {
        count[r] = iot_route_count(v, names[r]);
        PT_CHECK(count[r] >= 0);
        if (count[r] < 0)
            count[r] = 0;
    }
}

/* The one route whose count grew since before (-1: none or several). */
static int route_since(pario_file *fh, const long long *before) {
    long long now[ROUTES];
    routes_of(fh, now);
    int route = -1, grown = 0;
    for (int r = 0; r < ROUTES; r++) {
        if (now[r] != before[r]) {
            route = r;
            grown += (int)(now[r] - before[r]);
        }
    }
    return grown == 1 ? route : -1;
}

static void expect_route_at(int got, int want, const char *what, int line) {
    char text[160];
    snprintf(text, sizeof text, "%s took %s, expected %s", what, got >= 0 ? names[got] : "?",
             names[want]);
    ptest_check(got == want, text, __FILE__, line);
}
#define EXPECT_ROUTE(got, want, what) expect_route_at((got), (want), (what), __LINE__)

/* Bytes of a part: rank r's i-th byte. */
static unsigned char byte_of(int r, int64_t i) {
    return (unsigned char)(r * 37 + i * 11 + 1);
}

static pario_file *open_fresh(const char *name, const char *const *kv) {
    const char *path = ptest_path(name);
    if (rank == 0)
        remove(path);
    MPI_Barrier(MPI_COMM_WORLD);
    return iot_open(path, MPI_MODE_CREATE | MPI_MODE_RDWR, kv);
}

/* Contiguous parts of PART bytes rank after rank: kept on one node, the
 * funnel across nodes or with one rank; read back collectively. */
enum { PART = 1000 };

static void contiguous_parts(const char *const *kv, int want_write, int want_read) {
    pario_file *fh = open_fresh("routes-contig", kv);
    if (!fh)
        return;
    unsigned char out[PART], in[PART];
    for (int i = 0; i < PART; i++)
        out[i] = byte_of(rank, i);
    long long before[ROUTES];
    routes_of(fh, before);
    PT_EQ(pario_file_write_at_all(fh, (MPI_Offset)rank * PART, out, PART, MPI_BYTE, NULL),
          PARIO_OK);
    EXPECT_ROUTE(route_since(fh, before), want_write, "contiguous write_at_all");
    routes_of(fh, before);
    memset(in, 0, sizeof in);
    PT_EQ(pario_file_read_at_all(fh, (MPI_Offset)rank * PART, in, PART, MPI_BYTE, NULL), PARIO_OK);
    EXPECT_ROUTE(route_since(fh, before), want_read, "contiguous read_at_all");
    PT_CHECK(memcmp(in, out, PART) == 0);
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
}

/* Parts of PART bytes with a gap of PART after each: the funnel writes them
 * (one request per part) unless write calls are request-bound, where each
 * rank writes its own at once; the gaps stay holes. */
static void parts_apart(const char *const *kv, int want_write) {
    pario_file *fh = open_fresh("routes-apart", kv);
    if (!fh)
        return;
    unsigned char out[PART], in[2 * PART];
    for (int i = 0; i < PART; i++)
        out[i] = byte_of(rank, i);
    long long before[ROUTES];
    routes_of(fh, before);
    PT_EQ(pario_file_write_at_all(fh, (MPI_Offset)rank * 2 * PART, out, PART, MPI_BYTE, NULL),
          PARIO_OK);
    EXPECT_ROUTE(route_since(fh, before), want_write, "write_at_all of parts apart");
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    memset(in, 0xff, sizeof in);
    int64_t want = rank == nranks - 1 ? PART : 2 * PART; /* the last part ends the file */
    MPI_Count got = 0;
    PT_EQ(pario_file_read_at(fh, (MPI_Offset)rank * 2 * PART, in, 2 * PART, MPI_BYTE, &got),
          PARIO_OK);
    PT_EQ(got, want);
    PT_CHECK(memcmp(in, out, PART) == 0);
    for (int64_t i = PART; i < want; i++)
        PT_EQ(in[i], 0);
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
}

/* Blocks of blk bytes interleaved over the ranks, nblk of them per rank. */
static void interleaved(const char *const *kv, int blk, int nblk, int want_write) {
    pario_file *fh = open_fresh("routes-interleaved", kv);
    if (!fh)
        return;
    MPI_Datatype ft;
    MPI_Type_vector(nblk, blk, blk * nranks, MPI_BYTE, &ft);
    MPI_Type_commit(&ft);
    PT_EQ(pario_file_set_view(fh, (MPI_Offset)rank * blk, MPI_BYTE, ft, "native", MPI_INFO_NULL),
          PARIO_OK);
    int64_t n = (int64_t)blk * nblk;
    unsigned char *out = malloc((size_t)n), *in = malloc((size_t)n);
    for (int64_t i = 0; i < n; i++)
        out[i] = byte_of(rank, i);
    long long before[ROUTES];
    routes_of(fh, before);
    PT_EQ(pario_file_write_all(fh, out, n, MPI_BYTE, NULL), PARIO_OK);
    EXPECT_ROUTE(route_since(fh, before), want_write, "interleaved write_all");
    PT_EQ(pario_file_seek(fh, 0, MPI_SEEK_SET), PARIO_OK);
    PT_EQ(pario_file_read_all(fh, in, n, MPI_BYTE, NULL), PARIO_OK);
    PT_CHECK(memcmp(in, out, (size_t)n) == 0);
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    MPI_Type_free(&ft);
    free(out);
    free(in);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    one_node = iot_one_node(nranks);
    int many = nranks > 1;
    const char *none[] = {NULL};
    const char *enable[] = {"romio_cb_write", "enable", "romio_cb_read", "enable", NULL};
    const char *disable[] = {"romio_cb_write", "disable", "romio_cb_read", "disable", NULL};
    const char *no_keep[] = {"pario_cb_write_behind", "disable", NULL};

    /* One rank has nobody to combine with: every call is its own access. */
    int kept = !many ? INDEPENDENT : one_node ? KEPT : FUNNEL;
    int read = !many ? INDEPENDENT : one_node ? OWN_READ : INDEPENDENT;
    contiguous_parts(none, kept, read);
    contiguous_parts(no_keep, many ? FUNNEL : INDEPENDENT, read);
    contiguous_parts(enable, many ? TWOPHASE : INDEPENDENT, many ? TWOPHASE : INDEPENDENT);
    contiguous_parts(disable, INDEPENDENT, INDEPENDENT);
    /* Small interleaved parts: the funnel writes them all. */
    interleaved(none, 512, 4, many ? FUNNEL : INDEPENDENT);
    /* Too many 8-byte pieces for the funnel: on one node each rank's own
     * sieved write, across nodes two-phase. */
    int tiny = !many ? INDEPENDENT : one_node ? OWN_SIEVED : TWOPHASE;
    interleaved(none, 8, 200, tiny);
    /* Read calls that cost as much as 1 MiB (a network file system, as
     * pario calibrate would find it; told by the hint here): adjacent small
     * pieces are read by two-phase, one request for the lot, across nodes
     * and on one node alike (no own reads there). */
    const char *request_bound[] = {"pario_read_call_bytes", "1048576", NULL};
    contiguous_parts(request_bound, kept, many ? TWOPHASE : INDEPENDENT);
    /* Write calls that cost as much as 1 MiB: the funnel still writes
     * adjacent parts (one request for the lot) and leaves parts apart to
     * their ranks, which write them at once. */
    const char *writes_bound[] = {"pario_write_call_bytes", "1048576", "pario_cb_write_behind",
                                  "disable", NULL};
    contiguous_parts(writes_bound, many ? FUNNEL : INDEPENDENT, read);
    parts_apart(no_keep, many ? FUNNEL : INDEPENDENT);
    parts_apart(writes_bound, INDEPENDENT);
    return ptest_finish();
}
