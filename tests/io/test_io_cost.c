/* Per-file-system costs (src/io/cost): records read at open, the figures in
 * effect reported by get_info, hints overriding them, missing and malformed
 * records giving the defaults, and the sieving decision following the
 * figures. Whether a write sieved is seen without timing: the test holds a
 * byte-range lock on the gap between the write's two blocks; a sieving write
 * locks its whole window and waits (its request shows in /proc/locks as
 * blocked), a write block by block takes no lock and finishes. Each record
 * lives in a file of its own, since a process reads a file system's record
 * from a given file only once. */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include "io/cost/cost.h"
#include "io/cost/mount.h"
#include "io/file/file.h"
#include "io_test.h"

#define KIB 1024
/* Bytes of the file the decision cases write into. */
#define DECIDE_FILE (1 << 20)
/* Reservation threshold in automatic mode (io/hints/hints.c). */
#define PREALLOC_MIN (256 * KIB)

static int rank, nranks;
static char mount_esc[8192], fstype[64];

/* The test directory's mount point, escaped as records write it. */
static void find_mount(void) {
    char mount[4096];
    PT_EQ(io_mount_of(ptest_path("x"), mount, sizeof mount, fstype, sizeof fstype), 0);
    char *o = mount_esc;
    for (const char *m = mount; *m; m++) {
        if (*m == ' ' || *m == '\t' || *m == '\n' || *m == '\\')
            o += sprintf(o, "\\%03o", (unsigned char)*m);
        else
            *o++ = *m;
    }
    *o = '\0';
}

/* Rank 0 writes the costs file `name` holding text; every rank then reads
 * records from it (PARIO_COSTS). */
static void use_costs(const char *name, const char *text) {
    char path[4400];
    snprintf(path, sizeof path, "%s", ptest_path(name));
    if (text)
        ptest_put_text(path, text);
    else
        MPI_Barrier(MPI_COMM_WORLD);
    setenv("PARIO_COSTS", path, 1);
}

/* A record for the test directory's file system. */
static const char *record(const char *write, const char *read, const char *reserve) {
    static char line[9000];
    snprintf(line, sizeof line,
             "mount=%s type=%s write_call_bytes=%s read_call_bytes=%s reserve=%s lock_us=1.0\n",
             mount_esc, fstype, write, read, reserve);
    return line;
}

/* Opened read-write (created if need be) over comm with the hints kv. */
static pario_file *open_on(MPI_Comm comm, const char *path, const char *const *kv) {
    return iot_open_on(comm, path, MPI_MODE_RDWR | MPI_MODE_CREATE, kv);
}

/* The number get_info reports for key, -1 when absent. */
static long long figure(pario_file *fh, const char *key) {
    MPI_Info info;
    char v[64] = "";
    int flag = 0;
    if (pario_file_get_info(fh, &info) != PARIO_OK)
        return -1;
    MPI_Info_get(info, key, sizeof v - 1, v, &flag);
    MPI_Info_free(&info);
    return flag ? atoll(v) : -1;
}

static const char *const no_hints[] = {NULL};

/* Open a shared file, check the call costs and reservation in effect. */
static void expect_costs(const char *const *kv, long long write, long long read,
                         long long prealloc_min) {
    pario_file *fh = open_on(MPI_COMM_WORLD, ptest_path("costs.dat"), kv);
    if (!fh)
        return;
    PT_EQ(figure(fh, "pario_write_call_bytes"), write);
    PT_EQ(figure(fh, "pario_read_call_bytes"), read);
    PT_EQ(atomic_load(&fh->io.prealloc_min), prealloc_min);
    PT_EQ(pario_file_close(&fh, NULL), PARIO_OK);
}

/* What automatic reservation does without a record: ext4 only. */
static long long builtin_prealloc(void) {
    struct statfs fs;
    return statfs(ptest_dir, &fs) == 0 && fs.f_type == EXT4_SUPER_MAGIC ? PREALLOC_MIN : -1;
}

static void test_mount_of(void) {
    char mount[4096], type[64], real[4096];
    PT_CHECK(realpath(ptest_dir, real) != NULL);
    PT_EQ(io_mount_of(ptest_dir, mount, sizeof mount, type, sizeof type), 0);
    size_t n = strlen(mount);
    PT_CHECK(!strcmp(mount, "/") ||
             (!strncmp(real, mount, n) && (real[n] == '/' || real[n] == '\0')));
    /* a file not created yet is found through its directory */
    char later[4096];
    PT_EQ(io_mount_of(ptest_path("not-yet-created"), later, sizeof later, type, sizeof type), 0);
    PT_CHECK(!strcmp(later, mount));
    struct statfs fs;
    if (statfs("/dev/shm", &fs) == 0 && fs.f_type == TMPFS_MAGIC) {
        PT_EQ(io_mount_of("/dev/shm/pario-no-such-file", mount, sizeof mount, type, sizeof type),
              0);
        PT_CHECK(!strcmp(mount, "/dev/shm") && !strcmp(type, "tmpfs"));
    }
    PT_EQ(io_mount_of("/pario-no-such-dir/x/y", mount, sizeof mount, type, sizeof type), -1);
    PT_EQ(io_mount_of(ptest_dir, mount, 1, type, sizeof type), -1); /* does not fit */
}

