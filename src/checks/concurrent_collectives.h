// TSMPI_CHECK: two threads of a process in collective calls (communicator constructors
// included) on the same communicator, window or file at once (seed 004 §3.5.1: MPI forbids it; messages of the two may be matched with
// each other). Each collective occupies its object for its duration; a second thread finding
// it occupied is reported with both threads' calls and backtraces.
#pragma once
#include "fn_ids.h"
#include "runtime/handles.h"

namespace tsmpi::checks {

class CollectiveEntry {
 public:
  CollectiveEntry(const HandleRef& object, fn::Id id);  // object.kind == kNone: nothing to do
  ~CollectiveEntry();
  CollectiveEntry(const CollectiveEntry&) = delete;
  CollectiveEntry& operator=(const CollectiveEntry&) = delete;

 private:
  HandleRef object_;
  bool occupied_ = false;
};

}  // namespace tsmpi::checks
