#include "ranks/errors.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "matching/mpi_calls.h"
#include "ranks/callbacks.h"
#include "ranks/comm.h"
#include "ranks/native_calls.h"

namespace tsmpi::ranks {

namespace {
std::mutex g_mu;
std::unordered_map<std::string, int> g_codes;
std::unordered_map<int, std::string> g_texts;  // the same, by code
std::atomic<bool> g_any{false};
}  // namespace

bool predefined(MPI_Errhandler eh) {
  return eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ARE_FATAL
#ifdef MPI_ERRORS_ABORT
         || eh == MPI_ERRORS_ABORT
#endif
      ;
}

int private_comm(MPI_Comm* out) {
  return mpi::locked([&] { return PMPI_Comm_split(MPI_COMM_SELF, 0, 0, out); });
}

int ErrhandlerSlot::carrier() {
  if (carrier_ != MPI_COMM_NULL) return MPI_SUCCESS;
  int rc = private_comm(&carrier_);
  if (rc == MPI_SUCCESS && value_ != MPI_ERRHANDLER_NULL)
    rc = mpi::locked([&] { return PMPI_Comm_set_errhandler(carrier_, value_); });
  return rc;
}

int ErrhandlerSlot::set(MPI_Errhandler eh) {
  value_ = eh;
  // While the program holds eh (it passes it here), its handle names that handler only.
  function_ = predefined(eh) ? nullptr : handler_function(eh);
  // A program's handler is kept alive by the MPI through the private communicator.
  if (carrier_ == MPI_COMM_NULL && predefined(eh)) return MPI_SUCCESS;
  if (carrier_ == MPI_COMM_NULL) return carrier();
  return mpi::locked([&] { return PMPI_Comm_set_errhandler(carrier_, eh); });
}

int ErrhandlerSlot::get(MPI_Errhandler* out) {
  int rc = carrier();
  if (rc != MPI_SUCCESS) return rc;
  return mpi::locked([&] { return PMPI_Comm_get_errhandler(carrier_, out); });
}

int ErrhandlerSlot::call(int code) {
  if (carrier() != MPI_SUCCESS) return code;
  PMPI_Comm_call_errhandler(carrier_, code);
  return code;
}

void ErrhandlerSlot::release() {
  if (carrier_ != MPI_COMM_NULL) mpi::locked([&] { return PMPI_Comm_free(&carrier_); });
  value_ = MPI_ERRHANDLER_NULL;
  function_ = nullptr;
}

int described_code(int error_class, const std::string& text) {
  std::lock_guard g(g_mu);
  auto it = g_codes.find(text);
  if (it != g_codes.end()) return it->second;
  int code = error_class;
  if (mpi::locked([&] { return PMPI_Add_error_code(error_class, &code); }) == MPI_SUCCESS)
    mpi::locked([&] { return PMPI_Add_error_string(code, text.c_str()); });
  else
    code = error_class;
  g_codes[text] = code;
  g_texts[code] = text;
  g_any.store(true, std::memory_order_release);
  return code;
}

int error_string(int code, char* string, int* resultlen) {
  if (g_any.load(std::memory_order_acquire)) {
    std::lock_guard g(g_mu);
    auto it = g_texts.find(code);
    if (it != g_texts.end()) {
      const std::size_t n = std::min<std::size_t>(it->second.size(), MPI_MAX_ERROR_STRING - 1);
      std::memcpy(string, it->second.data(), n);
      string[n] = '\0';
      *resultlen = static_cast<int>(n);
      return MPI_SUCCESS;
    }
  }
  return PMPI_Error_string(code, string, resultlen);
}

int unsupported_code(const char* call) {
  return described_code(MPI_ERR_UNSUPPORTED_OPERATION,
                        std::string(call) + " is not supported on a thread-rank communicator (tsmpi threadcomm)");
}

int raise(Comm* c, int code, const char* call) {
  if (code == MPI_SUCCESS) return code;
  if (!c) {  // not about a communicator (groups, messages): MPI_COMM_SELF's handler, as MPI does
    mpi::locked([&] { return PMPI_Comm_call_errhandler(MPI_COMM_SELF, code); });
    return code;
  }
  Member* m = membership(c);
  ErrhandlerSlot* slot = m && m->errhandler.is_set() ? &m->errhandler : &c->errhandler;
  MPI_Errhandler eh;
  MPI_Comm_errhandler_function* fn;
  {
    std::lock_guard g(c->mu);
    eh = slot->value();
    fn = slot->function();
  }
  if (eh == MPI_ERRORS_RETURN) return code;
  if (eh == MPI_ERRORS_ARE_FATAL
#ifdef MPI_ERRORS_ABORT
      || eh == MPI_ERRORS_ABORT
#endif
  ) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    mpi::locked([&] { return error_string(code, text, &len); });
    const std::string where = c->default_name[0] ? c->default_name : "a thread-rank communicator";
    const std::string who = m ? "rank " + std::to_string(m->rank) : "a thread that is not a rank of it";
    std::fprintf(stderr, "tsmpi: %s on %s (%s): %s\n", call, where.c_str(), who.c_str(), text);
    std::fflush(stderr);
    PMPI_Abort(c->family->parent, code);
    return code;
  }
  // A program's handler made from C: called here, with the thread-rank communicator (it may
  // write both arguments, MPI passes pointers); else through the MPI, on the private carrier.
  if (fn) {
    MPI_Comm comm = c->handle_value();
    int e = code;
    fn(&comm, &e);
    return code;
  }
  return slot->call(code);
}

}  // namespace tsmpi::ranks
