/* Mapping of pario error codes onto MPI error classes. */
#include "mpiio/mpiio.h"

int mpiio_error_class(int code) {
    switch (code) {
    case PARIO_OK: return MPI_SUCCESS;
    case PARIO_ERR_ARG: return MPI_ERR_ARG;
    case PARIO_ERR_AMODE: return MPI_ERR_AMODE;
    case PARIO_ERR_NO_SUCH_FILE: return MPI_ERR_NO_SUCH_FILE;
    case PARIO_ERR_FILE_EXISTS: return MPI_ERR_FILE_EXISTS;
    case PARIO_ERR_ACCESS: return MPI_ERR_ACCESS;
    case PARIO_ERR_NO_SPACE: return MPI_ERR_NO_SPACE;
    case PARIO_ERR_QUOTA: return MPI_ERR_QUOTA;
    case PARIO_ERR_READ_ONLY: return MPI_ERR_READ_ONLY;
    case PARIO_ERR_IO: return MPI_ERR_IO;
    case PARIO_ERR_TYPE: return MPI_ERR_TYPE;
    case PARIO_ERR_COUNT_ARG: return MPI_ERR_COUNT;
    case PARIO_ERR_UNSUPPORTED_DATAREP: return MPI_ERR_UNSUPPORTED_DATAREP;
    case PARIO_ERR_UNSUPPORTED_OPERATION: return MPI_ERR_UNSUPPORTED_OPERATION;
    case PARIO_ERR_FILE_IN_USE: return MPI_ERR_FILE_IN_USE;
    case PARIO_ERR_BAD_FILE: return MPI_ERR_BAD_FILE;
    case PARIO_ERR_NOT_SAME: return MPI_ERR_NOT_SAME;
    case PARIO_ERR_INFO: return MPI_ERR_INFO_VALUE;
    case PARIO_ERR_NO_MEM: return MPI_ERR_NO_MEM;
    case PARIO_ERR_FILE: return MPI_ERR_FILE;
    case PARIO_ERR_REQUEST: return MPI_ERR_REQUEST;
    case PARIO_ERR_DUP_DATAREP: return MPI_ERR_DUP_DATAREP;
    case PARIO_ERR_CONVERSION: return MPI_ERR_CONVERSION;
    case PARIO_ERR_COMM: return MPI_ERR_OTHER;
    case PARIO_ERR_RANK: return MPI_ERR_RANK;
    default: return MPI_ERR_INTERN;
    }
}
