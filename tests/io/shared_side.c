/* With test_io_shared.c, test_io_shared_side: MPI's one-sided calls fail
 * (as Open MPI 4.1's osc rdma does over TCP between nodes), so pario keeps
 * the shared file pointer in a side file. The library's MPI_Fetch_and_op
 * resolves to this one, which the probe at open calls. */
#include <mpi.h>

int MPI_Fetch_and_op(const void *origin, void *result, MPI_Datatype type, int target, MPI_Aint disp,
                     MPI_Op op, MPI_Win win) {
    (void)origin, (void)result, (void)type, (void)target, (void)disp, (void)op, (void)win;
    return MPI_ERR_WIN;
}
