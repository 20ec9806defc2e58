// Errors of operations that serialize mode completes for the application (a blocking receive
// carried out as MPI_Irecv + MPI_Test, MPI_Sendrecv, MPI_Waitall by per-request tests), raised
// where the application's own call raises them.
//
// Open MPI and MPICH 4.2 raise an error found by MPI_Test on the request's communicator, as their
// blocking calls do: nothing to change. MPICH 4.0 raises it on MPI_COMM_WORLD's handler (MPI_Test has no
// communicator argument), while its MPI_Recv raises on the receive's communicator, so a
// truncated MPI_Recv on a communicator with MPI_ERRORS_RETURN would abort the job through
// world's MPI_ERRORS_ARE_FATAL. MPICH's MPI_Testall (4.0 and 4.2) raises on world too, where its
// MPI_Sendrecv raises on the communicator. On MPICH such completing tests are therefore made with
// world's handler at MPI_ERRORS_RETURN, and tsmpi raises the error where the application's call
// would. Swapping world's handler costs ~50 ns, so it is done only when it changes something:
// world's handler is not MPI_ERRORS_RETURN and the program has set a handler on another
// communicator. MPICH 4.2's MPI_Mrecv raises on world while MPI_Test raises on the communicator:
// its completion is tested as one request of an MPI_Testall (test_raising_on_world).
#pragma once
#include <mpi.h>

namespace tsmpi::serial {

// Under the lock, around the tests of one completion.
class QuietErrors {
 public:
  QuietErrors();
  ~QuietErrors();
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;
  // Whether an error the tests returned has not been raised yet (raise it with raise_on).
  bool unraised() const { return unraised_; }

 private:
  MPI_Errhandler saved_ = MPI_ERRHANDLER_NULL;
  bool unraised_ = false;
};

// Raises rc on comm's handler and returns what the handler lets the call return. Under the lock.
int raise_on(MPI_Comm comm, int rc);

// MPI_Test of a request whose blocking call raises its error on MPI_COMM_WORLD (MPICH 4.2's
// MPI_Mrecv); status' MPI_ERROR is left alone, as a single completion leaves it. Under the lock.
int test_raising_on_world(MPI_Request* request, int* flag, MPI_Status* status);

// After MPI_Comm_set_errhandler / MPI_Errhandler_set on `comm` succeeded; under the lock.
void note_errhandler_set(MPI_Comm comm);

}  // namespace tsmpi::serial
