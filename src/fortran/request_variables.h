// The program's request variable of a Fortran call whose binding hands the C function a copy.
// Open MPI's Fortran bindings (C handles are pointers there, Fortran handles INTEGERs) convert
// the program's INTEGER request with MPI_Request_f2c and give PMPI_Wait the address of a local
// copy, writing the result back afterwards. The C wrapper alone cannot tell which variable of
// the program a wait completes: a second thread waiting on a shared variable after the first
// completed it finds MPI_REQUEST_NULL in a copy of its own, and looks like a wait on nothing.
// codegen/fortran.py gives the routines that do this (those whose machine code converts a
// request and that take a request variable) an entry point of the same name, which names the
// program's variable here for the C call it makes; checking mode's request rule
// (checks/unordered_completions.cpp) keys on it. MPICH's bindings pass the variable itself.
//
// The same bindings hand MPI_Comm_idup a local C handle for newcomm and convert it as soon as
// the C function returns; serialize mode writes newcomm later, when the MPI is given the
// duplication (locking/creation_in_flight.h). Its entry point also names the program's INTEGER
// newcomm, and the C call leaves a function to run once the binding has returned (the local is
// gone then): it writes the new handle into the program's variable if it exists already.
#pragma once
#include <mpi.h>

#include <cstdint>

#include "runtime/config.h"
#include "runtime/handles.h"

namespace tsmpi::fortran {

// Set at MPI_Init: the request rule is on (checking mode, happens-before). Off, the entry
// points only forward the call.
inline bool g_follow_request_variables = false;
// Set at MPI_Init in serialize mode: calls that write a handle late name its variable.
inline bool g_late_handles = false;

struct RequestVariable {
  int fn = -1;                        // the C function the binding calls (fn::Id)
  const MPI_Fint* base = nullptr;     // the program's INTEGER request, or its array
  MPI_Fint* handle_out = nullptr;     // the program's INTEGER of the handle the call creates
  void (*on_return)(MPI_Fint*) = nullptr;  // set by a C call that writes handle_out late
};
inline TSMPI_TLS RequestVariable t_request_variable;

// For the duration of one Fortran call: its C function `fn` works on copies of the INTEGER
// request(s) at `base`. Nested Fortran calls (a callback's) restore the outer one.
class RequestVariableScope {
 public:
  RequestVariableScope(int fn, const void* base, void* handle_out = nullptr) : saved_(t_request_variable) {
    t_request_variable = {fn, static_cast<const MPI_Fint*>(base), static_cast<MPI_Fint*>(handle_out), nullptr};
  }
  ~RequestVariableScope() {
    if (t_request_variable.on_return) t_request_variable.on_return(t_request_variable.handle_out);
    t_request_variable = saved_;
  }
  RequestVariableScope(const RequestVariableScope&) = delete;
  RequestVariableScope& operator=(const RequestVariableScope&) = delete;

 private:
  RequestVariable saved_;
};

// Where request j of the request argument `h` of call `fn` lives in the program: the Fortran
// variable when a Fortran binding copied it for this call, else the C argument's own slot.
inline std::uintptr_t request_variable(int fn, const HandleArg& h, int j) {
  const RequestVariable& f = t_request_variable;
  if (f.fn == fn && f.base) return reinterpret_cast<std::uintptr_t>(f.base + j);
  return reinterpret_cast<std::uintptr_t>(static_cast<MPI_Request*>(h.where) + j);
}

}  // namespace tsmpi::fortran
