/* ROMIO's conventions that programs and job scripts rely on, on pario's
 * drop-in (run with it preloaded; the system's OMPIO follows none of them):
 *
 * - $ROMIO_HINTS names a hints file: "key value" lines, a key given twice
 *   keeps its first value, the program's MPI_Info wins over the file (as
 *   MPICH 4.0's ROMIO does), $PARIO_HINTS wins over it too;
 * - ROMIO's other hints (romio_no_indep_rw, romio_cb_pfr, ...) are taken and
 *   reported by get_info, with ROMIO's defaults when not given;
 * - a file-system prefix ("ufs:", "NFS:", "lustre:", ...) is stripped; an
 *   unknown one is MPI_ERR_IO naming the file and nothing is created;
 *   MPI_File_delete strips it too; a ':' after a '/' is part of the name;
 * - $ROMIO_FSTYPE_FORCE: a known type opens, an unknown one is MPI_ERR_IO;
 * - a filetype with decreasing, negative or overlapping displacements is
 *   MPI_ERR_IO (ROMIO's class) on every rank; overlapping blocks that never
 *   start before an earlier one are accepted in a file opened read-only
 *   and read as MPICH's ROMIO reads them (each block in typemap order). */
#include "dropin.h"

static void expect_hint(MPI_File fh, const char *key, const char *want, int line) {
    char val[MPI_MAX_INFO_VAL + 1], text[512];
    ptest_hint_of(fh, key, val);
    snprintf(text, sizeof text, "hint %s is \"%s\", expected \"%s\"", key, val, want);
    ptest_check(!strcmp(val, want), text, __FILE__, line);
}
#define EXPECT_HINT(fh, key, want) expect_hint((fh), (key), (want), __LINE__)

/* The error string of rc holds want (a file name: too long for
 * DROPIN_STRING_HAS's message buffer). */
static void error_names(int rc, const char *want, int line) {
    char msg[MPI_MAX_ERROR_STRING];
    dropin_error_string(rc, msg);
    int ok = rc != MPI_SUCCESS && strstr(msg, want) != NULL;
    if (!ok)
        fprintf(stderr, "error string \"%s\" lacks \"%s\"\n", msg, want);
    ptest_check(ok, "the error string names it", __FILE__, line);
}
#define ERROR_NAMES(rc, want) error_names((rc), (want), __LINE__)

static int open_with(const char *name, int amode, MPI_Info info, MPI_File *fh) {
    return MPI_File_open(MPI_COMM_WORLD, name, amode, info, fh);
}

static void check_hints_file(void) {
    char hints[DROPIN_PATH_MAX], path[DROPIN_PATH_MAX], phints[DROPIN_PATH_MAX];
    snprintf(hints, sizeof hints, "%s", ptest_path("romio-hints"));
    snprintf(phints, sizeof phints, "%s", ptest_path("pario-hints"));
    dropin_fresh_path(path, "hinted.dat");
    ptest_put_text(hints, "# site defaults\n"
                          "cb_buffer_size 1048576\n"
                          "cb_buffer_size 2097152\n"
                          "ind_rd_buffer_size 65536\n"
                          "romio_ds_write enable too many\n"
                          "romio_no_indep_rw true\n"
                          "\n"
                          "romio_cb_pfr enable\n");
    setenv("ROMIO_HINTS", hints, 1);
    MPI_File fh;
    if (PT_MPI_OK(open_with(path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh))) {
        EXPECT_HINT(fh, "cb_buffer_size", "1048576"); /* the first value of the key */
        EXPECT_HINT(fh, "ind_rd_buffer_size", "65536");
        EXPECT_HINT(fh, "romio_ds_write", "automatic"); /* three words: skipped */
        EXPECT_HINT(fh, "romio_no_indep_rw", "true");
        EXPECT_HINT(fh, "romio_cb_pfr", "enable");
        EXPECT_HINT(fh, "romio_cb_alltoall", "automatic"); /* ROMIO's default */
        PT_MPI_OK(MPI_File_close(&fh));
    }
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "4194304");
    MPI_Info_set(info, "romio_cb_ds_threshold", "4096");
    MPI_Info_set(info, "romio_lustre_co_ratio", "2");
    ptest_put_text(phints, "ind_rd_buffer_size 131072\n");
    setenv("PARIO_HINTS", phints, 1);
    if (PT_MPI_OK(open_with(path, MPI_MODE_RDWR, info, &fh))) {
        EXPECT_HINT(fh, "cb_buffer_size", "4194304");    /* MPI_Info wins over the file */
        EXPECT_HINT(fh, "ind_rd_buffer_size", "131072"); /* so does $PARIO_HINTS */
        EXPECT_HINT(fh, "romio_lustre_co_ratio", "2");   /* taken from MPI_Info */
        EXPECT_HINT(fh, "romio_cb_ds_threshold", "4096");
        PT_MPI_OK(MPI_File_close(&fh));
    }
    MPI_Info_free(&info);
    unsetenv("PARIO_HINTS");
    setenv("ROMIO_HINTS", ptest_path("no-such-hints-file"), 1);
    if (PT_MPI_OK(open_with(path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh))) {
        EXPECT_HINT(fh, "cb_buffer_size", "16777216"); /* a missing file: defaults */
        EXPECT_HINT(fh, "romio_no_indep_rw", "false");
        PT_MPI_OK(MPI_File_close(&fh));
    }
    unsetenv("ROMIO_HINTS");
}

