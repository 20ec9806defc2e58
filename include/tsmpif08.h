! tsmpi's mpi_f08 interfaces of MPIX_Threadcomm_init, _start, _finish and _free (MPICH 4.2's
! threads-as-ranks API, include/tsmpi.h), with IERROR optional as MPICH 4.2 declares them, for
! the MPIs whose mpi_f08 module lacks them (Open MPI; MPICH before 4.2: MPICH 4.2's own module
! has them, do not include this there). Free-form source; include it in the specification part
! after USE mpi_f08:
!   USE mpi_f08
!   INCLUDE 'tsmpif08.h'
!   CALL MPIX_Threadcomm_init(MPI_COMM_WORLD, nthreads, threadcomm)
! mpif.h and USE mpi programs call the same routines without an interface (IERROR required).
! The routines are libtsmpi.so's: link with -ltsmpi.
      INTERFACE MPIX_Threadcomm_init
        SUBROUTINE tsmpi_threadcomm_init_f08(comm, num_threads, newthreadcomm, ierror) &
            BIND(C, NAME='mpix_threadcomm_init_f08_')
          USE mpi_f08, ONLY: MPI_Comm
          TYPE(MPI_Comm), INTENT(IN) :: comm
          INTEGER, INTENT(IN) :: num_threads
          TYPE(MPI_Comm), INTENT(OUT) :: newthreadcomm
          INTEGER, OPTIONAL, INTENT(OUT) :: ierror
        END SUBROUTINE
      END INTERFACE
      INTERFACE MPIX_Threadcomm_start
        SUBROUTINE tsmpi_threadcomm_start_f08(threadcomm, ierror) BIND(C, NAME='mpix_threadcomm_start_f08_')
          USE mpi_f08, ONLY: MPI_Comm
          TYPE(MPI_Comm), INTENT(IN) :: threadcomm
          INTEGER, OPTIONAL, INTENT(OUT) :: ierror
        END SUBROUTINE
      END INTERFACE
      INTERFACE MPIX_Threadcomm_finish
        SUBROUTINE tsmpi_threadcomm_finish_f08(threadcomm, ierror) BIND(C, NAME='mpix_threadcomm_finish_f08_')
          USE mpi_f08, ONLY: MPI_Comm
          TYPE(MPI_Comm), INTENT(IN) :: threadcomm
          INTEGER, OPTIONAL, INTENT(OUT) :: ierror
        END SUBROUTINE
      END INTERFACE
      INTERFACE MPIX_Threadcomm_free
        SUBROUTINE tsmpi_threadcomm_free_f08(threadcomm, ierror) BIND(C, NAME='mpix_threadcomm_free_f08_')
          USE mpi_f08, ONLY: MPI_Comm
          TYPE(MPI_Comm), INTENT(INOUT) :: threadcomm
          INTEGER, OPTIONAL, INTENT(OUT) :: ierror
        END SUBROUTINE
      END INTERFACE
