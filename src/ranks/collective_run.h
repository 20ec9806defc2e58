// How a collective of thread-ranks runs (collectives.cpp, collectives_neighbor.cpp): its point-to-
// point operations started together and completed together (Batch), and the call itself, now or
// on a worker with a request for the nonblocking form (run).
#pragma once
#include <deque>

#include "checks/checks.h"
#include "checks/thread_rank_collectives.h"
#include "ranks/caller.h"
#include "ranks/collective_parts.h"
#include "ranks/p2p.h"
#include "ranks/ranks_stats.h"
#include "ranks/requests.h"
#include "ranks/worker_pool.h"
#include "runtime/function_table.h"

namespace tsmpi::ranks::coll {

// Point-to-point operations of one collective, started together and completed together.
class Batch {
 public:
  explicit Batch(const Coll& k) : k_(k) {}
  void send(int dst, const TypedBuffer& b) {
    SendOp& op = sends_.emplace_back();
    int rc = start_send(k_.c, k_.me, b, dst, k_.tag, SendMode::kStandard, Channel::kColl, &op);
    if (rc != MPI_SUCCESS) {
      op.err = rc;
      op.done.set();
    }
  }
  void recv(int src, const TypedBuffer& b) {
    RecvOp& op = recvs_.emplace_back();
    int rc = start_recv(k_.c, k_.me, src, k_.tag, b, Channel::kColl, &op);
    if (rc != MPI_SUCCESS) {
      op.r_err = rc;
      op.done.set();
    }
  }
  int wait() {
    int rc = MPI_SUCCESS;
    for (auto& s : sends_) {
      wait_done(s.done, k_.c->family, s.waits_in, &s);
      if (s.err != MPI_SUCCESS) rc = s.err;
    }
    for (auto& r : recvs_) {
      wait_done(r.done, k_.c->family, &k_.c->box(k_.me, Channel::kColl));
      if (r.r_err != MPI_SUCCESS) rc = r.r_err;
    }
    sends_.clear();
    recvs_.clear();
    return rc;
  }

 private:
  Coll k_;
  std::deque<SendOp> sends_;
  std::deque<RecvOp> recvs_;
};

// The collective's tag: its number on the communicator and which call it is, so that members
// in different collectives (an erroneous program; a blocking and a nonblocking form do not
// match either, MPI-4 §6.12) never exchange data.
int collective_tag(std::uint32_t seq, const char* call);

// Runs `algorithm(coll)` now, or on a worker with a request for the nonblocking form; checking
// mode compares the collective with the other local members' (checks/thread_rank_collectives.h).
enum class Path { kGeneric, kTeam };
template <class Algorithm>
int run(Caller& k, const char* call, CollRequest nonblocking, int root, Path path, Algorithm&& algorithm) {
  const CollectiveCount::Ticket t = k.m->collectives.take(path == Path::kTeam);
  const std::uint32_t seq = t.seq;
  Coll coll{k.c, k.m->rank, collective_tag(seq, call), t.round};
  count(g_counters.collectives);
  const bool checked = checks::g_on;
  if (checked) {
    checks::thread_rank_collective_begin(k.c, seq, find_function(call), root, k.m->rank,
                                         static_cast<int>(k.c->local_ranks.size()), !nonblocking);
  }
  if (!nonblocking) {
    int rc = algorithm(coll);
    if (checked) checks::thread_rank_collective_end(k.c, seq, coll.me, true);
    return raise(k.c, rc, call);
  }
  Request* r = nonblocking.started ? nonblocking.started : new_request(k.c, k.m->rank, 1, nonblocking.out);
  if (!r) return raise(k.c, MPI_ERR_INTERN, call);
  run_in_background([r, coll, seq, checked, algorithm = std::forward<Algorithm>(algorithm)]() mutable {
    r->err = algorithm(coll);
    if (checked) checks::thread_rank_collective_end(coll.c, seq, coll.me, false);
    part_done(r);
  });
  return MPI_SUCCESS;
}

}  // namespace tsmpi::ranks::coll
