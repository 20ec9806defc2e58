! hybrid_probe_recv.F90: the Fortran twin of hybrid_probe_recv.c, an unmodified hybrid program.
! Rank 1 sends 4000 messages of 1..17 integers (every element = the tag); rank 0's four OpenMP
! threads each loop MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG) -> MPI_Get_count -> allocate ->
! MPI_Recv(source, tag of the probe). Natively one thread's receive can take the message
! another thread probed: a wrong length (MPI_ERR_TRUNCATE, returned: MPI_ERRORS_RETURN) or wrong
! contents, counted as false matches. Built for mpif.h, use mpi (-DTSMPI_USE_MPI) or mpi_f08
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
  integer :: ierr, rank, provided, nthreads, per, bad, got
#if defined(TSMPI_F08)
  type(MPI_Status) :: st
#else
  integer :: st(MPI_STATUS_SIZE)
#endif
  integer, allocatable :: buf(:)
  integer :: i, n, src, tag, t
  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  nthreads = 4; per = 4000
  if (rank == 1) then
    do i = 1, per
      n = mod(i, 17) + 1
      allocate(buf(n)); buf = i
      call MPI_Send(buf, n, MPI_INTEGER, 0, i, MPI_COMM_WORLD, ierr)
      deallocate(buf)
    end do
    do t = 1, nthreads
      allocate(buf(1)); buf = 0
      call MPI_Send(buf, 1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
      deallocate(buf)
    end do
  else
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    bad = 0; got = 0
    !$omp parallel num_threads(nthreads) private(st, n, buf, ierr, src, tag) reduction(+:bad, got)
    do
      call MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st, ierr)
      call MPI_Get_count(st, MPI_INTEGER, n, ierr)
#if defined(TSMPI_F08)
      src = st%MPI_SOURCE; tag = st%MPI_TAG
#else
      src = st(MPI_SOURCE); tag = st(MPI_TAG)
#endif
      allocate(buf(n))
      call MPI_Recv(buf, n, MPI_INTEGER, src, tag, MPI_COMM_WORLD, st, ierr)
      if (ierr /= MPI_SUCCESS) then
        bad = bad + 1
      else if (tag /= 0) then
        if (n /= mod(tag, 17) + 1 .or. any(buf /= tag)) bad = bad + 1
        got = got + 1
      end if
      deallocate(buf)
      if (tag == 0) exit
    end do
    !$omp end parallel
    print '(a,i0,a,i0,a)', 'hybrid_probe_recv: received ', got, ' messages, ', bad, ' false matches'
  end if
  call MPI_Finalize(ierr)
end program hybrid_probe_recv
