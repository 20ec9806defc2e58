// Collectives on a threadcomm that spans processes (or a duplicate of it) as one exchange per
// process. The local members meet (team.h); the leader (local member 0) combines their data,
// makes the one collective of the processes and publishes its result; each member takes its part
// of it, and the leader frees the result once all have left. A member's own buffers are read only
// while it waits for the leader.
// - Allgather(v): the leader packs the local blocks into one buffer, in rank order (each
//   process's thread-ranks are consecutive), and the processes exchange it as bytes in one
//   MPI_Allgatherv; every member unpacks all blocks.
// - Reduce_scatter(_block): the leader folds the local vectors in rank order, the processes
//   reduce and scatter the folded vectors in one MPI_Reduce_scatter (each process's share is its
//   members' blocks, which are consecutive), and every member copies its block.
// - Alltoall: the leader packs, for each other process, the blocks its members send to that
//   process's members (sender-major) into one buffer, and the processes exchange them as bytes
//   in one MPI_Alltoallv; every member unpacks the blocks addressed to it and copies those of
//   the local members straight from their send buffers.
#include <algorithm>
#include <climits>
#include <vector>

#include "ranks/collective_parts.h"

namespace tsmpi::ranks::coll {

namespace {

constexpr int kLeader = 0;

struct AllgatherProcsForm;
struct ReduceScatterProcsForm;
struct AlltoallProcsForm;

// What a member of an Alltoall leaves for the others: its arguments and how to read them.
struct AlltoallProcsView {
  const void* args;
  BlockOf send_of, recv_of;
};

long long block_bytes(MPI_Count count, MPI_Datatype type) { return packed_bytes({nullptr, count, type}); }

// One round's exchange, made by the leader and read by every local member: per process its
// byte count and displacement, per comm rank the offset of its packed block (offset[size] is
// the total), and the bytes.
struct Exchange {
  std::vector<int> counts, displs;
  std::vector<MPI_Aint> offset;
  std::vector<char> bytes;

  // Lays out `per_rank(i)` packed bytes for each comm rank i.
  template <class PerRank>
  Exchange(const Comm* c, PerRank&& per_rank)
      : counts(static_cast<std::size_t>(c->family->nprocs)),
        displs(static_cast<std::size_t>(c->family->nprocs)),
        offset(static_cast<std::size_t>(c->size()) + 1) {
    int last = -1;
    for (int i = 0; i < c->size(); ++i) {
      const auto p = static_cast<std::size_t>(c->proc_of(i));
      const MPI_Aint off = offset[static_cast<std::size_t>(i)];
      if (static_cast<int>(p) != last) displs[p] = static_cast<int>(off);
      last = static_cast<int>(p);
      const long long n = per_rank(i);
      counts[p] += static_cast<int>(n);
      offset[static_cast<std::size_t>(i) + 1] = off + static_cast<MPI_Aint>(n);
    }
    bytes.resize(static_cast<std::size_t>(offset.back()));
  }
  char* block(int rank) { return bytes.data() + offset[static_cast<std::size_t>(rank)]; }
  std::size_t size_of(int rank) const {
    return static_cast<std::size_t>(offset[static_cast<std::size_t>(rank) + 1] - offset[static_cast<std::size_t>(rank)]);
  }
};

// Packs each local member's contribution (buffers().in) into its block.
void pack_local(const Coll& k, Exchange& x) {
  const Comm* c = k.c;
  for (int r : c->local_ranks) pack(c->team.buffers_of(c->local_index[static_cast<std::size_t>(r)], k.round).in, x.block(r));
}

}  // namespace

bool across_processes(const Comm* c) { return c->blocked && c->coll_comm != MPI_COMM_NULL; }

long long exchange_bytes(const Comm* c, const Blocks& r, MPI_Datatype type) {
  long long total = 0;
  for (int i = 0; i < c->size(); ++i) {
    const long long n = block_bytes(r.count(i), type);
    if (n < 0) return -1;
    total += n;
    if (total > INT_MAX) return -1;
  }
  return total;
}

int allgather_processes(const Coll& k, const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf,
                        const Blocks& r, MPI_Datatype rtype) {
  Team& t = k.c->team;
  const int li = index_of(k);
  // In place, a member's block of its receive buffer is what it gives.
  const TypedBuffer in = in_place(sbuf) ? at(rbuf, r.displ(k.me), r.count(k.me), rtype) : TypedBuffer{sbuf, scount, stype};
  int rc = arrive_and_meet(t, k, li, team_call(k, -1, DataPath::kBuffers), form_of<AllgatherProcsForm>(),
                           [&](Team::Note&) { t.buffers(li, k.round).in = in; });
  Exchange* x = nullptr;
  if (rc == MPI_SUCCESS && li == kLeader) {
    x = new Exchange(k.c, [&](int i) { return block_bytes(r.count(i), rtype); });
    pack_local(k, *x);
    rc = processes_collective([&](MPI_Request* req) {
      return PMPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, x->bytes.data(), x->counts.data(), x->displs.data(),
                              MPI_BYTE, k.c->coll_comm, req);
    });
    t.publish(li, k.round, {rc, 0, x});
  } else if (rc == MPI_SUCCESS) {
    const Team::Published p = t.wait_published(kLeader, k.round);  // the leader has read our data
    rc = p.err;
    x = static_cast<Exchange*>(p.shared);
  }
  for (int j = 0; rc == MPI_SUCCESS && j < k.size(); ++j) {
    if (j == k.me && in_place(sbuf)) continue;
    unpack(x->block(j), x->size_of(j), at(rbuf, r.displ(j), r.count(j), rtype));
  }
  t.depart(li, k.round);
  if (li == kLeader && x) {  // the others read its exchange until they leave
    t.wait_departed(li, k.round);
    delete x;
  }
  return rc;
}

