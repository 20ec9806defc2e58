// Allgather(v) on a threadcomm that spans processes (or a duplicate of it), as one exchange per
// process: the local members meet (team.h), the leader (local member 0) packs their blocks into
// one buffer, in rank order (each process's thread-ranks are consecutive), makes one
// MPI_Allgatherv of it as bytes and publishes it; every member unpacks all blocks, and the
// leader frees the buffer once all have left. A member's own buffers are read only while it waits
// for the leader.
#include <climits>
#include <vector>

#include "ranks/collective_parts.h"

namespace tsmpi::ranks::coll {

namespace {

constexpr int kLeader = 0;

struct AllgatherProcsForm;

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

}  // namespace tsmpi::ranks::coll