static int parses(const char *line, io_costs *c) {
    char mount[256], type[64];
    return io_costs_parse_record(line, mount, sizeof mount, type, sizeof type, c);
}

static void test_parse(void) {
    io_costs c;
    char mount[256], type[64];
    PT_EQ(io_costs_parse_record("mount=/a\\040b\\134c type=nfs4 write_call_bytes=40000 "
                                "read_call_bytes=70000 reserve=no when=2026-01-01T00:00:00Z\n",
                                mount, sizeof mount, type, sizeof type, &c),
          1);
    PT_CHECK(!strcmp(mount, "/a b\\c") && !strcmp(type, "nfs4"));
    PT_EQ(c.write_call_bytes, 40000);
    PT_EQ(c.read_call_bytes, 70000);
    PT_EQ(c.reserve, IO_RESERVE_DOES_NOT_PAY);
    PT_EQ(c.recorded, 1);
    const char *bad[] = {
        "",
        "# mount=/ type=ext4 write_call_bytes=1 read_call_bytes=1 reserve=yes",
        "mount=/ type=ext4 write_call_bytes=1 read_call_bytes=1",
        "mount=/ type=ext4 write_call_bytes=1x read_call_bytes=1 reserve=yes",
        "mount=/ type=ext4 write_call_bytes=0 read_call_bytes=1 reserve=yes",
        "mount=/ type=ext4 write_call_bytes=-5 read_call_bytes=1 reserve=yes",
        "mount=/ type=ext4 write_call_bytes=+5 read_call_bytes=1 reserve=yes",
        "mount=/ type=ext4 write_call_bytes=1099511627777 read_call_bytes=1 reserve=yes",
        "mount=/ type=ext4 write_call_bytes=99999999999999999999999 read_call_bytes=1 reserve=yes",
        "mount=/ type=ext4 write_call_bytes=1 read_call_bytes=1 reserve=maybe",
        "mount=/ type=ext4 write_call_bytes=1 write_call_bytes=2 read_call_bytes=1 reserve=no",
        "mount= type=ext4 write_call_bytes=1 read_call_bytes=1 reserve=yes",
        "mount=relative type=ext4 write_call_bytes=1 read_call_bytes=1 reserve=yes",
        "mount=/a\\04 type=ext4 write_call_bytes=1 read_call_bytes=1 reserve=yes",
        "mount=/ type= write_call_bytes=1 read_call_bytes=1 reserve=yes",
        "mount=/ type=ext4 =1 write_call_bytes=1 read_call_bytes=1 reserve=yes",
        "mount=/ type=ext4 junk write_call_bytes=1 read_call_bytes=1 reserve=yes",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        io_costs_default(&c);
        int ok = parses(bad[i], &c);
        if (ok)
            fprintf(stderr, "accepted: %s\n", bad[i]);
        PT_EQ(ok, 0);
        PT_EQ(c.write_call_bytes, IO_WRITE_CALL_BYTES); /* left alone */
    }
}

/* Where records are looked for. */
static void test_costs_file(void) {
    char saved_home[4096] = "", path[4096];
    const char *home = getenv("HOME");
    snprintf(saved_home, sizeof saved_home, "%s", home ? home : "");
    setenv("PARIO_COSTS", "", 1);
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    PT_CHECK(io_costs_file(path, sizeof path) && !strcmp(path, "/xdg/pario/costs"));
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/home/u", 1);
    PT_CHECK(io_costs_file(path, sizeof path) && !strcmp(path, "/home/u/.cache/pario/costs"));
    setenv("PARIO_COSTS", "/elsewhere/costs", 1);
    PT_CHECK(io_costs_file(path, sizeof path) && !strcmp(path, "/elsewhere/costs"));
    unsetenv("PARIO_COSTS");
    unsetenv("HOME");
    PT_EQ(io_costs_file(path, sizeof path), 0);
    if (home)
        setenv("HOME", saved_home, 1);
}

/* No record, or nothing valid for this file system: the ext4 defaults, no
 * error. */
