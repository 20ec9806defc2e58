// Checking mode (TSMPI_CHECK=warn|abort): detections of erroneous programs, each in a file of
// its own, applied here to the calls of their families. Off, nothing of this runs: the hooked
// path tests one flag.
//   unordered_*:            pairs of calls MPI forbids to be concurrent, not ordered by the
//                           program's synchronization (happens-before; unordered.h)
//   concurrent_collectives: two threads in collectives on one object at once (TSMPI_CHECK_ORDER=overlap)
//   request_waiters:        one request waited on or tested by two threads at once (overlap)
//   buffer_conflicts:       a buffer in use by a pending operation given to a receive, or a
//                           receive buffer under a send in flight (seed 004 Alg. 3.6)
//   tsan_annotations:       what each operation reads and writes, told to ThreadSanitizer
//   use_after_free:         a freed handle used (object lifetime refuses it; this reports it)
//   thread_rank_collectives: thread-ranks of one communicator in different collectives, or one
//                           leaving while another waits in a collective it never calls (seed 004
//                           §3.5.2; called by src/ranks/)
#pragma once
#include "checks/buffer_conflicts.h"
#include "checks/check_rules.h"
#include "checks/concurrent_collectives.h"
#include "checks/request_waiters.h"
#include "checks/tsan_annotations.h"
#include "checks/unordered.h"
#include "locking/object_lifetime.h"
#include "fn_ids.h"
#include "runtime/handles.h"

namespace tsmpi::checks {

extern bool g_on;  // TSMPI_CHECK != off; set at MPI_Init

extern Rule g_rules[fn::kCount];
// `ordering`: TSMPI_CHECK_ORDER=hb (the happens-before detections, when the observer is preloaded).
void init(bool ordering);
bool needs(int fn_index);  // after init()

template <class Body>
int guarded(fn::Id id, const Objects& objects, const CallArgs& args, Body&& body) {
  Rule adjusted = g_rules[id];
  if (adjusted.collective && native_threadcomm(objects.in)) adjusted.collective = false;  // one rank per thread
  const Rule& r = adjusted;
  // A program built with -fsanitize=thread: first in, last out (tsan_annotations.h).
  tsan::Scope annotations(id, objects, args, __builtin_return_address(0));
  const bool ordering = hb::g_on;  // the happens-before detections (unordered.h)
  unordered::Free freeing;
  if (ordering) {
    if (r.collective || r.frees_object) unordered::collective(id, objects.in, r.frees_object);
    if (r.completes || r.frees_request) unordered::completion(id, args);
    if (r.on_stream || r.moves_data || r.collective || r.creates_request)
      unordered::stream_operation(id, args, !r.on_stream);
    const lifetime::Rule& l = lifetime::g_rules[id];
    if (l.access == lifetime::Access::kFree && l.freed != Kind::Request)
      freeing = unordered::Free(id, args);
    else if (l.access != lifetime::Access::kNone)
      unordered::uses(id, args);
  }
  CollectiveEntry collective(r.collective && !ordering ? objects.in : HandleRef{}, id, r.frees_object);
  RequestWaiters waiters(r.completes || r.frees_request ? args : CallArgs{}, id);
  BufferUse buffers(r.moves_data ? args : CallArgs{}, id);
  int rc = body();
  annotations.done(rc);
  if (r.creates_request && rc == MPI_SUCCESS) {
    note_issued(args);
    if (ordering) unordered::requests_issued(id, args);
  }
  if (ordering && r.frees_object && rc == MPI_SUCCESS) {
    unordered::collective_freed(objects.in);
    unordered::stream_comm_freed(objects.in);
  }
  if (ordering && r.makes_stream_comm && rc == MPI_SUCCESS) unordered::stream_comm_created(args);
  if (ordering) {
    freeing.done(rc);
    if (rc == MPI_SUCCESS && lifetime::g_rules[id].creates) unordered::created(args);
  }
  buffers.done(rc);
  waiters.done(rc, r.frees_request);
  return rc;
}

}  // namespace tsmpi::checks
