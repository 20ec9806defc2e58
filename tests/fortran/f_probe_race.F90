! f_probe_race: the probe -> allocate -> receive race of a hybrid program, in Fortran.
! Rank 0 runs THREADS OpenMP threads (default 4) that each loop
!   MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG) -> MPI_Get_count -> allocate exactly that many
!   integers -> MPI_Recv(the probed source and tag)
! while every other rank sends MESSAGES messages (default 2000) of varying lengths on 4 tags.
! A message is [sender, tag, length, seq, fill...]: the receiver sees a false match (a receive
! that did not get the message its thread probed: other length, truncation) and checks every
! message's contents, that each arrived exactly once, and that per thread, sender and tag the
! sequence numbers increase (non-overtaking). MPI_ERRORS_RETURN on the communicator: a
! truncation is counted, not fatal.
!
! Termination: after its data each sender sends THREADS end markers (seq -1) on every tag, so a
! thread whose receive waits on a stolen message's (source, tag) natively still finds one. The
! end markers are counted across threads and only the last THREADS of them (all senders' data
! is then matched: per sender the markers follow the data) end a thread each. A watchdog (the
! region's thread 0, sleeping between looks) ends a run that made no progress for 30 s with
! MPI_Abort, so a native run that strands a thread fails instead of hanging.
!
! usage: f_probe_race [THREADS [MESSAGES]]   (2 or more ranks)
! Prints "f_probe_race: rank 0: received N messages, false matches K" and a line per rank
! "f_probe_race: rank R: ok" (or FAILED, with exit status 1). Correct under tsmpi's probe
! policies; natively with several threads it may false-match, abort or fail.
#include "binding.h"

module race_state
  use omp_lib
  use, intrinsic :: iso_c_binding, only: c_int
#if defined(TSMPI_MPIF_H)
  implicit none
  USE_BINDING
#else
  USE_BINDING
  implicit none
#endif
  integer, parameter :: ntags = 4, header = 4, nlens = 5
  ! Lengths in integers (the largest, 36 KB, goes by rendezvous on both MPIs).
  integer, parameter :: lens(nlens) = [20, 6, 1200, 150, 9000]
  integer, parameter :: stall_limit_ms = 30000
  integer :: nthreads = 4, nmsg = 2000, nsenders, total_stops
  T_COMM :: comm
  integer, allocatable :: seen(:)            ! per (sender, seq): how often received
  ! Shared counters, updated with !$omp atomic.
  integer :: data_received = 0, false_matches = 0, truncated = 0, corrupt = 0
  integer :: order_violations = 0, other_errors = 0, stops_received = 0
  integer :: progress = 0, threads_done = 0

  interface
    integer(c_int) function c_usleep(us) bind(C, name='usleep')
      import :: c_int
      integer(c_int), value :: us
    end function c_usleep
  end interface

contains

  integer function msg_len(seq)
    integer, intent(in) :: seq
    ! Consecutive messages on one tag differ in length, so that most false matches show.
    msg_len = lens(mod(seq / ntags, nlens) + 1) + mod(seq, 7)
  end function msg_len

  integer function fill(sender, seq, i)
    integer, intent(in) :: sender, seq, i
    fill = mod(seq * 13 + sender * 7 + i * 3, 1000003)
  end function fill

  subroutine send_all(rank)
    integer, intent(in) :: rank
    integer, allocatable :: buf(:)
    integer :: seq, tag, len, i, t, ierr
    allocate(buf(maxval(lens) + 7))
    do seq = 0, nmsg - 1
      tag = mod(seq, ntags)
      len = msg_len(seq)
      buf(1:header) = [rank, tag, len, seq]
      do i = header + 1, len
        buf(i) = fill(rank, seq, i)
      end do
      call MPI_Send(buf, len, MPI_INTEGER, 0, tag, comm, ierr)
      if (ierr /= MPI_SUCCESS) call die('MPI_Send failed')
    end do
    do tag = 0, ntags - 1
      do t = 1, nthreads
        buf(1:header) = [rank, tag, header, -1]
        call MPI_Send(buf, header, MPI_INTEGER, 0, tag, comm, ierr)
        if (ierr /= MPI_SUCCESS) call die('MPI_Send of an end marker failed')
      end do
    end do
    deallocate(buf)
  end subroutine send_all

  ! One receiving thread: probe -> allocate -> receive until one of the last end markers.
  subroutine receive_loop()
    T_STATUS(probed)
    T_STATUS(got)
    integer, allocatable :: buf(:)
    integer, allocatable :: last(:, :)   ! per (sender, tag): the last seq this thread received
    integer :: src, tag, count, got_count, ierr, cls, k, i, hs, ht, hl, hq
    logical :: bad
    allocate(last(1:nsenders, 0:ntags - 1))
    last = -1
    do
      call MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, probed, ierr)
      if (ierr /= MPI_SUCCESS) call die('MPI_Probe failed')
      src = ST_SOURCE(probed)
      tag = ST_TAG(probed)
      call MPI_Get_count(probed, MPI_INTEGER, count, ierr)
      allocate(buf(count))
      call MPI_Recv(buf, count, MPI_INTEGER, src, tag, comm, got, ierr)
      !$omp atomic
      progress = progress + 1
      if (ierr /= MPI_SUCCESS) then
        call MPI_Error_class(ierr, cls, k)
        if (cls == MPI_ERR_TRUNCATE) then
          ! A longer message than the probed one: its contents are lost.
          !$omp atomic
          truncated = truncated + 1
          !$omp atomic
          false_matches = false_matches + 1
        else
          !$omp atomic
          other_errors = other_errors + 1
        end if
        deallocate(buf)
        cycle
      end if
      call MPI_Get_count(got, MPI_INTEGER, got_count, ierr)
      if (got_count /= count .or. ST_SOURCE(got) /= src .or. ST_TAG(got) /= tag) then
        !$omp atomic
        false_matches = false_matches + 1
      end if
      if (got_count < header) then
        !$omp atomic
        corrupt = corrupt + 1
        deallocate(buf)
        cycle
      end if
      hs = buf(1)
      ht = buf(2)
      hl = buf(3)
      hq = buf(4)
      bad = hs /= ST_SOURCE(got) .or. ht /= ST_TAG(got) .or. hl /= got_count &
            .or. hs < 1 .or. hs > nsenders .or. ht < 0 .or. ht >= ntags .or. hq >= nmsg .or. hq < -1
      if (.not. bad .and. hq >= 0) then
        if (hl /= msg_len(hq) .or. ht /= mod(hq, ntags)) bad = .true.
        do i = header + 1, got_count
          if (buf(i) /= fill(hs, hq, i)) then
            bad = .true.
            exit
          end if
        end do
      end if
      deallocate(buf)
      if (bad) then
        !$omp atomic
        corrupt = corrupt + 1
        cycle
      end if
      if (hq < 0) then
        !$omp atomic capture
        stops_received = stops_received + 1
        k = stops_received
        !$omp end atomic
        if (k > total_stops - nthreads) exit
        cycle
      end if
      !$omp atomic
      seen((hs - 1) * nmsg + hq + 1) = seen((hs - 1) * nmsg + hq + 1) + 1
      !$omp atomic
      data_received = data_received + 1
      if (hq <= last(hs, ht)) then
        !$omp atomic
        order_violations = order_violations + 1
      end if
      last(hs, ht) = hq
    end do
    deallocate(last)
    !$omp atomic
    threads_done = threads_done + 1
  end subroutine receive_loop

  ! Thread 0 of the receiving region: ends the job if no receive completed for stall_limit_ms.
  subroutine watchdog()
    integer :: done, now, last_progress, idle_ms, rc, ierr
    last_progress = -1
    idle_ms = 0
    do
      rc = c_usleep(100000_c_int)
      !$omp atomic read
      done = threads_done
      if (done == nthreads) exit
      !$omp atomic read
      now = progress
      if (now /= last_progress) then
        last_progress = now
        idle_ms = 0
        cycle
      end if
      idle_ms = idle_ms + 100
      if (idle_ms >= stall_limit_ms) then
        call report('stalled')
        write(*, '(a,i0,a,i0,a)') 'f_probe_race: rank 0: no progress for ', stall_limit_ms / 1000, &
          ' s, ', nthreads - done, ' threads stranded: FAILED'
        flush(6)
        call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
      end if
    end do
  end subroutine watchdog

  subroutine report(what)
    character(len=*), intent(in) :: what
    integer :: lost, duplicated
    lost = count(seen == 0)
    duplicated = count(seen > 1)
    !$omp flush
    write(*, '(a,i0,a,i0)') 'f_probe_race: rank 0: received ', data_received, ' messages, false matches ', &
      false_matches
    write(*, '(a,i0,a,i0,a,a,a,i0,a,i0,a,i0,a,i0,a,i0,a,i0)') 'f_probe_race: rank 0: ', nthreads, ' threads, ', &
      nsenders, ' senders (', what, '): truncated ', truncated, ', corrupt ', corrupt, &
      ', order violations ', order_violations, ', lost ', lost, ', duplicated ', duplicated, &
      ', other errors ', other_errors
    flush(6)
  end subroutine report

  subroutine die(what)
    character(len=*), intent(in) :: what
    integer :: ierr
    write(*, '(a,a)') 'f_probe_race: ', what
    flush(6)
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end subroutine die

