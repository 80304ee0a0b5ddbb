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
 * every block keeps its writer's bytes. */
#include <string.h>
#include "pario/io.h"
#include "ptest.h"

/* Bytes of the region; rank 0 writes half of them, rank 1 the other half. */
#define REGION 16384
#define ROUNDS 3
#define EVEN_BYTE 0xAA
#define ODD_BYTE 0x55

static int rank, nranks;

static pario_file *open_sieving(const char *path) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_write", "enable");
    MPI_Info_set(info, "ind_wr_buffer_size", "1024");
    pario_file *fh = NULL;
    pario_error err;
    PT_EQ(pario_file_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, info, &fh, &err),
          PARIO_OK);
    MPI_Info_free(&info);
    return fh;
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

/* Every rank sieves at once through interleaved 16-byte blocks with 256 KiB
 * windows that overlap the other ranks': every block must hold its writer's
 * bytes afterwards. */
static void check_everyone_sieving(void) {
    enum { BLK = 16, NBLK = 8192 };
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_write", "enable");
    MPI_Info_set(info, "ind_wr_buffer_size", "262144");
    pario_file *fh = NULL;
    pario_error err;
    PT_EQ(pario_file_open(MPI_COMM_WORLD, ptest_path("sieve-all"), MPI_MODE_RDWR | MPI_MODE_CREATE,
                          info, &fh, &err),
          PARIO_OK);
    MPI_Info_free(&info);
    if (!fh)
        return;
    PT_EQ(pario_file_set_size(fh, 0), PARIO_OK);
    MPI_Datatype ft = ptest_interleaved(BLK, MPI_BYTE);
    PT_EQ(pario_file_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL), PARIO_OK);
    static unsigned char mine[BLK * NBLK], img[BLK * NBLK * 8];
    for (int round = 0; round < ROUNDS; round++) {
        memset(mine, 1 + rank + 8 * round, sizeof mine);
        PT_EQ(pario_file_write_at(fh, 0, mine, sizeof mine, MPI_BYTE, NULL), PARIO_OK);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    PT_EQ(pario_file_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), PARIO_OK);
    int64_t n = (int64_t)BLK * NBLK * nranks, wrong = 0;
    PT_CHECK(nranks <= 8);
    if (nranks <= 8) {
        PT_EQ(pario_file_read_at(fh, 0, img, n, MPI_BYTE, NULL), PARIO_OK);
        for (int64_t i = 0; i < n; i++)
            wrong += img[i] != 1 + (i / BLK) % nranks + 8 * (ROUNDS - 1);
    }
    PT_EQ(wrong, 0);
    MPI_Type_free(&ft);
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
    check_everyone_sieving();
    return ptest_finish();
}
