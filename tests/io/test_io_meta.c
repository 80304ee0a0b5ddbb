/* The metadata path's collective steps: a PMPI-level tally of the
 * collective MPI calls each open, close, set_view, set_info, get_size,
 * sync, set_size and preallocate makes on this rank. Registered at 1, 2,
 * 4 and 8 ranks; every count must stay at or under the bound the
 * architecture document states (docs/architecture.md, "The open and close
 * path"), so a step that grows with the rank count, or a new step, fails
 * here. The bytes written between the steps are checked too: the tally is
 * of calls that did their work. */
#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "io_test.h"

/* ---- the tally ---------------------------------------------------------------------------- */

static long long tally; /* collective MPI calls this rank made (program's and pario's) */

/* Every collective MPI call pario could make; each passes to its PMPI_ name. */
int MPI_Barrier(MPI_Comm c) {
    tally++;
    return PMPI_Barrier(c);
}
int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c) {
    tally++;
    return PMPI_Bcast(b, n, t, root, c);
}
int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
    tally++;
    return PMPI_Allreduce(s, r, n, t, op, c);
}
int MPI_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c) {
    tally++;
    return PMPI_Reduce(s, r, n, t, op, root, c);
}
int MPI_Allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                  MPI_Comm c) {
    tally++;
    return PMPI_Allgather(s, sn, st, r, rn, rt, c);
}
int MPI_Allgatherv(const void *s, int sn, MPI_Datatype st, void *r, const int *rn,
                   const int *displs, MPI_Datatype rt, MPI_Comm c) {
    tally++;
    return PMPI_Allgatherv(s, sn, st, r, rn, displs, rt, c);
}
int MPI_Gather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root,
               MPI_Comm c) {
    tally++;
    return PMPI_Gather(s, sn, st, r, rn, rt, root, c);
}
int MPI_Alltoall(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                 MPI_Comm c) {
    tally++;
    return PMPI_Alltoall(s, sn, st, r, rn, rt, c);
}
int MPI_Alltoallv(const void *s, const int *sn, const int *sd, MPI_Datatype st, void *r,
                  const int *rn, const int *rd, MPI_Datatype rt, MPI_Comm c) {
    tally++;
    return PMPI_Alltoallv(s, sn, sd, st, r, rn, rd, rt, c);
}
int MPI_Exscan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
    tally++;
    return PMPI_Exscan(s, r, n, t, op, c);
}
int MPI_Scan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
    tally++;
    return PMPI_Scan(s, r, n, t, op, c);
}
int MPI_Comm_dup(MPI_Comm c, MPI_Comm *out) {
    tally++;
    return PMPI_Comm_dup(c, out);
}
int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm *out) {
    tally++;
    return PMPI_Comm_split(c, color, key, out);
}
int MPI_Comm_split_type(MPI_Comm c, int type, int key, MPI_Info info, MPI_Comm *out) {
    tally++;
    return PMPI_Comm_split_type(c, type, key, info, out);
}
int MPI_Comm_free(MPI_Comm *c) {
    tally++;
    return PMPI_Comm_free(c);
}
int MPI_Win_allocate(MPI_Aint size, int unit, MPI_Info info, MPI_Comm c, void *base, MPI_Win *w) {
    tally++;
    return PMPI_Win_allocate(size, unit, info, c, base, w);
}
int MPI_Win_allocate_shared(MPI_Aint size, int unit, MPI_Info info, MPI_Comm c, void *base,
                            MPI_Win *w) {
    tally++;
    return PMPI_Win_allocate_shared(size, unit, info, c, base, w);
}
int MPI_Win_create(void *base, MPI_Aint size, int unit, MPI_Info info, MPI_Comm c, MPI_Win *w) {
    tally++;
    return PMPI_Win_create(base, size, unit, info, c, w);
}
int MPI_Win_free(MPI_Win *w) {
    tally++;
    return PMPI_Win_free(w);
}

/* ---- the bounds (docs/architecture.md) ------------------------------------------------------ */

/* The first open on a communicator makes what later opens on it reuse: the
 * vote on an orphaned kit (1), the file's communicator and its agreement
 * (2), the node layout (3, 5 with PARIO_NODE_SIZE), the shared file
 * pointer's window (4, 5 when MPI cannot allocate it), the aggregator
 * placement (2), then the two steps of every open. */