static void test_defaults(void) {
    use_costs("costs.none", NULL);
    expect_costs(no_hints, 32768, 8192, builtin_prealloc());
    char text[40000];
    int n = snprintf(text, sizeof text, "%s", "garbage without fields\n\x01\x02\xff\n");
    n += snprintf(text + n, sizeof text - n,
                  "mount=%s type=%s write_call_bytes=11x "
                  "read_call_bytes=12 reserve=yes\n",
                  mount_esc, fstype);
    n += snprintf(text + n, sizeof text - n,
                  "mount=%s type=%s write_call_bytes=13 "
                  "reserve=yes\n",
                  mount_esc, fstype);
    n += snprintf(text + n, sizeof text - n,
                  "mount=%s type=%s write_call_bytes=14 "
                  "read_call_bytes=15 reserve=perhaps\n",
                  mount_esc, fstype);
    n += snprintf(text + n, sizeof text - n,
                  "mount=%s type=not-%s write_call_bytes=16 "
                  "read_call_bytes=17 reserve=yes\n",
                  mount_esc, fstype);
    n += snprintf(text + n, sizeof text - n,
                  "mount=%s/elsewhere type=%s write_call_bytes=18 "
                  "read_call_bytes=19 reserve=yes\n",
                  mount_esc, fstype);
    for (int i = 0; i < 20000 && n < (int)sizeof text - 2; i++) /* one very long line */
        text[n++] = 'x';
    text[n] = '\0';
    use_costs("costs.malformed", text);
    expect_costs(no_hints, 32768, 8192, builtin_prealloc());
    use_costs("costs.empty", "");
    expect_costs(no_hints, 32768, 8192, builtin_prealloc());
}

/* A record's figures are the ones in effect; the last valid line wins. */
static void test_record(void) {
    char text[20000];
    snprintf(text, sizeof text,
             "# costs\nmount=/pario-elsewhere type=nfs write_call_bytes=5 "
             "read_call_bytes=6 reserve=no\n%s",
             record("1000", "2000", "no"));
    snprintf(text + strlen(text), sizeof text - strlen(text), "%s",
             record("1073741824", "3", "yes"));
    use_costs("costs.record", text);
    expect_costs(no_hints, 1073741824, 3, PREALLOC_MIN);
    use_costs("costs.noreserve", record("40000", "50000", "no"));
    expect_costs(no_hints, 40000, 50000, -1);
}

/* Hints, $PARIO_HINT_* and set_info override the record, per rank. */
static void test_hints_override(void) {
    use_costs("costs.override", record("1073741824", "3", "no"));
    expect_costs((const char *const[]){"pario_write_call_bytes", "777", NULL}, 777, 3, -1);
    expect_costs(
        (const char *const[]){"pario_write_call_bytes", "0", "pario_read_call_bytes", "12k", NULL},
        1073741824, 3, -1); /* malformed hints are ignored */
    expect_costs((const char *const[]){"pario_prealloc_writes", "enable", NULL}, 1073741824, 3, 0);
    setenv("PARIO_HINT_pario_read_call_bytes", "555", 1);
    expect_costs((const char *const[]){"pario_read_call_bytes", "9", NULL}, 1073741824, 555, -1);
    unsetenv("PARIO_HINT_pario_read_call_bytes");
    use_costs("costs.override2", record("1073741824", "3", "yes"));
    expect_costs((const char *const[]){"pario_prealloc_writes", "disable", NULL}, 1073741824, 3,
                 -1);

    char mine[32];
    snprintf(mine, sizeof mine, "%d", 1000 + rank);
    pario_file *fh = open_on(MPI_COMM_WORLD, ptest_path("costs.dat"),
                             (const char *const[]){"pario_write_call_bytes", mine, NULL});
    if (!fh)
        return;
    PT_EQ(figure(fh, "pario_write_call_bytes"), 1000 + rank); /* each rank's own */
    PT_EQ(figure(fh, "pario_read_call_bytes"), 3);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "pario_write_call_bytes", "automatic");
    MPI_Info_set(info, "pario_read_call_bytes", "4096");
    PT_EQ(pario_file_set_info(fh, info), PARIO_OK);
    MPI_Info_free(&info);
    PT_EQ(figure(fh, "pario_write_call_bytes"), 1073741824);
    PT_EQ(figure(fh, "pario_read_call_bytes"), 4096);
    PT_EQ(pario_file_close(&fh, NULL), PARIO_OK);
}

/* Whether /proc/locks shows a request blocked on a lock of the file st. */
static int lock_waiter(const struct stat *st) {
    char id[64], line[512];
    snprintf(id, sizeof id, " %02x:%02x:%llu ", major(st->st_dev), minor(st->st_dev),
             (unsigned long long)st->st_ino);
    FILE *f = fopen("/proc/locks", "r");
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = strstr(line, "->") && strstr(line, id);
    if (f)
        fclose(f);
    return found;
}

static int take_lock(int fd, short type, off_t start, off_t len) {
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
    return fcntl(fd, F_OFD_SETLK, &fl);
}

