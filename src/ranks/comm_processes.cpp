// The MPI communicator of a duplicate's processes, made when MPI_Comm_dup or _idup duplicates a
// communicator that has one (the threadcomm spanning processes, or a duplicate of it): its
// hierarchical collectives (collectives_team.cpp) then make one call of the processes per
// collective instead of running the generic algorithms over point-to-point.
//
// A team round of the parent's local members follows the exchange of the records. Once every
// local member has its records (this process's messages of the exchange have all gone), the
// leader duplicates the parent's MPI communicator with PMPI_Comm_idup (same processes, same
// order), makes the duplicate's Comm, sets its MPI communicator, and publishes; the members join
// afterwards. The round keeps the leader's call in the order of the parent's other collectives of
// the processes. Splits keep the generic algorithms across processes: MPI has no nonblocking
// split, and a blocking one under serialize mode's lock deadlocked two communicators duplicated
// or split at once whose processes reached them in different orders (rk_comm's two pending
// MPI_Comm_idup, when they were made with PMPI_Comm_split).
#include "ranks/collective_parts.h"
#include "ranks/comm_ops.h"

namespace tsmpi::ranks {

namespace {

constexpr int kLeader = 0;

struct DupForm;

// The leader's part: the duplicate's MPI communicator and its Comm.
int dup_processes(Comm* c, const std::vector<SplitRecord>& all) {
  MPI_Comm pc = MPI_COMM_NULL;
  const int rc = coll::processes_collective([&](MPI_Request* r) { return PMPI_Comm_idup(c->coll_comm, &pc, r); });
  if (rc != MPI_SUCCESS) return rc;
  const NewComm n = new_comm(all, all.front().color);
  find_or_make_comm(c->family, n.ctx, n.members)->coll_comm = pc;
  return MPI_SUCCESS;
}

}  // namespace

bool dups_processes(const Comm* c) { return !c->single_process && c->coll_comm != MPI_COMM_NULL; }

int make_dup_processes(Comm* c, int me, int tag, std::uint32_t round, const std::vector<SplitRecord>& all, int rc) {
  Team& t = c->team;
  const coll::Coll k{c, me, tag, round};
  const int li = coll::index_of(k);
  const int met = coll::arrive_and_meet(t, k, li, coll::team_call(k, -1, coll::DataPath::kNone), form_of<DupForm>(),
                                        [](Team::Note&) {});
  if (met != MPI_SUCCESS) {
    rc = met;
  } else if (li == kLeader) {
    if (rc == MPI_SUCCESS) rc = dup_processes(c, all);
    t.publish(li, round, {rc});
  } else {
    const int made = t.wait_published(kLeader, round).err;
    if (rc == MPI_SUCCESS) rc = made;
  }
  t.depart(li, round);
  return rc;
}

}  // namespace tsmpi::ranks