#define FIRST_OPEN_MAX 17
#define OPEN_MAX 2  /* rank 0's outcome and hints; every rank's outcome */
#define PLACE_MAX 2 /* the aggregator placement, under a cb_config_list new on comm */
#define CLOSE_MAX 1
#define SET_VIEW_MAX 1     /* with no info and the shared pointer unused */
#define SET_INFO_MAX 2     /* rank 0's hints; the agreed outcome */
#define SYNC_MAX 1         /* nothing kept: the agreed outcome */
#define SYNC_WRITTEN_MAX 3 /* written since: the vote, the machine's writers, the outcome */
#define SYNC_FIRST_MAX 1   /* the machine's communicator, once per parked set */
#define RESIZE_MAX 2       /* checks and sizes in one step; rank 0's outcome */
#define SHARED_RESET_MAX 1 /* set_view after the shared pointer moved */
/* Collective reads of one range per rank: alone (romio_cb_read=disable)
 * the first takes the allgather of ranges and the agreed outcome, each
 * later one reads ahead and its outcome rides in the allgather; a quick
 * two-phase read (enable: whole ranges, one cycle, every call plain) takes
 * the allgather alone, the aggregators' outcomes going with the data. */
#define READ_ALONE_FIRST_MAX 2
#define READ_ALONE_MAX 1
#define READ_QUICK_MAX 1
/* A new communicator of ranks whose freed one left its kit (HDF5 dups the
 * program's communicator for every file): the vote on taking it, then the
 * two steps of every open. */
#define ORPHAN_OPEN_MAX (1 + OPEN_MAX)

static int rank, nranks;

/* The collective calls fn made on this rank; PT-checked to be the same on
 * every rank (the comparison itself goes through PMPI, uncounted). */
