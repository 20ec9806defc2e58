! f_threadcomm: thread-ranks from Fortran. MPIX_Threadcomm_init over MPI_COMM_WORLD with N
! OpenMP threads per process; in the parallel region each thread, between MPIX_Threadcomm_start
! and MPIX_Threadcomm_finish, is a rank of the threadcomm and checks: its rank and size (the ranks
! of all threads are 0 .. size-1 once each), a ring MPI_Sendrecv, the same ring nonblocking
! (MPI_Irecv, MPI_Isend, MPI_Waitall with statuses, then with MPI_STATUSES_IGNORE;
! MPI_Sendrecv with MPI_STATUS_IGNORE), MPI_Allreduce (also with MPI_IN_PLACE), MPI_Bcast, MPI_Gather,
! MPI_Allgather (also with MPI_IN_PLACE), MPI_Barrier, MPI_Comm_dup and MPI_Comm_split of the
! threadcomm (communicators the MPI's binding converts back to Fortran), a periodic Cartesian ring
! of the thread-ranks (MPI_Cart_create, MPI_Cart_shift, MPI_Neighbor_alltoall), the directed ring
! as a distributed graph (MPI_Dist_graph_create_adjacent with MPI_UNWEIGHTED,
! MPI_Dist_graph_neighbors_count, MPI_Neighbor_alltoall), MPI_Comm_group with
! MPI_Group_size/rank, MPI_Mprobe and MPI_Mrecv (a matched message crossing to Fortran),
! attributes (MPI_TAG_UB, and a keyval made in Fortran whose value each thread-rank sets and reads
! back as its own), and an error returned through MPI_ERRORS_RETURN set on the threadcomm (a send
! to rank size). After the region MPIX_Threadcomm_free sets the handle to MPI_COMM_NULL and a
! stale copy of it is refused with MPI_ERR_COMM. The mpi_f08 build calls MPIX_Threadcomm_*
! without IERROR (include/tsmpif08.h where the MPI's module lacks them).
! Arguments: threads per process (default 4), rounds (default 3).
! Prints "f_threadcomm: rank R: ok" (or FAILED) per process.
#include "binding.h"

program f_threadcomm
  use omp_lib
#if defined(TSMPI_MPIF_H)
  implicit none
  USE_BINDING
#else
  USE_BINDING
  implicit none
#endif
#if defined(TSMPI_F08) && !defined(TSMPI_MPI_HAS_THREADCOMM)
  include 'tsmpif08.h'
#endif
  integer :: provided, ierr, nthreads, rounds, wrank, wsize, failures, round, cls, key
  T_COMM :: tc, stale

  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, wrank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, wsize, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN, ierr)   ! errors of no communicator
  nthreads = 4
  rounds = 3
  call integer_argument(1, nthreads)
  call integer_argument(2, rounds)
  failures = 0
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, key, 0_MPI_ADDRESS_KIND, ierr)
  do round = 1, rounds
#if defined(TSMPI_F08)
    call MPIX_Threadcomm_init(MPI_COMM_WORLD, nthreads, tc)
#else
    call MPIX_Threadcomm_init(MPI_COMM_WORLD, nthreads, tc, ierr)
    if (ierr /= MPI_SUCCESS) failures = failures + 1
#endif
    if (HANDLE_EQ(tc, MPI_COMM_NULL)) then
      failures = failures + 1
      exit
    end if
    !$omp parallel num_threads(nthreads) reduction(+:failures)
    failures = failures + as_rank(tc, nthreads * wsize, key)
    !$omp end parallel
    stale = tc
    call MPIX_Threadcomm_free(tc, ierr)
    if (ierr /= MPI_SUCCESS .or. .not. HANDLE_EQ(tc, MPI_COMM_NULL)) failures = failures + 1
  end do
  call MPI_Comm_free_keyval(key, ierr)
  ! A copy of a freed threadcomm is a freed communicator.
  call MPI_Comm_size(stale, cls, ierr)
  call MPI_Error_class(ierr, cls, provided)
  if (cls /= MPI_ERR_COMM) then
    print '(a,i0)', 'f_threadcomm: MPI_Comm_size of a freed threadcomm gave class ', cls
    failures = failures + 1
  end if
  call finish('f_threadcomm', wrank, failures)

