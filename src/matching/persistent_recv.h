// Persistent receives (MPI_Recv_init) under a probe policy. When a policy must complete a started
// persistent receive itself (its thread holds a matching reserved message, or the helper policy
// matches every receive), the start is carried out with a substitute request and the
// application's request stays inactive; the wait and test calls then look through to the
// substitute until it completes. Without any substitute in flight those calls cost one load.
#pragma once
#include <mpi.h>

#include <atomic>
#include <optional>

#include "matching/mpi_calls.h"

namespace tsmpi::matching {

struct PersistentRecv {
  Buffer buffer;
  int source = 0;
  int tag = 0;
  MPI_Comm comm = MPI_COMM_NULL;
};

// How many persistent receives currently run on a substitute request.
extern std::atomic<int> g_substitutes;
inline bool any_substitutes() { return g_substitutes.load(std::memory_order_acquire) != 0; }

// Bookkeeping of MPI_Recv_init / MPI_Request_free.
void remember_persistent_recv(MPI_Request request, const PersistentRecv& p);
void forget_persistent(MPI_Request request);
// The receive a persistent request was made for; nullopt if it is not a tsmpi-known receive.
std::optional<PersistentRecv> persistent_recv_of(MPI_Request request);

// Records that `request` was started as `substitute`.
void set_substitute(MPI_Request request, MPI_Request substitute);
// The substitute `request` currently runs on, or `request` itself.
MPI_Request substitute_of(MPI_Request request);
// After a wait or test: the substitute of `request` completed (and was freed by the MPI).
void substitute_completed(MPI_Request request);
// Request_free of a persistent request whose substitute is still in flight: the substitute is
// left to complete on its own. Returns the substitute (or MPI_REQUEST_NULL) and forgets both.
MPI_Request detach_substitute(MPI_Request request);

}  // namespace tsmpi::matching