static long long calls_of(long long before, const char *what) {
    long long mine = tally - before, lo = 0, hi = 0;
    PMPI_Allreduce(&mine, &lo, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    PMPI_Allreduce(&mine, &hi, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (lo != hi && rank == 0)
        fprintf(stderr, "%s: %lld to %lld collective calls across ranks\n", what, lo, hi);
    PT_EQ(lo, hi);
    if (rank == 0)
        printf("%-28s %lld collective calls at %d ranks\n", what, mine, nranks);
    return mine;
}

static pario_file *open_counted(MPI_Comm comm, const char *path, int amode, MPI_Info info,
                                const char *what, long long max) {
    pario_file *fh = NULL;
    pario_error err;
    long long t = tally;
    PT_EQ(pario_file_open(comm, path, amode, info, &fh, &err), PARIO_OK);
    PT_CHECK(calls_of(t, what) <= max);
    return fh;
}

static void close_counted(pario_file **fh) {
    pario_error err;
    long long t = tally;
    PT_EQ(pario_file_close(fh, &err), PARIO_OK);
    PT_CHECK(calls_of(t, "close") <= CLOSE_MAX);
}

/* Each rank's 8 bytes at 8 * rank, then at 8 * (nranks + rank) through a
 * view, must be in the file. */
static void check_bytes(const char *path) {
    int64_t len = 16 * nranks;
    unsigned char *img = malloc((size_t)len);
    PT_EQ(ptest_file_image(path, img, len), len);
    for (int r = 0; r < nranks; r++)
        for (int i = 0; i < 8; i++) {
            PT_EQ(img[8 * r + i], (unsigned char)(r + 1));
            PT_EQ(img[8 * (nranks + r) + i], (unsigned char)(r + 101));
        }
    free(img);
}

static void test_file_calls(MPI_Comm comm, const char *path) {
    pario_file *fh = open_counted(comm, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL,
                                  "open (create)", OPEN_MAX);
    unsigned char mine[8];
    memset(mine, rank + 1, sizeof mine);
    PT_EQ(pario_file_write_at(fh, 8 * rank, mine, 8, MPI_BYTE, NULL), PARIO_OK);

    MPI_Datatype ft;
    MPI_Type_contiguous(8, MPI_BYTE, &ft);
    MPI_Type_commit(&ft);
    long long t = tally;
    PT_EQ(pario_file_set_view(fh, 8 * (nranks + rank), MPI_BYTE, ft, "native", MPI_INFO_NULL),
          PARIO_OK);
    PT_CHECK(calls_of(t, "set_view") <= SET_VIEW_MAX);
    t = tally;
    PT_EQ(pario_file_set_view(fh, 8 * (nranks + rank), MPI_BYTE, ft, "native", MPI_INFO_NULL),
          PARIO_OK);
    PT_CHECK(calls_of(t, "set_view (same view)") <= SET_VIEW_MAX);
    memset(mine, rank + 101, sizeof mine);
    PT_EQ(pario_file_write_all(fh, mine, 8, MPI_BYTE, NULL), PARIO_OK);

    t = tally;
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    PT_CHECK(calls_of(t, "sync (after a write)") <= SYNC_FIRST_MAX + SYNC_WRITTEN_MAX + 2);
    t = tally;
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    PT_CHECK(calls_of(t, "sync (nothing dirty)") <= SYNC_MAX);
    if (rank == 0) /* its bytes again: only rank 0 has written since */
        PT_EQ(pario_file_write_at(fh, 0, mine, 8, MPI_BYTE, NULL), PARIO_OK);
    t = tally;
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    PT_CHECK(calls_of(t, "sync (after a write, again)") <= SYNC_WRITTEN_MAX);
    MPI_Offset size = 0;
    t = tally;
    PT_EQ(pario_file_get_size(fh, &size), PARIO_OK);
    PT_CHECK(calls_of(t, "get_size") == 0);
    PT_EQ(size, 16 * nranks);

    t = tally;
    PT_EQ(pario_file_preallocate(fh, 16 * nranks), PARIO_OK);
    PT_CHECK(calls_of(t, "preallocate") <= RESIZE_MAX);
    t = tally;
    PT_EQ(pario_file_set_size(fh, 16 * nranks), PARIO_OK);
    PT_CHECK(calls_of(t, "set_size") <= RESIZE_MAX);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "1048576");
    t = tally;
    PT_EQ(pario_file_set_info(fh, info), PARIO_OK);
    PT_CHECK(calls_of(t, "set_info") <= SET_INFO_MAX);
    MPI_Info_free(&info);

    /* The shared pointer moved: set_view takes one more step to reset it. */
    PT_EQ(pario_file_seek_shared(fh, 3, MPI_SEEK_SET), PARIO_OK);
    t = tally;
    PT_EQ(pario_file_set_view(fh, 8 * (nranks + rank), MPI_BYTE, ft, "native", MPI_INFO_NULL),
          PARIO_OK);
    PT_CHECK(calls_of(t, "set_view (shared moved)") <= SET_VIEW_MAX + SHARED_RESET_MAX);
    MPI_Offset at = -1;
    PT_EQ(pario_file_get_position_shared(fh, &at), PARIO_OK);
    PT_EQ(at, 0);
    MPI_Type_free(&ft);
    close_counted(&fh);
    check_bytes(path);
}

/* Opens after the first on a communicator reuse what it made. */
static void test_reopen(MPI_Comm comm, const char *path) {
    for (int i = 0; i < 3; i++) {
        pario_file *fh =
            open_counted(comm, path, MPI_MODE_RDONLY, MPI_INFO_NULL, "open (again)", OPEN_MAX);
        MPI_Offset size = 0;
        PT_EQ(pario_file_get_size(fh, &size), PARIO_OK);
        PT_EQ(size, 16 * nranks);
        close_counted(&fh);
    }
}

static void read_counted(pario_file *fh, const char *what, long long max) {
    unsigned char got[8] = {0};
    MPI_Count n = 0;
    long long t = tally;
    PT_EQ(pario_file_read_at_all(fh, 8 * rank, got, 8, MPI_BYTE, &n), PARIO_OK);
    PT_CHECK(calls_of(t, what) <= max);
    PT_EQ(n, 8);
    for (int i = 0; i < 8; i++)
        PT_EQ(got[i], (unsigned char)(rank + 1));
}

static void test_read_steps(MPI_Comm comm, const char *path) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_read", "disable");
    pario_file *fh =
        open_counted(comm, path, MPI_MODE_RDONLY, info, "open (reads alone)", OPEN_MAX);
    read_counted(fh, "read_at_all (alone, first)", READ_ALONE_FIRST_MAX);
    for (int i = 0; i < 2; i++)
        read_counted(fh, "read_at_all (alone, ahead)", READ_ALONE_MAX);
    close_counted(&fh);
    MPI_Info_set(info, "romio_cb_read", "enable");
    fh = open_counted(comm, path, MPI_MODE_RDONLY, info, "open (two-phase reads)", OPEN_MAX);
    for (int i = 0; i < 2; i++)
        read_counted(fh, "read_at_all (quick)", nranks > 1 ? READ_QUICK_MAX : READ_ALONE_FIRST_MAX);
    close_counted(&fh);
    MPI_Info_free(&info);
}

/* Whether this process holds a descriptor of path (from /proc/self/fd). */
static int holds_open(const char *path) {
    char want[PATH_MAX], link[PATH_MAX + 32], got[PATH_MAX];
    if (!realpath(path, want))
        return 0;
    DIR *d = opendir("/proc/self/fd");
    int found = 0;
    for (struct dirent *e; d && !found && (e = readdir(d));) {
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, got, sizeof got - 1);
        if (n > 0) {
            got[n] = '\0';
            found = strcmp(got, want) == 0;
        }
    }
    if (d)
        closedir(d);
    return found;
}

