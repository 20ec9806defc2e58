! f_info_race: the Info race of seed 004 Fig. 3.1 in Fortran (tests/mpi/lifetime_info_race.c):
! per round, one OpenMP thread sets keys on an MPI_Info, a second reads it (MPI_Info_get_nkeys
! and MPI_Info_get of a fixed key), and a third frees it (through a copy of the handle).
! Natively this touches freed memory. Under tsmpi: no crash; no call that starts after
! MPI_Info_free returned succeeds; once a call of a thread has failed none of its later ones
! succeeds; every failure is of class MPI_ERR_INFO; a reader never sees a torn value or a wrong
! key count. After the round, a call on the freed handle still fails. MPI_ERRORS_RETURN on
! MPI_COMM_WORLD and MPI_COMM_SELF (which one handles errors of calls without a communicator
! depends on the MPI version).
!
! usage: f_info_race [ROUNDS]      (default 300; any number of ranks, 2 in the tests)
! Prints "f_info_race: rank R: N rounds of set/get/free races" and "f_info_race: rank R: ok"
! (or FAILED, with exit status 1).
#include "binding.h"

module info_race_state
  use omp_lib
  use, intrinsic :: iso_c_binding, only: c_int
#if defined(TSMPI_MPIF_H)
  implicit none
  USE_BINDING
#else
  USE_BINDING
  implicit none
#endif
  integer, parameter :: nkeys_set = 64
  character(len=*), parameter :: fixed_value = 'constant-value'
  integer :: rank, round_no, yields, failures = 0
  integer :: refused = 0        ! calls of the threads that failed (the race's other side)
  integer :: freed = 0          ! set once MPI_Info_free has returned (atomic)
  T_INFO :: shared_info

  interface
    integer(c_int) function c_sched_yield() bind(C, name='sched_yield')
      import :: c_int
    end function c_sched_yield
  end interface

contains

  subroutine fail(what, value)
    character(len=*), intent(in) :: what
    integer, intent(in) :: value
    !$omp critical (report)
    write(*, '(a,i0,a,i0,a,a,a,i0)') 'f_info_race: rank ', rank, ': round ', round_no, ': check failed: ', &
      what, ': ', value
    flush(6)
    !$omp end critical (report)
    !$omp atomic
    failures = failures + 1
  end subroutine fail

  integer function freed_now()
    !$omp atomic read
    freed_now = freed
  end function freed_now

  ! A failed call: its class must be MPI_ERR_INFO.
  subroutine expect_info_class(ierr, what)
    integer, intent(in) :: ierr
    character(len=*), intent(in) :: what
    integer :: cls, e
    call MPI_Error_class(ierr, cls, e)
    if (cls /= MPI_ERR_INFO) call fail(what // ' failed with an error class other than MPI_ERR_INFO', cls)
    !$omp atomic
    refused = refused + 1
  end subroutine expect_info_class

  subroutine setter()
    integer :: k, ierr, rc
    logical :: freed_before, failed
    character(len=16) :: key, value
    failed = .false.
    do k = 0, nkeys_set - 1
      freed_before = freed_now() /= 0
      write(key, '(a,i0)') 'key', k
      write(value, '(a,i0)') 'value', k
      call MPI_Info_set(shared_info, trim(key), trim(value), ierr)
      if (ierr == MPI_SUCCESS) then
        if (freed_before) call fail('MPI_Info_set succeeded after MPI_Info_free returned, key', k)
        if (failed) call fail('MPI_Info_set succeeded after an earlier one failed, key', k)
      else
        call expect_info_class(ierr, 'MPI_Info_set')
        failed = .true.
      end if
      if (mod(k, 8) == 0) rc = c_sched_yield()
    end do
  end subroutine setter

  subroutine reader()
    integer :: k, ierr, n
    logical :: freed_before, failed, flag
    character(len=64) :: value
    failed = .false.
    do k = 0, nkeys_set - 1
      freed_before = freed_now() /= 0
      if (mod(k, 2) == 0) then
        value = 'garbage'
        flag = .false.
        call MPI_Info_get(shared_info, 'fixed', 63, value, flag, ierr)
        if (ierr == MPI_SUCCESS) then
          if (freed_before .or. failed) call fail('MPI_Info_get succeeded after free or failure, step', k)
          if (.not. flag) call fail('MPI_Info_get did not find key fixed, step', k)
          if (flag .and. trim(value) /= fixed_value) then
            call fail('MPI_Info_get read "' // trim(value) // '", step', k)
          end if
        else
          call expect_info_class(ierr, 'MPI_Info_get')
          failed = .true.
        end if
      else
        n = -1
        call MPI_Info_get_nkeys(shared_info, n, ierr)
        if (ierr == MPI_SUCCESS) then
          if (freed_before .or. failed) call fail('MPI_Info_get_nkeys succeeded after free or failure, step', k)
          ! "fixed" and up to nkeys_set keys of the setter.
          if (n < 1 .or. n > nkeys_set + 1) call fail('MPI_Info_get_nkeys returned', n)
        else
          call expect_info_class(ierr, 'MPI_Info_get_nkeys')
          failed = .true.
        end if
      end if
    end do
  end subroutine reader

  subroutine freer()
    integer :: i, ierr, rc
    T_INFO :: copy
    do i = 1, yields
      rc = c_sched_yield()
    end do
    copy = shared_info
    call MPI_Info_free(copy, ierr)
    if (ierr /= MPI_SUCCESS) call fail('MPI_Info_free returned', ierr)
    if (.not. HANDLE_EQ(copy, MPI_INFO_NULL)) call fail('MPI_Info_free did not set MPI_INFO_NULL', 0)
    !$omp atomic write
    freed = 1
  end subroutine freer

end module info_race_state

program f_info_race
  use info_race_state
  implicit none
  integer :: provided, ierr, nrounds
  real :: r

  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  if (provided /= MPI_THREAD_MULTIPLE) then
    write(*, '(a,i0,a,i0,a)') 'f_info_race: rank ', rank, ': MPI_THREAD_MULTIPLE not provided (', provided, ')'
    flush(6)
    call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  end if
  nrounds = 300
  call integer_argument(1, nrounds)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN, ierr)
  call omp_set_dynamic(.false.)
  do round_no = 0, nrounds - 1
    call MPI_Info_create(shared_info, ierr)
    call MPI_Info_set(shared_info, 'fixed', fixed_value, ierr)
    if (ierr /= MPI_SUCCESS) call fail('MPI_Info_set of the fixed key returned', ierr)
    freed = 0
    call random_number(r)
    yields = int(r * 50)
    !$omp parallel num_threads(3)
    select case (omp_get_thread_num())
    case (0)
      call setter()
    case (1)
      call reader()
    case default
      call freer()
    end select
    !$omp end parallel
    ! Long after the free: still refused.
    call MPI_Info_set(shared_info, 'late', 'x', ierr)
    if (ierr == MPI_SUCCESS) call fail('MPI_Info_set long after MPI_Info_free succeeded', 0)
    if (ierr /= MPI_SUCCESS) call expect_info_class(ierr, 'MPI_Info_set long after the free')
  end do
  write(*, '(a,i0,a,i0,a,i0,a)') 'f_info_race: rank ', rank, ': ', nrounds, &
    ' rounds of set/get/free races (', refused - nrounds, ' calls refused in the races)'
  call finish('f_info_race', rank, failures)
contains
#include "test_util.inc"
end program f_info_race
