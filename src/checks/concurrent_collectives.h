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
  // object.kind == kNone: nothing to do. A call that frees the object (MPI_Win_free,
  // MPI_File_close, MPI_Comm_disconnect) is checked against the collectives in progress but does
  // not occupy the object: the MPI may hand its handle to a new object before the call returns.
  CollectiveEntry(const HandleRef& object, fn::Id id, bool frees_object);
  ~CollectiveEntry();
  CollectiveEntry(const CollectiveEntry&) = delete;
  CollectiveEntry& operator=(const CollectiveEntry&) = delete;

 private:
  HandleRef object_;
  bool occupied_ = false;
};

}  // namespace tsmpi::checks
