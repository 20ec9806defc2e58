! f_idup: nonblocking duplications from OpenMP threads, in Fortran. The main thread makes one
! duplicate of MPI_COMM_WORLD per thread (THREADS, default 4); each thread then starts NIDUP (3)
! MPI_Comm_idup of its communicator and, while they are pending, an MPI_Iallreduce and an
! MPI_Ibarrier on it, completes everything with MPI_Waitall, and checks every new communicator
! (its size, its rank, a reduction on it, congruent with the parent) and the reduction's result.
! In serialize mode tsmpi gives the MPI each duplication after the program's call returned and
! writes newcomm then: through Open MPI's bindings, which hand the C call a copy of newcomm,
! that is the program's own variable. ROUNDS (default 3) rounds.
!
! usage: f_idup [THREADS [ROUNDS]]       (any number of ranks; 3 in the tests)
! Prints "f_idup: rank R: ok" (or FAILED, with exit status 1) per rank.
#include "binding.h"

module idup_state
  use omp_lib
#if defined(TSMPI_MPIF_H)
  implicit none
  USE_BINDING
#else
  USE_BINDING
  implicit none
#endif
  integer, parameter :: nidup = 3
  integer :: rank, size, nthreads = 4, nrounds = 3
  character(len=*), parameter :: test_name = 'f_idup'
  integer :: failures = 0
  T_COMM, allocatable :: comms(:)

contains

#include "thread_check.inc"

  subroutine duplicate(parent, salt)
    T_COMM, intent(in) :: parent
    integer, intent(in) :: salt
    T_COMM :: dups(nidup)
    T_REQUEST :: reqs(nidup + 2)
    integer :: i, ierr, n, r, cmp, v(1), sum(1), rsum(1)
    do i = 1, nidup
      call MPI_Comm_idup(parent, dups(i), reqs(i), ierr)
      call check(ierr == MPI_SUCCESS, 'MPI_Comm_idup returned', ierr, MPI_SUCCESS)
    end do
    v(1) = rank + salt
    call MPI_Iallreduce(v, sum, 1, MPI_INTEGER, MPI_SUM, parent, reqs(nidup + 1), ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Iallreduce returned', ierr, MPI_SUCCESS)
    call MPI_Ibarrier(parent, reqs(nidup + 2), ierr)
    call MPI_Waitall(nidup + 2, reqs, MPI_STATUSES_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Waitall returned', ierr, MPI_SUCCESS)
    call check(sum(1) == size * (size - 1) / 2 + size * salt, 'iallreduce sum', sum(1), size * (size - 1) / 2 + size * salt)
    do i = 1, nidup
      call check(.not. HANDLE_EQ(dups(i), MPI_COMM_NULL), 'newcomm is MPI_COMM_NULL, idup', i, 0)
      if (HANDLE_EQ(dups(i), MPI_COMM_NULL)) cycle
      call MPI_Comm_size(dups(i), n, ierr)
      call check(ierr == MPI_SUCCESS .and. n == size, 'size of the duplicate', n, size)
      call MPI_Comm_rank(dups(i), r, ierr)
      call check(ierr == MPI_SUCCESS .and. r == rank, 'rank in the duplicate', r, rank)
      call MPI_Comm_compare(dups(i), parent, cmp, ierr)
      call check(cmp == MPI_CONGRUENT, 'comparison with the parent', cmp, MPI_CONGRUENT)
      v(1) = i
      call MPI_Allreduce(v, rsum, 1, MPI_INTEGER, MPI_SUM, dups(i), ierr)
      call check(rsum(1) == size * i, 'reduction on the duplicate', rsum(1), size * i)
      call MPI_Comm_free(dups(i), ierr)
    end do
  end subroutine duplicate

end module idup_state

program f_idup
  use idup_state
  implicit none
  integer :: provided, ierr, t, round

  call integer_argument(1, nthreads)
  call integer_argument(2, nrounds)
  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  if (provided /= MPI_THREAD_MULTIPLE) then
    write(*, '(a,i0)') 'f_idup: MPI_THREAD_MULTIPLE not provided: ', provided
    call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  end if
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  allocate(comms(nthreads))
  do round = 1, nrounds
    do t = 1, nthreads
      call MPI_Comm_dup(MPI_COMM_WORLD, comms(t), ierr)
    end do
    !$omp parallel num_threads(nthreads) private(t)
    t = omp_get_thread_num() + 1
    call duplicate(comms(t), 10 * round + t)
    !$omp end parallel
    do t = 1, nthreads
      call MPI_Comm_free(comms(t), ierr)
    end do
  end do
  call finish('f_idup', rank, failures)

contains

#include "test_util.inc"

end program f_idup
