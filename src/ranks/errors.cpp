#include "ranks/errors.h"

#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>

#include "matching/mpi_calls.h"
#include "ranks/comm.h"

namespace tsmpi::ranks {

namespace {
std::mutex g_mu;
std::unordered_map<std::string, int> g_codes;
MPI_Comm g_carrier = MPI_COMM_NULL;  // carries a program's error handler when one is called
}  // namespace

int unsupported_code(const char* call) {
  std::lock_guard g(g_mu);
  auto it = g_codes.find(call);
  if (it != g_codes.end()) return it->second;
  int code = MPI_ERR_UNSUPPORTED_OPERATION;
  if (mpi::locked([&] { return PMPI_Add_error_code(MPI_ERR_UNSUPPORTED_OPERATION, &code); }) == MPI_SUCCESS) {
    std::string text = std::string(call) + " is not supported on a thread-rank communicator (tsmpi threadcomm)";
    mpi::locked([&] { return PMPI_Add_error_string(code, text.c_str()); });
  } else {
    code = MPI_ERR_UNSUPPORTED_OPERATION;
  }
  g_codes[call] = code;
  return code;
}

int raise(Comm* c, int code, const char* call) {
  if (code == MPI_SUCCESS) return code;
  if (!c) {  // not about a communicator (groups, messages): MPI_COMM_SELF's handler, as MPI does
    mpi::locked([&] { return PMPI_Comm_call_errhandler(MPI_COMM_SELF, code); });
    return code;
  }
  MPI_Errhandler eh;
  {
    std::lock_guard g(c->mu);
    eh = c->errhandler;
  }
  if (eh == MPI_ERRORS_RETURN) return code;
  if (eh == MPI_ERRORS_ARE_FATAL
#ifdef MPI_ERRORS_ABORT
      || eh == MPI_ERRORS_ABORT
#endif
  ) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    mpi::locked([&] { return PMPI_Error_string(code, text, &len); });
    Member* m = membership(c);
    int rank = m ? m->rank : -1;
    std::fprintf(stderr, "tsmpi: %s on a thread-rank communicator (rank %d): %s\n", call, rank, text);
    std::fflush(stderr);
    PMPI_Abort(c->family->parent, code);
    return code;
  }
  // A program's handler: called on a private communicator that carries it.
  std::lock_guard g(g_mu);
  if (g_carrier == MPI_COMM_NULL) mpi::locked([&] { return PMPI_Comm_dup(MPI_COMM_SELF, &g_carrier); });
  mpi::locked([&] { return PMPI_Comm_set_errhandler(g_carrier, eh); });
  PMPI_Comm_call_errhandler(g_carrier, code);
  return code;
}

}  // namespace tsmpi::ranks
