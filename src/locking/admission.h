// Admission to blocking collectives that have no nonblocking form (Comm_split, Win_fence,
// File_open, ...): the context-id algorithm of Gropp & Thakur (seed 000 §5.3, Fig. 3)
// generalized. Before such a call on communicator C, the ranks of C agree with a nonblocking
// MPI_Iallreduce(BAND), progressed without holding the lock, that each of them holds its
// process's right to enter; only then is the call made under the lock. Contention is resolved
// lowest-tsmpi-id first, so some communicator always gets through (no livelock).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

namespace tsmpi::serial {

// Returns MPI_SUCCESS once every rank of comm holds its process's right to enter, or the error
// of the agreement. The caller must call leave(id) afterwards. `fault_tolerant`: the agreement
// by ULFM's MPIX_Comm_iagree (comm_agreement.h), for calls made on revoked communicators.
int admit(MPI_Comm comm, std::uint64_t id, bool fault_tolerant = false);
void leave(std::uint64_t id);

// The same among the members of a group (world ranks, sorted) that has no communicator
// (MPI_Comm_create_group); `key` names this call alike on all members and is its id: pass it
// to leave().
int admit_group(const std::vector<int>& members, std::uint64_t key);

// Whether MPI_Intercomm_create's leader arguments name ranks admit_bridge can use: local_comm
// and local_leader everywhere, peer_comm and remote_leader at the local leader. A call that
// fails this is erroneous and the MPI refuses it before communicating: it is made as is, so that
// it reports its own error class through its own error handler.
bool bridge_arguments_usable(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader);

// Whether MPI_Comm_create_group's group is one admit_group can use: a group this process is a
// member of. Otherwise the call is erroneous (or, not a member, gets MPI_COMM_NULL at once) and
// is made as is.
bool group_argument_usable(MPI_Group group);

// The same for MPI_Intercomm_create, whose two groups have no common communicator yet: each
// group agrees on local_comm and the leaders combine the two answers through tsmpi's private
// channel. *id is set to an id both groups share; pass it to leave().
int admit_bridge(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                 std::uint64_t* id);

// Takes the process's right to enter without agreeing with other ranks, for calls that have
// no communicator to agree on (Comm_join, *_from_group(s)). Same
// priority rule; the caller must call leave(id) afterwards.
void acquire_local(std::uint64_t id);

// The same protocol driven by no waiting thread: a nonblocking constructor's vote, advanced
// under the lock by whichever thread holds it (creation_in_flight.cpp). All under the lock.
// Claims the right for the call with this id if nobody holds it and no waiting call with a
// lower id is known (the paper's mask_in_use/lowestContextId).
bool claim(std::uint64_t id);
// After the agreement on the claims: counts it; a failed vote gives the claim back.
void vote_result(bool mine, bool all);
// A call that failed before it was admitted: gives back its claim and its place as lowest.
void abandon(std::uint64_t id, bool mine);
// leave() for a caller that holds the lock.
void leave_locked(std::uint64_t id);

struct AdmissionCounters {
  std::uint64_t admissions = 0;
  std::uint64_t retries = 0;
};
AdmissionCounters admission_counters();

}  // namespace tsmpi::serial
