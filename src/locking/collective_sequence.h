// Serialize mode's order of collectives per communicator: what the MPI is given on a
// communicator while a nonblocking constructor of it (MPI_Comm_idup) is pending.
//
// Why: an MPI makes a nonblocking constructor in rounds of its own internal collectives on the
// parent communicator, and Open MPI 4.1 starts each round from its progress engine, whenever the
// previous one completed. A collective the application starts on the same communicator in the
// meantime (MPI_Iscan, another MPI_Comm_idup), or one tsmpi starts (the admission protocol's
// agreements, the nonblocking form of a blocking collective), then takes its place in the
// communicator's order at a different point on each process, and the processes match
// different operations with each other: wrong results or a hang. So while a constructor holds a
// communicator, later collectives on it wait here, in call order, and the MPI gets them once
// the constructor completed; blocking collectives on it wait until it is idle. The application
// gets a generalized request for an operation that waits here (MPI-4.0 §6.12 lets the MPI
// read the buffers and arrays of a nonblocking collective until it completes, so they are
// read later); datatypes and info objects it names are copied first, as the application may
// free them once the call returned. Everything here is under the serialize lock.
#pragma once
#include <mpi.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fn_ids.h"
#include "locking/serialize_lock.h"
#include "runtime/config.h"
#include "runtime/handles.h"

namespace tsmpi::serial {

// The datatypes and info objects of a call that waits in a sequence, copied when it began
// waiting (MPI_Type_dup, MPI_Info_dup) and freed when it completes; empty for a call made at
// once. get(h, slot) is the copy of the call's slot-th held argument, or h itself.
class Held {
 public:
  template <class H>
  H get(H original, int slot) const {
    if (slot < static_cast<int>(copies_.size()) && copies_[slot].bits) return handle_from_bits<H>(copies_[slot].bits);
    return original;
  }
  // Copies handle argument `indices[i]` of args (Datatype or Info, where significant).
  void copy(const CallArgs& args, const std::array<std::int8_t, 4>& indices, int count);
  void release();

 private:
  struct Copy {
    Kind kind;
    std::uintptr_t bits;
  };
  std::vector<Copy> copies_;
};

// An operation of the application that the MPI is given after the call returned.
class Pending {
 public:
  virtual ~Pending() = default;
  enum class Step { kDone, kStarted, kHolds };
  // At the front of its communicator's sequence: gives the operation to the MPI. kDone: nothing
  // is left to do; kStarted: the sequence moves on, progress() completes it; kHolds: it holds
  // the communicator (a constructor) until progress() says it is done.
  virtual Step begin() = 0;
  // Returns whether it is finished (it completed the application's request itself).
  virtual bool progress() = 0;
  // "MPI_Iscan", "MPI_Comm_idup waits for every member to call it": for the hang watchdog.
  virtual std::string describe() const = 0;
};

// How many operations wait or run here; read without the lock as a hint, exact under it.
extern std::atomic<int> g_sequenced;
inline bool sequences_active() { return g_sequenced.load(std::memory_order_relaxed) != 0; }

// Under the lock: tests what was given to the MPI, completes the application's requests of
// what finished and gives the MPI what may go next. Called wherever the lock is taken for a
// call, by the wait room's poller and by admission, so work here progresses while any thread
// uses MPI.
void progress_sequences();

// Under the lock: whether `comm` has an operation waiting or a constructor holding it.
bool busy(MPI_Comm comm);

// Under the lock: appends `op` to comm's sequence (begun at once if comm is idle).
void enqueue(MPI_Comm comm, Pending* op);

// Not under the lock: waits, letting the MPI progress, until `comm` is idle; for a blocking
// collective on it (its collectives must reach the MPI in call order).
void await_idle(MPI_Comm comm);

// A nonblocking collective on comm, or its place in comm's sequence. `start(held, request)`
// starts it in the MPI.
using CollectiveStart = std::function<int(const Held&, MPI_Request*)>;
int defer_collective(fn::Id id, MPI_Comm comm, const CallArgs& args, const std::array<std::int8_t, 4>& held,
                     int held_count, CollectiveStart start, MPI_Request* request);

// Strategy kSequenced (a nonblocking collective on a communicator): started at once when the
// communicator is idle, the common case, else deferred.
template <class Extra>
int start_sequenced(fn::Id id, const Objects& objects, const CallArgs& args, Extra& extra) {
  const MPI_Comm comm = handle_from_bits<MPI_Comm>(objects.in.bits);
  Guard g;
  if (TSMPI_UNLIKELY(sequences_active())) {
    progress_sequences();
    if (busy(comm)) return defer_collective(id, comm, args, extra.held, extra.held_count, extra.start, extra.request);
  }
  return extra.start(Held{}, extra.request);
}

// MPI_Comm_free in serialize mode (and object lifetime's release of a communicator): the MPI
// frees the communicator once its sequence is empty; until then it stays in the sequence.
// Under the lock.
int free_communicator(MPI_Comm* comm);
int MPI_Comm_free(MPI_Comm* comm);

// At MPI_Finalize: everything here finished. Not under the lock.
void drain_sequences();

// What is pending here, per communicator, for the hang watchdog's report. Under the lock.
struct SequenceState {
  MPI_Comm comm;
  std::string what;  // "MPI_Comm_idup is in the MPI; behind it MPI_Iscan, MPI_Ibcast"
  bool held;         // the sequence keeps comm from being freed (else it may be freed already)
};
std::vector<SequenceState> describe_sequences();

// Operations that waited here (TSMPI_STATS).
std::uint64_t deferred_count();

// The application's side of an operation that waits here: its request, a generalized request
// that tsmpi completes with the operation's outcome, and the copies the operation reads.
class Completion {
 public:
  // Writes the generalized request to *request.
  explicit Completion(MPI_Request* request);
  Held& held() { return held_; }
  // Releases the copies and completes the application's request with rc.
  void finish(int rc);

 private:
  struct Outcome {
    int rc = MPI_SUCCESS;
  };
  static int query(void* state, MPI_Status* status);
  static int free(void* state);
  static int cancel(void*, int);
  Held held_;
  MPI_Request request_ = MPI_REQUEST_NULL;
  Outcome* outcome_ = nullptr;  // freed by the MPI with request_
};

}  // namespace tsmpi::serial
