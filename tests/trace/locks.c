/* Byte-range locks of a sieved write, for the trace (see locks_check.py):
 * each rank writes 64 KiB in 8-byte blocks interleaved with the other ranks'
 * (a vector view) with one MPI_File_write, with sieving windows of 4 KiB of
 * file (ind_wr_buffer_size), so the call sieves many windows. How it locks:
 *
 *   atomic  in atomic mode: one lock over the call's span
 *   span    pario_lock_span=enable (as off local disks): one lock over the span
 *   window  pario_lock_span=disable, which is refused (get_info reports
 *           automatic): on a local disk, one lock per window
 *   cached  pario_client_cache=enable (a client that caches between opens,
 *           as NFS): one lock per window, each flushed before its unlock
 *
 * Then rank 0 reads the file back and checks every byte.
 *
 *   locks DIR atomic|span|window|cached
 *
 * Exit 0 when every byte is right, 1 otherwise. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptest.h"

#define BLOCK 8
#define BLOCKS 8192 /* per rank: 64 KiB */

static unsigned char byte_at(long long off) {
    return (unsigned char)(off * 13 + (off >> 8) + 1);
}

static void check(int rc, const char *what) {
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "locks: %s failed\n", what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Whether the file reports hint key with another value than want (and says so). */
static int hint_differs(MPI_File fh, const char *key, const char *want) {
    char val[MPI_MAX_INFO_VAL + 1];
    int differs = strcmp(ptest_hint_of(fh, key, val), want) != 0;
    if (differs)
        fprintf(stderr, "locks: get_info reports %s=\"%s\", want %s\n", key, val, want);
    return differs;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *mode = argc == 3 ? argv[2] : "";
    const char *span_hint = !strcmp(mode, "span") ? "enable" : "disable";
    const char *span_reported = !strcmp(mode, "span") ? "enable" : "automatic";
    int cached = !strcmp(mode, "cached");
    if (strcmp(mode, "atomic") && strcmp(mode, "span") && strcmp(mode, "window") && !cached) {
        if (rank == 0)
            fprintf(stderr, "usage: locks DIR atomic|span|window|cached\n");
        MPI_Finalize();
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/locks.dat", argv[1]);
    unsigned char *buf = malloc((size_t)BLOCK * BLOCKS);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (long long b = 0; b < BLOCKS; b++)
        for (int k = 0; k < BLOCK; k++)
            buf[b * BLOCK + k] = byte_at((b * nranks + rank) * BLOCK + k);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "ind_wr_buffer_size", "4096");
    MPI_Info_set(info, "romio_ds_write", "enable");
    MPI_Info_set(info, "pario_lock_span", span_hint);
    if (cached)
        MPI_Info_set(info, "pario_client_cache", "enable");
    MPI_File fh;
    check(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh), "open");
    MPI_Info_free(&info);
    int bad = hint_differs(fh, "pario_lock_span", span_reported);
    bad += hint_differs(fh, "pario_client_cache", cached ? "enable" : "disable");
    MPI_Datatype tiled;
    check(MPI_Type_vector(BLOCKS, BLOCK, BLOCK * nranks, MPI_BYTE, &tiled), "MPI_Type_vector");
    check(MPI_Type_commit(&tiled), "MPI_Type_commit");
    check(MPI_File_set_view(fh, (MPI_Offset)rank * BLOCK, MPI_BYTE, tiled, "native", MPI_INFO_NULL),
          "set_view");
    check(MPI_File_set_atomicity(fh, !strcmp(mode, "atomic")), "set_atomicity");
    check(MPI_File_write(fh, buf, BLOCK * BLOCKS, MPI_BYTE, MPI_STATUS_IGNORE), "write");
    check(MPI_File_set_atomicity(fh, 0), "set_atomicity");
    check(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), "set_view");
    if (rank == 0) {
        long long total = (long long)BLOCK * BLOCKS * nranks;
        unsigned char *all = malloc((size_t)total);
        if (!all)
            MPI_Abort(MPI_COMM_WORLD, 1);
        check(MPI_File_read_at(fh, 0, all, (int)total, MPI_BYTE, MPI_STATUS_IGNORE), "read");
        for (long long off = 0; off < total; off++)
            bad += all[off] != byte_at(off);
        if (bad)
            fprintf(stderr, "locks: %d bytes differ\n", bad);
        free(all);
    }
    check(MPI_File_close(&fh), "close");
    MPI_Type_free(&tiled);
    free(buf);
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return bad != 0;
}