bool reduce_scatter_counts_fit(const Comm* c, const Blocks& r) {
  std::vector<long long> per_process(static_cast<std::size_t>(c->family->nprocs));
  for (int i = 0; i < c->size(); ++i) {
    long long& n = per_process[static_cast<std::size_t>(c->proc_of(i))];
    n += r.count(i);
    if (n > INT_MAX) return false;
  }
  return true;
}

int reduce_scatter_processes(const Coll& k, const void* sbuf, void* rbuf, const Blocks& r, MPI_Datatype type,
                             MPI_Op op) {
  Comm* c = k.c;
  Team& t = c->team;
  const int li = index_of(k);
  // Where each rank's block starts in the whole vector; before[size] elements in all.
  std::vector<MPI_Count> before(static_cast<std::size_t>(k.size()) + 1);
  for (int i = 0; i < k.size(); ++i) before[static_cast<std::size_t>(i) + 1] = before[static_cast<std::size_t>(i)] + r.count(i);
  const MPI_Count total = before.back();
  const TypedBuffer in{in_place(sbuf) ? rbuf : sbuf, total, type};
  int rc = arrive_and_meet(t, k, li, team_call(k, -1, DataPath::kBuffers), form_of<ReduceScatterProcsForm>(),
                           [&](Team::Note&) { t.buffers(li, k.round).in = in; });
  TypedScratch* acc = nullptr;
  if (rc == MPI_SUCCESS && li == kLeader) {
    acc = new TypedScratch(total, type);
    rc = fold(t.size(), [&](int j) { return t.buffers_of(j, k.round).in.buf; }, acc->typed(), op);
    if (rc == MPI_SUCCESS) {
      std::vector<int> share(static_cast<std::size_t>(c->family->nprocs));
      for (int i = 0; i < k.size(); ++i) share[static_cast<std::size_t>(c->proc_of(i))] += static_cast<int>(r.count(i));
      // In place: the input is the whole vector, this process's share lands at its start.
      rc = processes_collective([&](MPI_Request* q) {
        return PMPI_Ireduce_scatter(MPI_IN_PLACE, acc->data(), share.data(), type, op, c->coll_comm, q);
      });
    }
    t.publish(li, k.round, {rc, 0, acc});
  } else if (rc == MPI_SUCCESS) {
    const Team::Published p = t.wait_published(kLeader, k.round);  // the leader has read our vectors
    rc = p.err;
    acc = static_cast<TypedScratch*>(p.shared);
  }
  const MPI_Count mine = r.count(k.me);
  if (rc == MPI_SUCCESS && mine > 0) {
    const MPI_Count first = before[static_cast<std::size_t>(c->local_ranks.front())];
    local_copy(at(acc->data(), static_cast<MPI_Aint>(before[static_cast<std::size_t>(k.me)] - first), mine, type),
               {rbuf, mine, type});
  }
  t.depart(li, k.round);
  if (li == kLeader && acc) {  // the others copy from its result until they leave
    t.wait_departed(li, k.round);
    delete acc;
  }
  return rc;
}

