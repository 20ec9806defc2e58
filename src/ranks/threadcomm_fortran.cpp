// MPIX_Threadcomm_init/start/finish/free from Fortran (mpif.h, use mpi, use mpi_f08), for the
// MPIs whose Fortran libraries lack them (all but MPICH 4.2, whose bindings call tsmpi's C
// functions already). Every binding passes handles as INTEGERs by reference (an mpi_f08
// TYPE(MPI_Comm) is one INTEGER), converted with the engine-aware MPI_Comm_f2c/c2f
// (fortran_handles.cpp); an mpi_f08 caller may leave out IERROR (include/tsmpif08.h declares
// the optional argument), which arrives as a null pointer.
#include <mpi.h>

#include "ranks/api.h"
#include "ranks/native_calls.h"
#include "runtime/config.h"
#include "runtime/mpi_version.h"
#include "tsmpi.h"

#if !TSMPI_HAVE_NATIVE_THREADCOMM

namespace {
using tsmpi::ranks::api::comm_c2f;
using tsmpi::ranks::comm_f2c;

void set(MPI_Fint* ierror, int rc) {
  if (ierror) *ierror = static_cast<MPI_Fint>(rc);
}

void threadcomm_init(const MPI_Fint* comm, const MPI_Fint* num_threads, MPI_Fint* newthreadcomm, MPI_Fint* ierror) {
  MPI_Comm made = MPI_COMM_NULL;
  const int rc = MPIX_Threadcomm_init(comm_f2c(*comm), static_cast<int>(*num_threads), &made);
  if (rc == MPI_SUCCESS) *newthreadcomm = comm_c2f(made);
  set(ierror, rc);
}

void threadcomm_free(MPI_Fint* threadcomm, MPI_Fint* ierror) {
  MPI_Comm c = comm_f2c(*threadcomm);
  const int rc = MPIX_Threadcomm_free(&c);
  if (rc == MPI_SUCCESS) *threadcomm = comm_c2f(c);
  set(ierror, rc);
}

void threadcomm_start(const MPI_Fint* threadcomm, MPI_Fint* ierror) {
  set(ierror, MPIX_Threadcomm_start(comm_f2c(*threadcomm)));
}

void threadcomm_finish(const MPI_Fint* threadcomm, MPI_Fint* ierror) {
  set(ierror, MPIX_Threadcomm_finish(comm_f2c(*threadcomm)));
}
}  // namespace

// The manglings Fortran compilers use (gfortran: lower case and one underscore), and the
// mpi_f08 name MPICH 4.2 gives its own.
#define TSMPI_FORTRAN_NAMES(lower, upper, params, args)                                     \
  extern "C" TSMPI_EXPORT void lower params { threadcomm_##args; }                          \
  extern "C" TSMPI_EXPORT void lower##_ params { threadcomm_##args; }                       \
  extern "C" TSMPI_EXPORT void lower##__ params { threadcomm_##args; }                      \
  extern "C" TSMPI_EXPORT void lower##_f08_ params { threadcomm_##args; }                   \
  extern "C" TSMPI_EXPORT void upper params { threadcomm_##args; }

TSMPI_FORTRAN_NAMES(mpix_threadcomm_init, MPIX_THREADCOMM_INIT,
                    (const MPI_Fint* comm, const MPI_Fint* n, MPI_Fint* newcomm, MPI_Fint* ierror),
                    init(comm, n, newcomm, ierror))
TSMPI_FORTRAN_NAMES(mpix_threadcomm_free, MPIX_THREADCOMM_FREE, (MPI_Fint* comm, MPI_Fint* ierror),
                    free(comm, ierror))
TSMPI_FORTRAN_NAMES(mpix_threadcomm_start, MPIX_THREADCOMM_START, (const MPI_Fint* comm, MPI_Fint* ierror),
                    start(comm, ierror))
TSMPI_FORTRAN_NAMES(mpix_threadcomm_finish, MPIX_THREADCOMM_FINISH, (const MPI_Fint* comm, MPI_Fint* ierror),
                    finish(comm, ierror))

#endif  // !TSMPI_HAVE_NATIVE_THREADCOMM