static unsigned char fill_byte(int64_t i) {
    return (unsigned char)(i * 7 + 3);
}

/* Two blocks of len bytes, gap bytes apart, written at offset 0 through a
 * view: returns 1 when the write sieved, 0 when it went block by block, -1
 * when it failed. The file's bytes and a read back through the view must be
 * what was written either way. */
static int sparse_write(const char *path, int64_t len, int64_t gap, unsigned char value) {
    static unsigned char image[DECIDE_FILE], want[DECIDE_FILE], data[2 * 64 * KIB];
    for (int64_t i = 0; i < DECIDE_FILE; i++)
        image[i] = want[i] = fill_byte(i);
    memset(data, value, (size_t)(2 * len));
    memset(want, value, (size_t)len);
    memset(want + len + gap, value, (size_t)len);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    PT_CHECK(fd >= 0 && pwrite(fd, image, DECIDE_FILE, 0) == DECIDE_FILE);
    struct stat st;
    PT_EQ(fstat(fd, &st), 0);
    pario_file *fh = open_on(MPI_COMM_SELF, path, no_hints);
    if (!fh) {
        close(fd);
        return -1;
    }
    MPI_Datatype ft;
    MPI_Type_vector(2, (int)len, (int)(len + gap), MPI_BYTE, &ft);
    MPI_Type_commit(&ft);
    PT_EQ(pario_file_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL), PARIO_OK);
    PT_EQ(take_lock(fd, F_WRLCK, (off_t)len, (off_t)gap), 0);
    pario_request *req = NULL;
    PT_EQ(pario_file_iwrite_at(fh, 0, data, 2 * len, MPI_BYTE, &req), PARIO_OK);
    int sieved = -1, done = 0;
    while (sieved < 0) { /* one of the two happens; no deadline needed */
        PT_EQ(pario_request_test(req, &done), PARIO_OK);
        if (done)
            sieved = 0;
        else if (lock_waiter(&st))
            sieved = 1;
        else
            usleep(200);
    }
    PT_EQ(take_lock(fd, F_UNLCK, 0, 0), 0);
    MPI_Count moved = 0;
    PT_EQ(pario_request_wait(req, &moved, NULL), PARIO_OK);
    PT_EQ(moved, 2 * len);
    PT_EQ(pread(fd, image, DECIDE_FILE, 0), DECIDE_FILE);
    PT_CHECK(memcmp(image, want, DECIDE_FILE) == 0);
    memset(data, 0, sizeof data);
    PT_EQ(pario_file_read_at(fh, 0, data, 2 * len, MPI_BYTE, &moved), PARIO_OK);
    PT_CHECK(moved == 2 * len && memcmp(data, want, (size_t)len) == 0 &&
             memcmp(data + len, want + len + gap, (size_t)len) == 0);
    PT_EQ(pario_file_close(&fh, NULL), PARIO_OK);
    MPI_Type_free(&ft);
    close(fd);
    return sieved;
}

/* Two blocks far apart (64 KiB, 256 KiB gap) are written block by block and
 * two close together (4 KiB, 4 KiB gap) sieved by default; a record with
 * huge call costs sieves both, one with calls almost free sieves neither, and
 * a hint overrides the record. Each rank writes its own file. */
static void test_decision(void) {
    char name[32], path[4400];
    snprintf(name, sizeof name, "decide.%d", rank);
    snprintf(path, sizeof path, "%s", ptest_path(name));
    use_costs("costs.none", NULL);
    PT_EQ(sparse_write(path, 64 * KIB, 256 * KIB, 0xa1), 0);
    PT_EQ(sparse_write(path, 4 * KIB, 4 * KIB, 0xa2), 1);
    use_costs("costs.huge", record("1073741824", "1073741824", "no"));
    PT_EQ(sparse_write(path, 64 * KIB, 256 * KIB, 0xb1), 1);
    PT_EQ(sparse_write(path, 4 * KIB, 4 * KIB, 0xb2), 1);
    use_costs("costs.tiny", record("1", "1", "no"));
    PT_EQ(sparse_write(path, 64 * KIB, 256 * KIB, 0xc1), 0);
    PT_EQ(sparse_write(path, 4 * KIB, 4 * KIB, 0xc2), 0);
    setenv("PARIO_HINT_pario_write_call_bytes", "32768", 1);
    PT_EQ(sparse_write(path, 4 * KIB, 4 * KIB, 0xd2), 1);
    unsetenv("PARIO_HINT_pario_write_call_bytes");
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    MPI_Init(&argc, &argv);
    ptest_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    find_mount();
    test_mount_of();
    test_parse();
    test_costs_file();
    test_defaults();
    test_record();
    test_hints_override();
    test_decision();
    return ptest_finish();
}
