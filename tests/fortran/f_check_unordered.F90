! f_check_unordered: tests/mpi/check_unordered.c's rules from Fortran. Rank 0's two OpenMP threads
! make a pair of MPI calls that MPI's thread rules forbid to be concurrent and that nothing of the
! program orders (TSMPI_CHECK reports "no ordering between thread A's CALL and thread B's CALL on
! OBJECT"), although the second call comes 0.2 s after the first ended: the error does not
! manifest, the program ends with correct data. Twins order the same calls.
!
! usage: f_check_unordered MODE [KIND]      (2 ranks; rank 1 makes the peer side)
!   MODE barrier  both threads call MPI_Barrier on one communicator (thread 1 0.2 s later)
!        free     thread 0 calls MPI_Sendrecv on a communicator (after 0.05 s, so that thread 1
!                 takes the single), the thread that took an `!$omp single` ... `end single
!                 nowait` frees it 0.2 s later with MPI_Comm_free (rank 1 frees its side too)
!        request  both call MPI_Wait on one request variable (thread 1 0.2 s later: it finds
!                 MPI_REQUEST_NULL there; still erroneous, nothing orders the two calls)
!   KIND critical each call in `!$omp critical` (free: the freeing thread waits in the critical
!                 section for a flag the using thread sets after its call)
!        barrier  an `!$omp barrier` between the first call and the second
!        single   (free) the use in an `!$omp single` (its implied barrier), the free in the
!                 following `!$omp single` ... `end single nowait`
! Prints "f_check_unordered: rank R: MODE[ twin KIND] done" and "f_check_unordered: rank R: ok"
! (or FAILED, exit status 1).
#include "binding.h"

! Rank 0's two threads, in an external procedure (gfortran outlines the region into
! unordered_pair_._omp_fn.N).
subroutine unordered_pair(mode, kind, comm, peer, failures)
  use omp_lib
  use, intrinsic :: iso_c_binding, only: c_int
#if defined(TSMPI_MPIF_H)
  implicit none
  USE_BINDING
#else
  USE_BINDING
  implicit none
#endif
  character(len=*), intent(in) :: mode, kind
  T_COMM, intent(inout) :: comm
  integer, intent(in) :: peer
  integer, intent(inout) :: failures
  interface
    integer(c_int) function c_usleep(us) bind(C, name='usleep')
      import :: c_int
      integer(c_int), value :: us
    end function c_usleep
  end interface
  integer, parameter :: tag = 7
  T_REQUEST :: req
  integer, asynchronous :: val
  integer :: t, rc, ierr, team, taker, errs(0:1), got
  logical :: a_done, seen

  a_done = .false.
  taker = -1
  team = 0
  errs = MPI_SUCCESS
  got = -1
  val = -1
  if (mode == 'request') call MPI_Irecv(val, 1, MPI_INTEGER, peer, tag, comm, req, ierr)
  call omp_set_dynamic(.false.)
  !$omp parallel num_threads(2) default(shared) private(t, rc, seen)
  t = omp_get_thread_num()
  if (t == 0) team = omp_get_num_threads()
  if (mode == 'free') then
    if (kind == 'single') then
      !$omp single
      call use_comm()
      !$omp end single
      !$omp single
      call free_comm()
      !$omp end single nowait
    else
      if (t == 0) then
        rc = c_usleep(50000_c_int)
        if (kind == 'critical') then
          !$omp critical (unordered)
          call use_comm()
          a_done = .true.
          !$omp end critical (unordered)
        else
          call use_comm()
        end if
      end if
      if (kind == 'barrier') then
        !$omp barrier
      end if
      !$omp single
      taker = t
      rc = c_usleep(200000_c_int)
      if (kind == 'critical') then
        do
          !$omp critical (unordered)
          seen = a_done
          !$omp end critical (unordered)
          if (seen) exit
          rc = c_usleep(1000_c_int)
        end do
      end if
      call free_comm()
      !$omp end single nowait
    end if
  else if (kind == 'barrier') then
    if (t == 0) call the_call(0)
    !$omp barrier
    if (t == 1) call the_call(1)
  else
    if (t == 1) rc = c_usleep(200000_c_int)
    if (kind == 'critical') then
      !$omp critical (unordered)
      call the_call(t)
      !$omp end critical (unordered)
    else
      call the_call(t)
    end if
  end if
  !$omp end parallel

  if (team /= 2) call failed('a team of other than 2 threads', team)
  if (errs(0) /= MPI_SUCCESS) call failed('the first call returned', errs(0))
  if (errs(1) /= MPI_SUCCESS) call failed('the second call returned', errs(1))
  if (mode == 'request') then
    if (val /= 42) call failed('received', val)
    if (.not. HANDLE_EQ(req, MPI_REQUEST_NULL)) call failed('the request is not MPI_REQUEST_NULL', 0)
  else if (mode == 'free') then
    if (got /= 1001) call failed('MPI_Sendrecv received', got)
    if (.not. HANDLE_EQ(comm, MPI_COMM_NULL)) call failed('the communicator is not MPI_COMM_NULL', 0)
    if (kind == 'none' .and. taker == 0) &
      write(*, '(a)') 'f_check_unordered: rank 0: thread 0 took the single: the free followed the use on one thread'
  end if
