! f_spawn.F90: MPI_Comm_spawn from Fortran with the sentinels MPI_ARGV_NULL and
! MPI_ERRCODES_IGNORE (Open MPI; MPICH's UCX build cannot spawn). The parent spawns one copy of
! itself, sends it a value over the intercommunicator and checks the reply.
#include "binding.h"
program f_spawn
#if defined(TSMPI_MPIF_H)
  implicit none
  USE_BINDING
#else
  USE_BINDING
  implicit none
#endif
  T_COMM :: parent, inter
  integer :: ierr, rank, value
  character(len=512) :: self
  call MPI_Init(ierr)
  call MPI_Comm_get_parent(parent, ierr)
  if (HANDLE_EQ(parent, MPI_COMM_NULL)) then
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call get_command_argument(0, self)
    call MPI_Comm_spawn(self, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, &
                        MPI_ERRCODES_IGNORE, ierr)
    if (rank == 0) then
      value = 41
      call MPI_Send(value, 1, MPI_INTEGER, 0, 1, inter, ierr)
      call MPI_Recv(value, 1, MPI_INTEGER, 0, 2, inter, MPI_STATUS_IGNORE, ierr)
      if (value == 42) then
        print '(a)', 'f_spawn: parent: ok'
      else
        print '(a,i0)', 'f_spawn: parent: FAILED, got ', value
      end if
    end if
    call MPI_Comm_disconnect(inter, ierr)
  else
    call MPI_Recv(value, 1, MPI_INTEGER, 0, 1, parent, MPI_STATUS_IGNORE, ierr)
    value = value + 1
    call MPI_Send(value, 1, MPI_INTEGER, 0, 2, parent, ierr)
    call MPI_Comm_disconnect(parent, ierr)
  end if
  call MPI_Finalize(ierr)
end program f_spawn