namespace {

// The processes' ranges of comm ranks (consecutive, processes in order).
struct ProcessRanges {
  std::vector<int> first, count;
  explicit ProcessRanges(const Comm* c)
      : first(static_cast<std::size_t>(c->family->nprocs), -1), count(static_cast<std::size_t>(c->family->nprocs)) {
    for (int i = 0; i < c->size(); ++i) {
      const auto p = static_cast<std::size_t>(c->proc_of(i));
      if (first[p] < 0) first[p] = i;
      ++count[p];
    }
  }
};

// The leader's buffers of one Alltoall: per process its byte counts and displacements.
struct AlltoallExchange {
  std::vector<int> scounts, sdispls, rcounts, rdispls;
  std::vector<char> sbytes, rbytes;
};

}  // namespace

bool alltoall_fits(const Comm* c, long long block) {
  if (block < 0) return false;
  const ProcessRanges pr(c);
  long long most = 0;
  for (int n : pr.count) most = std::max<long long>(most, n);
  return most * c->size() * block <= INT_MAX;
}

int alltoall_processes(const Coll& k, const void* args, BlockOf send_of, BlockOf recv_of, long long block) {
  Comm* c = k.c;
  Team& t = c->team;
  const int li = index_of(k);
  const AlltoallProcsView view{args, send_of, recv_of};
  int rc = arrive_and_meet(t, k, li, team_call(k, -1, DataPath::kBuffers), form_of<AlltoallProcsForm>(),
                           [&](Team::Note&) { t.buffers(li, k.round).view = &view; });
  auto view_of = [&](int rank) -> const AlltoallProcsView& {
    return *static_cast<const AlltoallProcsView*>(t.buffers_of(c->local_index[static_cast<std::size_t>(rank)], k.round).view);
  };
  const ProcessRanges pr(c);
  const int here = c->family->my_proc, lo = pr.first[static_cast<std::size_t>(here)];
  const int local = pr.count[static_cast<std::size_t>(here)];
  const auto bytes = static_cast<std::size_t>(block);
  AlltoallExchange* x = nullptr;
  if (rc == MPI_SUCCESS && li == kLeader) {
    x = new AlltoallExchange;
    const auto np = static_cast<std::size_t>(c->family->nprocs);
    x->scounts.resize(np), x->sdispls.resize(np), x->rcounts.resize(np), x->rdispls.resize(np);
    int total = 0;
    for (std::size_t q = 0; q < np; ++q) {
      const int n = static_cast<int>(q) == here ? 0 : local * pr.count[q] * static_cast<int>(block);
      x->scounts[q] = x->rcounts[q] = n;  // as many blocks come from q as go to it
      x->sdispls[q] = x->rdispls[q] = total;
      total += n;
    }
    x->sbytes.resize(static_cast<std::size_t>(total) + 1), x->rbytes.resize(static_cast<std::size_t>(total) + 1);
    for (std::size_t q = 0; q < np; ++q) {
      if (static_cast<int>(q) == here) continue;
      char* out = x->sbytes.data() + x->sdispls[q];
      for (int i = lo; i < lo + local; ++i) {
        const AlltoallProcsView& from = view_of(i);
        for (int j = pr.first[q]; j < pr.first[q] + pr.count[q]; ++j, out += bytes) pack(from.send_of(from.args, j), out);
      }
    }
    rc = processes_collective([&](MPI_Request* r) {
      return PMPI_Ialltoallv(x->sbytes.data(), x->scounts.data(), x->sdispls.data(), MPI_BYTE, x->rbytes.data(),
                             x->rcounts.data(), x->rdispls.data(), MPI_BYTE, c->coll_comm, r);
    });
    t.publish(li, k.round, {rc, 0, x});
  } else if (rc == MPI_SUCCESS) {
    const Team::Published p = t.wait_published(kLeader, k.round);  // the leader has packed our blocks
    rc = p.err;
    x = static_cast<AlltoallExchange*>(p.shared);
  }
  if (rc == MPI_SUCCESS) {
    for (int i = 0; i < k.size(); ++i) {
      const auto q = static_cast<std::size_t>(c->proc_of(i));
      if (static_cast<int>(q) == here) {
        const AlltoallProcsView& from = view_of(i);
        local_copy(from.send_of(from.args, k.me), recv_of(args, i));
      } else {
        // From process q, sender-major: sender i's blocks to our members lo .. lo+local-1.
        const std::size_t at_block = static_cast<std::size_t>(i - pr.first[q]) * static_cast<std::size_t>(local) +
                                     static_cast<std::size_t>(k.me - lo);
        unpack(x->rbytes.data() + x->rdispls[q] + at_block * bytes, bytes, recv_of(args, i));
      }
    }
  }
  t.depart(li, k.round);
  t.wait_departed(li, k.round);  // the others read our send buffer (and the leader's exchange)
  if (li == kLeader) delete x;
  return rc;
}

}  // namespace tsmpi::ranks::coll
