! f_hang.F90: two ranks deadlocked in MPI_Recv from each other, called from a Fortran
! subroutine inside an OpenMP region, for the hang watchdog (TSMPI_HANG_TIMEOUT=2): each rank
! reports its blocked Fortran call with a backtrace through the Fortran frames, rank 0 names the
! cycle. alarm(8) ends the program a few seconds after the reports.
#include "binding.h"
program f_hang
  use, intrinsic :: iso_c_binding, only: c_int
  use omp_lib
#if defined(TSMPI_MPIF_H)
  implicit none
  USE_BINDING
#else
  USE_BINDING
  implicit none
#endif
  interface
    integer(c_int) function alarm(seconds) bind(C, name="alarm")
      import :: c_int
      integer(c_int), value :: seconds
    end function alarm
  end interface
  integer :: ierr, provided, rank, partner, ignored
  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  partner = 1 - rank
  ignored = alarm(8_c_int)
  !$omp parallel num_threads(2)
  if (omp_get_thread_num() == 1) call wait_for_partner(partner)
  !$omp end parallel
  print '(a,i0,a)', 'f_hang: rank ', rank, ': deadlock did not happen'
  call MPI_Finalize(ierr)
contains
  subroutine wait_for_partner(peer)
    integer, intent(in) :: peer
    integer :: value, ierr
    call MPI_Recv(value, 1, MPI_INTEGER, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  end subroutine wait_for_partner
end program f_hang