/* Opens prefix + path, writes 4 bytes on rank 0, closes; the plain path
 * must then hold them. */
static void check_prefix_opens(const char *prefix, const char *name) {
    char path[DROPIN_PATH_MAX], prefixed[DROPIN_PATH_MAX + 16];
    dropin_fresh_path(path, name);
    snprintf(prefixed, sizeof prefixed, "%s%s", prefix, path);
    MPI_File fh;
    if (!PT_MPI_OK(open_with(prefixed, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh)))
        return;
    if (dropin_rank() == 0)
        PT_MPI_OK(MPI_File_write_at(fh, 0, "ufs!", 4, MPI_BYTE, MPI_STATUS_IGNORE));
    PT_MPI_OK(MPI_File_close(&fh));
    char back[8] = {0};
    PT_EQ(ptest_read_file(path, back, sizeof back), 4);
    PT_CHECK(!memcmp(back, "ufs!", 4));
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has read it before it is removed */
}

static void check_prefixes(void) {
    const char *prefixes[] = {"ufs:", "nfs:", "NFS:", "lustre:", "gpfs:", "pvfs2:", "testfs:"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        check_prefix_opens(prefixes[i], "prefixed.dat");
    check_prefix_opens("", "run:7.dat"); /* ':' after a '/': part of the name */

    char path[DROPIN_PATH_MAX], name[DROPIN_PATH_MAX + 16];
    dropin_fresh_path(path, "unknown.dat");
    snprintf(name, sizeof name, "bogus:%s", path);
    MPI_File fh;
    int rc = open_with(name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    PT_MPI_CLASS(rc, MPI_ERR_IO);
    ERROR_NAMES(rc, name);
    DROPIN_STRING_HAS(rc, "bogus:");
    PT_EQ(dropin_file_size(path), -1); /* nothing created */

    rc = open_with("ufs:", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    PT_MPI_CLASS(rc, MPI_ERR_BAD_FILE);

    /* One rank alone names an unknown prefix, after earlier opens left the
     * communicator's file kit parked: every rank fails, none waits for it. */
    int nranks = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks > 1) {
        dropin_fresh_path(path, "unknown-one.dat");
        snprintf(name, sizeof name, "%s%s", dropin_rank() == nranks - 1 ? "bogus:" : "", path);
        rc = open_with(name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
        PT_MPI_CLASS(rc, MPI_ERR_IO);
        DROPIN_STRING_HAS(rc, "bogus:");
    }

    /* Delete strips the prefix too. */
    check_prefix_opens("ufs:", "deleted.dat");
    snprintf(name, sizeof name, "ufs:%s", ptest_path("deleted.dat"));
    MPI_Barrier(MPI_COMM_WORLD);
    if (dropin_rank() == 0)
        PT_MPI_OK(MPI_File_delete(name, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    PT_EQ(dropin_file_size(ptest_path("deleted.dat")), -1);
}

static void check_forced_type(void) {
    char path[DROPIN_PATH_MAX];
    dropin_fresh_path(path, "forced.dat");
    MPI_File fh;
    setenv("ROMIO_FSTYPE_FORCE", "nfs:", 1);
    if (PT_MPI_OK(open_with(path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh)))
        PT_MPI_OK(MPI_File_close(&fh));
    setenv("ROMIO_FSTYPE_FORCE", "bogus:", 1);
    int rc = open_with(path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    PT_MPI_CLASS(rc, MPI_ERR_IO);
    DROPIN_STRING_HAS(rc, "ROMIO_FSTYPE_FORCE");
    unsetenv("ROMIO_FSTYPE_FORCE");
}

/* A two-int filetype with the given displacements (in bytes). */
static MPI_Datatype two_ints(MPI_Aint first, MPI_Aint second) {
    int lens[2] = {1, 1};
    MPI_Aint disps[2] = {first, second};
    MPI_Datatype t;
    MPI_Type_create_hindexed(2, lens, disps, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

static void check_view_classes(void) {
    char path[DROPIN_PATH_MAX];
    dropin_fresh_path(path, "views.dat");
    MPI_File fh;
    if (!PT_MPI_OK(open_with(path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh)))
        return;
    MPI_Aint cases[3][2] = {{8, 0}, {-8, 0}, {0, 0}}; /* decreasing, negative, overlapping */
    for (int i = 0; i < 3; i++) {
        MPI_Datatype t = two_ints(cases[i][0], cases[i][1]);
        int rc = MPI_File_set_view(fh, 0, MPI_INT, t, "native", MPI_INFO_NULL);
        PT_MPI_CLASS(rc, MPI_ERR_IO);
        ERROR_NAMES(rc, path);
        MPI_Type_free(&t);
    }
    PT_MPI_OK(MPI_File_close(&fh));
}

/* Reads 2 instances of a vector of 3 blocks of 4 ints, 2 ints apart (each
 * block overlaps the next), from a file holding 0, 1, 2, ...: instance k
 * yields 8k + 0..3, 8k + 2..5, 8k + 4..7. With the given sieving switch
 * and window, independently and collectively. */
static void read_overlapping_vector(const char *path, const char *ds, const char *window) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_read", ds);
    MPI_Info_set(info, "ind_rd_buffer_size", window);
    MPI_File fh;
    int ok = PT_MPI_OK(open_with(path, MPI_MODE_RDONLY, info, &fh));
    MPI_Info_free(&info);
    if (!ok)
        return;
    MPI_Datatype vec;
    MPI_Type_vector(3, 4, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    PT_MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, vec, "native", MPI_INFO_NULL));
    int want[24], got[24], bad = 0;
    for (int k = 0, i = 0; k < 2; k++)
        for (int b = 0; b < 3; b++)
            for (int j = 0; j < 4; j++)
                want[i++] = 8 * k + 2 * b + j;
    for (int collective = 0; collective < 2; collective++) {
        memset(got, 0xff, sizeof got);
        MPI_Status st;
        int count = -1;
        if (collective)
            PT_MPI_OK(MPI_File_read_at_all(fh, 0, got, 24, MPI_INT, &st));
        else
            PT_MPI_OK(MPI_File_read_at(fh, 0, got, 24, MPI_INT, &st));
        MPI_Get_count(&st, MPI_INT, &count);
        PT_EQ(count, 24);
        for (int i = 0; i < 24; i++)
            bad += got[i] != want[i];
    }
    PT_EQ(bad, 0);
    MPI_Type_free(&vec);
    PT_MPI_OK(MPI_File_close(&fh));
}

static void check_overlap_read_only(void) {
    char path[DROPIN_PATH_MAX];
    dropin_fresh_path(path, "overlap.dat");
    int data[64];
    for (int i = 0; i < 64; i++)
        data[i] = i;
    MPI_File fh;
    if (!PT_MPI_OK(open_with(path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh)))
        return;
    if (dropin_rank() == 0)
        PT_MPI_OK(MPI_File_write_at(fh, 0, data, 64, MPI_INT, MPI_STATUS_IGNORE));
    MPI_Datatype same = two_ints(0, 0);
    PT_MPI_CLASS(MPI_File_set_view(fh, 0, MPI_INT, same, "native", MPI_INFO_NULL), MPI_ERR_IO);
    PT_MPI_OK(MPI_File_close(&fh));

    /* Each int twice: 0 0 1 1 2 2 3 3. */
    PT_MPI_OK(open_with(path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    PT_MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, same, "native", MPI_INFO_NULL));
    int got[8] = {0};
    PT_MPI_OK(MPI_File_read_all(fh, got, 8, MPI_INT, MPI_STATUS_IGNORE));
    int bad = 0;
    for (int i = 0; i < 8; i++)
        bad += got[i] != i / 2;
    PT_EQ(bad, 0);
    MPI_Datatype back = two_ints(8, 0); /* decreasing: refused even read-only */
    PT_MPI_CLASS(MPI_File_set_view(fh, 0, MPI_INT, back, "native", MPI_INFO_NULL), MPI_ERR_IO);
    MPI_Type_free(&back);
    MPI_Type_free(&same);
    PT_MPI_OK(MPI_File_close(&fh));

    read_overlapping_vector(path, "enable", "4194304");
    read_overlapping_vector(path, "disable", "4194304");
    read_overlapping_vector(path, "automatic", "16"); /* a window per block */
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    PT_CHECK(ptest_on_pario());
    check_hints_file();
    check_prefixes();
    check_forced_type();
    check_view_classes();
    check_overlap_read_only();
    return ptest_finish();
}