/* romio_no_indep_rw: only the aggregators and rank 0 (which creates; with
 * one aggregator per node it is the first) open the file; collective writes
 * land through them; an independent write on another rank opens the file
 * then, as ROMIO does. cb_key/cb_val: an aggregator hint given, or NULL for
 * the default under romio_no_indep_rw (ROMIO's: one per node; one node
 * here); holders: the ranks that must hold the file after open. */
static void test_deferred_open(MPI_Comm comm, const char *path, const char *cb_key,
                               const char *cb_val, int holders, long long max) {
    PMPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        unlink(path);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_no_indep_rw", "true");
    if (cb_key)
        MPI_Info_set(info, cb_key, cb_val);
    pario_file *fh = open_counted(comm, path, MPI_MODE_RDWR | MPI_MODE_CREATE, info,
                                  "open (romio_no_indep_rw)", max);
    MPI_Info_free(&info);
    PT_CHECK(iot_hint_is(fh, "romio_no_indep_rw", "true"));
    PT_CHECK(iot_hint_is(fh, "romio_cb_write", "enable"));
    if (!cb_key) {
        PT_CHECK(iot_hint_is(fh, "cb_nodes", "1"));
        PT_CHECK(iot_hint_is(fh, "cb_config_list", "*:1"));
    }
    int opened = holds_open(path), count = 0;
    PMPI_Allreduce(&opened, &count, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    PT_EQ(count, holders);
    PT_EQ(opened, rank < holders); /* the aggregators are the first ranks of the node */
    unsigned char mine[8];
    memset(mine, rank + 1, sizeof mine);
    PT_EQ(pario_file_write_at_all(fh, 8 * rank, mine, 8, MPI_BYTE, NULL), PARIO_OK);
    PT_EQ(holds_open(path), opened); /* collective access opened nothing more */
    memset(mine, rank + 101, sizeof mine);
    PT_EQ(pario_file_write_at(fh, 8 * (nranks + rank), mine, 8, MPI_BYTE, NULL), PARIO_OK);
    PT_CHECK(holds_open(path));
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    close_counted(&fh);
    check_bytes(path);
}

/* HDF5's way: every open on a new duplicate of the program's communicator,
 * freed after the close. The first duplicate's kit is kept when it is freed
 * and every later one takes it; a communicator of other ranks makes its own. */
static void test_fresh_communicators(const char *path) {
    for (int i = 0; i < 3; i++) {
        MPI_Comm c;
        PMPI_Comm_dup(MPI_COMM_WORLD, &c);
        /* the first: the kept placement was for the last cb_config_list used */
        pario_file *fh =
            open_counted(c, path, MPI_MODE_RDONLY, MPI_INFO_NULL, "open (new comm, same ranks)",
                         ORPHAN_OPEN_MAX + (i == 0 ? PLACE_MAX : 0));
        MPI_Offset size = 0;
        PT_EQ(pario_file_get_size(fh, &size), PARIO_OK);
        PT_EQ(size, 16 * nranks);
        close_counted(&fh);
        PMPI_Comm_free(&c);
    }
    MPI_Comm half;
    PMPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int n = 0;
    MPI_Comm_size(half, &n);
    pario_file *fh = NULL;
    pario_error err;
    long long t = tally;
    PT_EQ(pario_file_open(half, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh, &err), PARIO_OK);
    long long made = tally - t;
    if (n < nranks) /* other ranks: no orphan of theirs, a kit of their own */
        PT_CHECK(made > ORPHAN_OPEN_MAX);
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    PMPI_Comm_free(&half);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    ptest_init();
    const char *path = ptest_path("meta");
    MPI_Comm comm;
    PMPI_Comm_dup(MPI_COMM_WORLD, &comm); /* a communicator no file has been opened on */
    if (rank == 0)
        unlink(path);
    PMPI_Barrier(MPI_COMM_WORLD);
    pario_file *fh = open_counted(comm, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL,
                                  "open (first on comm)", FIRST_OPEN_MAX);
    close_counted(&fh);
    test_file_calls(comm, path);
    test_reopen(comm, path);
    test_read_steps(comm, path);
    test_deferred_open(comm, path, "cb_nodes", "1", 1, OPEN_MAX);
    /* ROMIO's one per node ("*:1") and "*:2" are new lists on comm */
    test_deferred_open(comm, path, NULL, NULL, 1, OPEN_MAX + PLACE_MAX);
    test_deferred_open(comm, path, "cb_config_list", "*:2", nranks < 2 ? nranks : 2,
                       OPEN_MAX + PLACE_MAX);
    PMPI_Comm_free(&comm); /* its kit is kept for the next communicator of these ranks */
    test_fresh_communicators(path);
    return ptest_finish();
}
