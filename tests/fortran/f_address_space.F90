! f_address_space: several MPI processes in one address space from Fortran (tsmpirun -asp K).
! The program initializes MPI at MPIX_THREAD_ATTACH_LEVEL (include/tsmpif.h); each of K OpenMP
! threads attaches to its own MPI process and, as that process, checks its rank and size in
! MPI_COMM_WORLD, MPI_Initialized, a ring MPI_Sendrecv, the same ring nonblocking (MPI_Irecv,
! MPI_Isend and MPI_Waitall with statuses; MPI_Irecv completed by an MPI_Test loop, MPI_Isend by
! MPI_Wait: on Open MPI every request crosses MPI_Request_c2f/f2c), MPI_Allreduce, MPI_Bcast and
! MPI_Barrier, MPI_Comm_split of MPI_COMM_WORLD (a communicator the engine makes, whose handle
! crosses to Fortran: MPI_Comm_c2f/f2c) with MPI_Allreduce on it, then calls MPI_Finalize for its
! process.
! Prints "f_address_space: rank R: ok" (or FAILED) per MPI process.
#include "binding.h"

program f_address_space
  use omp_lib
#if defined(TSMPI_MPIF_H)
  implicit none
  USE_BINDING
#else
  USE_BINDING
  implicit none
#endif
#include "tsmpif.h"
  integer :: provided, ierr, asp, vlen, failures
  logical :: flag
  character(len=32) :: val

  call MPI_Init_thread(MPIX_THREAD_ATTACH_LEVEL, provided, ierr)
  if (provided /= MPIX_THREAD_ATTACH_LEVEL) then
    print '(a,i0)', 'f_address_space: FAILED: provided ', provided
    stop 1
  end if
  call MPI_Info_get_valuelen(MPI_INFO_ENV, 'asp', vlen, flag, ierr)
  call MPI_Info_get(MPI_INFO_ENV, 'asp', len(val), val, flag, ierr)
  read (val(1:vlen), *) asp
  failures = 0
  !$omp parallel num_threads(asp) reduction(+:failures)
  failures = failures + as_process(omp_get_thread_num())
  !$omp end parallel
  if (failures /= 0) stop 1

contains

  integer function as_process(index) result(bad)
    integer, intent(in) :: index
    integer :: rank, size, ierr2, got, total, root_value, expect, got2, spins, hrank, hsize
    T_COMM :: half
    logical :: init, done
    T_STATUS(st)
    T_STATUSES(sts, 2)
    T_REQUEST :: reqs(2), req
    bad = 0
    call MPI_Initialized(init, ierr2)
    if (init) bad = bad + 1                      ! not attached yet
    call MPIX_THREAD_ATTACH(index, ierr2)
    if (ierr2 /= MPI_SUCCESS) bad = bad + 1
    call MPI_Initialized(init, ierr2)
    if (.not. init) bad = bad + 1
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr2)
    call MPI_Comm_size(MPI_COMM_WORLD, size, ierr2)
    if (mod(rank, asp) /= index .or. mod(size, asp) /= 0) bad = bad + 1
    call MPI_Sendrecv(rank, 1, MPI_INTEGER, mod(rank + 1, size), 5, got, 1, MPI_INTEGER, &
                      mod(rank + size - 1, size), 5, MPI_COMM_WORLD, st, ierr2)
    if (got /= mod(rank + size - 1, size) .or. ST_SOURCE(st) /= got) bad = bad + 1
    got2 = -1
    call MPI_Irecv(got2, 1, MPI_INTEGER, mod(rank + size - 1, size), 6, MPI_COMM_WORLD, reqs(1), ierr2)
    call MPI_Isend(rank, 1, MPI_INTEGER, mod(rank + 1, size), 6, MPI_COMM_WORLD, reqs(2), ierr2)
    call MPI_Waitall(2, reqs, sts, ierr2)
    if (ierr2 /= MPI_SUCCESS .or. got2 /= mod(rank + size - 1, size)) bad = bad + 1
    if (STS_SOURCE(sts, 1) /= got2 .or. STS_TAG(sts, 1) /= 6) bad = bad + 1
    if (.not. HANDLE_EQ(reqs(1), MPI_REQUEST_NULL) .or. .not. HANDLE_EQ(reqs(2), MPI_REQUEST_NULL)) bad = bad + 1
    got2 = -1
    call MPI_Irecv(got2, 1, MPI_INTEGER, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, req, ierr2)
    call MPI_Isend(rank + 100, 1, MPI_INTEGER, mod(rank + 1, size), 7, MPI_COMM_WORLD, reqs(2), ierr2)
    done = .false.
    spins = 0
    do while (.not. done .and. spins < 10000000)
      call MPI_Test(req, done, st, ierr2)
      spins = spins + 1
    end do
    if (.not. done .or. got2 /= 100 + mod(rank + size - 1, size) .or. ST_SOURCE(st) /= mod(rank + size - 1, size)) &
      bad = bad + 1
    call MPI_Wait(reqs(2), MPI_STATUS_IGNORE, ierr2)
    if (ierr2 /= MPI_SUCCESS .or. .not. HANDLE_EQ(reqs(2), MPI_REQUEST_NULL)) bad = bad + 1
    call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr2)
    if (total /= size * (size - 1) / 2) bad = bad + 1
    root_value = 1000 + rank
    call MPI_Bcast(root_value, 1, MPI_INTEGER, size - 1, MPI_COMM_WORLD, ierr2)
    expect = 1000 + size - 1
    if (root_value /= expect) bad = bad + 1
    call MPI_Barrier(MPI_COMM_WORLD, ierr2)
    call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half, ierr2)
    call MPI_Comm_rank(half, hrank, ierr2)
    call MPI_Comm_size(half, hsize, ierr2)
    if (ierr2 /= MPI_SUCCESS .or. hrank /= rank / 2 .or. hsize /= (size + 1 - mod(rank, 2)) / 2) bad = bad + 1
    call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, half, ierr2)
    expect = 0
    do got = mod(rank, 2), size - 1, 2
      expect = expect + got
    end do
    if (total /= expect) bad = bad + 1
    call MPI_Comm_free(half, ierr2)
    if (.not. HANDLE_EQ(half, MPI_COMM_NULL)) bad = bad + 1
    if (bad == 0) then
      print '(a,i0,a)', 'f_address_space: rank ', rank, ': ok'
    else
      print '(a,i0,a,i0,a)', 'f_address_space: rank ', rank, ': FAILED (', bad, ' checks)'
    end if
    call MPI_Finalize(ierr2)
  end function as_process

end program f_address_space
