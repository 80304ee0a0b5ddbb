/* cost_report PATH: open PATH (created if need be) on MPI_COMM_SELF and print
 * the costs pario put in effect for it, as key=value lines, for
 * test_calibrate.py: the call costs get_info reports, the smallest write
 * whose blocks are reserved first (-1: none) and whether a calibration record
 * was found. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include "io/file/file.h"
#include "pario/io.h"

static void print_hint(pario_file *fh, const char *key) {
    MPI_Info info;
    char v[64] = "?";
    int flag = 0;
    if (pario_file_get_info(fh, &info) == PARIO_OK) {
        MPI_Info_get(info, key, sizeof v - 1, v, &flag);
        MPI_Info_free(&info);
    }
    printf("%s=%s\n", key, v);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc != 2) {
        fprintf(stderr, "usage: cost_report PATH\n");
        MPI_Finalize();
        return 2;
    }
    pario_file *fh = NULL;
    pario_error err;
    int rc = pario_file_open(MPI_COMM_SELF, argv[1], MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL,
                             &fh, &err);
    if (rc != PARIO_OK) {
        fprintf(stderr, "cost_report: %s\n", err.msg);
        MPI_Finalize();
        return 1;
    }
    print_hint(fh, "pario_write_call_bytes");
    print_hint(fh, "pario_read_call_bytes");
    printf("prealloc_min=%lld\n", (long long)atomic_load(&fh->io.prealloc_min));
    printf("recorded=%d\n", fh->costs.recorded);
    rc = pario_file_close(&fh, &err);
    MPI_Finalize();
    return rc == PARIO_OK ? 0 : 1;
}
