/* Data representations through the native io API (include/pario/io.h):
 * pario_register_datarep, set_view with external32 and user names,
 * pario_datarep_type_extent, and how a large access is cut into conversion
 * chunks (count and position of each call). */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "pario/io.h"
#include "ptest.h"

/* Byte the "xor" representation mixes into every byte of an int. */
#define XOR_MASK 0x5A
/* Ints per rank in the chunking case: 6 MiB, more than one staging chunk. */
#define MANY_INTS (1536 * 1024)
/* Most conversion calls one access may make in these tests. */
#define MAX_CALLS 16

typedef struct calls {
    int n;
    int count[MAX_CALLS];
    MPI_Offset position[MAX_CALLS];
} calls;

static void record_call(calls *c, int count, MPI_Offset position) {
    if (c->n < MAX_CALLS) {
        c->count[c->n] = count;
        c->position[c->n] = position;
    }
    c->n++;
}

/* Contiguous ints only: the file holds each byte xor XOR_MASK. */
static int xor_convert(void *userbuf, MPI_Datatype dt, int count, void *filebuf,
                       MPI_Offset position, void *extra, int to_file) {
    if (dt != MPI_INT)
        return MPI_ERR_TYPE;
    unsigned char *u = (unsigned char *)userbuf + position * (MPI_Offset)sizeof(int);
    unsigned char *f = filebuf;
    for (size_t i = 0; i < (size_t)count * sizeof(int); i++) {
        if (to_file)
            f[i] = u[i] ^ XOR_MASK;
        else
            u[i] = f[i] ^ XOR_MASK;
    }
    record_call(extra, count, position);
    return MPI_SUCCESS;
}

static int xor_write(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position,
                     void *extra) {
    return xor_convert(userbuf, dt, count, filebuf, position, extra, 1);
}

static int xor_read(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position,
                    void *extra) {
    return xor_convert(userbuf, dt, count, filebuf, position, extra, 0);
}

static int native_extent(MPI_Datatype dt, MPI_Aint *extent, void *extra) {
    (void)extra;
    int size = 0;
    MPI_Type_size(dt, &size);
    *extent = size;
    return MPI_SUCCESS;
}

static int rank(void) {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

static void test_registration(calls *c) {
    pario_error err;
    PT_EQ(pario_register_datarep("xor", xor_read, xor_write, native_extent, c, &err), PARIO_OK);
    PT_EQ(pario_register_datarep("xor", xor_read, xor_write, native_extent, c, &err),
          PARIO_ERR_DUP_DATAREP);
    PT_CHECK(strstr(err.msg, "xor") != NULL);
    PT_EQ(pario_register_datarep("native", NULL, NULL, native_extent, NULL, &err),
          PARIO_ERR_DUP_DATAREP);
    PT_EQ(pario_register_datarep(NULL, NULL, NULL, native_extent, NULL, &err), PARIO_ERR_ARG);
    PT_EQ(pario_register_datarep("", NULL, NULL, native_extent, NULL, &err), PARIO_ERR_ARG);
    PT_EQ(pario_register_datarep("noextent", NULL, NULL, NULL, NULL, &err), PARIO_ERR_ARG);
}

static void test_type_extent(void) {
    pario_error err;
    MPI_Aint ext = 0;
    PT_EQ(pario_datarep_type_extent("external32", MPI_LONG, &ext, &err), PARIO_OK);
    PT_EQ(ext, 4);
    PT_EQ(pario_datarep_type_extent("external32", MPI_LONG_DOUBLE, &ext, &err), PARIO_OK);
    PT_EQ(ext, 16);
    PT_EQ(pario_datarep_type_extent("native", MPI_LONG, &ext, &err), PARIO_OK);
    PT_EQ(ext, (long long)sizeof(long));
    PT_EQ(pario_datarep_type_extent("xor", MPI_DOUBLE, &ext, &err), PARIO_OK);
    PT_EQ(ext, 8);
    PT_EQ(pario_datarep_type_extent("no-such", MPI_INT, &ext, &err), PARIO_ERR_UNSUPPORTED_DATAREP);
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_LONG, &pair);
    MPI_Type_commit(&pair);
    PT_EQ(pario_datarep_type_extent("external32", pair, &ext, &err), PARIO_ERR_UNSUPPORTED_DATAREP);
    PT_CHECK(strstr(err.msg, "MPI_LONG") != NULL);
    MPI_Type_free(&pair);
}

