! hybrid_probe_recv.F90: the Fortran + OpenMP twin of hybrid_probe_recv.c, an unmodified hybrid
! program of the kind tsmpi exists for. Rank 1 sends 4000 messages on 4 tags, of 4 to 8192
! integers (the largest go by rendezvous); rank 0's four OpenMP threads each loop
! MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG) -> MPI_Get_count -> allocate -> MPI_Recv(the probed
! source and tag). With several threads one thread can receive the message another probed (a
! false match): it then gets a message of another length (MPI_ERR_TRUNCATE, returned through
! MPI_ERRORS_RETURN, or fewer elements than it probed). The program counts false matches and
! checks that every message arrived exactly once with intact contents.
! It always ends: after its data the sender sends 4 end markers per tag; a thread stops at its
! first end marker, so a thread waiting on a stolen message's tag always finds one more; the
! main thread then receives what is left, up to the last end marker. Built for mpif.h, use mpi (-DTSMPI_USE_MPI) or mpi_f08
! (-DTSMPI_F08).
program hybrid_probe_recv
#if defined(TSMPI_F08)
  use mpi_f08
#elif defined(TSMPI_USE_MPI)
  use mpi
#endif
  use omp_lib
  implicit none
#if !defined(TSMPI_F08) && !defined(TSMPI_USE_MPI)
  include 'mpif.h'
#endif
  integer, parameter :: nthreads = 4, nmsg = 4000, ntags = 4
  integer, parameter :: lengths(5) = [4, 16, 128, 1024, 8192]
  integer :: ierr, rank, provided, false_matches, corrupt, lost, i, t, n, k, got, markers_left
  integer :: seen(0:nmsg - 1)
  integer, allocatable :: buf(:)

  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  if (rank == 1) then
    do i = 0, nmsg - 1
      n = length_of(i)
      allocate(buf(n))
      buf(1) = i
      buf(2) = n
      do k = 3, n
        buf(k) = i * 13 + k
      end do
      call MPI_Send(buf, n, MPI_INTEGER, 0, tag_of(i), MPI_COMM_WORLD, ierr)
      deallocate(buf)
    end do
    do t = 1, ntags
      do k = 1, nthreads
        call MPI_Send([-1, 2], 2, MPI_INTEGER, 0, t, MPI_COMM_WORLD, ierr)
      end do
    end do
  else if (rank == 0) then
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    seen = 0
    false_matches = 0
    corrupt = 0
    !$omp parallel num_threads(nthreads) private(n, got, buf, ierr) reduction(+:false_matches, corrupt)
    do
      call probe_and_receive(buf, n, got, ierr)
      if (ierr /= MPI_SUCCESS) then  ! truncated: another thread's, longer message
        false_matches = false_matches + 1
        deallocate(buf)
        cycle
      end if
      if (got /= n) false_matches = false_matches + 1  ! another thread's, shorter message
      if (buf(1) < 0) then
        deallocate(buf)
        exit
      end if
      call check(buf, got, corrupt)
      deallocate(buf)
    end do
    !$omp end parallel
    markers_left = ntags * nthreads - nthreads  ! each thread took one
    do while (markers_left > 0)  ! what the threads left: messages and end markers
      call probe_and_receive(buf, n, got, ierr)
      if (buf(1) < 0) then
        markers_left = markers_left - 1
      else
        call check(buf, n, corrupt)
      end if
      deallocate(buf)
    end do
    lost = count(seen /= 1)
    print '(a,i0,a,i0,a,i0,a,i0,a)', 'hybrid_probe_recv: received ', nmsg - count(seen == 0), ' messages, ', &
      false_matches, ' false matches, ', corrupt, ' corrupt, ', lost, ' lost or duplicated'
  end if
  call MPI_Finalize(ierr)

contains

  ! The pattern of the program: MPI_Probe(any source, any tag) -> MPI_Get_count -> allocate ->
  ! MPI_Recv of the probed source and tag. `received` is what the receive got, rc its error
  ! (with several threads: another thread's message, or MPI_ERR_TRUNCATE for a longer one).
  subroutine probe_and_receive(buf, probed, received, rc)
    integer, allocatable, intent(out) :: buf(:)
    integer, intent(out) :: probed, received, rc
    integer :: ierr
#if defined(TSMPI_F08)
    type(MPI_Status) :: st
#else
    integer :: st(MPI_STATUS_SIZE)
#endif
    call MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st, ierr)
    call MPI_Get_count(st, MPI_INTEGER, probed, ierr)
    allocate(buf(max(probed, 2)))
#if defined(TSMPI_F08)
    call MPI_Recv(buf, probed, MPI_INTEGER, st%MPI_SOURCE, st%MPI_TAG, MPI_COMM_WORLD, st, rc)
#else
    call MPI_Recv(buf, probed, MPI_INTEGER, st(MPI_SOURCE), st(MPI_TAG), MPI_COMM_WORLD, st, rc)
#endif
    received = 0
    if (rc == MPI_SUCCESS) call MPI_Get_count(st, MPI_INTEGER, received, ierr)
  end subroutine probe_and_receive

  integer function tag_of(seq)
    integer, intent(in) :: seq
    tag_of = mod(seq, ntags) + 1
  end function tag_of

  integer function length_of(seq)
    integer, intent(in) :: seq
    length_of = lengths(mod(seq / ntags, size(lengths)) + 1)
  end function length_of

  ! A received message: its length and contents, and that it is seen once.
  subroutine check(b, count_received, bad)
    integer, intent(in) :: b(:), count_received
    integer, intent(inout) :: bad
    integer :: j, seq
    seq = b(1)
    if (seq < 0 .or. seq >= nmsg) then
      bad = bad + 1
      return
    end if
    !$omp atomic
    seen(seq) = seen(seq) + 1
    if (count_received /= length_of(seq) .or. b(2) /= length_of(seq)) then
      bad = bad + 1
      return
    end if
    do j = 3, count_received
      if (b(j) /= seq * 13 + j) then
        bad = bad + 1
        return
      end if
    end do
  end subroutine check
end program hybrid_probe_recv
