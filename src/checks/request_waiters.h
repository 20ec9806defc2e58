// TSMPI_CHECK: one request waited on or tested by two threads at once (MPI §12.4.2: erroneous;
// the MPI may complete and free it under the other). Each wait or test occupies its requests
// for its duration.
#pragma once
#include <cstdint>
#include <vector>

#include "fn_ids.h"
#include "runtime/handles.h"

namespace tsmpi::checks {

class RequestWaiters {
 public:
  RequestWaiters(const CallArgs& args, fn::Id id);  // no request handles: nothing to do
  ~RequestWaiters();
  RequestWaiters(const RequestWaiters&) = delete;
  RequestWaiters& operator=(const RequestWaiters&) = delete;

  // After the call: requests it completed (now MPI_REQUEST_NULL) or freed end their
  // operations' buffer use (buffer_conflicts).
  void done(int rc, bool freed);

 private:
  CallArgs args_;  // a copy: the pointers in it stay valid for the call
  std::vector<std::uintptr_t> occupied_;
  std::vector<std::uintptr_t> before_;  // every slot's value when the call began
};

// A call returned new requests (its Request out-handles): a value the MPI reuses after an
// earlier request with it was freed is a new request, not the one another thread still waits on.
void note_issued(const CallArgs& args);

// Both MPIs hand out one shared, already completed request for every operation with
// MPI_PROC_NULL (Open MPI's ompi_request_empty, MPICH's builtin requests): many threads may
// legitimately hold and complete it at once. Learns their values; at MPI_Init, checking on.
void learn_shared_requests();

}  // namespace tsmpi::checks