/* Rank r's value i. */
static int value_of(int r, int i) {
    return r * 0x01010101 + i * 7 - 3;
}

/* A large collective write under "xor" where rank 0 moves nothing: the
 * others' conversion runs in several chunks whose positions follow on. */
static void test_chunks(calls *c, const char *path) {
    int r = rank();
    int mine = r == 0 ? 0 : MANY_INTS;
    int *v = malloc((size_t)MANY_INTS * sizeof *v);
    for (int i = 0; i < MANY_INTS; i++)
        v[i] = value_of(r, i);
    pario_file *fh = NULL;
    pario_error err;
    if (r == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    PT_EQ(pario_file_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh,
                          &err),
          PARIO_OK);
    PT_EQ(pario_file_set_view(fh, 0, MPI_INT, MPI_INT, "xor", MPI_INFO_NULL), PARIO_OK);
    MPI_Count bytes = -1;
    c->n = 0;
    PT_EQ(pario_file_write_at_all(fh, (MPI_Offset)r * MANY_INTS, v, mine, MPI_INT, &bytes),
          PARIO_OK);
    PT_EQ(bytes, (long long)mine * 4);
    if (r > 0) {
        PT_CHECK(c->n > 1 && c->n <= MAX_CALLS);
        long long next = 0;
        for (int k = 0; k < c->n && k < MAX_CALLS; k++) {
            PT_EQ(c->position[k], next);
            next += c->count[k];
        }
        PT_EQ(next, mine);
    } else {
        PT_EQ(c->n, 0);
    }
    PT_EQ(pario_file_sync(fh), PARIO_OK);
    MPI_Barrier(MPI_COMM_WORLD);
    int fd = open(path, O_RDONLY), bad = 0;
    unsigned char *raw = malloc((size_t)MANY_INTS * 4);
    PT_EQ(pread(fd, raw, (size_t)mine * 4, (off_t)r * MANY_INTS * 4), (long long)mine * 4);
    close(fd);
    for (int i = 0; i < mine; i++) {
        unsigned char want[4];
        memcpy(want, &v[i], 4);
        for (int b = 0; b < 4; b++)
            bad += raw[(size_t)i * 4 + b] != (want[b] ^ XOR_MASK);
    }
    PT_EQ(bad, 0);
    memset(v, 0, (size_t)MANY_INTS * sizeof *v);
    PT_EQ(pario_file_read_at_all(fh, (MPI_Offset)r * MANY_INTS, v, mine, MPI_INT, &bytes),
          PARIO_OK);
    for (int i = 0; i < mine; i++)
        bad += v[i] != value_of(r, i);
    PT_EQ(bad, 0);
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    free(raw);
    free(v);
}

/* external32 refuses MPI_LONG in a view, naming the file and the type, and
 * keeps the previous view. */
static void test_refused(const char *path) {
    pario_file *fh = NULL;
    pario_error err;
    PT_EQ(pario_file_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh,
                          &err),
          PARIO_OK);
    PT_EQ(pario_file_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL),
          PARIO_ERR_UNSUPPORTED_DATAREP);
    const pario_error *last = pario_file_last_error(fh);
    PT_CHECK(strstr(last->msg, path) != NULL);
    PT_CHECK(strstr(last->msg, "MPI_LONG") != NULL);
    MPI_Offset disp = -1;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    PT_EQ(pario_file_get_view(fh, &disp, &et, &ft, rep), PARIO_OK);
    PT_CHECK(strcmp(rep, "native") == 0);
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    calls c = {0};
    test_registration(&c);
    test_type_extent();
    char path[4400];
    snprintf(path, sizeof path, "%s", ptest_path("chunks"));
    test_chunks(&c, path);
    snprintf(path, sizeof path, "%s", ptest_path("refused"));
    test_refused(path);
    return ptest_finish();
}
