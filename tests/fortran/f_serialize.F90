! f_serialize: threads in collectives and communicator constructors at once, in Fortran: what
! serialize mode (TSMPI_UNDERLYING_LEVEL below multiple) must serialize without deadlock.
! MPI_Init_thread asks for MPI_THREAD_MULTIPLE and must get it. The main thread makes one
! duplicate of MPI_COMM_WORLD per OpenMP thread (THREADS, default 3); then each thread, on its
! own communicator, runs ROUNDS rounds (default 200) of MPI_Allreduce, MPI_Bcast, MPI_Barrier
! and MPI_Sendrecv with its neighbours, and every 20th round (offset per thread) MPI_Comm_dup
! and MPI_Comm_split of its communicator, checked by a reduction on each, and MPI_Comm_free of
! both. Threads start in opposite orders on even and odd ranks. Every result is checked.
!
! usage: f_serialize [THREADS [ROUNDS]]       (any number of ranks; 3 in the tests)
! Prints "f_serialize: rank R: ok" (or FAILED, with exit status 1) per rank.
#include "binding.h"

module serialize_state
  use omp_lib
  use, intrinsic :: iso_c_binding, only: c_int
#if defined(TSMPI_MPIF_H)
  implicit none
  USE_BINDING
#else
  USE_BINDING
  implicit none
#endif
  integer :: rank, size, nthreads = 3, nrounds = 200
  character(len=*), parameter :: test_name = 'f_serialize'
  integer :: failures = 0
  T_COMM, allocatable :: comms(:)

  interface
    integer(c_int) function c_usleep(us) bind(C, name='usleep')
      import :: c_int
      integer(c_int), value :: us
    end function c_usleep
  end interface

contains

