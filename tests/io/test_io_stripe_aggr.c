/* Two-phase collective I/O on striped files: with at least as many
 * aggregators as targets, each aggregator's storage calls reach one target
 * only (aggregator i serves target i % factor; the aggregators past whole
 * groups rest), for writes and reads; with fewer aggregators than targets
 * the domains stay contiguous. Either way the logical bytes are exact
 * (read back through the view, and by the tests' own reader of layouts).
 * Views: interleaved 1000-byte blocks (every rank's data in every stripe),
 * memory contiguous and strided. */
#include <stdlib.h>
#include <string.h>
#include "io/coll/coll.h"
#include "io/driver/stripe.h"
#include "io/file/file.h"
#include "io_test.h"

enum { UNIT = 4096, BLOCK = 1000, BLOCKS = 60, TARGETS = 4 };
/* Where the view starts: mid-stripe, so the first window is cut short. */
enum { DISP = 5000 };
static int rank, nranks;
static char targets[TARGETS * 4400];

/* This rank's data calls per object since `before`. */
static void calls_since(pario_file *fh, const int64_t *before, int64_t *delta) {
    for (int i = 0; i < fh->io.stripe->layout.factor; i++)
        delta[i] = fh->io.stripe->data_calls[i] - before[i];
}

static void calls_now(pario_file *fh, int64_t *now) {
    for (int i = 0; i < fh->io.stripe->layout.factor; i++)
        now[i] = fh->io.stripe->data_calls[i];
}

/* With aggr >= factor: this rank, aggregator i of the first whole groups,
 * reached target i % factor and no other; any other rank reached none. */
static void check_targets(pario_file *fh, int factor, int aggr, const int64_t *delta,
                          const char *what) {
    int used = aggr / factor * factor, mine = -1;
    for (int i = 0; i < used; i++)
        if (io_coll_aggregator(fh, i, aggr) == rank)
            mine = i;
    for (int t = 0; t < factor; t++) {
        int want = mine >= 0 && t == mine % factor;
        if (want ? delta[t] == 0 : delta[t] != 0) {
            PT_CHECK(!"target reached as planned");
            fprintf(stderr,
                    "%s: factor %d, %d aggregators: rank %d (aggregator %d) made %lld calls to "
                    "target %d\n",
                    what, factor, aggr, rank, mine, (long long)delta[t], t);
        }
    }
}

/* An interleaved view of BLOCK-byte blocks, one per rank in turn. */
static void set_interleaved_view(pario_file *fh) {
    MPI_Datatype block, ftype;
    MPI_Type_contiguous(BLOCK, MPI_BYTE, &block);
    MPI_Type_create_resized(block, 0, (MPI_Aint)BLOCK * nranks, &ftype);
    MPI_Type_commit(&ftype);
    PT_EQ(pario_file_set_view(fh, DISP + (MPI_Offset)rank * BLOCK, MPI_BYTE, ftype, "native",
                              MPI_INFO_NULL),
          PARIO_OK);
    MPI_Type_free(&block);
    MPI_Type_free(&ftype);
}

static unsigned char byte_at(int64_t off, int round) {
    return ptest_pattern_byte(off, 11 + round);
}

/* Writes and reads the interleaved view collectively: memory contiguous,
 * or every other 8 bytes of a buffer twice as long (strided). */
static void run_case(int factor, int aggr, int cycle, int strided, int round) {
    char name[64], f[16], a[16], c[16];
    snprintf(name, sizeof name, "agg-f%d-a%d-c%d-s%d", factor, aggr, cycle, strided);
    snprintf(f, sizeof f, "%d", factor);
    snprintf(a, sizeof a, "%d", aggr);
    snprintf(c, sizeof c, "%d", cycle);
    const char *path = ptest_path(name);
    const char *kv[] = {"striping_factor",
                        f,
                        "striping_unit",
                        "4096",
                        "cb_nodes",
                        a,
                        "cb_config_list",
                        "*:*",
                        "pario_cb_cycle_size",
                        c,
                        "romio_cb_write",
                        "enable",
                        "romio_cb_read",
                        "enable",
                        NULL};
    pario_file *fh = iot_open(path, MPI_MODE_CREATE | MPI_MODE_RDWR, kv);
    if (!fh)
        return;
    PT_EQ(fh->io.stripe != NULL, 1);
    set_interleaved_view(fh);
    int64_t n = (int64_t)BLOCKS * BLOCK;
    unsigned char *mine = calloc((size_t)n * 2, 1), *back = calloc((size_t)n * 2, 1);
    for (int64_t i = 0; i < n; i++) {
        int64_t off = DISP + (i / BLOCK * nranks + rank) * BLOCK + i % BLOCK;
        mine[strided ? i / 8 * 16 + i % 8 : i] = byte_at(off, round);
    }
    MPI_Datatype mt = MPI_BYTE;
    MPI_Count count = n;
    if (strided) {
        MPI_Type_vector((int)(n / 8), 8, 16, MPI_BYTE, &mt);
        MPI_Type_commit(&mt);
        count = 1;
    }
    int64_t before[IO_STRIPE_MAX_FACTOR], delta[IO_STRIPE_MAX_FACTOR];
    int naggr = io_coll_naggr(fh);
    PT_EQ(naggr, aggr);
    calls_now(fh, before);
    PT_EQ(pario_file_write_at_all(fh, 0, mine, count, mt, NULL), PARIO_OK);
    calls_since(fh, before, delta);
    if (aggr >= factor)
        check_targets(fh, factor, aggr, delta, "write_all");
    calls_now(fh, before);
    PT_EQ(pario_file_read_at_all(fh, 0, back, count, mt, NULL), PARIO_OK);
    calls_since(fh, before, delta);
    if (aggr >= factor)
        check_targets(fh, factor, aggr, delta, "read_all");
    PT_CHECK(memcmp(mine, back, (size_t)n * 2) == 0);
    if (strided)
        MPI_Type_free(&mt);
    PT_EQ(pario_file_close(&fh, NULL), PARIO_OK);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        size_t size = DISP + (size_t)n * nranks;
        unsigned char *image = malloc(size + 1);
        int striped = 0;
        PT_EQ(stripe_image_of(path, image, size + 1, &striped), (long long)size);
        PT_EQ(striped, 1);
        for (size_t i = 0; i < size; i++)
            if (image[i] != (i < DISP ? 0 : byte_at((int64_t)i, round))) {
                PT_CHECK(!"logical byte as written");
                fprintf(stderr, "%s: byte %zu\n", name, i);
                break;
            }
        free(image);
    }
    free(mine);
    free(back);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    iot_stripe_targets("agg-t", TARGETS, targets, sizeof targets);
    /* the environment's default: four paths may pass MPI's longest info value */
    setenv("PARIO_STRIPE_TARGETS", targets, 1);
    int round = 0;
    for (int factor = 2; factor <= TARGETS; factor++)
        for (int aggr = 1; aggr <= nranks; aggr++)
            for (int strided = 0; strided < 2; strided++) {
                /* one stripe per window, and three (pipelined over several cycles) */
                run_case(factor, aggr, UNIT, strided, round++);
                run_case(factor, aggr, 3 * UNIT, strided, round++);
            }
    return ptest_finish();
}
