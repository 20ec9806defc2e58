// Nonblocking operations of thread-ranks as MPI requests. A started operation is handed to the
// program as an MPI generalized request, completed when the engine completes the operation, so
// the MPI's own wait and test calls work on arrays that mix them with ordinary requests. A
// persistent operation is a persistent receive of an empty message on a private communicator of
// the process: MPI_Start starts both, and the engine sends that empty message when the operation
// completes; the status is then filled from the operation (completion.cpp).
#pragma once
#include <mpi.h>

#include <atomic>
#include <functional>

#include "ranks/comm.h"
#include "ranks/operations.h"
#include "ranks/transport.h"

namespace tsmpi::ranks {

struct Request {
  Comm* comm = nullptr;
  int me = 0;
  Channel ch = Channel::kP2P;
  bool has_recv = false;
  SendOp send;
  RecvOp recv;
  MPI_Request greq = MPI_REQUEST_NULL;
  std::atomic<int> parts{1};  // operations left before the request completes
  std::atomic<int> refs{2};   // the MPI's (free_fn) and the engine's (completion)
  int err = MPI_SUCCESS;      // of a send part or a collective
  std::function<void()> on_complete;  // collectives: release what the operation held
};

// A request with `parts` operations to complete; *out is the program's handle.
Request* new_request(Comm* c, int me, int parts, MPI_Request* out);
// Hooks a request's send or receive operation so that its completion counts as one part.
void count_send(Request* r);
void count_recv(Request* r);
// One part of r has completed (for operations without a SendOp/RecvOp: collectives).
void part_done(Request* r);

// MPI_Cancel on a request of a thread-rank: cancels a posted receive; the generalized request is
// completed after the MPI's cancel returns (MPICH asserts if it is completed inside it).
int cancel(MPI_Request* request);

struct Persistent {
  Comm* comm = nullptr;
  int me = 0;
  bool is_recv = false;
  TypedBuffer buf;
  int peer = 0, tag = 0;
  SendMode mode = SendMode::kStandard;
  MPI_Request real = MPI_REQUEST_NULL;
  int signal_tag = 0;
  SendOp send;
  RecvOp recv;
  std::atomic<bool> active{false};  // started and not yet complete
};
int persistent_init(Comm* c, int me, bool is_recv, const TypedBuffer& b, int peer, int tag, SendMode mode,
                    MPI_Request* out);
// The persistent operation behind a request, or nullptr.
Persistent* find_persistent(MPI_Request r);
bool any_persistent();
int persistent_start(Persistent* p);
int persistent_free(MPI_Request* r);
// Fills the status of a completed persistent request from its operation.
void persistent_status(Persistent* p, MPI_Status* status);

}  // namespace tsmpi::ranks
