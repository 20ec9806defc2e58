// Serialize mode's record of communicators, windows and files: each communicator's tsmpi id,
// the same on all its ranks, and for each window and file a private duplicate of its
// communicator on which admission to its collectives is agreed. Guarded by the serialize lock.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "fn_ids.h"
#include "runtime/handles.h"

namespace tsmpi::serial {

// MPI_COMM_WORLD and MPI_COMM_SELF; the per-function rules. Called at MPI_Init.
void registry_init();

// The communicator and id admission to a collective on `in` is agreed on; false when tsmpi
// does not know the object (made inside the MPI, or before tsmpi was loaded).
bool admission_target(const HandleRef& in, MPI_Comm* comm, std::uint64_t* id);

// Whether after_call has anything to do for this function.
bool tracks_objects(fn::Id id);

// After a call that creates or frees a communicator, window or file; under the lock. May
// communicate on the new object (all its ranks are in the same call).
void after_call(fn::Id id, const Objects& objects, int rc);

// What serialize mode keeps for a window's synchronization calls (src/locking/rma_sync.cpp):
// tsmpi's private window of lock words (one per process, held with MPI_Win_lock_all from
// creation to free), the locks this process holds through it, and the window's shadow
// communicator, on which MPI_Win_post tells its origin group that it has posted.
struct WindowSync {
  MPI_Comm shadow = MPI_COMM_NULL;
  MPI_Win locks = MPI_WIN_NULL;
  std::int64_t* word = nullptr;  // this process's word, exposed in `locks`
  int me = -1;                   // this process's rank in the window
  std::vector<int> held;  // per target rank of the window: 0, MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE
};
// The window's record, or nullptr if tsmpi did not see it created. Under the lock.
WindowSync* window_sync(MPI_Win win);

// Names an MPI_Comm_create_group call alike on all members of the group: its parent's id, tag,
// members and the number of earlier such calls. Takes the lock.
std::uint64_t group_call_key(const HandleRef& parent, int tag, const std::vector<int>& members);

// Names an MPI_Intercomm_create call alike on both leaders: their world ranks, the tag and the
// number of earlier such calls between them. Takes the lock.
std::uint64_t bridge_call_key(const std::vector<int>& leaders, int tag);

}  // namespace tsmpi::serial
