#include "locking/admission.h"

#include <algorithm>
#include <limits>

#include "locking/backoff.h"
#include "locking/collective_sequence.h"
#include "locking/comm_agreement.h"
#include "locking/group_agreement.h"
#include "locking/object_registry.h"
#include "locking/progress.h"
#include "locking/serialize_lock.h"

namespace tsmpi::serial {
namespace {

// Guarded by the serialize lock. `in_use` is the paper's mask_in_use: at most one thread of
// the process holds the right to enter; `lowest` its lowestContextId.
struct Admission {
  bool in_use = false;
  std::uint64_t lowest = std::numeric_limits<std::uint64_t>::max();
  AdmissionCounters counters;
} g_admission;

// AND of `mine` over the processes of comm (comm_agreement.h), waited for in locked steps.
int agree_on_comm(MPI_Comm comm, int mine, int* all, bool fault_tolerant = false) {
  CommAgreement agreement;
  int rc;
  {
    Guard g;
    rc = agreement.start(comm, mine != 0, fault_tolerant);
  }
  if (rc != MPI_SUCCESS) return rc;
  bool done = false, result = false;
  rc = poll_until_done([&](int* flag) {
    int r = agreement.test(&done, &result);
    *flag = done;
    return r;
  });
  *all = result;
  return rc;
}

// The loop of Fig. 3 among calls whose ranks are all present: claim the process's right to
// enter if it is free and no present call with a lower id waits, agree, retry until all claim.
template <class Agree>
int vote(std::uint64_t id, Agree&& agree) {
  Backoff backoff;
  while (true) {
    int mine;
    {
      Guard g;
      if (sequences_active()) progress_sequences();
      mine = claim(id);
    }
    int all = 0;
    int rc = agree(mine, &all);
    {
      Guard g;
      if (rc != MPI_SUCCESS) {
        abandon(id, mine);
        return rc;
      }
      vote_result(mine, all);
    }
    if (all) return MPI_SUCCESS;
    backoff.pause();
  }
}

// Presence round, then the vote. The presence round holds nothing: it completes once every
// rank has reached this call, however long that takes (a rank's thread may still be busy
// with earlier calls). Only then does a thread claim its process's right to enter, so a claim
// is held for one agreement round among ranks that are all present and polling, never while
// waiting for a rank that has not arrived; otherwise a collective that such a rank must
// finish first could be refused forever.
template <class Agree>
int admit_with(std::uint64_t id, Agree&& agree) {
  int present = 0;
  int rc = agree(1, &present);
  if (rc != MPI_SUCCESS) return rc;
  return vote(id, agree);
}

// Nonblocking broadcast of a 64-bit value within a communicator, in locked steps.
int broadcast(MPI_Comm comm, int root, std::uint64_t* value) {
  MPI_Request request;
  int rc;
  {
    Guard g;
    rc = PMPI_Ibcast(value, 1, MPI_UINT64_T, root, comm, &request);
  }
  return rc == MPI_SUCCESS ? wait_request(&request, MPI_STATUS_IGNORE) : rc;
}

}  // namespace

int admit(MPI_Comm comm, std::uint64_t id, bool fault_tolerant) {
  return admit_with(id, [&](int mine, int* all) { return agree_on_comm(comm, mine, all, fault_tolerant); });
}

int admit_group(const std::vector<int>& members, std::uint64_t key) {
  std::uint64_t round = 0;
  return admit_with(key, [&](int mine, int* all) { return agree_in_group(members, key, round++, mine, all); });
}

namespace {
bool rank_of(MPI_Comm comm, int rank) {
  int inter = 0, size = 0;
  if (comm == MPI_COMM_NULL) return false;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return false;
  if (inter) return true;  // the remote group's rank, checked by the MPI
  return PMPI_Comm_size(comm, &size) == MPI_SUCCESS && rank >= 0 && rank < size;
}
}  // namespace

bool bridge_arguments_usable(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader) {
  Guard g;
  int inter = 0, my_rank = -1;
  if (local_comm == MPI_COMM_NULL || PMPI_Comm_test_inter(local_comm, &inter) != MPI_SUCCESS || inter) return false;
  if (!rank_of(local_comm, local_leader) || PMPI_Comm_rank(local_comm, &my_rank) != MPI_SUCCESS) return false;
  return my_rank != local_leader || rank_of(peer_comm, remote_leader);
}

bool group_argument_usable(MPI_Group group) {
  if (group == MPI_GROUP_NULL) return false;
  Guard g;
  int rank = MPI_UNDEFINED;
  return PMPI_Group_rank(group, &rank) == MPI_SUCCESS && rank != MPI_UNDEFINED;
}

int admit_bridge(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                 std::uint64_t* id) {
  int my_rank;
  {
    Guard g;
    PMPI_Comm_rank(local_comm, &my_rank);
  }
  const bool leader = my_rank == local_leader;
  // The leaders know each other; they name the call alike and tell their groups.
  std::uint64_t key = 0;
  std::vector<int> leaders;
  if (leader) {
    int me = world_rank_of(local_comm, local_leader), them = world_rank_of(peer_comm, remote_leader);
    leaders = {std::min(me, them), std::max(me, them)};
    key = bridge_call_key(leaders, tag);
  }
  std::uint64_t round = 0;
  // AND within the group, the leaders combine both groups' answers, then tell their group.
  auto agree = [&](int mine, int* all) {
    int local = 0;
    int rc = agree_on_comm(local_comm, mine, &local);
    if (rc != MPI_SUCCESS) return rc;
    std::uint64_t combined = 0;
    if (leader) {
      int both = 0;
      rc = agree_in_group(leaders, key, round, local, &both);
      if (rc != MPI_SUCCESS) return rc;
      combined = static_cast<std::uint64_t>(both);
    }
    ++round;
    rc = broadcast(local_comm, local_leader, &combined);
    *all = static_cast<int>(combined);
    return rc;
  };
  int present = 0;
  int rc = agree(1, &present);
  if (rc != MPI_SUCCESS) return rc;
  rc = broadcast(local_comm, local_leader, &key);
  if (rc != MPI_SUCCESS) return rc;
  *id = key;
  return vote(key, agree);
}

void acquire_local(std::uint64_t id) {
  Backoff backoff;
  while (true) {
    {
      Guard g;
      if (sequences_active()) progress_sequences();
      if (claim(id)) {
        ++g_admission.counters.admissions;
        return;
      }
    }
    backoff.pause();
  }
}

bool claim(std::uint64_t id) {
  Admission& a = g_admission;
  if (id < a.lowest) a.lowest = id;  // lowest id among the waiting calls goes first
  if (a.in_use || id > a.lowest) return false;
  a.in_use = true;
  return true;
}

void vote_result(bool mine, bool all) {
  if (all) {
    ++g_admission.counters.admissions;
    return;
  }
  ++g_admission.counters.retries;
  if (mine) g_admission.in_use = false;
}

void abandon(std::uint64_t id, bool mine) {
  if (mine) g_admission.in_use = false;
  if (g_admission.lowest == id) g_admission.lowest = std::numeric_limits<std::uint64_t>::max();
}

void leave_locked(std::uint64_t id) { abandon(id, true); }

void leave(std::uint64_t id) {
  Guard g;
  leave_locked(id);
}

AdmissionCounters admission_counters() {
  Guard g;
  return g_admission.counters;
}

}  // namespace tsmpi::serial
