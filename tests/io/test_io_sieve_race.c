/* A sieving write never loses another rank's plain write into its gaps.
 *
 * Rank 0 writes the even bytes of a region through a view with holes, with
 * data sieving forced and small windows, so each window is read, patched and
 * written back. At the same time rank 1, whose own view has no holes, writes
 * the odd bytes one call each. A read-modify-write that did not exclude
 * rank 1's writes would put back stale odd bytes; since one rank's view has
 * holes, every rank's plain writes take part in the byte-range locking, and
 * afterwards every even byte is rank 0's and every odd byte rank 1's. Then
 * every rank sieves interleaved blocks at once with overlapping windows, and
 * every block keeps its writer's bytes, with small blocks (windows read
 * whole) and large ones (only the gaps read); a window of large blocks over
 * old bytes and past the end of file keeps the old bytes and zeros. Last, a
 * small collective write, which rank 0 writes for everyone, takes the same
 * lock: while a lock of the test's own on that range is held, the call does
 * not return. */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include "io_test.h"

/* Bytes of the region; rank 0 writes half of them, rank 1 the other half. */
#define REGION 16384
#define ROUNDS 3
#define EVEN_BYTE 0xAA
#define ODD_BYTE 0x55

static int rank, nranks;

static pario_file *open_sieving(const char *path) {
    const char *kv[] = {"romio_ds_write", "enable", "ind_wr_buffer_size", "1024", NULL};
    return iot_open(path, MPI_MODE_RDWR | MPI_MODE_CREATE, kv);
}

/* Rank 0: the even bytes (holes between them); everyone else: plain bytes. */
static void set_views(pario_file *fh) {
    MPI_Datatype even;
    MPI_Type_vector(REGION / 2, 1, 2, MPI_BYTE, &even);
    MPI_Type_commit(&even);
    PT_EQ(
        pario_file_set_view(fh, 0, MPI_BYTE, rank == 0 ? even : MPI_BYTE, "native", MPI_INFO_NULL),
        PARIO_OK);
    MPI_Type_free(&even);
}

static void race_round(pario_file *fh) {
    static unsigned char zeros[REGION], evens[REGION / 2];
    PT_EQ(pario_file_set_size(fh, 0), PARIO_OK);
    set_views(fh);
    PT_EQ(pario_file_write_at_all(fh, 0, zeros, rank == 0 ? REGION / 2 : 0, MPI_BYTE, NULL),
          PARIO_OK);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        memset(evens, EVEN_BYTE, sizeof evens);
        PT_EQ(pario_file_write_at(fh, 0, evens, sizeof evens, MPI_BYTE, NULL), PARIO_OK);
    } else if (rank == 1) {
        unsigned char odd = ODD_BYTE;
        int failed = 0;
        for (int i = 1; i < REGION; i += 2)
            failed += pario_file_write_at(fh, i, &odd, 1, MPI_BYTE, NULL) != PARIO_OK;
        PT_EQ(failed, 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void check_image(pario_file *fh) {
    PT_EQ(pario_file_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), PARIO_OK);
    static unsigned char img[REGION];
    PT_EQ(pario_file_read_at(fh, 0, img, sizeof img, MPI_BYTE, NULL), PARIO_OK);
    int lost = 0;
    for (int i = 0; i < REGION; i++)
        lost += img[i] != (i % 2 ? ODD_BYTE : EVEN_BYTE);
    PT_EQ(lost, 0);
}

/* Every rank sieves at once through interleaved blocks of blk bytes with
 * 256 KiB windows that overlap the other ranks': every block must hold its
 * writer's bytes afterwards. Small blocks make each window read whole;
 * large ones (a few per window) make it read only its gaps. */
static void check_everyone_sieving(const char *name, int64_t blk, int64_t nblk) {
    const char *kv[] = {"romio_ds_write", "enable", "ind_wr_buffer_size", "262144", NULL};
    pario_file *fh = iot_open(ptest_path(name), MPI_MODE_RDWR | MPI_MODE_CREATE, kv);
    pario_error err;
    int64_t n = blk * nblk * nranks, wrong = 0;
    unsigned char *mine = malloc((size_t)(blk * nblk)), *img = malloc((size_t)n);
    PT_CHECK(mine && img); /* the sizes are the same on every rank */
    if (!fh || !mine || !img) {
        if (fh)
            pario_file_close(&fh, &err);
        free(mine);
        free(img);
        return;
    }
    PT_EQ(pario_file_set_size(fh, 0), PARIO_OK);
    MPI_Datatype ft = ptest_interleaved((int)blk, MPI_BYTE);
    PT_EQ(pario_file_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL), PARIO_OK);
    for (int round = 0; round < ROUNDS; round++) {
        memset(mine, 1 + rank + 8 * round, (size_t)(blk * nblk));
        PT_EQ(pario_file_write_at(fh, 0, mine, (int)(blk * nblk), MPI_BYTE, NULL), PARIO_OK);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    PT_EQ(pario_file_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), PARIO_OK);
    PT_EQ(pario_file_read_at(fh, 0, img, (int)n, MPI_BYTE, NULL), PARIO_OK);
    for (int64_t i = 0; i < n; i++)
        wrong += img[i] != 1 + (i / blk) % nranks + 8 * (ROUNDS - 1);
    PT_EQ(wrong, 0);
    MPI_Type_free(&ft);
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    free(mine);
    free(img);
}

