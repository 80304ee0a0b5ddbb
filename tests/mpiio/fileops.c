/* MPI 3.1 section 13.2: file manipulation and hints.
 *
 * get_group, get_size, set_size (shrink and grow), preallocate, sync,
 * get_info/set_info, on a file whose bytes are checked after every step. */
#include "conf.h"

/* Bytes each rank writes into the file at the start of every check. */
#define PART_LEN 16
/* Room for the largest image: 4 ranks' parts, grown to at most 4 KiB. */
#define IMAGE_LEN 4096
/* Longest hint value read back (MPI_MAX_INFO_VAL may be much larger). */
#define HINT_VAL_LEN 256

/* Every rank writes its PART_LEN-byte part; want receives the image. */
static MPI_File open_with_parts(const char *path, unsigned char *want, size_t *len) {
    conf_remove(path);
    MPI_File fh = MPI_FILE_NULL;
    int amode = MPI_MODE_RDWR | MPI_MODE_CREATE;
    if (!PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh)))
        return MPI_FILE_NULL;
    int rank = conf_rank(), n = conf_size();
    unsigned char part[PART_LEN];
    conf_pattern(part, PART_LEN, (unsigned)rank);
    PT_MPI_OK(MPI_File_write_at(fh, (MPI_Offset)rank * PART_LEN, part, PART_LEN, MPI_BYTE,
                                MPI_STATUS_IGNORE));
    for (int r = 0; r < n; r++)
        conf_pattern(want + (size_t)r * PART_LEN, PART_LEN, (unsigned)r);
    *len = (size_t)n * PART_LEN;
    PT_MPI_OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PT_MPI_OK(MPI_File_sync(fh));
    return fh;
}

/* get_group returns a new group equal to the communicator's (13.2.7). */
static void check_group(const char *path) {
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, conf_rank() % 2, -conf_rank(), &comm);
    MPI_File fh;
    if (PT_MPI_OK(MPI_File_open(comm, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh))) {
        MPI_Group fgroup = MPI_GROUP_NULL, cgroup;
        PT_MPI_OK(MPI_File_get_group(fh, &fgroup));
        MPI_Comm_group(comm, &cgroup);
        int cmp = MPI_UNEQUAL;
        MPI_Group_compare(fgroup, cgroup, &cmp);
        PT_EQ(cmp, MPI_IDENT);
        int size = 0, rank = -1, crank = -2;
        MPI_Group_size(fgroup, &size);
        MPI_Group_rank(fgroup, &rank);
        MPI_Comm_rank(comm, &crank);
        PT_EQ(rank, crank);
        MPI_Comm_size(comm, &crank);
        PT_EQ(size, crank);
        PT_CHECK(fgroup != MPI_GROUP_NULL);
        MPI_Group_free(&fgroup);
        MPI_Group_free(&cgroup);
        PT_MPI_OK(MPI_File_close(&fh));
    }
    MPI_Comm_free(&comm);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* set_size shrinks (truncates) and grows; get_size follows. On a POSIX
 * file the grown bytes read as zero (the standard leaves them undefined,
 * ftruncate defines them). */
static void check_set_size(const char *path) {
    static unsigned char want[IMAGE_LEN];
    size_t len = 0;
    MPI_File fh = open_with_parts(path, want, &len);
    if (fh == MPI_FILE_NULL)
        return;
    MPI_Offset size = -1;
    PT_MPI_OK(MPI_File_get_size(fh, &size));
    PT_EQ(size, len);
    /* set_size need not synchronize: no rank may truncate before all looked. */
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Offset shrunk = (MPI_Offset)len - PART_LEN / 2;
    PT_MPI_OK(MPI_File_set_size(fh, shrunk));
    PT_MPI_OK(MPI_File_get_size(fh, &size));
    PT_EQ(size, shrunk);
    CONF_EXPECT_IMAGE(path, want, (size_t)shrunk);

    MPI_Offset grown = 1000;
    PT_MPI_OK(MPI_File_set_size(fh, grown));
    PT_MPI_OK(MPI_File_get_size(fh, &size));
    PT_EQ(size, grown);
    memset(want + shrunk, 0, (size_t)(grown - shrunk));
    CONF_EXPECT_IMAGE(path, want, (size_t)grown);

    /* Reading the grown region through MPI gives zeros as well. */
    unsigned char back[PART_LEN];
    memset(back, 0xee, sizeof back);
    MPI_Status st;
    PT_MPI_OK(MPI_File_read_at(fh, grown - PART_LEN, back, PART_LEN, MPI_BYTE, &st));
    int got = -1;
    MPI_Get_count(&st, MPI_BYTE, &got);
    PT_EQ(got, PART_LEN);
    PT_CHECK(memcmp(back, want + grown - PART_LEN, PART_LEN) == 0);

    MPI_Barrier(MPI_COMM_WORLD);
    PT_MPI_OK(MPI_File_set_size(fh, 0));
    PT_MPI_OK(MPI_File_get_size(fh, &size));
    PT_EQ(size, 0);
    PT_MPI_OK(MPI_File_close(&fh));
    CONF_EXPECT_IMAGE(path, want, 0);
}