#include "thread_check.inc"

  subroutine ok_call(ierr, what)
    integer, intent(in) :: ierr
    character(len=*), intent(in) :: what
    call check(ierr == MPI_SUCCESS, what // ' returned', ierr, MPI_SUCCESS)
  end subroutine ok_call

  ! One round of collectives and a neighbour exchange on comm; salt varies per round and thread.
  subroutine collectives(comm, salt)
    T_COMM, intent(in) :: comm
    integer, intent(in) :: salt
    integer :: v(2), sum(2), root, bval(3), sendv(2), recvv(2), right, left, ierr
    T_STATUS(st)
    v = [rank + salt, 1]
    call MPI_Allreduce(v, sum, 2, MPI_INTEGER, MPI_SUM, comm, ierr)
    call ok_call(ierr, 'MPI_Allreduce')
    call check(sum(1) == size * (size - 1) / 2 + size * salt, 'allreduce sum', sum(1), size * (size - 1) / 2 + size * salt)
    call check(sum(2) == size, 'allreduce count', sum(2), size)
    root = mod(salt, size)
    if (rank == root) then
      bval = [salt * 3, -salt, salt + 7]
    else
      bval = -1
    end if
    call MPI_Bcast(bval, 3, MPI_INTEGER, root, comm, ierr)
    call ok_call(ierr, 'MPI_Bcast')
    call check(bval(1) == salt * 3 .and. bval(2) == -salt .and. bval(3) == salt + 7, 'bcast', bval(1), salt * 3)
    call MPI_Barrier(comm, ierr)
    call ok_call(ierr, 'MPI_Barrier')
    right = mod(rank + 1, size)
    left = mod(rank + size - 1, size)
    sendv = [rank * 1000 + salt, salt]
    recvv = -1
    call MPI_Sendrecv(sendv, 2, MPI_INTEGER, right, salt, recvv, 2, MPI_INTEGER, left, salt, comm, st, ierr)
    call ok_call(ierr, 'MPI_Sendrecv')
    call check(recvv(1) == left * 1000 + salt .and. recvv(2) == salt, 'sendrecv from left', recvv(1), left * 1000 + salt)
    call check(ST_SOURCE(st) == left .and. ST_TAG(st) == salt, 'sendrecv status source', ST_SOURCE(st), left)
  end subroutine collectives

  ! A duplicate and a split of comm, each checked, then freed.
  subroutine constructors(comm, salt)
    T_COMM, intent(in) :: comm
    integer, intent(in) :: salt
    T_COMM :: dup, half
    integer :: r, s, one(1), total(1), mine(1), expect, q, ierr
    call MPI_Comm_dup(comm, dup, ierr)
    call ok_call(ierr, 'MPI_Comm_dup')
    call MPI_Comm_size(dup, s, ierr)
    call MPI_Comm_rank(dup, r, ierr)
    call check(s == size .and. r == rank, 'dup size', s, size)
    one = salt
    call MPI_Allreduce(one, total, 1, MPI_INTEGER, MPI_SUM, dup, ierr)
    call ok_call(ierr, 'MPI_Allreduce on the duplicate')
    call check(total(1) == size * salt, 'allreduce on the duplicate', total(1), size * salt)
    ! Even and odd ranks, in reversed order.
    call MPI_Comm_split(comm, mod(rank, 2), -rank, half, ierr)
    call ok_call(ierr, 'MPI_Comm_split')
    call MPI_Comm_size(half, s, ierr)
    call MPI_Comm_rank(half, r, ierr)
    call check(s == (size + 1 - mod(rank, 2)) / 2, 'split size', s, (size + 1 - mod(rank, 2)) / 2)
    expect = 0
    do q = rank + 2, size - 1, 2
      expect = expect + 1
    end do
    call check(r == expect, 'split rank (reversed key)', r, expect)
    mine = rank
    call MPI_Allreduce(mine, total, 1, MPI_INTEGER, MPI_SUM, half, ierr)
    expect = 0
    do q = mod(rank, 2), size - 1, 2
      expect = expect + q
    end do
    call check(total(1) == expect, 'allreduce on the split', total(1), expect)
    call MPI_Comm_free(half, ierr)
    call ok_call(ierr, 'MPI_Comm_free of the split')
    call MPI_Comm_free(dup, ierr)
    call ok_call(ierr, 'MPI_Comm_free of the duplicate')
    call check(HANDLE_EQ(dup, MPI_COMM_NULL) .and. HANDLE_EQ(half, MPI_COMM_NULL), 'freed handles null', 0, 0)
  end subroutine constructors

  subroutine worker(t)
    integer, intent(in) :: t
    integer :: delay, round, rc
    ! Opposite orders: thread 0 starts first on even ranks and last on odd ranks.
    if (mod(rank, 2) == 1) then
      delay = t
    else
      delay = nthreads - 1 - t
    end if
    rc = c_usleep(int(2000 * delay, c_int))
    do round = 0, nrounds - 1
      call collectives(comms(t + 1), round + t)
      if (mod(round, 20) == mod(t * 7, 20)) call constructors(comms(t + 1), round + 1)
    end do
  end subroutine worker

end module serialize_state

program f_serialize
  use serialize_state
  implicit none
  integer :: provided, queried, ierr, t

  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call integer_argument(1, nthreads)
  call integer_argument(2, nrounds)
  call MPI_Query_thread(queried, ierr)  ! answered by tsmpi, as MPI_Init_thread's provided
  if (provided /= MPI_THREAD_MULTIPLE .or. queried /= MPI_THREAD_MULTIPLE) then
    write(*, '(a,i0,a,i0,a)') 'f_serialize: rank ', rank, ': MPI_THREAD_MULTIPLE not provided (', provided, ')'
    flush(6)
    call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  end if
  allocate(comms(nthreads))
  do t = 1, nthreads
    call MPI_Comm_dup(MPI_COMM_WORLD, comms(t), ierr)
  end do
  call omp_set_dynamic(.false.)
  !$omp parallel num_threads(nthreads)
  call worker(omp_get_thread_num())
  !$omp end parallel
  do t = 1, nthreads
    call MPI_Comm_free(comms(t), ierr)
  end do
  deallocate(comms)
  call finish('f_serialize', rank, failures)
contains
#include "test_util.inc"
end program f_serialize
