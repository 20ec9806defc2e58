// TSMPI_CHECK with happens-before (issue 16): pairs of MPI calls that MPI's thread rules forbid
// to be concurrent, reported when the program's own synchronization does not order them,
// whether or not they overlapped in this run. One file per rule:
//   unordered_collectives: collective calls on one communicator, window or file (communicator
//                          constructors and frees included; seed 004 §3.5.1, MPI-4.0 §11.6.1)
//   unordered_completions: one request waited on, tested or freed by two threads (MPI §11.6.2),
//                          followed by the request variable as well as its value
//   unordered_frees:       an object freed while another thread's call may use it
//   unordered_probes:      a probe and the receive that takes its message on different threads,
//                          or another thread's probe or receive that may come between them
//   unordered_streams:     operations on one MPIX_Stream (MPICH), directly or through a stream
//                          communicator, from two threads
// They run only when libtsmpi_sync.so observes the program's synchronization (hb::g_on); the
// timing-based detections of collectives and request waiters then stay quiet, as every pair
// they see overlapping is unordered and reported here.
#pragma once
#include <mpi.h>

#include "checks/happens_before/history.h"
#include "fn_ids.h"
#include "runtime/handles.h"

namespace tsmpi::checks::unordered {

// The probe rule is on (hb::g_on): the receive-side handlers report probes and receives.
extern bool g_probes;

// A collective call (or a free of its object) on `object`, before it runs.
void collective(fn::Id id, const HandleRef& object, bool frees);
// The collective freed `object`: its history goes (the MPI may reuse the handle).
void collective_freed(const HandleRef& object);

// A wait, test or MPI_Request_free on the request handles of `args`, before it runs.
void completion(fn::Id id, const CallArgs& args);
// A call that returned new requests in `args`' request variables: their histories restart.
void requests_issued(fn::Id id, const CallArgs& args);

// A call using the objects of `args` (every kind but requests and messages), before it runs.
void uses(fn::Id id, const CallArgs& args);
// A call that returned new objects in `args`: a handle value the MPI reused names a new object,
// whose uses start now.
void created(const CallArgs& args);
// A call freeing an object of `args`: made before the call, checked when it succeeded (the
// other threads' uses must happen before it).
class Free {
 public:
  Free() = default;
  Free(fn::Id id, const CallArgs& args);
  void done(int rc);

 private:
  Kind kind_ = Kind::kNone;
  std::uintptr_t bits_ = 0;
  bool last_ = false;
  hb::Event me_;
};

// MPIX_Stream_comm_create returned the communicator of `args` made on its stream; a communicator
// freed (its handle may be reused); an operation of `args` on a stream, or (`on_communicator`:
// communication) on a stream communicator, before it runs.
void stream_comm_created(const CallArgs& args);
void stream_comm_freed(const HandleRef& comm);
void stream_operation(fn::Id id, const CallArgs& args, bool on_communicator);

// Probe and receive events with their envelope (probe_policy handlers, which see source and tag).
void probed(int fn, MPI_Comm comm, int source, int tag, const MPI_Status* status);
void receiving(int fn, MPI_Comm comm, int source, int tag);

}  // namespace tsmpi::checks::unordered
