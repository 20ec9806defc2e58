// The MPI communicator of a new communicator's processes, made when a communicator that has one
// (the threadcomm spanning processes, or one made from it) is duplicated, split, split by type
// or created: its hierarchical collectives (collectives_team.cpp, collectives_processes.cpp) then
// make one call of the processes per collective instead of running the generic algorithms over
// point-to-point.
//
// A team round of the parent's local members follows the exchange of the records. Once every
// local member has its records (this process's messages of the exchange have all gone), the
// leader makes the MPI communicators, makes the new communicators' Comms with them, and
// publishes; the members join afterwards. The round keeps the leader's calls in the order of the
// parent's other collectives of the processes.
// - A duplicate: PMPI_Comm_idup of the parent's (same processes, same order), nonblocking, so
//   that under serialize mode's lock two duplications in flight at once cannot wait for each
//   other (rk_comm's two pending MPI_Comm_idup).
// - A split: one PMPI_Comm_split of the parent's per new communicator that spans processes with
//   each process's ranks contiguous (at most kMaxSplits of them; beyond, none gets one), every
//   process of the parent taking part, in the order of the new communicators' contexts; key:
//   the process's place in the new communicator. MPI has no nonblocking split: under serialize
//   mode each is admitted first (src/locking/admission.h), as the program's own MPI_Comm_split
//   is, so that two communicators made at once whose processes reach them in different orders
//   cannot deadlock under the lock.
#include <algorithm>

#include "locking/admission.h"
#include "ranks/collective_parts.h"
#include "ranks/comm_ops.h"

namespace tsmpi::ranks {

namespace {

struct DupForm;
struct SplitForm;

// The leader's part: the duplicate's MPI communicator and its Comm.
int dup_processes(Comm* c, const std::vector<SplitRecord>& all) {
  MPI_Comm pc = MPI_COMM_NULL;
  const int rc = coll::processes_collective([&](MPI_Request* r) { return PMPI_Comm_idup(c->coll_comm, &pc, r); });
  if (rc != MPI_SUCCESS) return rc;
  const NewComm n = new_comm(all, all.front().color);
  find_or_make_comm(c->family, n.ctx, n.members)->coll_comm = pc;
  return MPI_SUCCESS;
}

constexpr std::size_t kMaxSplits = 8;

// A blocking split of the processes' communicator, admitted first under serialize mode. `id`
// names the call alike in every process.
int split_admitted(MPI_Comm parent, int color, int key, std::uint64_t id, MPI_Comm* out) {
  if (!serial::enabled()) return PMPI_Comm_split(parent, color, key, out);
  int rc = serial::admit(parent, id);
  if (rc != MPI_SUCCESS) return rc;
  rc = mpi::locked([&] { return PMPI_Comm_split(parent, color, key, out); });
  serial::leave(id);
  return rc;
}

// The leader's part for a split: the new communicators that get an MPI communicator of their
// processes, and their Comms (of those this process is in).
int split_processes(Comm* c, const std::vector<SplitRecord>& all) {
  Family* f = c->family;
  std::vector<int> colors;
  for (const SplitRecord& r : all)
    if (r.color != MPI_UNDEFINED && std::find(colors.begin(), colors.end(), r.color) == colors.end())
      colors.push_back(r.color);
  // Those that span processes, each process's ranks contiguous (Comm::blocked), and where this
  // process stands among their processes (-1: not in it).
  struct Spanning {
    NewComm n;
    int place;
  };
  std::vector<Spanning> spanning;
  for (int color : colors) {
    NewComm n = new_comm(all, color);
    const ProcessOrder o = process_order(f, n.members);
    if (o.contiguous && o.count > 1) spanning.push_back({std::move(n), o.place[static_cast<std::size_t>(f->my_proc)]});
  }
  if (spanning.size() > kMaxSplits) return MPI_SUCCESS;
  std::sort(spanning.begin(), spanning.end(), [](const Spanning& a, const Spanning& b) { return a.n.ctx < b.n.ctx; });
  for (const Spanning& s : spanning) {
    MPI_Comm pc = MPI_COMM_NULL;
    const int rc = split_admitted(c->coll_comm, s.place >= 0 ? 0 : MPI_UNDEFINED, s.place, s.n.ctx, &pc);
    if (rc != MPI_SUCCESS) return rc;
    if (s.place >= 0) find_or_make_comm(f, s.n.ctx, s.n.members)->coll_comm = pc;
  }
  return MPI_SUCCESS;
}

}  // namespace

bool has_processes_comm(const Comm* c) { return !c->single_process && c->coll_comm != MPI_COMM_NULL; }

int make_processes_comms(Comm* c, int me, int tag, std::uint32_t round, const std::vector<SplitRecord>& all, bool dup,
                         int rc) {
  Team& t = c->team;
  const coll::Coll k{c, me, tag, round};
  const int li = coll::index_of(k);
  const int met = coll::arrive_and_meet(t, k, li, coll::team_call(k, -1, coll::DataPath::kNone),
                                        dup ? form_of<DupForm>() : form_of<SplitForm>(), [](Team::Note&) {});
  if (met != MPI_SUCCESS) {
    rc = met;
  } else if (li == kLeader) {
    if (rc == MPI_SUCCESS) rc = dup ? dup_processes(c, all) : split_processes(c, all);
    t.publish(li, round, {rc});
  } else {
    const int made = t.wait_published(kLeader, round).err;
    if (rc == MPI_SUCCESS) rc = made;
  }
  t.depart(li, round);
  return rc;
}

}  // namespace tsmpi::ranks
