/* Copies a file opened through pario (whatever its driver) to a plain file:
 * rank 0 reads it with independent reads. test_stripe_tool.py reads the
 * files `pario stripe split` makes with it. */
#include <stdio.h>
#include <stdlib.h>
#include "pario/io.h"

/* Bytes per read call. */
#define CAT_CHUNK (1 << 20)

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc != 3) {
        fprintf(stderr, "usage: stripe_cat FILE OUT\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    pario_file *fh = NULL;
    pario_error err;
    int rc = pario_file_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL, &fh, &err);
    if (rc != PARIO_OK) {
        fprintf(stderr, "stripe_cat: %s\n", err.msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    FILE *out = rank == 0 ? fopen(argv[2], "wb") : NULL;
    char *buf = malloc(CAT_CHUNK);
    MPI_Offset at = 0;
    MPI_Count got = 0;
    while (rank == 0 && out && buf &&
           pario_file_read_at(fh, at, buf, CAT_CHUNK, MPI_BYTE, &got) == PARIO_OK && got > 0) {
        fwrite(buf, 1, (size_t)got, out);
        at += got;
    }
    if (out)
        fclose(out);
    free(buf);
    pario_file_close(&fh, NULL);
    MPI_Finalize();
    return rank == 0 && !out ? 1 : 0;
}