contains

  integer function as_rank(tc, expect_size, key) result(bad)
    T_COMM, intent(in) :: tc
    integer, intent(in) :: expect_size, key
    T_COMM :: dup, half, ring
    T_GROUP :: grp
    T_MESSAGE :: msg
    T_REQUEST :: reqs(2)
    T_STATUS(st)
    T_STATUSES(sts, 2)
    integer :: ierr2, rank, size, left, right, got, got2, total, value, n, grank, hrank, hsize, cls2
    integer :: gathered(1024), dims1(1), src, dst, sendnb(2), recvnb(2)
    logical :: periods1(1)
    integer(kind=MPI_ADDRESS_KIND) :: attr
    logical :: found
    bad = 0
#if defined(TSMPI_F08)
    call MPIX_Threadcomm_start(tc)
#else
    call MPIX_Threadcomm_start(tc, ierr2)
    if (ierr2 /= MPI_SUCCESS) bad = bad + 1
#endif
    call MPI_Comm_rank(tc, rank, ierr2)
    call MPI_Comm_size(tc, size, ierr2)
    if (size /= expect_size .or. rank < 0 .or. rank >= size) then
      print '(a,i0,a,i0)', 'f_threadcomm: rank ', rank, ' size ', size
      bad = bad + 1
    end if
    left = mod(rank + size - 1, size)
    right = mod(rank + 1, size)
    ! Every rank once: the sum of the ranks.
    call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, tc, ierr2)
    if (ierr2 /= MPI_SUCCESS .or. total /= size * (size - 1) / 2) bad = bad + 1
    call MPI_Sendrecv(rank, 1, MPI_INTEGER, right, 5, got, 1, MPI_INTEGER, left, 5, tc, st, ierr2)
    if (got /= left .or. ST_SOURCE(st) /= left .or. ST_TAG(st) /= 5) bad = bad + 1
    got2 = -1
    call MPI_Irecv(got2, 1, MPI_INTEGER, MPI_ANY_SOURCE, 6, tc, reqs(1), ierr2)
    call MPI_Isend(rank + 1000, 1, MPI_INTEGER, right, 6, tc, reqs(2), ierr2)
    call MPI_Waitall(2, reqs, sts, ierr2)
    if (ierr2 /= MPI_SUCCESS .or. got2 /= left + 1000 .or. STS_SOURCE(sts, 1) /= left) bad = bad + 1
    if (.not. HANDLE_EQ(reqs(1), MPI_REQUEST_NULL) .or. .not. HANDLE_EQ(reqs(2), MPI_REQUEST_NULL)) bad = bad + 1
    ! The Fortran sentinels: MPI_STATUSES_IGNORE, MPI_STATUS_IGNORE, MPI_IN_PLACE.
    got2 = -1
    call MPI_Irecv(got2, 1, MPI_INTEGER, left, 8, tc, reqs(1), ierr2)
    call MPI_Isend(rank + 3000, 1, MPI_INTEGER, right, 8, tc, reqs(2), ierr2)
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr2)
    if (ierr2 /= MPI_SUCCESS .or. got2 /= left + 3000) bad = bad + 1
    call MPI_Sendrecv(rank, 1, MPI_INTEGER, right, 11, got, 1, MPI_INTEGER, left, 11, tc, MPI_STATUS_IGNORE, ierr2)
    if (ierr2 /= MPI_SUCCESS .or. got /= left) bad = bad + 1
    total = rank
    call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_SUM, tc, ierr2)
    if (ierr2 /= MPI_SUCCESS .or. total /= size * (size - 1) / 2) bad = bad + 1
    value = 7000 + rank
    call MPI_Bcast(value, 1, MPI_INTEGER, size - 1, tc, ierr2)
    if (value /= 7000 + size - 1) bad = bad + 1
    gathered = -1
    call MPI_Gather(rank * 3, 1, MPI_INTEGER, gathered, 1, MPI_INTEGER, 0, tc, ierr2)
    if (rank == 0) then
      do n = 1, size
        if (gathered(n) /= (n - 1) * 3) bad = bad + 1
      end do
    end if
    ! Allgather: across processes one exchange per process (collectives_processes.cpp).
    gathered = -1
    call MPI_Allgather(rank * 5 + 1, 1, MPI_INTEGER, gathered, 1, MPI_INTEGER, tc, ierr2)
    if (ierr2 /= MPI_SUCCESS) bad = bad + 1
    do n = 1, size
      if (gathered(n) /= (n - 1) * 5 + 1) bad = bad + 1
    end do
    if (gathered(size + 1) /= -1) bad = bad + 1
    gathered = -1
    gathered(rank + 1) = rank * 7
    call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gathered, 1, MPI_INTEGER, tc, ierr2)
    if (ierr2 /= MPI_SUCCESS) bad = bad + 1
    do n = 1, size
      if (gathered(n) /= (n - 1) * 7) bad = bad + 1
    end do
    call MPI_Barrier(tc, ierr2)
    if (ierr2 /= MPI_SUCCESS) bad = bad + 1
    ! Communicators made from the threadcomm cross to Fortran and back.
    call MPI_Comm_dup(tc, dup, ierr2)
    call MPI_Comm_rank(dup, n, ierr2)
    if (n /= rank) bad = bad + 1
    call MPI_Allreduce(1, total, 1, MPI_INTEGER, MPI_SUM, dup, ierr2)
    if (total /= size) bad = bad + 1
    call MPI_Comm_split(tc, mod(rank, 2), -rank, half, ierr2)
    call MPI_Comm_rank(half, hrank, ierr2)
    call MPI_Comm_size(half, hsize, ierr2)
    if (hsize /= (size + 1 - mod(rank, 2)) / 2) bad = bad + 1
    call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_MAX, half, ierr2)
    if (hrank == 0 .and. total /= rank) bad = bad + 1       ! key -rank: the highest rank first
    call MPI_Comm_free(half, ierr2)
    ! A periodic ring: block 1 comes from the source (left), which sent it its block for the
    ! destination; block 2 from the destination (right), its block for the source.
    dims1(1) = size
    periods1(1) = .true.
    call MPI_Cart_create(tc, 1, dims1, periods1, .false., ring, ierr2)
    if (ierr2 /= MPI_SUCCESS) bad = bad + 1
    call MPI_Cart_shift(ring, 0, 1, src, dst, ierr2)
    if (src /= left .or. dst /= right) bad = bad + 1
    sendnb(1) = rank * 10
    sendnb(2) = rank * 10 + 1
    recvnb = -1
    call MPI_Neighbor_alltoall(sendnb, 1, MPI_INTEGER, recvnb, 1, MPI_INTEGER, ring, ierr2)
    if (ierr2 /= MPI_SUCCESS .or. recvnb(1) /= left * 10 + 1 .or. recvnb(2) /= right * 10) then
      print '(a,i0,a,2i6)', 'f_threadcomm: thread-rank ', rank, ' Neighbor_alltoall on the ring got ', recvnb
      bad = bad + 1
    end if
    call MPI_Comm_free(ring, ierr2)
    ! The directed ring as a distributed graph, unweighted (the binding converts MPI_UNWEIGHTED):
    ! its one block comes from the left.
    call MPI_Dist_graph_create_adjacent(tc, 1, [left], MPI_UNWEIGHTED, 1, [right], MPI_UNWEIGHTED, &
                                        MPI_INFO_NULL, .false., ring, ierr2)
    if (ierr2 /= MPI_SUCCESS) bad = bad + 1
    call MPI_Dist_graph_neighbors_count(ring, src, dst, found, ierr2)
    if (ierr2 /= MPI_SUCCESS .or. src /= 1 .or. dst /= 1 .or. found) bad = bad + 1
    recvnb = -1
    call MPI_Neighbor_alltoall(sendnb, 1, MPI_INTEGER, recvnb, 1, MPI_INTEGER, ring, ierr2)
    if (ierr2 /= MPI_SUCCESS .or. recvnb(1) /= left * 10) then
      print '(a,i0,a,i6)', 'f_threadcomm: thread-rank ', rank, ' Neighbor_alltoall on the graph got ', recvnb(1)
      bad = bad + 1
    end if
    call MPI_Comm_free(ring, ierr2)
    call MPI_Comm_free(dup, ierr2)
    if (.not. HANDLE_EQ(dup, MPI_COMM_NULL) .or. .not. HANDLE_EQ(half, MPI_COMM_NULL)) bad = bad + 1
    ! A group of thread-ranks.
    call MPI_Comm_group(tc, grp, ierr2)
    call MPI_Group_size(grp, n, ierr2)
    call MPI_Group_rank(grp, grank, ierr2)
    if (n /= size .or. grank /= rank) bad = bad + 1
    call MPI_Group_free(grp, ierr2)
    ! A matched message.
    call MPI_Send(rank + 2000, 1, MPI_INTEGER, right, 9, tc, ierr2)
    call MPI_Mprobe(left, 9, tc, msg, st, ierr2)
    if (ierr2 /= MPI_SUCCESS .or. ST_SOURCE(st) /= left) bad = bad + 1
    got = -1
    call MPI_Mrecv(got, 1, MPI_INTEGER, msg, st, ierr2)
    if (got /= left + 2000 .or. .not. HANDLE_EQ(msg, MPI_MESSAGE_NULL)) bad = bad + 1
    ! Attributes: the process's MPI_TAG_UB, and a value of each thread-rank's own.
    call MPI_Comm_get_attr(tc, MPI_TAG_UB, attr, found, ierr2)
    if (ierr2 /= MPI_SUCCESS .or. .not. found .or. attr < 32767) bad = bad + 1
    call MPI_Comm_get_attr(tc, key, attr, found, ierr2)
    if (ierr2 /= MPI_SUCCESS .or. found) bad = bad + 1
    call MPI_Comm_set_attr(tc, key, int(rank * 10 + 1, MPI_ADDRESS_KIND), ierr2)
    call MPI_Barrier(tc, ierr2)
    call MPI_Comm_get_attr(tc, key, attr, found, ierr2)
    if (ierr2 /= MPI_SUCCESS .or. .not. found .or. attr /= rank * 10 + 1) then
      print '(a,i0,a,l1,a,i0)', 'f_threadcomm: thread-rank ', rank, ' attribute found ', found, ' value ', attr
      bad = bad + 1
    end if
    call MPI_Comm_delete_attr(tc, key, ierr2)
    call MPI_Comm_get_attr(tc, key, attr, found, ierr2)
    if (ierr2 /= MPI_SUCCESS .or. found) bad = bad + 1
    ! An error comes back through the threadcomm's error handler.
    call MPI_Comm_set_errhandler(tc, MPI_ERRORS_RETURN, ierr2)
    call MPI_Send(rank, 1, MPI_INTEGER, size, 10, tc, ierr2)
    call MPI_Error_class(ierr2, cls2, n)
    if (cls2 /= MPI_ERR_RANK) then
      print '(a,i0)', 'f_threadcomm: a send to rank size gave class ', cls2
      bad = bad + 1
    end if
#if defined(TSMPI_F08)
    call MPIX_Threadcomm_finish(tc)
#else
    call MPIX_Threadcomm_finish(tc, ierr2)
    if (ierr2 /= MPI_SUCCESS) bad = bad + 1
#endif
    if (bad /= 0) print '(a,i0,a,i0,a)', 'f_threadcomm: thread-rank ', rank, ': ', bad, ' checks failed'
  end function as_rank

#include "test_util.inc"

end program f_threadcomm