/* preallocate: size becomes at least n, never shrinks, bytes already there
 * are unchanged (13.2.5). */
static void check_preallocate(const char *path) {
    static unsigned char want[IMAGE_LEN];
    size_t len = 0;
    MPI_File fh = open_with_parts(path, want, &len);
    if (fh == MPI_FILE_NULL)
        return;
    MPI_Offset size = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    PT_MPI_OK(MPI_File_preallocate(fh, PART_LEN / 2));
    PT_MPI_OK(MPI_File_get_size(fh, &size));
    PT_EQ(size, len);
    CONF_EXPECT_IMAGE(path, want, len);

    MPI_Offset target = 3000;
    PT_MPI_OK(MPI_File_preallocate(fh, target));
    PT_MPI_OK(MPI_File_get_size(fh, &size));
    PT_CHECK(size >= target);
    if (conf_rank() == 0) {
        static unsigned char got[IMAGE_LEN];
        long long fsize = conf_read_image(path, got, sizeof got);
        PT_CHECK(fsize >= target);
        PT_CHECK(memcmp(got, want, len) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    PT_MPI_OK(MPI_File_close(&fh));
}

/* sync on a clean and on a dirty file. A sync on a read-only handle is
 * allowed as well: the standard gives sync a reading role (updates by other
 * processes become visible) and makes no exception for MPI_MODE_RDONLY.
 * Deviation: OMPIO fails it with MPI_ERR_ACCESS and ROMIO with
 * MPI_ERR_READ_ONLY, so it is not checked on either. */
static void check_sync(const char *path) {
    static unsigned char want[IMAGE_LEN];
    size_t len = 0;
    MPI_File fh = open_with_parts(path, want, &len);
    if (fh == MPI_FILE_NULL)
        return;
    PT_MPI_OK(MPI_File_sync(fh));
    PT_MPI_OK(MPI_File_sync(fh));
    PT_MPI_OK(MPI_File_close(&fh));
    if (PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh))) {
        int rc = MPI_File_sync(fh);
        if (conf_strict())
            PT_MPI_OK(rc);
        PT_MPI_OK(MPI_File_close(&fh));
    }
    CONF_EXPECT_IMAGE(path, want, len);
}

/* Reads key from info into val; returns the flag. */
static int info_value(MPI_Info info, const char *key, char *val) {
    int flag = 0;
    val[0] = '\0';
    MPI_Info_get(info, key, HINT_VAL_LEN - 1, val, &flag);
    return flag;
}

/* get_info returns a new info object the caller can query and free;
 * set_info is collective and accepted; a hint the implementation accepts
 * at open is reported back with its value. */
static void check_info(const char *path) {
    conf_remove(path);
    MPI_Info hints;
    MPI_Info_create(&hints);
    MPI_Info_set(hints, "cb_buffer_size", "1048576");
    MPI_Info_set(hints, "pario_conformance_unknown_key", "yes");
    MPI_File fh;
    int amode = MPI_MODE_RDWR | MPI_MODE_CREATE;
    if (!PT_MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, amode, hints, &fh))) {
        MPI_Info_free(&hints);
        return;
    }
    MPI_Info_free(&hints);
    MPI_Info used = MPI_INFO_NULL;
    PT_MPI_OK(MPI_File_get_info(fh, &used));
    PT_CHECK(used != MPI_INFO_NULL);
    if (used != MPI_INFO_NULL) {
        int nkeys = -1;
        PT_MPI_OK(MPI_Info_get_nkeys(used, &nkeys));
        PT_CHECK(nkeys >= 0);
        char val[HINT_VAL_LEN];
        if (info_value(used, "cb_buffer_size", val))
            PT_EQ(atol(val), 1048576);
        /* Under pario every ROMIO-named hint it accepts is reported. */
        if (ptest_on_pario())
            PT_CHECK(info_value(used, "cb_buffer_size", val));
        PT_MPI_OK(MPI_Info_free(&used));
        PT_CHECK(used == MPI_INFO_NULL);
    }

    MPI_Info more;
    MPI_Info_create(&more);
    MPI_Info_set(more, "access_style", "write_once");
    PT_MPI_OK(MPI_File_set_info(fh, more));
    MPI_Info_free(&more);
    /* The handle still works after set_info. */
    if (conf_rank() == 0)
        PT_MPI_OK(MPI_File_write_at(fh, 0, "info", 4, MPI_BYTE, MPI_STATUS_IGNORE));
    PT_MPI_OK(MPI_File_get_info(fh, &used));
    if (used != MPI_INFO_NULL)
        MPI_Info_free(&used);
    PT_MPI_OK(MPI_File_close(&fh));
    CONF_EXPECT_IMAGE(path, "info", 4);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    char path[CONF_PATH_MAX], gpath[CONF_PATH_MAX];
    conf_path(path, "fileops.dat");
    snprintf(gpath, sizeof gpath, "%s", ptest_path(conf_rank() % 2 ? "group.odd" : "group.even"));
    check_group(gpath);
    check_set_size(path);
    check_preallocate(path);
    check_sync(path);
    check_info(path);
    return ptest_finish();
}
