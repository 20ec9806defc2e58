// Serialize mode (TSMPI_UNDERLYING_LEVEL=single|serialized): MPI_THREAD_MULTIPLE for the
// application over an MPI that takes no locks. Every entry into the MPI is mutually exclusive
// under one lock, no thread holds it while blocked, and blocking collectives without a
// nonblocking form pass the admission protocol first. One function per strategy
// (runtime/strategy.h); the generator picks the strategy from the classification table.
#pragma once
#include "runtime/mpi_version.h"
#include <mpi.h>

#include <type_traits>

#include "fn_ids.h"
#include "locking/admission.h"
#include "locking/collective_sequence.h"
#include "locking/completion_errors.h"
#include "locking/creation_in_flight.h"
#include "locking/group_agreement.h"
#include "locking/object_registry.h"
#include "locking/progress.h"
#include "locking/serialize_lock.h"
#include "runtime/config.h"
#include "runtime/function_table.h"
#include "runtime/handles.h"
#include "runtime/strategy.h"
#include "wrappers/call_shapes.h"

namespace tsmpi::serial {

// The bookkeeping after a call that creates or frees a communicator, window or file.
inline void track(fn::Id id, const Objects& objects, int rc) {
  if (tracks_objects(id)) {
    Guard g;
    after_call(id, objects, rc);
  }
}

// The call itself under the lock, with its bookkeeping. (A handle conversion returns a handle
// or an integer, not an error code: it creates and frees nothing.)
template <class Pmpi>
auto call_locked(fn::Id id, Pmpi&& pmpi, const Objects& objects) {
  Guard g;
  if (TSMPI_UNLIKELY(sequences_active())) progress_sequences();
  auto rc = pmpi();
  if constexpr (std::is_same_v<decltype(rc), int>) {
    if (tracks_objects(id)) after_call(id, objects, rc);
  }
  return rc;
}

// A blocking receive's completion errors are raised on its communicator (completion_errors.h).
bool raises_on_comm(fn::Id id);
// A blocking receive whose completion errors the MPI raises on MPI_COMM_WORLD although MPI_Test
// raises them on the communicator (MPICH 4.2's MPI_Mrecv; completion_errors.h).
bool raises_on_world(fn::Id id);

// MPICH 4.2's MPI_Test does not progress a stream communicator's stream for a nonblocking
// collective on it (4.2.1, natively: an MPI_Iallreduce on one completes only with
// MPIX_Stream_progress): serialize mode, which makes a blocking collective as its nonblocking form
// and tests it, progresses the stream between tests. Records and forgets stream communicators
// (under the lock, after MPIX_Stream_comm_create[_multiplex] and MPI_Comm_free).
void note_stream_comm(fn::Id id, const CallArgs& args, const Objects& objects, int rc);
void forget_stream_comm(std::uintptr_t comm);
struct StreamProgress {
  bool on = false;
#if TSMPI_HAVE_STREAMS
  MPIX_Stream stream = MPIX_STREAM_NULL;
#else
  int stream = 0;
#endif
  void operator()() const;
};
StreamProgress stream_progress_for(const HandleRef& in);  // under the lock

// A blocking call as its nonblocking form (start_then_poll), with the wrapper's duties: what
// waits in the communicators' sequences progresses first, a receive's completion error is
// raised on its communicator, and created or freed objects are tracked.
template <class Start>
int start_and_wait(fn::Id id, const StartWait<Start>& extra, const Objects& objects) {
  MPI_Request request = MPI_REQUEST_NULL;
  const bool quiet = raises_on_comm(id), on_world = raises_on_world(id);
  bool unraised = false;
  StreamProgress stream;
  auto test = [&](int* flag) {
    int r;
    if (TSMPI_UNLIKELY(on_world)) {
      r = test_raising_on_world(&request, flag, extra.status);
    } else if (!quiet) {
      r = PMPI_Test(&request, flag, extra.status);
    } else {
      QuietErrors q;
      r = PMPI_Test(&request, flag, extra.status);
      unraised = r != MPI_SUCCESS && q.unraised();
    }
    if (TSMPI_UNLIKELY(stream.on) && r == MPI_SUCCESS && !*flag) stream();
    return r;
  };
  int rc = start_then_poll(&request, extra.start, test, [&] {
    if (TSMPI_UNLIKELY(sequences_active())) progress_sequences();
    if constexpr (TSMPI_HAVE_STREAMS) stream = stream_progress_for(objects.in);
  });
  if (TSMPI_UNLIKELY(unraised)) {
    Guard g;
    rc = raise_on(handle_from_bits<MPI_Comm>(objects.in.bits), rc);
  }
  track(id, objects, rc);
  return rc;
}

// Where the MPI gets a blocking call's nonblocking form wrong (src/locking/mpi_quirks.cpp):
// MPICH 4.0.2's MPI_Ialltoallw with MPI_IN_PLACE and receive types that differ per peer, Open
// MPI 4.1's MPI_Ibarrier on an intercommunicator: the call is carried out blocking, admitted.
bool needs_blocking_form(fn::Id id, const CallArgs& args, MPI_Comm comm);
// ULFM's calls made on revoked communicators (MPIX_Comm_shrink): admitted by an agreement that
// completes there (mpi_quirks.cpp).
bool fault_tolerant(fn::Id id);
// Whether `in` is a revoked communicator (ULFM). Open MPI 5.0's MPI_Isend on one succeeds where
// its MPI_Send fails with MPIX_ERR_REVOKED: a blocking call on it is then made as is, and fails
// as the MPI makes it fail (it does not wait).
bool revoked(const HandleRef& in);
// A rooted collective at a process that passes MPI_PROC_NULL as root on an intercommunicator:
// true when the MPI needs another start than the application's arguments give (Open MPI 4.1
// skips its nonblocking engine for a count of 0 and loses step); *start is then that start.
// A neighborhood collective on a communicator without a topology is erroneous, and Open MPI
// 4.1's nonblocking forms report another class than the blocking ones: the MPI refuses the call
// at once, so it is made as is.
bool neighborhood(fn::Id id);
bool has_topology(MPI_Comm comm);
struct ProcNullStep {
  MPI_Comm comm;
  int operator()(MPI_Request* request) const;
};
bool procnull_needs_step(const CallArgs& args);

// A blocking collective on a communicator (a constructor, a window or file made on it, ...) goes
// to the MPI after the operations waiting in the communicator's sequence
// (collective_sequence.h). Point-to-point calls do not wait for them.
inline void after_pending_collectives(const HandleRef& in) {
  if (TSMPI_UNLIKELY(sequences_active()) && in.kind == Kind::Comm) await_idle(handle_from_bits<MPI_Comm>(in.bits));
}

template <Strategy S, class Pmpi, class Extra>
auto run(fn::Id id, Pmpi&& pmpi, const Objects& objects, const CallArgs& args, Extra&& extra) {
  if constexpr (S == Strategy::kUnlocked || S == Strategy::kRuntime) {
    return pmpi();
  } else if constexpr (S == Strategy::kLocked || S == Strategy::kBlockingLocked) {
    return call_locked(id, pmpi, objects);
  } else if constexpr (S == Strategy::kSequenced) {
    return start_sequenced(id, objects, args, extra);
  } else if constexpr (S == Strategy::kStartWait) {
    if (kFunctions[id].category == Category::Collective) after_pending_collectives(objects.in);
    if (TSMPI_UNLIKELY(args.root == MPI_PROC_NULL) && procnull_needs_step(args))
      return start_and_wait(id, StartWait{ProcNullStep{args.root_comm}, MPI_STATUS_IGNORE}, objects);
    if (TSMPI_UNLIKELY(needs_blocking_form(id, args, handle_from_bits<MPI_Comm>(objects.in.bits))))
      return run<Strategy::kAdmitted>(id, pmpi, objects, args, extra);
    if (TSMPI_UNLIKELY(neighborhood(id)) && !has_topology(handle_from_bits<MPI_Comm>(objects.in.bits)))
      return call_locked(id, pmpi, objects);  // refused at once, as only the blocking form does
    if (TSMPI_UNLIKELY(revoked(objects.in))) return call_locked(id, pmpi, objects);
    return start_and_wait(id, extra, objects);
  } else if constexpr (S == Strategy::kPoll) {
    return poll_until_done(extra.test);
  } else if constexpr (S == Strategy::kPollSome) {
    return poll_until_done([&](int* done) {
      int rc = extra.test();
      *done = *extra.outcount != 0;
      return rc;
    });
  } else if constexpr (S == Strategy::kHandler) {
    return extra.fn();
  } else if constexpr (S == Strategy::kCreationInFlight) {
    return start_creation(id, objects, args, extra);
  } else if constexpr (S == Strategy::kAdmitted || S == Strategy::kAdmittedStartWait ||
                       S == Strategy::kOwnedLocked ||
                       S == Strategy::kAdmittedGroup || S == Strategy::kAdmittedBridge) {
    // MPI_Comm_create_group is collective over its group only: the parent's order is not its.
    if constexpr (S != Strategy::kAdmittedGroup) after_pending_collectives(objects.in);
    MPI_Comm comm = MPI_COMM_NULL;
    std::uint64_t comm_id = 0;
    bool known;
    {
      Guard g;
      known = admission_target(objects.in, &comm, &comm_id);
    }
    int rc = MPI_SUCCESS;
    if constexpr (S == Strategy::kOwnedLocked) {
      acquire_local(comm_id);
    } else if constexpr (S == Strategy::kAdmittedGroup) {
      // Members of the group agree; the key names this call alike on all of them: the parent,
      // the tag, the members, and how many such calls came before.
      if (!group_argument_usable(extra.group)) return call_locked(id, pmpi, objects);
      std::vector<int> members = world_ranks_of(extra.group);
      comm_id = group_call_key(objects.in, extra.tag, members);
      rc = admit_group(members, comm_id);
      if (rc != MPI_SUCCESS) return rc;
    } else if constexpr (S == Strategy::kAdmittedBridge) {
      if (!bridge_arguments_usable(comm, extra.local_leader, extra.peer_comm, extra.remote_leader))
        return call_locked(id, pmpi, objects);
      rc = admit_bridge(comm, extra.local_leader, extra.peer_comm, extra.remote_leader, extra.tag, &comm_id);
      if (rc != MPI_SUCCESS) return rc;
    } else if (known) {
      rc = admit(comm, comm_id, fault_tolerant(id));
      if (rc != MPI_SUCCESS) return rc;
    } else {
      // An object tsmpi never saw created (made inside the MPI or before tsmpi was loaded):
      // nothing to agree on, so only this process's right to enter is taken.
      acquire_local(comm_id);
    }
    if constexpr (S == Strategy::kAdmittedStartWait) {
      rc = start_and_wait(id, extra, objects);
    } else {
      rc = call_locked(id, pmpi, objects);
    }
    if constexpr (TSMPI_HAVE_STREAMS && S == Strategy::kAdmitted) {
      Guard g;
      note_stream_comm(id, args, objects, rc);
    }
    leave(comm_id);
    return rc;
  }
}

// RMA synchronization that waits for other processes' applications in locked steps
// (src/locking/rma_sync.cpp).
int MPI_Win_post(MPI_Group group, int assert, MPI_Win win);
int MPI_Win_start(MPI_Group group, int assert, MPI_Win win);
int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win);
int MPI_Win_unlock(int rank, MPI_Win win);
int MPI_Win_lock_all(int assert, MPI_Win win);
int MPI_Win_unlock_all(MPI_Win win);

// MPI_Waitall by per-request tests (src/locking/waitall.cpp).
int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]);

// Handlers for blocking calls whose nonblocking form this MPI lacks (src/locking/sendrecv.cpp).
int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status* status);
int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                         int recvtag, MPI_Comm comm, MPI_Status* status);
#if TSMPI_HAVE_LARGE_COUNT
int MPI_Sendrecv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                   void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                   MPI_Comm comm, MPI_Status* status);
int MPI_Sendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source,
                           int recvtag, MPI_Comm comm, MPI_Status* status);
#endif

}  // namespace tsmpi::serial
