// Checking mode (TSMPI_CHECK=warn|abort): detections of erroneous programs, each in a file of
// its own, applied here to the calls of their families. Off, nothing of this runs: the hooked
// path tests one flag.
//   concurrent_collectives: two threads in collectives on one communicator, window or file
//                           at once (seed 004 §3.5.1)
//   request_waiters:        one request waited on or tested by two threads at once
//   buffer_conflicts:       a buffer in use by a pending operation given to a receive, or a
//                           receive buffer under a send in flight (seed 004 Alg. 3.6)
//   use_after_free:         a freed handle used (object lifetime refuses it; this reports it)
//   thread_rank_collectives: thread-ranks of one communicator in different collectives, or one
//                           leaving while another waits in a collective it never calls (seed 004
//                           §3.5.2; called by src/ranks/)
#pragma once
#include "checks/buffer_conflicts.h"
#include "checks/concurrent_collectives.h"
#include "checks/request_waiters.h"
#include "fn_ids.h"
#include "runtime/handles.h"

namespace tsmpi::checks {

extern bool g_on;  // TSMPI_CHECK != off; set at MPI_Init

// What each detection does for a function; set at MPI_Init from the table.
struct Rule {
  bool collective = false;    // Collective category, on a communicator, window or file
  bool completes = false;     // wait and test families: requests they complete
  bool moves_data = false;    // point-to-point with message buffers
  bool frees_request = false; // MPI_Request_free
  bool creates_request = false; // new:Request: its requests are told from reused values
  bool frees_object = false;    // frees the communicator, window or file it is collective on
};
extern Rule g_rules[fn::kCount];
void init();
bool needs(int fn_index);  // after init()

template <class Body>
int guarded(fn::Id id, const Objects& objects, const CallArgs& args, Body&& body) {
  const Rule& r = g_rules[id];
  CollectiveEntry collective(r.collective ? objects.in : HandleRef{}, id, r.frees_object);
  RequestWaiters waiters(r.completes || r.frees_request ? args : CallArgs{}, id);
  BufferUse buffers(r.moves_data ? args : CallArgs{}, id);
  int rc = body();
  if (r.creates_request && rc == MPI_SUCCESS) note_issued(args);
  buffers.done(rc);
  waiters.done(rc, r.frees_request);
  return rc;
}

}  // namespace tsmpi::checks
