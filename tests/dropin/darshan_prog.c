/* The program tools/darshan-check.sh runs under Darshan: each rank writes
 * 1 MiB collectively, four 4 KiB records independently, and reads its
 * 1 MiB back collectively; every byte is checked. Usage: darshan_prog FILE */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MIB = 1 << 20, RECORD = 4096, RECORDS = 4 };

static unsigned char byte_of(int rank, int64_t i) {
    return (unsigned char)(i * 31 + rank * 7 + 1);
}

static int failed(int rc, const char *what) {
    if (rc == MPI_SUCCESS)
        return 0;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "darshan_prog: %s: %s\n", what, msg);
    return 1;
}

/* The calls Darshan should count; whether every byte read back matched. */
static int write_read(MPI_File fh, int rank) {
    unsigned char *out = malloc(MIB), *in = calloc(1, MIB), record[RECORD];
    for (int64_t i = 0; i < MIB; i++)
        out[i] = byte_of(rank, i);
    int bad = failed(
        MPI_File_write_at_all(fh, (MPI_Offset)rank * MIB, out, MIB, MPI_BYTE, MPI_STATUS_IGNORE),
        "write_at_all");
    for (int k = 0; k < RECORDS; k++) {
        memset(record, 'A' + rank * RECORDS + k, RECORD);
        MPI_Offset at = 2 * (MPI_Offset)MIB + ((MPI_Offset)rank * RECORDS + k) * RECORD;
        bad |= failed(MPI_File_write_at(fh, at, record, RECORD, MPI_BYTE, MPI_STATUS_IGNORE),
                      "write_at");
    }
    bad |= failed(
        MPI_File_read_at_all(fh, (MPI_Offset)rank * MIB, in, MIB, MPI_BYTE, MPI_STATUS_IGNORE),
        "read_at_all");
    bad |= memcmp(in, out, MIB) != 0;
    free(out);
    free(in);
    return bad;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, bad = 1, any = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_File fh;
    if (argc == 2 && !failed(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR,
                                           MPI_INFO_NULL, &fh),
                             "open")) {
        bad = write_read(fh, rank);
        bad |= failed(MPI_File_close(&fh), "close");
    }
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0)
        printf("darshan_prog: %s\n", any ? "FAILED" : "every byte read back");
    MPI_Finalize();
    return any;
}
