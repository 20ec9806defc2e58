// MPI_Abort never returns under tsmpi (the generated wrapper calls abort_job instead of
// PMPI_Abort: codegen's NATIVE_CALLS). MPICH 4.2 (4.2.1 measured, natively) returns MPI_SUCCESS
// from MPI_Abort and the process runs on until its launcher kills it a moment later, so the
// calling thread — and the program's other threads — would go on past a call that must end the
// job. If the MPI's call returns without an error, the process ends at once with the error code
// (its launcher has been told: the job's status is that code). A refused call (an invalid
// communicator under MPI_ERRORS_RETURN) returns its error, as the MPI returns it.
#pragma once
#include <mpi.h>
#include <unistd.h>

namespace tsmpi {

inline int abort_job(MPI_Comm comm, int errorcode) {
  const int rc = PMPI_Abort(comm, errorcode);
  if (rc != MPI_SUCCESS) return rc;
  _exit(errorcode);
}

}  // namespace tsmpi
