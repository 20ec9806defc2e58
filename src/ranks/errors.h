// Errors of calls on thread-rank communicators, raised through the communicator's error handler
// as the MPI would: MPI_ERRORS_RETURN returns the code, MPI_ERRORS_ARE_FATAL and MPI_ERRORS_ABORT
// print the call and the error and abort the job, a program's handler is called.
#pragma once
#include <mpi.h>

#include "fn_ids.h"

namespace tsmpi::ranks {

struct Comm;

int raise(Comm* c, int code, const char* call);
// An error code of class MPI_ERR_UNSUPPORTED_OPERATION whose string names the call.
int unsupported_code(const char* call);

}  // namespace tsmpi::ranks
