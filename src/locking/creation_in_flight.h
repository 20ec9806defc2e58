// Serialize mode's nonblocking communicator constructors (MPI_Comm_idup, MPI_Comm_idup_with_info):
// the call returns at once, as the standard requires (another process may join only after this
// one has gone on), with a generalized request; the MPI gets the constructor later, in three
// steps progressed by whichever thread next holds the lock (collective_sequence.h):
//
//  1. In the parent's sequence: it waits behind the collectives called on the parent before it,
//     then holds the parent (later collectives on it wait) until it completes.
//  2. Presence: an agreement on the parent (comm_agreement.h) that completes once every member
//     has called it, so the MPI is never given a constructor that another process has not
//     called yet: Open MPI 4.1's context-id agreement lets the constructor with the lowest
//     parent id go first in the whole process, and a constructor another process has not called
//     would stop every constructor on higher-id parents in this process, including those that
//     other process needs completed before it calls this one (threads waiting for each other's
//     duplications: a hang).
//  3. The admission protocol's vote (admission.h), run by the progress steps instead of a
//     waiting thread: each member claims its process's right to create, and only when all did
//     does the MPI get the call; it holds the right until it completes. So the MPI never has two
//     communicator creations of one process at once, blocking or not (Open MPI 4.1 hung with
//     several nonblocking ones of a process in flight, each called by every member), and every
//     member gives the MPI the same creation at the same time. The new handle is written to the
//     application's variable then (until then it is MPI_COMM_NULL): the standard says newcomm
//     may not be used before the request completes.
#pragma once
#include <mpi.h>

#include <array>
#include <cstdint>
#include <functional>

#include "fn_ids.h"
#include "locking/collective_sequence.h"
#include "runtime/handles.h"

namespace tsmpi::serial {


// start(held, &newcomm, &request) makes the MPI's call.
using CreationStart = std::function<int(const Held&, MPI_Comm*, MPI_Request*)>;
int start_creation(fn::Id id, const Objects& objects, const CallArgs& args, const std::array<std::int8_t, 4>& held,
                   int held_count, CreationStart start, MPI_Comm* newcomm, MPI_Request* request);

template <class Extra>
int start_creation(fn::Id id, const Objects& objects, const CallArgs& args, Extra& extra) {
  return start_creation(id, objects, args, extra.held, extra.held_count, extra.start, extra.newcomm, extra.request);
}

}  // namespace tsmpi::serial
