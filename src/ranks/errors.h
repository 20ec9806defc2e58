// Errors of calls on thread-rank communicators, raised through the error handler as the MPI
// would: MPI_ERRORS_RETURN returns the code, MPI_ERRORS_ARE_FATAL and MPI_ERRORS_ABORT print the
// call and the error and abort the job, a program's handler is called. Each thread-rank has its
// own handler for a communicator (set by it, or inherited from where the communicator came
// from); a thread that is not a member sets or reads the communicator's default.
#pragma once
#include <mpi.h>

#include <string>

namespace tsmpi::ranks {

struct Comm;

// An error handler held as the MPI holds one: a reference kept on a private communicator, so
// the program may free its handle; get() returns a new reference; function() is the program's
// C function (callbacks.h), which raise() calls with the thread-rank communicator; call() runs
// any other handler through the MPI (its communicator argument the private one: documented).
class ErrhandlerSlot {
 public:
  bool is_set() const { return value_ != MPI_ERRHANDLER_NULL; }
  MPI_Errhandler value() const { return value_; }
  int set(MPI_Errhandler eh);
  int get(MPI_Errhandler* out);
  MPI_Comm_errhandler_function* function() const { return function_; }
  int call(int code);
  void release();

 private:
  int carrier();
  MPI_Comm carrier_ = MPI_COMM_NULL;
  MPI_Errhandler value_ = MPI_ERRHANDLER_NULL;
  MPI_Comm_errhandler_function* function_ = nullptr;  // the program's C function, read at set()
};

// A private communicator of the MPI's with no attributes (a duplicate of MPI_COMM_SELF would
// copy the program's attributes of MPI_COMM_SELF, running its copy callbacks).
int private_comm(MPI_Comm* out);

bool predefined(MPI_Errhandler eh);

int raise(Comm* c, int code, const char* call);
// An error code of class MPI_ERR_UNSUPPORTED_OPERATION whose string names the call.
int unsupported_code(const char* call);
// An error code of error_class whose MPI_Error_string is text (one code per text).
int described_code(int error_class, const std::string& text);

}  // namespace tsmpi::ranks
