! f_check_report: a checking-mode detection from Fortran (tests/mpi/check_detections.c
! "collective"): rank 0's two OpenMP threads call MPI_Barrier on the same communicator at once
! (erroneous: collective calls on one communicator must be ordered), in a parallel region of
! the external subroutine collective_threads. Thread 1 enters 0.3 s after thread 0, and rank 1
! enters its two barriers only after 1 s, so thread 0 is still inside its barrier when thread 1
! arrives. Under TSMPI_CHECK=warn tsmpi reports it, and the backtraces show the Fortran caller
! (the region outlined by gfortran: collective_threads_._omp_fn.0). The twin (argument "twin"):
! the two threads on two different communicators, a correct program tsmpi must not report.
!
! usage: f_check_report [twin]      (2 ranks)
! Prints "f_check_report: rank R: collective[ twin] done" and "f_check_report: rank R: ok" (or
! FAILED, exit status 1).
#include "binding.h"

! Rank 0's two threads. An external procedure holding the parallel region: gfortran outlines
! the region into collective_threads_._omp_fn.0, a frame of its own in each thread's stack
! whether or not the compiler inlines collective_threads into the main program.
subroutine collective_threads(comm_a, comm_b, twin, errs)
  use omp_lib
  use, intrinsic :: iso_c_binding, only: c_int
#if defined(TSMPI_MPIF_H)
  implicit none
  USE_BINDING
#else
  USE_BINDING
  implicit none
#endif
  T_COMM, intent(in) :: comm_a, comm_b
  logical, intent(in) :: twin
  integer, intent(out) :: errs(0:1)
  interface
    integer(c_int) function c_usleep(us) bind(C, name='usleep')
      import :: c_int
      integer(c_int), value :: us
    end function c_usleep
  end interface
  integer :: t, rc, ierr
  call omp_set_dynamic(.false.)
  !$omp parallel num_threads(2) private(t, rc, ierr)
  t = omp_get_thread_num()
  if (t == 1) rc = c_usleep(300000_c_int)
  if (t == 0 .or. .not. twin) then
    call MPI_Barrier(comm_a, ierr)
  else
    call MPI_Barrier(comm_b, ierr)
  end if
  ! Work after the call: MPI_Barrier is no tail call, the region's frame stays on the stack.
  errs(t) = ierr
  if (ierr /= MPI_SUCCESS) write(*, '(a,i0,a,i0)') 'f_check_report: thread ', t, ': MPI_Barrier returned ', ierr
  !$omp end parallel
end subroutine collective_threads

program f_check_report
  use, intrinsic :: iso_c_binding, only: c_int
#if defined(TSMPI_MPIF_H)
  implicit none
  USE_BINDING
#else
  USE_BINDING
  implicit none
#endif
  interface
    subroutine collective_threads(comm_a, comm_b, twin, errs)
      USE_BINDING
      T_COMM, intent(in) :: comm_a, comm_b
      logical, intent(in) :: twin
      integer, intent(out) :: errs(0:1)
    end subroutine collective_threads
    integer(c_int) function c_usleep(us) bind(C, name='usleep')
      import :: c_int
      integer(c_int), value :: us
    end function c_usleep
  end interface
  integer :: provided, rank, size, ierr, rc, errs(0:1), failures
  T_COMM :: comm_a, comm_b
  logical :: twin
  character(len=16) :: arg

  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  if (provided /= MPI_THREAD_MULTIPLE .or. size /= 2) then
    write(*, '(a)') 'f_check_report: needs MPI_THREAD_MULTIPLE and exactly 2 ranks'
    flush(6)
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  twin = .false.
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    twin = trim(arg) == 'twin'
  end if
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, comm_a, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, comm_b, ierr)
  errs = 0
  if (rank == 0) then
    call collective_threads(comm_a, comm_b, twin, errs)
  else
    rc = c_usleep(1000000_c_int)
    call MPI_Barrier(comm_a, errs(0))
    if (twin) then
      call MPI_Barrier(comm_b, errs(1))
    else
      call MPI_Barrier(comm_a, errs(1))
    end if
  end if
  call MPI_Comm_free(comm_a, ierr)
  call MPI_Comm_free(comm_b, ierr)
  failures = 0
  if (errs(0) /= MPI_SUCCESS .or. errs(1) /= MPI_SUCCESS) then
    write(*, '(a,i0,a,i0,a,i0)') 'f_check_report: rank ', rank, ': check failed: MPI_Barrier returned ', &
      errs(0), ' and ', errs(1)
    failures = 1
  end if
  if (twin) then
    write(*, '(a,i0,a)') 'f_check_report: rank ', rank, ': collective twin done'
  else
    write(*, '(a,i0,a)') 'f_check_report: rank ', rank, ': collective done'
  end if
  call finish('f_check_report', rank, failures)
contains
#include "test_util.inc"
end program f_check_report
