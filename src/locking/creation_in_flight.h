// Serialize mode's nonblocking communicator creations (MPI_Comm_idup, MPI_Comm_idup_with_info):
// started under the lock and returned at once, as the standard requires (another rank may only
// join after this one has gone on), then completed by whichever thread next holds the lock.
//
// While one is in flight no blocking creation of the process is admitted: the MPI's context-id
// agreement makes a blocking creation wait for the process's nonblocking ones, and it would wait
// holding tsmpi's lock, so the other processes' threads that must start their part of the
// nonblocking one could not enter (admission.h). A creation starts only while no blocking one
// holds the process's right to enter.
#pragma once
#include <mpi.h>

#include "fn_ids.h"
#include "runtime/handles.h"

namespace tsmpi::serial {

// How many nonblocking creations of the process are in flight. Under the lock.
extern int g_creations_in_flight;
inline bool creations_in_flight() { return g_creations_in_flight > 0; }

// Under the lock: tests the creations in flight once; a finished one completes the request the
// application holds and gives up its claim. Called where the lock is taken for a call, by the
// wait room's poller and by admission, so a creation completes while any thread uses MPI.
void progress_creations();

// Starts the creation (start(context) calls the MPI's nonblocking function, which writes its
// request to *request) once no blocking creation holds the right to enter, and replaces
// *request with a generalized request that completes with it.
int start_creation(fn::Id id, const Objects& objects, MPI_Request* request, int (*start)(void*), void* context);

template <class Pmpi>
int start_creation(fn::Id id, Pmpi& pmpi, const Objects& objects, MPI_Request* request) {
  return start_creation(id, objects, request, [](void* c) { return (*static_cast<Pmpi*>(c))(); }, &pmpi);
}

}  // namespace tsmpi::serial
