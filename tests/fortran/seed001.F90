! Seed 001's three I/O benchmarks (HPCx, tasks accessing the disks at the
! same time) as Fortran MPI-IO programs (`use mpi`):
!
!   own     each task writes, then reads back, a file of its own
!           (MPI_COMM_SELF), timed from a barrier before the open to the end
!           of the close;
!   shared  all tasks write, then read back, their own positions of one
!           random-access file, timed from a barrier before the write or
!           read to its end;
!   readall rank 0 writes one file, then every task reads all of it, timed
!           from a barrier before the open to the end of the close.
!
! The rate reported is the bytes all tasks moved divided by the time of the
! slowest task (MPI_Allreduce of MPI_MAX). Every byte read is checked.
! Arguments: mode, KiB per task, output directory. Prints "backend: pario"
! when MPI_FILE_GET_INFO holds a pario_ key, else "backend: system".
program seed001
  use mpi
  implicit none
#define FILE_T integer
#define INFO_T integer
  integer, parameter :: i8 = selected_int_kind(18)
  character(len=16) :: mode
  character(len=1024) :: outdir, arg
  integer :: ierr, rank, nprocs, kib, nwords
  integer(kind=i8), allocatable :: words(:), back(:)
  logical :: pario

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call get_command_argument(1, mode)
  call get_command_argument(2, arg)
  read (arg, *) kib
  call get_command_argument(3, outdir)
  nwords = kib*1024/8
  allocate (words(nwords), back(nwords))

  select case (trim(mode))
  case ('own')
    call own_files()
  case ('shared')
    call shared_file()
  case ('readall')
    call read_one_file()
  case default
    call fail('unknown mode '//trim(mode)//' (own, shared, readall)')
  end select
  if (rank == 0) print '(a,a,a)', 'seed001 ', trim(mode), ': ok'
  call MPI_Finalize(ierr)

contains

  ! The words task `owner` writes: its rank in the high half, the index low.
  subroutine fill(owner, w)
    integer, intent(in) :: owner
    integer(kind=i8), intent(out) :: w(:)
    integer :: i
    do i = 1, size(w)
      w(i) = 4294967296_i8*(owner + 1) + i
    end do
  end subroutine fill

  subroutine own_files()
    character(len=1100) :: path
    integer :: fh
    integer :: status(MPI_STATUS_SIZE)
    double precision :: t
    write (path, '(a,a,i4.4,a)') trim(outdir), '/task', rank, '.dat'
    call fill(rank, words)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    t = MPI_Wtime()
    call MPI_File_open(MPI_COMM_SELF, path, ior(MPI_MODE_CREATE, MPI_MODE_WRONLY), &
                       MPI_INFO_NULL, fh, ierr)
    call check(ierr, 'open '//trim(path))
    if (rank == 0) pario = reached_pario(fh, rank)
    call MPI_File_write(fh, words, nwords, MPI_INTEGER8, status, ierr)
    call check(ierr, 'write')
    call MPI_File_close(fh, ierr)
    call check(ierr, 'close')
    call report_rate('write', MPI_Wtime() - t, nprocs)

    call timed_read(MPI_COMM_SELF, path, status)
    call verify(status)
  end subroutine own_files

  subroutine shared_file()
    character(len=1100) :: path
    integer :: fh
    integer :: status(MPI_STATUS_SIZE)
    integer(kind=MPI_OFFSET_KIND) :: offset
    double precision :: t
    path = trim(outdir)//'/shared.dat'
    offset = int(rank, MPI_OFFSET_KIND)*int(nwords, MPI_OFFSET_KIND)*8
    call fill(rank, words)
    call MPI_File_open(MPI_COMM_WORLD, path, ior(MPI_MODE_CREATE, MPI_MODE_RDWR), &
                       MPI_INFO_NULL, fh, ierr)
    call check(ierr, 'open '//trim(path))
    pario = reached_pario(fh, rank)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    t = MPI_Wtime()
    call MPI_File_write_at(fh, offset, words, nwords, MPI_INTEGER8, status, ierr)
    call check(ierr, 'write_at')
    call report_rate('write', MPI_Wtime() - t, nprocs)
    call MPI_File_sync(fh, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_File_sync(fh, ierr)

    back = 0
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    t = MPI_Wtime()
    call MPI_File_read_at(fh, offset, back, nwords, MPI_INTEGER8, status, ierr)
    call check(ierr, 'read_at')
    call report_rate('read', MPI_Wtime() - t, nprocs)
    call MPI_File_close(fh, ierr)
    call check(ierr, 'close')
    call verify(status)
  end subroutine shared_file

  subroutine read_one_file()
    character(len=1100) :: path
    integer :: fh
    integer :: status(MPI_STATUS_SIZE)
    path = trim(outdir)//'/input.dat'
    call fill(0, words)
    if (rank == 0) then
      call MPI_File_open(MPI_COMM_SELF, path, ior(MPI_MODE_CREATE, MPI_MODE_WRONLY), &
                         MPI_INFO_NULL, fh, ierr)
      call check(ierr, 'open '//trim(path))
      pario = reached_pario(fh, rank)
      call MPI_File_write(fh, words, nwords, MPI_INTEGER8, status, ierr)
      call check(ierr, 'write')
      call MPI_File_close(fh, ierr)
    end if
    call timed_read(MPI_COMM_WORLD, path, status)
    words = back
    call fill(0, back)
    call check_words(words, back, status)
  end subroutine read_one_file

  ! Opens path on comm, reads nwords words into back and closes it, timed
  ! from a barrier before the open to the end of the close.
  subroutine timed_read(comm, path, status)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: path
    integer, intent(out) :: status(MPI_STATUS_SIZE)
    integer :: fh
    double precision :: t
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    t = MPI_Wtime()
    call MPI_File_open(comm, path, MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
    call check(ierr, 'open for reading')
    back = 0
    call MPI_File_read(fh, back, nwords, MPI_INTEGER8, status, ierr)
    call check(ierr, 'read')
    call MPI_File_close(fh, ierr)
    call report_rate('read', MPI_Wtime() - t, nprocs)
  end subroutine timed_read

  ! The bytes read are the ones this task wrote.
  subroutine verify(status)
    integer, intent(in) :: status(MPI_STATUS_SIZE)
    call fill(rank, words)
    call check_words(back, words, status)
  end subroutine verify

  subroutine check_words(got, want, status)
    integer(kind=i8), intent(in) :: got(:), want(:)
    integer, intent(in) :: status(MPI_STATUS_SIZE)
    integer :: n, e
    call MPI_Get_count(status, MPI_INTEGER8, n, e)
    if (n /= nwords) call fail('short read')
    if (any(got /= want)) call fail('data read back differ from the data written')
  end subroutine check_words

  ! MB/s over all tasks' bytes, timed by the slowest task.
  subroutine report_rate(what, mine, ntasks)
    character(len=*), intent(in) :: what
    double precision, intent(in) :: mine
    integer, intent(in) :: ntasks
    double precision :: slowest
    integer :: e
    call MPI_Allreduce(mine, slowest, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, e)
    if (rank == 0) print '(a,a,a,a,i0,a,f10.6,a,f12.1,a)', trim(mode), ' ', what, ' ', ntasks, &
      ' tasks: slowest ', slowest, ' s, ', dble(ntasks)*dble(nwords)*8d0/max(slowest, 1d-9)/1d6, &
      ' MB/s'
  end subroutine report_rate

#include "backend.inc"

  subroutine check(code, what)
    integer, intent(in) :: code
    character(len=*), intent(in) :: what
    if (code /= MPI_SUCCESS) call fail(what)
  end subroutine check

  subroutine fail(what)
    character(len=*), intent(in) :: what
    integer :: e
    print '(a,i0,a,a)', 'seed001: rank ', rank, ': FAILED: ', what
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
  end subroutine fail
end program seed001
