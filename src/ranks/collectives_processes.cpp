// Collectives on a communicator that spans processes with an MPI communicator of its processes
// (the threadcomm, and what is made from it: comm_processes.cpp) as one exchange per
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
// - Alltoall(v,w): the leader packs, for each other process, the blocks its
//   members send to that process's members (sender-major), and sends them to that process's
//   leader as one message of bytes (pieces of 1 GiB beyond), receiving as many; the sizes on
//   both sides come from the blocks' matching type signatures, so no sizes are exchanged and
//   every form takes this path. Every member unpacks the blocks addressed to it and copies those
//   of the local members straight from their send buffers. In place the send blocks are the
//   receive buffer's, which members overwrite: the leader then packs the local members' blocks
//   to each other too, before it publishes, and members take those from its copy as well.
#include <algorithm>
#include <climits>
#include <vector>

#include "ranks/collective_parts.h"

namespace tsmpi::ranks::coll {

namespace {

// The leader makes the round's result (make(rc) returns it, rc its error) and publishes it; the
// others wait for it. After a failed meeting nobody makes one: nullptr.
template <class Result, class Make>
Result* from_leader(Team& t, const Coll& k, int li, int& rc, Make&& make) {
  if (rc != MPI_SUCCESS) return nullptr;
  if (li == kLeader) {
    Result* x = make(rc);
    t.publish(li, k.round, {rc, 0, x});
    return x;
  }
  const Team::Published p = t.wait_published(kLeader, k.round);  // the leader has read our data
  rc = p.err;
  return static_cast<Result*>(p.shared);
}

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
      : counts(static_cast<std::size_t>(c->coll_size)),
        displs(static_cast<std::size_t>(c->coll_size)),
        offset(static_cast<std::size_t>(c->size()) + 1) {
    int last = -1;
    for (int i = 0; i < c->size(); ++i) {
      const auto p = static_cast<std::size_t>(c->coll_rank(i));
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
  Exchange* x = from_leader<Exchange>(t, k, li, rc, [&](int& err) {
    auto* e = new Exchange(k.c, [&](int i) { return block_bytes(r.count(i), rtype); });
    pack_local(k, *e);
    err = processes_collective([&](MPI_Request* req) {
      return PMPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, e->bytes.data(), e->counts.data(), e->displs.data(),
                              MPI_BYTE, k.c->coll_comm, req);
    });
    return e;
  });
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
  std::vector<long long> per_process(static_cast<std::size_t>(c->coll_size));
  for (int i = 0; i < c->size(); ++i) {
    long long& n = per_process[static_cast<std::size_t>(c->coll_rank(i))];
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
  TypedScratch* acc = from_leader<TypedScratch>(t, k, li, rc, [&](int& err) {
    auto* a = new TypedScratch(total, type);
    err = fold(t.size(), [&](int j) { return t.buffers_of(j, k.round).in.buf; }, a->typed(), op);
    if (err != MPI_SUCCESS) return a;
    std::vector<int> share(static_cast<std::size_t>(c->coll_size));
    for (int i = 0; i < k.size(); ++i) share[static_cast<std::size_t>(c->coll_rank(i))] += static_cast<int>(r.count(i));
    // In place: the input is the whole vector, this process's share lands at its start.
    err = processes_collective([&](MPI_Request* q) {
      return PMPI_Ireduce_scatter(MPI_IN_PLACE, a->data(), share.data(), type, op, c->coll_comm, q);
    });
    return a;
  });
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
      : first(static_cast<std::size_t>(c->coll_size), -1), count(static_cast<std::size_t>(c->coll_size)) {
    for (int i = 0; i < c->size(); ++i) {
      const auto p = static_cast<std::size_t>(c->coll_rank(i));
      if (first[p] < 0) first[p] = i;
      ++count[p];
    }
  }
};

// The leader's buffers of one Alltoall. Per other process q, the bytes to send (every block a
// local member sends to a member of q, sender-major) and the bytes to receive, laid out the same
// way; `at[i * local + (j - lo)]` is where the block from comm rank i (of another process) to
// local member j starts in `in`.
struct AlltoallExchange {
  std::vector<long long> out_at, in_at;  // per process, where its bytes start (and [nprocs]: the end)
  std::vector<long long> at;
  std::vector<char> out, in;
  // In place: the blocks between this process's members, [sender * local + receiver] (a
  // member's block to itself stays where it is).
  std::vector<long long> local_at;
  std::vector<char> local;
};

// The exchange a thread leads, kept from one call to the next: byte buffers allocated per call
// were zero-filled each time and, once freed, given back to the kernel by glibc's trimming of
// the thread's arena, so each call paid the page faults again (Open MPI 4.1, 2 processes x 8
// thread-ranks, 4 KiB blocks in place: 2.9-4.1 ms per call, most of it in memset and faults).
// The buffers only grow; beyond kKeptBytes they are freed after the call. A thread leads one
// collective at a time (worker_pool.h: a task runs to its end on its worker).
constexpr std::size_t kKeptBytes = std::size_t{16} << 20;
AlltoallExchange& kept_exchange() {
  thread_local AlltoallExchange x;
  return x;
}
void grow(std::vector<char>& v, long long bytes) {
  if (v.size() < static_cast<std::size_t>(bytes)) v.resize(static_cast<std::size_t>(bytes));
}
void release_if_large(AlltoallExchange& x) {
  if (x.out.size() + x.in.size() + x.local.size() <= kKeptBytes) return;
  x.out = {}, x.in = {}, x.local = {};
}

// Byte messages of any size between two leaders, in pieces an int count holds. Both sides lay
// out the same bytes (the blocks' type signatures match), so the pieces pair up in order.
constexpr long long kPiece = 1LL << 30;
constexpr int kAlltoallTag = 1;

int exchange_with_processes(const Comm* c, AlltoallExchange& x, int here) {
  std::vector<MPI_Request> reqs;
  int rc = MPI_SUCCESS;
  const auto np = static_cast<std::size_t>(c->coll_size);
  for (std::size_t q = 0; q < np && rc == MPI_SUCCESS; ++q) {
    if (static_cast<int>(q) == here) continue;
    for (long long o = x.in_at[q]; o < x.in_at[q + 1] && rc == MPI_SUCCESS; o += kPiece) {
      reqs.push_back(MPI_REQUEST_NULL);
      const int n = static_cast<int>(std::min(kPiece, x.in_at[q + 1] - o));
      rc = mpi::locked([&] {
        return PMPI_Irecv(x.in.data() + o, n, MPI_BYTE, static_cast<int>(q), kAlltoallTag, c->coll_comm, &reqs.back());
      });
    }
    for (long long o = x.out_at[q]; o < x.out_at[q + 1] && rc == MPI_SUCCESS; o += kPiece) {
      reqs.push_back(MPI_REQUEST_NULL);
      const int n = static_cast<int>(std::min(kPiece, x.out_at[q + 1] - o));
      rc = mpi::locked([&] {
        return PMPI_Isend(x.out.data() + o, n, MPI_BYTE, static_cast<int>(q), kAlltoallTag, c->coll_comm, &reqs.back());
      });
    }
  }
  // Started requests are completed even after a failed start: their buffers are freed after.
  const int done = waitall_yielding(static_cast<int>(reqs.size()), reqs.data());
  return rc != MPI_SUCCESS ? rc : done;
}

// Lays out the leader's exchange and packs the blocks its members send to other processes (in
// place, to each other too).
template <class ViewOf>
AlltoallExchange* pack_for_processes(const Comm* c, const ProcessRanges& pr, int here, bool inplace, ViewOf&& view_of) {
  const int lo = pr.first[static_cast<std::size_t>(here)], local = pr.count[static_cast<std::size_t>(here)];
  AlltoallExchange* x = &kept_exchange();
  const auto np = static_cast<std::size_t>(c->coll_size);
  x->out_at.assign(np + 1, 0), x->in_at.assign(np + 1, 0);
  x->at.assign(static_cast<std::size_t>(c->size()) * static_cast<std::size_t>(local), 0);
  long long out = 0, in = 0;
  for (std::size_t q = 0; q < np; ++q) {
    x->out_at[q] = out, x->in_at[q] = in;
    if (static_cast<int>(q) == here) continue;
    for (int i = lo; i < lo + local; ++i)
      for (int j = pr.first[q]; j < pr.first[q] + pr.count[q]; ++j) out += packed_bytes(view_of(i).send_of(view_of(i).args, j));
    for (int i = pr.first[q]; i < pr.first[q] + pr.count[q]; ++i)
      for (int j = lo; j < lo + local; ++j) {
        x->at[static_cast<std::size_t>(i) * static_cast<std::size_t>(local) + static_cast<std::size_t>(j - lo)] = in;
        in += packed_bytes(view_of(j).recv_of(view_of(j).args, i));
      }
  }
  x->out_at[np] = out, x->in_at[np] = in;
  grow(x->out, out + 1), grow(x->in, in + 1);
  char* o = x->out.data();
  for (std::size_t q = 0; q < np; ++q) {
    if (static_cast<int>(q) == here) continue;
    for (int i = lo; i < lo + local; ++i) {
      const AlltoallProcsView& from = view_of(i);
      for (int j = pr.first[q]; j < pr.first[q] + pr.count[q]; ++j) {
        const TypedBuffer b = from.send_of(from.args, j);
        pack(b, o);
        o += packed_bytes(b);
      }
    }
  }
  if (inplace) {
    const auto n = static_cast<std::size_t>(local);
    x->local_at.assign(n * n, 0);
    long long bytes = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const AlltoallProcsView& from = view_of(lo + static_cast<int>(i));
      for (std::size_t j = 0; j < n; ++j) {
        x->local_at[i * n + j] = bytes;
        if (i != j) bytes += packed_bytes(from.send_of(from.args, lo + static_cast<int>(j)));
      }
    }
    grow(x->local, bytes + 1);
    for (std::size_t i = 0; i < n; ++i) {
      const AlltoallProcsView& from = view_of(lo + static_cast<int>(i));
      for (std::size_t j = 0; j < n; ++j)
        if (i != j) pack(from.send_of(from.args, lo + static_cast<int>(j)), x->local.data() + x->local_at[i * n + j]);
    }
  }
  return x;
}

}  // namespace

int alltoall_processes(const Coll& k, const void* args, BlockOf send_of, BlockOf recv_of, bool inplace) {
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
  const int here = c->my_coll_rank, lo = pr.first[static_cast<std::size_t>(here)];
  const int local = pr.count[static_cast<std::size_t>(here)];
  AlltoallExchange* x = from_leader<AlltoallExchange>(t, k, li, rc, [&](int& err) {
    AlltoallExchange* e = pack_for_processes(c, pr, here, inplace, view_of);
    err = exchange_with_processes(c, *e, here);
    return e;
  });
  for (int i = 0; rc == MPI_SUCCESS && i < k.size(); ++i) {
    const TypedBuffer to = recv_of(args, i);
    if (c->coll_rank(i) == here) {
      if (!inplace) {
        const AlltoallProcsView& from = view_of(i);
        local_copy(from.send_of(from.args, k.me), to);
      } else if (i != k.me) {  // in place a member's own block stays where it is
        const long long from = x->local_at[static_cast<std::size_t>(i - lo) * static_cast<std::size_t>(local) + static_cast<std::size_t>(k.me - lo)];
        unpack(x->local.data() + from, static_cast<std::size_t>(packed_bytes(to)), to);
      }
    } else {
      const long long from = x->at[static_cast<std::size_t>(i) * static_cast<std::size_t>(local) + static_cast<std::size_t>(k.me - lo)];
      unpack(x->in.data() + from, static_cast<std::size_t>(packed_bytes(to)), to);
    }
  }
  t.depart(li, k.round);
  t.wait_departed(li, k.round);  // the others read our send buffer (and the leader's exchange)
  if (x && li == kLeader) release_if_large(*x);
  return rc;
}

}  // namespace tsmpi::ranks::coll
