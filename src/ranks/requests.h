// Nonblocking operations of thread-ranks as the engine's own requests: a handle from the request
// space (request_space.h), completed by whichever thread finishes the operation (a flag set, a
// sleeper woken), tested and freed by the program's calls with no MPI call at all
// (completion.cpp). Arrays that mix them with the MPI's requests are split there.
// A request handed to the MPI's Fortran binding (MPI_Request_c2f, which Open MPI's binding calls
// on every request it returns) is promoted: an MPI generalized request stands for it, completed
// when it completes, so Fortran's own handle conversions and tests keep working.
#pragma once
#include <mpi.h>

#include <atomic>
#include <functional>

#include "ranks/comm.h"
#include "ranks/operations.h"
#include "ranks/request_space.h"
#include "ranks/transport.h"

namespace tsmpi::ranks {

struct Request {
  Comm* comm = nullptr;
  int me = 0;
  std::uintptr_t handle = 0;  // what the program holds
  bool has_recv = false;
  SendOp send;
  RecvOp recv;
  std::atomic<int> parts{1};  // operations left before the request completes (the last leaves 1)
  // The program's handle and the operation in flight (and a promoted generalized request's
  // free_fn) each hold one reference.
  std::atomic<int> refs{2};
  // A receive freed while active (MPI_Request_free) parks its mailbox until it completes, so
  // that it completes without a wait (as the program's next message may assume): 1 parked, 2
  // unparked.
  std::atomic<int> free_park{0};
  Done done;                   // every part has completed
  int err = MPI_SUCCESS;       // of a send part or a collective
  std::function<void()> on_complete;  // collectives: release what the operation held

  // Persistent operations (MPI_Send_init, MPI_Recv_init, ...): started by MPI_Start.
  bool persistent = false;
  bool active = false;  // started and not yet completed by a wait or test
  TypedBuffer buf;
  int peer = 0, tag = 0;
  SendMode mode = SendMode::kStandard;
  // A persistent collective (MPI_Bcast_init, ...): starts the collective's nonblocking form into
  // this request; an error is raised by the collective and returned.
  std::function<int(Request*)> start_collective;

  // The generalized request that stands for it (promote), completed once: by whichever of the
  // operation's completion and the promotion comes second.
  std::atomic<MPI_Request> promoted{MPI_REQUEST_NULL};
  std::atomic<bool> promoted_completed{false};
};

// A request with `parts` operations to complete; *out is the program's handle. nullptr (and
// *out untouched) when no handle is left.
Request* new_request(Comm* c, int me, int parts, MPI_Request* out);
// Hooks a request's send or receive operation so that its completion counts as one part.
void count_send(Request* r);
void count_recv(Request* r);
// One part of r has completed (for operations without a SendOp/RecvOp: collectives).
void part_done(Request* r);
// A one-part send or receive request whose operation completed before its handle was returned
// (an eager send, a receive whose message had arrived): completed with plain stores, as no
// other thread can wait for it or promote it yet.
void complete_unseen(Request* r);

// The engine's request behind a handle, or nullptr.
inline Request* request_of(MPI_Request h) { return requests_made() ? find_request(handle_bits(h)) : nullptr; }
// True when h is a handle of the request space (live or released).
inline bool is_engine_request(MPI_Request h) { return requests_made() && in_request_space(handle_bits(h)); }

// The mailbox where r's message is matched (its receive's, or the receiver's of a send waiting
// there), or nullptr.
inline Mailbox* matched_in(Request* r) {
  if (!r->comm) return nullptr;
  return r->has_recv ? &r->comm->box(r->me, Channel::kP2P) : r->send.waits_in;
}
// Whether r has completed (its operation is over), without waiting; matches what has arrived
// for it first (mailbox.h: receivers match).
inline bool completed(Request* r) {
  if (r->done.is()) return true;
  if (Mailbox* b = matched_in(r)) b->poll();
  return r->done.is();
}
// Ends a completed request as a wait or test does: its status, its handle released (*h becomes
// MPI_REQUEST_NULL) unless it is persistent (then inactive). Returns the operation's error.
int finish(Request* r, MPI_Request* h, MPI_Status* status);
// The status a completed request would give, leaving it as it is (MPI_Request_get_status).
int peek(Request* r, MPI_Status* status);
// MPI_Request_free: the handle goes now, the request when its operation completes.
void release(Request* r, MPI_Request* h);
// MPI_Cancel: cancels a posted receive, or a send whose message waits unreceived in this process
// (both then complete as cancelled); a message that was received, or went to another process,
// is not cancelled (MPI_Test_cancelled false).
void cancel(Request* r);
// Waits for r's completion (polling other processes when its communicator spans several).
void wait_for(Request* r);

// Persistent operations.
int persistent_init(Comm* c, int me, bool is_recv, const TypedBuffer& b, int peer, int tag, SendMode mode,
                    MPI_Request* out);
int persistent_collective_init(Comm* c, int me, std::function<int(Request*)> start, MPI_Request* out);
// Starts r (inactive); a persistent collective that could not start completes with its error.
int persistent_start(Request* r);

// MPI_Request_c2f: the MPI request that stands for r (made on first use).
MPI_Request promote(Request* r);
// The engine's request a promoted generalized request stands for, or nullptr.
Request* promoted_request(MPI_Request g);

}  // namespace tsmpi::ranks
