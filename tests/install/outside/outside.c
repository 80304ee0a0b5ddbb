/* A program outside pario's tree, built against an installed pario only:
 * every rank writes its 16 bytes of one file collectively through the
 * native API (pario/io.h), then reads the file back and checks every byte.
 * Argument: the file. Prints "outside: ok" on rank 0; exits 1 on failure. */
#include <mpi.h>
#include <pario/io.h>
#include <stdio.h>
#include <string.h>

#define PART 16

static int fail(const char *what, const pario_error *err) {
    fprintf(stderr, "outside: %s: %s\n", what, err && err->msg[0] ? err->msg : "failed");
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, n = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc < 2)
        return fail("usage: outside FILE", NULL);
    unsigned char mine[PART], all[PART * 64];
    for (int i = 0; i < PART; i++)
        mine[i] = (unsigned char)(rank * PART + i);
    pario_error err;
    pario_file *fh = NULL;
    if (pario_file_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                        &fh, &err) != PARIO_OK)
        return fail("open", &err);
    MPI_Count moved = 0;
    if (pario_file_write_at_all(fh, (MPI_Offset)rank * PART, mine, PART, MPI_BYTE, &moved) !=
            PARIO_OK ||
        moved != PART)
        return fail("write_at_all", pario_file_last_error(fh));
    if (pario_file_sync(fh) != PARIO_OK)
        return fail("sync", pario_file_last_error(fh));
    int total = n < 64 ? n : 64;
    if (pario_file_read_at_all(fh, 0, all, (MPI_Count)total * PART, MPI_BYTE, &moved) != PARIO_OK ||
        moved != (MPI_Count)total * PART)
        return fail("read_at_all", pario_file_last_error(fh));
    for (int i = 0; i < total * PART; i++)
        if (all[i] != (unsigned char)i)
            return fail("the bytes read back differ", NULL);
    if (pario_file_close(&fh, &err) != PARIO_OK)
        return fail("close", &err);
    if (rank == 0)
        printf("outside: ok\n");
    MPI_Finalize();
    return 0;
}
