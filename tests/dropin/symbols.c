/* The drop-in's symbols, run with libpario-mpiio preloaded: the marker
 * pario_mpiio_active is there and returns 1, and every MPI_File_* function
 * of MPI 3.1 (plus the MPI 4.0 large-count forms when mpi.h declares them)
 * resolves to pario's library, with MPI_File_x and PMPI_File_x the same
 * function. Internal names of pario's libraries are not visible to the
 * program: a preloaded library must not lend it generic names. */
#include "dropin.h"

/* Internal functions of libpario and libpario-mpiio (one per layer); none
 * may be found by the program. */
static const char *const internal_names[] = {
    "view_make",      "flat_get",     "io_agree",       "io_access",         "io_coll_access",
    "io_hints_agree", "gas_dispatch", "mpiio_transfer", "mpiio_handle_find",
};

static const char *const file_functions[] = {
    "File_open",
    "File_close",
    "File_delete",
    "File_set_size",
    "File_preallocate",
    "File_get_size",
    "File_get_group",
    "File_get_amode",
    "File_set_info",
    "File_get_info",
    "File_set_view",
    "File_get_view",
    "File_read_at",
    "File_read_at_all",
    "File_write_at",
    "File_write_at_all",
    "File_iread_at",
    "File_iwrite_at",
    "File_iread_at_all",
    "File_iwrite_at_all",
    "File_read",
    "File_read_all",
    "File_write",
    "File_write_all",
    "File_iread",
    "File_iwrite",
    "File_iread_all",
    "File_iwrite_all",
    "File_seek",
    "File_get_position",
    "File_get_byte_offset",
    "File_read_shared",
    "File_write_shared",
    "File_iread_shared",
    "File_iwrite_shared",
    "File_read_ordered",
    "File_write_ordered",
    "File_seek_shared",
    "File_get_position_shared",
    "File_read_at_all_begin",
    "File_read_at_all_end",
    "File_write_at_all_begin",
    "File_write_at_all_end",
    "File_read_all_begin",
    "File_read_all_end",
    "File_write_all_begin",
    "File_write_all_end",
    "File_read_ordered_begin",
    "File_read_ordered_end",
    "File_write_ordered_begin",
    "File_write_ordered_end",
    "File_get_type_extent",
    "File_set_atomicity",
    "File_get_atomicity",
    "File_sync",
    "File_create_errhandler",
    "File_set_errhandler",
    "File_get_errhandler",
    "File_call_errhandler",
    "File_c2f",
    "File_f2c",
#if MPI_VERSION >= 4
    "File_read_c",
    "File_read_all_c",
    "File_read_all_begin_c",
    "File_read_at_c",
    "File_read_at_all_c",
    "File_read_at_all_begin_c",
    "File_read_ordered_c",
    "File_read_ordered_begin_c",
    "File_read_shared_c",
    "File_write_c",
    "File_write_all_c",
    "File_write_all_begin_c",
    "File_write_at_c",
    "File_write_at_all_c",
    "File_write_at_all_begin_c",
    "File_write_ordered_c",
    "File_write_ordered_begin_c",
    "File_write_shared_c",
    "File_iread_c",
    "File_iread_all_c",
    "File_iread_at_c",
    "File_iread_at_all_c",
    "File_iread_shared_c",
    "File_iwrite_c",
    "File_iwrite_all_c",
    "File_iwrite_at_c",
    "File_iwrite_at_all_c",
    "File_iwrite_shared_c",
    "File_get_type_extent_c",
    "Register_datarep_c",
#endif
};

/* Whether addr lies in the drop-in library. */
static int in_dropin(void *addr) {
    Dl_info info;
    return addr && dladdr(addr, &info) && info.dli_fname &&
           strstr(info.dli_fname, "libpario-mpiio") != NULL;
}

static void check_function(const char *name) {
    char mpi[128], pmpi[128];
    snprintf(mpi, sizeof mpi, "MPI_%s", name);
    snprintf(pmpi, sizeof pmpi, "PMPI_%s", name);
    void *m = dlsym(RTLD_DEFAULT, mpi), *p = dlsym(RTLD_DEFAULT, pmpi);
    char text[300];
    snprintf(text, sizeof text, "%s and %s are pario's same function", mpi, pmpi);
    ptest_check(m && m == p && in_dropin(p), text, __FILE__, __LINE__);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ptest_init();
    PT_CHECK(ptest_on_pario());
    int (*active)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "pario_mpiio_active");
    PT_CHECK(active && active() == 1);
    size_t n = sizeof file_functions / sizeof file_functions[0];
    for (size_t i = 0; i < n; i++)
        check_function(file_functions[i]);
    for (size_t i = 0; i < sizeof internal_names / sizeof internal_names[0]; i++) {
        char text[128];
        snprintf(text, sizeof text, "%s is not exported", internal_names[i]);
        ptest_check(dlsym(RTLD_DEFAULT, internal_names[i]) == NULL, text, __FILE__, __LINE__);
    }
    return ptest_finish();
}
