! f_request_table: requests made and completed by many OpenMP threads at once, in Fortran. A
! request's INTEGER is an entry of the MPI's request table: Open MPI's binding makes it with
! MPI_Request_c2f after the C call returned and converts it back with MPI_Request_f2c at every
! wait, outside the C call; below MPI_THREAD_MULTIPLE that table takes no lock. THREADS threads
! (default 8), each ROUNDS times (default 300) on its own duplicate of MPI_COMM_SELF: post 256
! receives (no two pending ones may share an INTEGER), send the messages to itself, complete
! everything with one MPI_Waitall and check every message. Two requests handed one INTEGER is
! the failure looked for (one thread's MPI_Waitall then waits on another thread's request): the
! thread that sees it stops the program with MPI_Abort rather than hang.
!
! usage: f_request_table [THREADS [ROUNDS]]       (any number of ranks; 2 in the tests)
! Prints "f_request_table: rank R: ok" (or FAILED, with exit status 1) per rank.
#include "binding.h"
#if defined(TSMPI_F08)
#define REQUEST_INTEGER(r) r%MPI_VAL
#else
#define REQUEST_INTEGER(r) r
#endif

module request_table_state
  use omp_lib
#if defined(TSMPI_MPIF_H)
  implicit none
  USE_BINDING
#else
  USE_BINDING
  implicit none
#endif
  integer, parameter :: nbatch = 256
  integer :: rank, nthreads = 8, nrounds = 300
  character(len=*), parameter :: test_name = 'f_request_table'
  integer :: failures = 0
  T_COMM, allocatable :: selves(:)

contains

#include "thread_check.inc"

  subroutine rounds(t)
    integer, intent(in) :: t
    T_REQUEST :: reqs(2 * nbatch)
    integer :: inbox(nbatch), outbox(nbatch), pending(nbatch), round, i, j, ierr, bad
    do round = 1, nrounds
      do j = 1, nbatch
        inbox(j) = -1
        outbox(j) = (t * nrounds + round) * nbatch + j
        call MPI_Irecv(inbox(j), 1, MPI_INTEGER, 0, j, selves(t + 1), reqs(j), ierr)
        call check(ierr == MPI_SUCCESS, 'MPI_Irecv returned', ierr, MPI_SUCCESS)
        pending(j) = REQUEST_INTEGER(reqs(j))
      end do
      bad = 0
      do j = 2, nbatch
        do i = 1, j - 1
          if (pending(i) == pending(j)) then
            if (bad == 0) call check(.false., 'a request INTEGER of two pending receives', pending(j), 0)
            bad = bad + 1
          end if
        end do
      end do
      call check(bad == 0, 'pairs of pending receives that share a request INTEGER', bad, 0)
      if (bad /= 0) then
        write(*, '(a,a,i0,a)') test_name, ': rank ', rank, ': FAILED (request table corrupted)'
        flush(6)
        call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
      end if
      do j = 1, nbatch
        call MPI_Isend(outbox(j), 1, MPI_INTEGER, 0, j, selves(t + 1), reqs(nbatch + j), ierr)
      end do
      call MPI_Waitall(2 * nbatch, reqs, MPI_STATUSES_IGNORE, ierr)
      call check(ierr == MPI_SUCCESS, 'MPI_Waitall returned', ierr, MPI_SUCCESS)
      bad = 0
      do j = 1, nbatch
        if (inbox(j) /= outbox(j)) bad = bad + 1
      end do
      call check(bad == 0, 'messages received wrong', bad, 0)
    end do
  end subroutine rounds

end module request_table_state

program f_request_table
  use request_table_state
  implicit none
  integer :: provided, ierr, t

  call integer_argument(1, nthreads)
  call integer_argument(2, nrounds)
  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  if (provided /= MPI_THREAD_MULTIPLE) then
    write(*, '(a,i0)') 'f_request_table: MPI_THREAD_MULTIPLE not provided: ', provided
    call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  end if
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  allocate(selves(nthreads))
  do t = 1, nthreads
    call MPI_Comm_dup(MPI_COMM_SELF, selves(t), ierr)
  end do
  !$omp parallel num_threads(nthreads)
  call rounds(omp_get_thread_num())
  !$omp end parallel
  do t = 1, nthreads
    call MPI_Comm_free(selves(t), ierr)
  end do
  call finish(test_name, rank, failures)

contains

#include "test_util.inc"

end program f_request_table
