! Views and collective calls from Fortran, built three times: with mpif.h
! (BIND_MPIFH), `use mpi` (BIND_MPI) and `use mpi_f08` (BIND_F08).
!
! Every rank writes its block of columns of a 2-D array through a subarray
! view (write_all), its share of an interleaved vector view at explicit
! offsets (write_at_all), one INTEGER*8 through a nonblocking write
! (iwrite_at + wait) and a record in rank order (write_ordered); then it reads
! everything back and checks it, with the counts in the statuses, the
! position, the file size and a missing file's error class. It prints
! "backend: pario" when MPI_FILE_GET_INFO holds a pario_ key (the calls
! reached pario) and "backend: system" otherwise. Argument: the output
! directory. Any failure aborts with a message.
program views
#if defined(BIND_MPIFH)
  implicit none
  include 'mpif.h'
#elif defined(BIND_MPI)
  use mpi
  implicit none
#else
  use mpi_f08
  implicit none
#endif
#if defined(BIND_F08)
#define FILE_T type(MPI_File)
#define TYPE_T type(MPI_Datatype)
#define INFO_T type(MPI_Info)
#define REQUEST_T type(MPI_Request)
#define STATUS_T type(MPI_Status)
#else
#define FILE_T integer
#define TYPE_T integer
#define INFO_T integer
#define REQUEST_T integer
#define STATUS_T integer, dimension(MPI_STATUS_SIZE)
#endif
  integer, parameter :: nrows = 16, ncols = 4, nvec = 3, veclen = 2
  FILE_T :: fh, missing
  TYPE_T :: colblock, vec, interleaved
  REQUEST_T :: req
  STATUS_T :: status
  integer :: ierr, rank, nprocs, n, i, j, cls
  integer :: a(nrows, ncols), back(nrows, ncols), v(nvec*veclen), vback(nvec*veclen)
  integer :: rec(2), recback(2)
  integer(kind=8) :: tag, tagback
  integer(kind=MPI_OFFSET_KIND) :: vdisp, tail, pos, fsize, expect_size
  integer(kind=MPI_ADDRESS_KIND) :: lb, extent
  integer :: gsizes(2), lsizes(2), starts(2)
  character(len=1024) :: outdir, path
  logical :: on_pario

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call get_command_argument(command_argument_count(), outdir)
  path = trim(outdir)//'/views.dat'

  do j = 1, ncols
    do i = 1, nrows
      a(i, j) = 100000*rank + 100*j + i
    end do
  end do
  do i = 1, nvec*veclen
    v(i) = -(1000*rank + i)
  end do
  rec = (/ 7000 + rank, 8000 + rank /)
  tag = 4294967296_8*(rank + 1) + 12345_8

  ! The global array is nrows x (ncols*nprocs) integers; rank r owns columns
  ! r*ncols+1 .. (r+1)*ncols.
  gsizes = (/ nrows, ncols*nprocs /)
  lsizes = (/ nrows, ncols /)
  starts = (/ 0, ncols*rank /)
  call MPI_Type_create_subarray(2, gsizes, lsizes, starts, MPI_ORDER_FORTRAN, MPI_INTEGER, &
                                colblock, ierr)
  call MPI_Type_commit(colblock, ierr)
  ! After the array: nvec pairs of integers per rank, interleaved rank by rank.
  call MPI_Type_vector(nvec, veclen, veclen*nprocs, MPI_INTEGER, vec, ierr)
  lb = 0
  extent = int(4*veclen*nprocs*nvec, MPI_ADDRESS_KIND)
  call MPI_Type_create_resized(vec, lb, extent, interleaved, ierr)
  call MPI_Type_commit(interleaved, ierr)
  vdisp = int(4*nrows*ncols*nprocs, MPI_OFFSET_KIND) + int(4*veclen*rank, MPI_OFFSET_KIND)
  tail = int(4*nrows*ncols*nprocs + 4*nvec*veclen*nprocs, MPI_OFFSET_KIND)

  if (rank == 0) call MPI_File_delete(path, MPI_INFO_NULL, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_File_open(MPI_COMM_WORLD, path, ior(MPI_MODE_CREATE, MPI_MODE_RDWR), MPI_INFO_NULL, &
                     fh, ierr)
  call check(ierr == MPI_SUCCESS, 'open '//trim(path))
  on_pario = reached_pario(fh, rank)

  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, colblock, 'native', MPI_INFO_NULL, &
                         ierr)
  call check(ierr == MPI_SUCCESS, 'set_view subarray')
  call MPI_File_write_all(fh, a, nrows*ncols, MPI_INTEGER, status, ierr)
  call check(ierr == MPI_SUCCESS, 'write_all')
  call MPI_Get_count(status, MPI_INTEGER, n, ierr)
  call check(n == nrows*ncols, 'write_all count')
  call MPI_File_get_position(fh, pos, ierr)
  call check(pos == int(nrows*ncols, MPI_OFFSET_KIND), 'position after write_all')

  call MPI_File_set_view(fh, vdisp, MPI_INTEGER, interleaved, 'native', MPI_INFO_NULL, ierr)
  call check(ierr == MPI_SUCCESS, 'set_view vector')
  call MPI_File_write_at_all(fh, 0_MPI_OFFSET_KIND, v, nvec*veclen, MPI_INTEGER, status, ierr)
  call check(ierr == MPI_SUCCESS, 'write_at_all')

  call MPI_File_set_view(fh, tail, MPI_BYTE, MPI_BYTE, 'native', MPI_INFO_NULL, ierr)
  call MPI_File_iwrite_at(fh, int(8*rank, MPI_OFFSET_KIND), tag, 1, MPI_INTEGER8, req, ierr)
  call check(ierr == MPI_SUCCESS, 'iwrite_at')
  call MPI_Wait(req, status, ierr)
  call MPI_Get_count(status, MPI_INTEGER8, n, ierr)
  call check(n == 1, 'iwrite_at count')

  ! Records in rank order after the tags, through the shared file pointer.
  call MPI_File_set_view(fh, tail + int(8*nprocs, MPI_OFFSET_KIND), MPI_INTEGER, MPI_INTEGER, &
                         'native', MPI_INFO_NULL, ierr)
  call MPI_File_write_ordered(fh, rec, 2, MPI_INTEGER, status, ierr)
  call check(ierr == MPI_SUCCESS, 'write_ordered')
  call MPI_File_sync(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_File_sync(fh, ierr)

  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, colblock, 'native', MPI_INFO_NULL, &
                         ierr)
  back = 0
  call MPI_File_read_all(fh, back, nrows*ncols, MPI_INTEGER, status, ierr)
  call check(ierr == MPI_SUCCESS, 'read_all')
  call MPI_Get_count(status, MPI_INTEGER, n, ierr)
  call check(n == nrows*ncols, 'read_all count')
  call check(all(back == a), 'read_all data')

  call MPI_File_set_view(fh, vdisp, MPI_INTEGER, interleaved, 'native', MPI_INFO_NULL, ierr)
  vback = 0
  call MPI_File_read_at_all(fh, 0_MPI_OFFSET_KIND, vback, nvec*veclen, MPI_INTEGER, status, ierr)
  call check(ierr == MPI_SUCCESS .and. all(vback == v), 'read_at_all data')

  call MPI_File_set_view(fh, tail, MPI_BYTE, MPI_BYTE, 'native', MPI_INFO_NULL, ierr)
  tagback = 0
  call MPI_File_read_at(fh, int(8*rank, MPI_OFFSET_KIND), tagback, 1, MPI_INTEGER8, status, ierr)
  call check(ierr == MPI_SUCCESS .and. tagback == tag, 'read_at tag')
  recback = 0
  call MPI_File_read_at(fh, int(8*nprocs + 8*rank, MPI_OFFSET_KIND), recback, 2, MPI_INTEGER, &
                        status, ierr)
  call check(ierr == MPI_SUCCESS .and. all(recback == rec), 'read_at record in rank order')

  expect_size = tail + int(16*nprocs, MPI_OFFSET_KIND)
  call MPI_File_get_size(fh, fsize, ierr)
  call check(fsize == expect_size, 'get_size')
  call MPI_File_close(fh, ierr)
  call check(ierr == MPI_SUCCESS, 'close')

  ! Errors come back in ierror (files return errors by default). Checked on
  ! pario and on Open MPI: MPICH 4.0.2's own mpif.h and `use mpi` bindings
  ! crash (SIGSEGV) in this failing open.
  if (on_pario) then
    call check_missing_file()
  else if (.not. system_is_mpich()) then
    call check_missing_file()
  end if

  call MPI_Type_free(colblock, ierr)
  call MPI_Type_free(vec, ierr)
  call MPI_Type_free(interleaved, ierr)
  if (rank == 0) print '(a)', 'views: ok'
  call MPI_Finalize(ierr)

contains

  subroutine check_missing_file()
    character(len=1100) :: none
    integer :: e
    none = trim(outdir)//'/no-such-dir/none.dat'
    call MPI_File_open(MPI_COMM_WORLD, none, MPI_MODE_RDONLY, MPI_INFO_NULL, missing, ierr)
    call check(ierr /= MPI_SUCCESS, 'open of a missing file must fail')
    call MPI_Error_class(ierr, cls, e)
    call check(cls == MPI_ERR_NO_SUCH_FILE, 'open of a missing file: MPI_ERR_NO_SUCH_FILE')
  end subroutine check_missing_file

  logical function system_is_mpich()
    character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: version
    integer :: length, e
    call MPI_Get_library_version(version, length, e)
    system_is_mpich = index(version, 'MPICH') > 0
  end function system_is_mpich

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: e
    if (.not. ok) then
      print '(a,i0,a,a)', 'views: rank ', rank, ': FAILED: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check

#include "backend.inc"
end program views
