// Checking mode's rule for each MPI function: which detections apply to it, from its row of the
// classification table. checks.cpp applies them at MPI_Init; tsmpi-info --function describes
// them (runtime/describe.h).
#pragma once
#include "runtime/function_table.h"
#include "runtime/handles.h"

namespace tsmpi::checks {

// What each detection does for a function; from the table (rule_for).
struct Rule {
  bool collective = false;    // Collective category, on a communicator, window or file
  bool completes = false;     // wait and test families: requests they complete
  bool moves_data = false;    // point-to-point with message buffers
  bool frees_request = false; // MPI_Request_free
  bool creates_request = false; // new:Request: its requests are told from reused values
  bool frees_object = false;    // frees the communicator, window or file it is collective on
  bool on_stream = false;       // names an MPIX_Stream it operates on (not one it creates or frees)
  bool makes_stream_comm = false;  // MPIX_Stream_comm_create: the new communicator's stream
};
Rule rule_for(const FunctionInfo& f);
// Whether `object` is a communicator of the MPI's own threadcomm (TSMPI_THREADCOMM=native,
// MPICH 4.2): there every thread is a rank of its own, so two threads' collectives on it are
// calls of two ranks, not a pair the program must order.
bool native_threadcomm(const HandleRef& object);

// Whether the rule gives checking mode anything to do for the function (besides ThreadSanitizer's
// annotations in -fsanitize=thread programs).
inline bool selects(const Rule& r) {
  return r.collective || r.completes || r.frees_request || r.moves_data || r.creates_request || r.on_stream ||
         r.makes_stream_comm;
}

}  // namespace tsmpi::checks
