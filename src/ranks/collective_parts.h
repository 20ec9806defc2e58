// What the collectives of thread-rank communicators share: one collective as one rank, the
// local copies and reductions, and the shared-memory (team) forms that collectives.cpp chooses
// where the layout allows (collectives_team.cpp).
#pragma once
#include <mpi.h>
#include <sched.h>

#include <cstdint>
#include <utility>

#include "matching/mpi_calls.h"
#include "ranks/api.h"
#include "ranks/comm.h"
#include "ranks/team.h"
#include "ranks/typed_buffer.h"
#include "ranks/wake.h"

namespace tsmpi::ranks::coll {

// One collective as one rank.
struct Coll {
  Comm* c;
  int me;
  int tag;
  std::uint32_t round = 0;  // the team round of a hierarchical collective
  int size() const { return c->size(); }
};

inline bool in_place(const void* p) { return p == MPI_IN_PLACE; }
// Copies from's data into to (as much as both hold).
void local_copy(const TypedBuffer& from, const TypedBuffer& to);
// inout = in op inout.
int reduce_local(const void* in, void* inout, MPI_Count count, MPI_Datatype type, MPI_Op op);

// Folds contribution(0 .. p-1) in rank order into acc: acc = c0 op c1 op ... op c(p-1).
template <class Contribution>
int fold(int p, Contribution&& contribution, const TypedBuffer& acc, MPI_Op op) {
  local_copy({contribution(p - 1), acc.count, acc.type}, acc);
  for (int i = p - 2; i >= 0; --i) {
    int rc = reduce_local(contribution(i), const_cast<void*>(acc.buf), acc.count, acc.type, op);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

// The blocks of a rooted or all-to-one collective: per rank a count and a displacement (the v
// forms), or `each` elements at i * each.
struct Blocks {
  Counts counts;
  Displs displs;
  MPI_Count each = 0;
  MPI_Count count(int i) const { return counts.null() ? each : counts[i]; }
  MPI_Aint displ(int i) const { return counts.null() ? static_cast<MPI_Aint>(i) * each : displs[i]; }
};
inline TypedBuffer at(const void* buf, MPI_Aint index, MPI_Count count, MPI_Datatype type) {
  return {element(buf, index, type), count, type};
}
inline TypedBuffer at_bytes(const void* buf, MPI_Aint bytes, MPI_Count count, MPI_Datatype type) {
  return {static_cast<const char*>(buf) + bytes, count, type};
}

// ---- meeting as a team (team.h) ----

// Which data path a member took: members that disagree (an erroneous program: counts that
// differ) meet as a mismatch rather than wait for each other in different ways.
enum class DataPath : std::uint64_t { kNone = 0, kInline = 1, kBuffers = 2 };
// Who a member is in its round: the collective's tag (number and call), root and data path.
std::uint64_t team_call(const Coll& k, int root, DataPath path);
// The error local members get when they meet in one round with different collectives.
int mismatch_code();
inline int index_of(const Coll& k) { return k.c->local_index[static_cast<std::size_t>(k.me)]; }

// Enters round k, fills the caller's note (and buffers: both only after enter(), when no round
// of this member that may still be read is using them), arrives.
template <class Fill>
void enter_and_arrive(Team& t, const Coll& k, int li, std::uint64_t call, const void* form, Fill&& fill) {
  Team::Note& n = t.enter(li, k.round);
  n.call = call;
  n.form = form;
  n.rank = k.me;
  fill(n);
  t.arrive(li, k.round);
}
// The same, then meets every other member; returns the meeting's verdict.
template <class Fill>
int arrive_and_meet(Team& t, const Coll& k, int li, std::uint64_t call, const void* form, Fill&& fill) {
  enter_and_arrive(t, k, li, call, form, std::forward<Fill>(fill));
  return t.meet(li, k.round) ? MPI_SUCCESS : mismatch_code();
}

// The leader's wait for its processes' exchange. Open MPI's PMPI_Wait spins in its progress loop
// and never yields the core (unless mpi_yield_when_idle is set, which mpiexec does only beyond
// its slots), while the other processes' members, and this process's, may need that core to
// arrive (more thread-ranks than cores). On Open MPI the leader tests instead and, once the
// wait has lasted kLeaderSpinNs, yields the core between tests: a collective that completes
// within that (back-to-back Barrier and Allreduce, 10-40 us at T = 2-8) costs what it did, and
// rk_coll on 2 processes x 8 thread-ranks, whose waits are longer, went from 6.0 s and 11 CPU-s
// to 1.4 s and 2 CPU-s. Yielding sooner (2 us, or after 16 tests) made back-to-back Allreduce at
// T = 8 take 2x as long. MPICH's wait already yields between its polls, and a test loop there
// (spinning 2 or 100 us first) made the same Allreduce 2.4-4x slower: MPICH keeps its own wait.
// In serialize mode the wait room polls (mpi::waitall).
inline constexpr std::int64_t kLeaderSpinNs = 1'000'000;
inline int waitall_yielding(int n, MPI_Request* r) {
#ifdef OPEN_MPI
  if (!serial::enabled()) {
    int done = 0, rc = MPI_SUCCESS;
    const std::int64_t start = monotonic_ns();
    for (;;) {
      rc = PMPI_Testall(n, r, &done, MPI_STATUSES_IGNORE);
      if (rc != MPI_SUCCESS || done) return rc;
      if (monotonic_ns() - start > kLeaderSpinNs) sched_yield();
    }
  }
#endif
  return mpi::waitall(n, r, MPI_STATUSES_IGNORE);
}

// The one call of the processes' collective a team's leader makes: started as the MPI's
// nonblocking form (under the MPI lock in serialize mode) and waited for.
template <class Start>
int processes_collective(Start&& start) {
  MPI_Request r = MPI_REQUEST_NULL;
  int rc = mpi::locked([&] { return start(&r); });
  if (rc != MPI_SUCCESS) return rc;
  return waitall_yielding(1, &r);
}

// Whether the local members combine in shared memory: every member lives in this process, or
// the communicator has an MPI communicator of its processes for one collective of the processes
// per call. The threadcomm and what is made from it by dup, split, split_type and create have
// one (comm_processes.cpp) where each process's ranks are consecutive, its ranks the processes'
// in the order of their ranks (Comm::coll_rank), as the team's algorithms (local folds before
// the processes') rely on.
inline bool hierarchical(const Comm* c) { return c->single_process || c->coll_comm != MPI_COMM_NULL; }
int barrier_team(const Coll& k);
int bcast_team(const Coll& k, void* buf, MPI_Count count, MPI_Datatype type, int root);
// Allreduce (root < 0) or reduce to root.
int reduce_team(const Coll& k, const void* sbuf, void* rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                int root);

// Single-process forms (collectives_pull.cpp): every member reads what it needs straight from
// the others' buffers. Alltoall's take send_of(i)/recv_of(i) (a TypedBuffer per rank), not in place.
int gather_pull(const Coll& k, const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, const Blocks& r,
                MPI_Datatype rtype, int root);
int scatter_pull(const Coll& k, const void* sbuf, const Blocks& s, MPI_Datatype stype, void* rbuf, MPI_Count rcount,
                 MPI_Datatype rtype, int root);
int allgather_pull(const Coll& k, const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, const Blocks& r,
                   MPI_Datatype rtype);
using BlockOf = TypedBuffer (*)(const void* args, int rank);
int alltoall_pull(const Coll& k, const void* args, BlockOf send_of, BlockOf recv_of);
int reduce_scatter_pull(const Coll& k, const void* sbuf, void* rbuf, Counts counts, MPI_Count block, MPI_Datatype type,
                        MPI_Op op);
int scan_pull(const Coll& k, const void* sbuf, void* rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
              bool exclusive);

// Forms across processes (collectives_processes.cpp) on a communicator with an MPI communicator
// of its processes: the local members' blocks travel in one exchange of the processes. Every
// member chooses alike, from the layout and the bytes of all blocks (exchange_bytes: -1 beyond
// an int count).
bool across_processes(const Comm* c);
long long exchange_bytes(const Comm* c, const Blocks& r, MPI_Datatype type);
int allgather_processes(const Coll& k, const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf,
                        const Blocks& r, MPI_Datatype rtype);
// Reduce_scatter(_block) (r: each rank's block of the result); the processes' call takes int
// counts, so it is chosen only where each process's share fits one.
bool reduce_scatter_counts_fit(const Comm* c, const Blocks& r);
int reduce_scatter_processes(const Coll& k, const void* sbuf, void* rbuf, const Blocks& r, MPI_Datatype type,
                             MPI_Op op);
// Alltoall(v,w), in place or not (all members alike, as the standard requires). In place
// (send_of then reads the receive buffer) every block, local ones too, is packed before any
// member writes.
int alltoall_processes(const Coll& k, const void* args, BlockOf send_of, BlockOf recv_of, bool inplace);

}  // namespace tsmpi::ranks::coll
