#include "locking/completion_errors.h"

#include "runtime/mpi_version.h"

namespace tsmpi::serial {

#if TSMPI_MULTI_COMPLETION_RAISES_ON_WORLD
namespace {
// Guarded by the serialize lock.
bool g_world_returns = false;      // world's handler is MPI_ERRORS_RETURN
bool g_other_handler_set = false;  // the program set a handler on another communicator
}  // namespace

QuietErrors::QuietErrors() {
  if (g_world_returns) {
    unraised_ = true;
  } else if (g_other_handler_set) {
    PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &saved_);
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    unraised_ = true;
  }
}

QuietErrors::~QuietErrors() {
  if (saved_ == MPI_ERRHANDLER_NULL) return;
  PMPI_Comm_set_errhandler(MPI_COMM_WORLD, saved_);
  PMPI_Errhandler_free(&saved_);
}

void note_errhandler_set(MPI_Comm comm) {
  if (comm != MPI_COMM_WORLD) {
    g_other_handler_set = true;
    return;
  }
  MPI_Errhandler h = MPI_ERRHANDLER_NULL;
  if (PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &h) != MPI_SUCCESS) return;
  g_world_returns = h == MPI_ERRORS_RETURN;
  PMPI_Errhandler_free(&h);
}
#else
// Open MPI's completions raise on the request's communicator already.
QuietErrors::QuietErrors() = default;
QuietErrors::~QuietErrors() = default;
void note_errhandler_set(MPI_Comm) {}
#endif

int raise_on(MPI_Comm comm, int rc) {
  if (rc == MPI_SUCCESS || comm == MPI_COMM_NULL) return rc;
  PMPI_Comm_call_errhandler(comm, rc);  // the handler may not return (MPI_ERRORS_ARE_FATAL)
  return rc;
}

int test_raising_on_world(MPI_Request* request, int* flag, MPI_Status* status) {
  MPI_Status st;
  int rc;
  bool unraised;
  {
    QuietErrors q;  // world's handler restored before the error is raised on it
    rc = PMPI_Testall(1, request, flag, &st);
    unraised = rc != MPI_SUCCESS && q.unraised();
  }
  if (rc == MPI_ERR_IN_STATUS) rc = st.MPI_ERROR;
  if ((*flag || rc != MPI_SUCCESS) && status != MPI_STATUS_IGNORE) {
    const int error = status->MPI_ERROR;
    *status = st;
    status->MPI_ERROR = error;
  }
  if (unraised) raise_on(MPI_COMM_WORLD, rc);
  return rc;
}

}  // namespace tsmpi::serial
