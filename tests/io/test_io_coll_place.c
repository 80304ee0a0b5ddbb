/* cb_config_list places the aggregators: the count its first entry matching
 * the host (or "*") gives is how many ranks of the node may aggregate, and
 * cb_nodes picks at most that many in all. get_info reports cb_nodes in
 * effect; malformed lists are ignored like any bad hint; a list naming no
 * host of the job lets every rank aggregate; set_info re-places. Every
 * placement writes and reads an interleaved view byte for byte. */
#include <string.h>
#include "pario/io.h"
#include "ptest.h"

/* Bytes of one block of the interleaved view. */
#define BLOCK 300
/* Blocks each rank writes. */
#define BLOCKS 40

static int rank, nranks;
static char host[MPI_MAX_PROCESSOR_NAME + 1];

static int min_int(int a, int b) {
    return a < b ? a : b;
}

static void get_hint(pario_file *fh, const char *key, char *v, int len) {
    MPI_Info info;
    int flag = 0;
    v[0] = '\0';
    PT_EQ(pario_file_get_info(fh, &info), PARIO_OK);
    MPI_Info_get(info, key, len - 1, v, &flag);
    MPI_Info_free(&info);
}

static int effective_cb_nodes(pario_file *fh) {
    char v[32];
    get_hint(fh, "cb_nodes", v, sizeof v);
    return atoi(v);
}

static MPI_Info info_of(const char *list, const char *cb_nodes) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "romio_cb_read", "enable");
    MPI_Info_set(info, "cb_buffer_size", "4096");
    if (list)
        MPI_Info_set(info, "cb_config_list", list);
    if (cb_nodes)
        MPI_Info_set(info, "cb_nodes", cb_nodes);
    return info;
}

/* Rank r's blocks are blocks r, r + n, ... of the file; write, read back. */
static void round_trip(pario_file *fh, int salt) {
    MPI_Datatype ft = ptest_interleaved(BLOCK, MPI_BYTE);
    PT_EQ(pario_file_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL), PARIO_OK);
    static unsigned char out[BLOCK * BLOCKS], in[BLOCK * BLOCKS];
    for (int i = 0; i < BLOCK * BLOCKS; i++)
        out[i] = (unsigned char)(salt + 31 * rank + i);
    PT_EQ(pario_file_write_all(fh, out, sizeof out, MPI_BYTE, NULL), PARIO_OK);
    memset(in, 0, sizeof in);
    PT_EQ(pario_file_read_at_all(fh, 0, in, sizeof in, MPI_BYTE, NULL), PARIO_OK);
    PT_CHECK(memcmp(in, out, sizeof in) == 0);
    MPI_Type_free(&ft);
}

/* Opens with list and cb_nodes, checks the cb_nodes in effect, round trip. */
static void check_placement(const char *list, const char *cb_nodes, int want) {
    MPI_Info info = info_of(list, cb_nodes);
    pario_file *fh = NULL;
    pario_error err;
    PT_EQ(pario_file_open(MPI_COMM_WORLD, ptest_path("coll-place"), MPI_MODE_RDWR | MPI_MODE_CREATE,
                          info, &fh, &err),
          PARIO_OK);
    MPI_Info_free(&info);
    if (!fh)
        return;
    int got = effective_cb_nodes(fh);
    PT_EQ(got, want);
    if (got != want && rank == 0)
        fprintf(stderr, "cb_config_list \"%s\" cb_nodes %s: %d aggregators, expected %d\n",
                list ? list : "(default)", cb_nodes ? cb_nodes : "(default)", got, want);
    round_trip(fh, want);
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
}

/* A malformed list leaves the one in effect; set_info re-places. */
static void check_set_info(void) {
    MPI_Info info = info_of("*:1", NULL);
    pario_file *fh = NULL;
    pario_error err;
    PT_EQ(pario_file_open(MPI_COMM_WORLD, ptest_path("coll-place-set"),
                          MPI_MODE_RDWR | MPI_MODE_CREATE, info, &fh, &err),
          PARIO_OK);
    MPI_Info_free(&info);
    if (!fh)
        return;
    char v[64];
    const char *bad[] = {"*:x", ":2", "*:0", "a,,b", "*:1:2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        info = info_of(bad[i], NULL);
        PT_EQ(pario_file_set_info(fh, info), PARIO_OK);
        MPI_Info_free(&info);
        get_hint(fh, "cb_config_list", v, sizeof v);
        PT_CHECK(strcmp(v, "*:1") == 0);
    }
    PT_EQ(effective_cb_nodes(fh), 1);
    info = info_of("*:*", "3");
    PT_EQ(pario_file_set_info(fh, info), PARIO_OK);
    MPI_Info_free(&info);
    PT_EQ(effective_cb_nodes(fh), min_int(3, nranks));
    round_trip(fh, 77);
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    ptest_init();
    int len = 0;
    MPI_Get_processor_name(host, &len);
    char mine_first[MPI_MAX_PROCESSOR_NAME + 16];
    snprintf(mine_first, sizeof mine_first, "%s:1,*:3", host);
    /* All ranks of these tests share one node. */
    check_placement(NULL, NULL, min_int(nranks, 4)); /* default "*:4" */
    check_placement("*:1", NULL, 1);
    check_placement("*:2", NULL, min_int(nranks, 2));
    check_placement("*:*", "3", min_int(nranks, 3));
    check_placement("*", NULL, 1);                              /* count omitted: 1 */
    check_placement(mine_first, NULL, 1);                       /* the first match counts */
    check_placement("no-such-host:2", "2", min_int(nranks, 2)); /* no host matches */
    check_set_info();
    return ptest_finish();
}