contains
  ! barrier: MPI_Barrier; request: MPI_Wait.
  subroutine the_call(role)
    integer, intent(in) :: role
    integer :: e
    T_STATUS(s)
    if (mode == 'request') then
      call MPI_Wait(req, s, e)
    else
      call MPI_Barrier(comm, e)
    end if
    errs(role) = e
  end subroutine the_call

  subroutine use_comm()
    integer :: e, o, i
    o = 1000
    i = -1
    call MPI_Sendrecv(o, 1, MPI_INTEGER, peer, tag, i, 1, MPI_INTEGER, peer, tag, comm, MPI_STATUS_IGNORE, e)
    errs(0) = e
    got = i
  end subroutine use_comm

  subroutine free_comm()
    integer :: e
    call MPI_Comm_free(comm, e)
    errs(1) = e
  end subroutine free_comm

  subroutine failed(what, value)
    character(len=*), intent(in) :: what
    integer, intent(in) :: value
    write(*, '(a,a,a,i0)') 'f_check_unordered: rank 0: check failed: ', what, ' ', value
    failures = failures + 1
  end subroutine failed
end subroutine unordered_pair

program f_check_unordered
#if defined(TSMPI_MPIF_H)
  implicit none
  USE_BINDING
#else
  USE_BINDING
  implicit none
#endif
  interface
    subroutine unordered_pair(mode, kind, comm, peer, failures)
      USE_BINDING
      character(len=*), intent(in) :: mode, kind
      T_COMM, intent(inout) :: comm
      integer, intent(in) :: peer
      integer, intent(inout) :: failures
    end subroutine unordered_pair
  end interface
  integer, parameter :: tag = 7
  integer :: provided, rank, size, ierr, failures, v, o, i
  T_COMM :: comm
  character(len=16) :: mode, kind

  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  if (provided /= MPI_THREAD_MULTIPLE .or. size /= 2) then
    write(*, '(a)') 'f_check_unordered: needs MPI_THREAD_MULTIPLE and exactly 2 ranks'
    flush(6)
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  mode = ''
  kind = 'none'
  if (command_argument_count() >= 1) call get_command_argument(1, mode)
  if (command_argument_count() >= 2) call get_command_argument(2, kind)
  if (.not. ((mode == 'barrier' .or. mode == 'request') .and. &
             (kind == 'none' .or. kind == 'critical' .or. kind == 'barrier') .or. &
             mode == 'free' .and. (kind == 'none' .or. kind == 'critical' .or. kind == 'barrier' &
                                   .or. kind == 'single'))) then
    if (rank == 0) write(*, '(a,a,a,a,a)') "f_check_unordered: unknown mode or twin '", trim(mode), &
      "' '", trim(kind), "'"
    flush(6)
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
  failures = 0
  ! Rank 1 is in its calls when rank 0's threads make theirs.
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call unordered_pair(trim(mode), trim(kind), comm, 1, failures)
  else if (mode == 'barrier') then
    call MPI_Barrier(comm, ierr)
    call MPI_Barrier(comm, ierr)
  else if (mode == 'request') then
    v = 42
    call MPI_Send(v, 1, MPI_INTEGER, 0, tag, comm, ierr)
  else
    o = 1001
    i = -1
    call MPI_Sendrecv(o, 1, MPI_INTEGER, 0, tag, i, 1, MPI_INTEGER, 0, tag, comm, MPI_STATUS_IGNORE, ierr)
    if (i /= 1000) then
      write(*, '(a,i0)') 'f_check_unordered: rank 1: check failed: MPI_Sendrecv received ', i
      failures = failures + 1
    end if
    call MPI_Comm_free(comm, ierr)
  end if
  if (mode /= 'free') call MPI_Comm_free(comm, ierr)
  if (kind == 'none') then
    write(*, '(a,i0,a,a,a)') 'f_check_unordered: rank ', rank, ': ', trim(mode), ' done'
  else
    write(*, '(a,i0,a,a,a,a,a)') 'f_check_unordered: rank ', rank, ': ', trim(mode), ' twin ', trim(kind), ' done'
  end if
  call finish('f_check_unordered', rank, failures)
contains
#include "test_util.inc"
end program f_check_unordered