end module race_state

program f_probe_race
  use race_state
  implicit none
  integer :: provided, rank, size, ierr, failures, tid

  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call integer_argument(1, nthreads)
  call integer_argument(2, nmsg)
  if (provided /= MPI_THREAD_MULTIPLE .or. size < 2 .or. nthreads < 1 .or. nmsg < 1) then
    if (rank == 0) write(*, '(a,i0,a)') 'f_probe_race: needs MPI_THREAD_MULTIPLE (got ', provided, &
      '), 2+ ranks, THREADS and MESSAGES > 0'
    flush(6)
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  nsenders = size - 1
  total_stops = nsenders * ntags * nthreads
  call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
  call MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN, ierr)
  failures = 0

  if (rank /= 0) then
    call send_all(rank)
  else
    allocate(seen(nsenders * nmsg))
    seen = 0
    call omp_set_dynamic(.false.)
    !$omp parallel num_threads(nthreads + 1) private(tid)
    tid = omp_get_thread_num()
    if (tid == 0) then
      call watchdog()
    else
      call receive_loop()
    end if
    !$omp end parallel
    call report('done')
    if (false_matches /= 0 .or. data_received /= nsenders * nmsg .or. corrupt /= 0 .or. &
        order_violations /= 0 .or. other_errors /= 0 .or. count(seen /= 1) /= 0) failures = 1
    deallocate(seen)
  end if

  call MPI_Comm_free(comm, ierr)
  call finish('f_probe_race', rank, failures)
contains
#include "test_util.inc"
end program f_probe_race