/* Rank 0 sieves large blocks (so each window reads only its gaps) over a
 * file that already holds bytes in part of the range: the gaps keep them,
 * and gaps past the old end of file read as zeros. The file must equal what
 * plain writes of the blocks would leave. */
static void check_gaps_kept(void) {
    enum { BLK = 40000, GAP = 24000, NBLK = 12, OLD = 5 * (BLK + GAP) + 1000 };
    const int64_t len = (int64_t)NBLK * (BLK + GAP) - GAP;
    const char *path = ptest_path("sieve-gaps");
    unsigned char *want = calloc(1, (size_t)len), *blocks = malloc((size_t)NBLK * BLK);
    unsigned char *img = malloc((size_t)len + 1);
    PT_CHECK(want && blocks && img);
    pario_file *fh = open_sieving(path);
    if (fh)
        PT_EQ(pario_file_set_size(fh, 0), PARIO_OK);
    if (fh && want && blocks && img && rank == 0) {
        for (int64_t i = 0; i < OLD; i++)
            want[i] = (unsigned char)(i % 251 + 1);
        PT_EQ(pario_file_write_at(fh, 0, want, OLD, MPI_BYTE, NULL), PARIO_OK);
        for (int64_t i = 0; i < (int64_t)NBLK * BLK; i++)
            blocks[i] = (unsigned char)(i % 13 + 100);
        for (int64_t b = 0; b < NBLK; b++)
            memcpy(want + b * (BLK + GAP), blocks + b * BLK, BLK);
    }
    MPI_Datatype ft;
    MPI_Type_vector(NBLK, BLK, BLK + GAP, MPI_BYTE, &ft);
    MPI_Type_commit(&ft);
    if (fh) {
        PT_EQ(pario_file_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL), PARIO_OK);
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "ind_wr_buffer_size", "262144"); /* four blocks per window */
        PT_EQ(pario_file_set_info(fh, info), PARIO_OK);
        MPI_Info_free(&info);
        if (rank == 0)
            PT_EQ(pario_file_write_at(fh, 0, blocks, NBLK * BLK, MPI_BYTE, NULL), PARIO_OK);
        pario_error err;
        PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    }
    if (want && img) {
        PT_EQ(ptest_file_image(path, img, len + 1), len);
        if (rank == 0)
            PT_EQ(memcmp(img, want, (size_t)len), 0);
    }
    MPI_Type_free(&ft);
    free(want);
    free(blocks);
    free(img);
}

/* The lock the funnel's write must wait for: an OFD lock through a
 * descriptor of the test's own, dropped by a thread after a pause. */
typedef struct held_lock {
    int fd;
    atomic_int dropped;
} held_lock;

static int ofd_lock(int fd, short type, off_t len) {
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = len};
    return fcntl(fd, F_OFD_SETLK, &fl);
}

static void *drop_later(void *arg) {
    held_lock *h = arg;
    usleep(300 * 1000); /* far longer than the write takes when it does not wait */
    atomic_store(&h->dropped, 1);
    ofd_lock(h->fd, F_UNLCK, 0);
    return NULL;
}

static void check_funnel_locks(void) {
    enum { BLK = 100, NBLK = 16 };
    const char *path = ptest_path("sieve-funnel");
    pario_file *fh = open_sieving(path);
    if (!fh)
        return;
    PT_EQ(pario_file_set_size(fh, 0), PARIO_OK);
    MPI_Datatype ft = ptest_interleaved(BLK, MPI_BYTE); /* holes: plain writes lock */
    PT_EQ(pario_file_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL), PARIO_OK);
    held_lock h = {.fd = -1};
    pthread_t t;
    if (rank == 0) { /* the funnel: it writes every rank's small part */
        h.fd = open(path, O_RDWR);
        PT_CHECK(h.fd >= 0 && ofd_lock(h.fd, F_WRLCK, 0) == 0);
        PT_EQ(pthread_create(&t, NULL, drop_later, &h), 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    static unsigned char mine[BLK * NBLK];
    memset(mine, 1 + rank, sizeof mine);
    PT_EQ(pario_file_write_all(fh, mine, sizeof mine, MPI_BYTE, NULL), PARIO_OK);
    if (rank == 0) {
        PT_CHECK(atomic_load(&h.dropped)); /* returned only after the lock was dropped */
        pthread_join(t, NULL);
        close(h.fd);
    }
    MPI_Type_free(&ft);
    pario_error err;
    PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    ptest_init();
    pario_file *fh = open_sieving(ptest_path("sieve-race"));
    if (fh) {
        for (int r = 0; r < ROUNDS; r++) {
            race_round(fh);
            check_image(fh);
        }
        pario_error err;
        PT_EQ(pario_file_close(&fh, &err), PARIO_OK);
    }
    check_everyone_sieving("sieve-all", 16, 8192);
    check_everyone_sieving("sieve-all-large", 40000, 24);
    check_gaps_kept();
    check_funnel_locks();
    return ptest_finish();
}
