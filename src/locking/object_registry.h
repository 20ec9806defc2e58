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

// Names an MPI_Comm_create_group call alike on all members of the group: its parent's id, tag,
// members and the number of earlier such calls. Takes the lock.
std::uint64_t group_call_key(const HandleRef& parent, int tag, const std::vector<int>& members);

// Names an MPI_Intercomm_create call alike on both leaders: their world ranks, the tag and the
// number of earlier such calls between them. Takes the lock.
std::uint64_t bridge_call_key(const std::vector<int>& leaders, int tag);

}  // namespace tsmpi::serial
