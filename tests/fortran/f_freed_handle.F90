! f_freed_handle: calls on a handle freed before (a stale copy of it), in Fortran
! (tests/mpi/lifetime_handles.c): with MPI_ERRORS_RETURN on MPI_COMM_WORLD and MPI_COMM_SELF
!   - a duplicate of MPI_COMM_WORLD, freed: MPI_Comm_rank and MPI_Comm_dup on the copy must
!     fail with MPI_ERR_COMM; with argument "send" also MPI_Send to the other rank (object
!     lifetime checks communication calls only under TSMPI_CHECK);
!   - a committed MPI_Type_contiguous, freed: MPI_Type_size on the copy -> MPI_ERR_TYPE;
!   - an MPI_Info, freed: MPI_Info_get_nkeys and MPI_Info_set on the copy -> MPI_ERR_INFO;
! MPI_*_free must set the handle to MPI_*_NULL, and the objects made after the frees work. The
! ranks make their stale calls one after the other and print their lines at the end, so that
! tsmpi's reports under TSMPI_CHECK reach the output whole. Prints the class each call returned ("f_freed_handle: rank R: MPI_Comm_rank -> class C
! (MPI_ERR_COMM = E)") and "f_freed_handle: rank R: ok" (or FAILED, exit status 1).
! Natively each MPI does what it does with a freed handle (Open MPI's Fortran handles are table
! indices and give the same classes; MPICH's may crash).
!
! usage: f_freed_handle [send]      (2 ranks)
#include "binding.h"

module freed_state
#if defined(TSMPI_MPIF_H)
  implicit none
  USE_BINDING
#else
  USE_BINDING
  implicit none
#endif
  integer :: rank, failures = 0
  ! What this rank prints, kept until the end: tsmpi's reports (stderr) and the program's lines
  ! (stdout) reach mpiexec through different pipes, and a report forwarded in pieces while the
  ! other stream writes ends up cut in two in the combined output.
  integer, parameter :: max_lines = 32
  character(len=200) :: lines(max_lines)
  integer :: nlines = 0

contains

  subroutine say(text)
    character(len=*), intent(in) :: text
    if (nlines == max_lines) nlines = nlines - 1   ! the last line is kept for the verdict
    nlines = nlines + 1
    lines(nlines) = text
  end subroutine say

  subroutine expect_class(ierr, expected, call_name, expected_name)
    integer, intent(in) :: ierr, expected
    character(len=*), intent(in) :: call_name, expected_name
    integer :: cls, e
    character(len=200) :: line
    cls = MPI_SUCCESS
    if (ierr /= MPI_SUCCESS) call MPI_Error_class(ierr, cls, e)
    write(line, '(a,i0,a,a,a,i0,a,a,a,i0,a)') 'f_freed_handle: rank ', rank, ': ', call_name, ' -> class ', cls, &
      ' (', expected_name, ' = ', expected, ')'
    call say(line)
    if (cls /= expected) then
      write(line, '(a,i0,a,a,a)') 'f_freed_handle: rank ', rank, ': check failed: ', call_name, &
        ' on a freed handle did not fail with ' // expected_name
      call say(line)
      failures = failures + 1
    end if
  end subroutine expect_class

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    character(len=200) :: line
    if (ok) return
    write(line, '(a,i0,a,a)') 'f_freed_handle: rank ', rank, ': check failed: ', what
    call say(line)
    failures = failures + 1
  end subroutine check

  ! The stale-handle calls of this rank (its turn: one rank at a time, see lines).
  subroutine stale_calls(stale_comm, with_send, peer)
    T_COMM, intent(in) :: stale_comm
    logical, intent(in) :: with_send
    integer, intent(in) :: peer
    integer :: ierr, r, sz, n, buf(4)
    T_COMM :: other
    T_DATATYPE :: t, stale_t
    T_INFO :: info, stale_info

    ! The communicator, freed by both ranks before the turns.
    r = -1
    call MPI_Comm_rank(stale_comm, r, ierr)
    call expect_class(ierr, MPI_ERR_COMM, 'MPI_Comm_rank', 'MPI_ERR_COMM')
    call MPI_Comm_dup(stale_comm, other, ierr)
    call expect_class(ierr, MPI_ERR_COMM, 'MPI_Comm_dup', 'MPI_ERR_COMM')
    if (with_send) then
      buf = rank
      call MPI_Send(buf, 4, MPI_INTEGER, peer, 7, stale_comm, ierr)
      call expect_class(ierr, MPI_ERR_COMM, 'MPI_Send', 'MPI_ERR_COMM')
    end if

    ! A derived datatype.
    call MPI_Type_contiguous(3, MPI_INTEGER, t, ierr)
    call MPI_Type_commit(t, ierr)
    call MPI_Type_size(t, sz, ierr)
    call check(ierr == MPI_SUCCESS .and. sz == 12, 'MPI_Type_size of the live type')
    stale_t = t
    call MPI_Type_free(t, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Type_free failed')
    call check(HANDLE_EQ(t, MPI_DATATYPE_NULL), 'MPI_Type_free did not set MPI_DATATYPE_NULL')
    sz = -1
    call MPI_Type_size(stale_t, sz, ierr)
    call expect_class(ierr, MPI_ERR_TYPE, 'MPI_Type_size', 'MPI_ERR_TYPE')

    ! An info.
    call MPI_Info_create(info, ierr)
    call MPI_Info_set(info, 'k', 'v', ierr)
    stale_info = info
    call MPI_Info_free(info, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Info_free failed')
    call check(HANDLE_EQ(info, MPI_INFO_NULL), 'MPI_Info_free did not set MPI_INFO_NULL')
    n = -1
    call MPI_Info_get_nkeys(stale_info, n, ierr)
    call expect_class(ierr, MPI_ERR_INFO, 'MPI_Info_get_nkeys', 'MPI_ERR_INFO')
    call MPI_Info_set(stale_info, 'k2', 'v2', ierr)
    call expect_class(ierr, MPI_ERR_INFO, 'MPI_Info_set', 'MPI_ERR_INFO')
  end subroutine stale_calls

end module freed_state

program f_freed_handle
  use freed_state
  use, intrinsic :: iso_c_binding, only: c_int
  implicit none
  interface
    integer(c_int) function c_usleep(us) bind(C, name='usleep')
      import :: c_int
      integer(c_int), value :: us
    end function c_usleep
  end interface
  integer :: provided, size, ierr, r, sz, peer, turn, i, rc, buf(4), mine(1), total(1)
  T_COMM :: comm, stale_comm
  logical :: with_send
  character(len=16) :: arg
  character(len=200) :: verdict

  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  with_send = .false.
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    with_send = trim(arg) == 'send'
  end if
  if (size /= 2) then
    write(*, '(a)') 'f_freed_handle: needs exactly 2 ranks'
    flush(6)
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  peer = 1 - rank
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN, ierr)

  ! A communicator, duplicated and freed by both (collective calls); a copy of its handle kept.
  call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
  call MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN, ierr)
  stale_comm = comm
  call MPI_Comm_free(comm, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Comm_free failed')
  call check(HANDLE_EQ(comm, MPI_COMM_NULL), 'MPI_Comm_free did not set MPI_COMM_NULL')

  ! The stale calls one rank after the other, 0.2 s apart, so that their reports under
  ! TSMPI_CHECK do not reach mpiexec at once.
  do turn = 0, size - 1
    if (turn == rank) call stale_calls(stale_comm, with_send, peer)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    rc = c_usleep(200000_c_int)
  end do

  ! New objects work, and the predefined ones.
  call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
  call MPI_Comm_rank(comm, r, ierr)
  call check(ierr == MPI_SUCCESS .and. r == rank, 'MPI_Comm_rank of a new duplicate')
  buf = [rank, 1, 2, 3]
  call MPI_Sendrecv_replace(buf, 4, MPI_INTEGER, peer, 3, peer, 3, comm, MPI_STATUS_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS .and. buf(1) == peer .and. buf(4) == 3, 'MPI_Sendrecv_replace on a new duplicate')
  call MPI_Comm_free(comm, ierr)
  call MPI_Type_size(MPI_INTEGER, sz, ierr)
  call check(ierr == MPI_SUCCESS .and. sz == 4, 'MPI_Type_size(MPI_INTEGER)')

  mine = failures
  call MPI_Allreduce(mine, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (total(1) == 0) then
    write(verdict, '(a,i0,a)') 'f_freed_handle: rank ', rank, ': ok'
  else
    write(verdict, '(a,i0,a)') 'f_freed_handle: rank ', rank, ': FAILED'
  end if
  call say(verdict)
  do turn = 0, size - 1
    if (turn == rank) then
      do i = 1, nlines
        write(*, '(a)') trim(lines(i))
      end do
      flush(6)
    end if
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
  end do
  call MPI_Finalize(ierr)
  if (total(1) /= 0) error stop 1
end program f_freed_handle
