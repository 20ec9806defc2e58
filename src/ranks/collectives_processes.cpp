// Gather, Scatter, Allgather and Allgatherv on a threadcomm that spans processes, as one
// exchange per process: the local members meet (team.h), the leader (local member 0) packs the
// blocks its process gives into one buffer, in rank order (each process's thread-ranks are
// consecutive), makes the one call of the processes' collective on it as bytes, and publishes
// it; every member then unpacks what it receives, and the leader frees the buffer once all have
// left. A member's own buffers are read only while it waits for the leader.
#include <climits>
#include <vector>

#include "ranks/collective_parts.h"

namespace tsmpi::ranks::coll {

namespace {

constexpr int kLeader = 0;

struct AllgatherProcsForm;
struct GatherProcsForm;
struct ScatterProcsForm;

long long block_bytes(MPI_Count count, MPI_Datatype type) { return packed_bytes({nullptr, count, type}); }

// One round's exchange, made by the leader and read by every local member: per process its
// byte count and displacement, per comm rank the offset of its packed block, and the bytes
// (all processes' blocks, or only this process's: `base` is the offset of bytes[0]).
struct Exchange {
  std::vector<int> counts, displs;
  std::vector<MPI_Aint> offset;
  MPI_Aint base = 0;
  std::vector<char> bytes;

  // Lays out `per_rank(i)` packed bytes for each comm rank i.
  template <class PerRank>
  Exchange(const Comm* c, PerRank&& per_rank)
      : counts(static_cast<std::size_t>(c->family->nprocs)),
        displs(static_cast<std::size_t>(c->family->nprocs)),
        offset(static_cast<std::size_t>(c->size())) {
    MPI_Aint off = 0;
    int last = -1;
    for (int i = 0; i < c->size(); ++i) {
      const auto p = static_cast<std::size_t>(c->proc_of(i));
      if (static_cast<int>(p) != last) displs[p] = static_cast<int>(off);
      last = static_cast<int>(p);
      offset[static_cast<std::size_t>(i)] = off;
      const long long n = per_rank(i);
      counts[p] += static_cast<int>(n);
      off += static_cast<MPI_Aint>(n);
    }
  }
  // Holds every process's blocks, or (local_only) this process's.
  void allocate(const Comm* c, bool local_only) {
    const auto me = static_cast<std::size_t>(c->family->my_proc);
    if (local_only) {
      base = displs[me];
      bytes.resize(static_cast<std::size_t>(counts[me]));
    } else {
      bytes.resize(static_cast<std::size_t>(displs.back()) + static_cast<std::size_t>(counts.back()));
    }
  }
  char* block(int rank) { return bytes.data() + (offset[static_cast<std::size_t>(rank)] - base); }
  const char* block(int rank) const { return bytes.data() + (offset[static_cast<std::size_t>(rank)] - base); }
  std::size_t size_of(int rank) const {
    const auto r = static_cast<std::size_t>(rank);
    const MPI_Aint end = r + 1 < offset.size() ? offset[r + 1] : displs.back() + counts.back();
    return static_cast<std::size_t>(end - offset[r]);
  }
  int mine(const Comm* c) const { return counts[static_cast<std::size_t>(c->family->my_proc)]; }
};

// The shape of every form here: meet with `in` as the member's contribution and `view` as what
// else the leader may read; the leader builds the round's Exchange (`exchange`) and publishes
// it; every member runs `take`, departs; the leader frees the exchange when all have left.
template <class MakeExchange, class Take>
int through_leader(const Coll& k, int root, const TypedBuffer& in, const void* view, const void* form,
                   MakeExchange&& exchange, Take&& take) {
  Team& t = k.c->team;
  const int li = index_of(k);
  int rc = arrive_and_meet(t, k, li, team_call(k, root, DataPath::kBuffers), form, [&](Team::Note&) {
    Team::Buffers& b = t.buffers(li, k.round);
    b.in = in;
    b.view = view;
  });
  Exchange* x = nullptr;
  if (rc == MPI_SUCCESS && li == kLeader) {
    rc = exchange(x);
    t.publish(li, k.round, {rc, 0, x});
  } else if (rc == MPI_SUCCESS) {
    const Team::Published p = t.wait_published(kLeader, k.round);  // the leader has read our data
    rc = p.err;
    x = static_cast<Exchange*>(p.shared);
  }
  if (rc == MPI_SUCCESS) rc = take(*x);
  t.depart(li, k.round);
  if (li == kLeader && x) {
    t.wait_departed(li, k.round);
    delete x;
  }
  return rc;
}

// Packs each local member's contribution (buffers().in: empty for a root's MPI_IN_PLACE) into
// its block.
void pack_local(const Coll& k, Exchange& x) {
  const Comm* c = k.c;
  for (int r : c->local_ranks) pack(c->team.buffers_of(c->local_index[static_cast<std::size_t>(r)], k.round).in, x.block(r));
}

// What the leader reads of a scatter's root's arguments.
struct RootView {
  const void* buf;
  Blocks blocks;
  MPI_Datatype type;
};
const RootView& root_view(const Coll& k, int root) {
  const Comm* c = k.c;
  return *static_cast<const RootView*>(c->team.buffers_of(c->local_index[static_cast<std::size_t>(root)], k.round).view);
}

}  // namespace

bool across_processes(const Comm* c) { return c->root && c->blocked && c->coll_comm != MPI_COMM_NULL; }

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
  // In place, a member's block of its receive buffer is what it gives.
  const TypedBuffer in = in_place(sbuf) ? at(rbuf, r.displ(k.me), r.count(k.me), rtype) : TypedBuffer{sbuf, scount, stype};
  return through_leader(
      k, -1, in, nullptr, form_of<AllgatherProcsForm>(),
      [&](Exchange*& x) {
        x = new Exchange(k.c, [&](int i) { return block_bytes(r.count(i), rtype); });
        x->allocate(k.c, false);
        pack_local(k, *x);
        return processes_collective([&](MPI_Request* req) {
          return PMPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, x->bytes.data(), x->counts.data(),
                                  x->displs.data(), MPI_BYTE, k.c->coll_comm, req);
        });
      },
      [&](const Exchange& x) {
        for (int j = 0; j < k.size(); ++j) {
          if (j == k.me && in_place(sbuf)) continue;
          unpack(x.block(j), x.size_of(j), at(rbuf, r.displ(j), r.count(j), rtype));
        }
        return MPI_SUCCESS;
      });
}

int gather_processes(const Coll& k, const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf,
                     MPI_Count rcount, MPI_Datatype rtype, int root) {
  // Every rank's block has the same packed size (the type signatures match): the root knows it
  // from its receive arguments, the others from their send arguments.
  const long long each = k.me == root ? block_bytes(rcount, rtype) : block_bytes(scount, stype);
  const bool root_here = k.c->is_local(root);
  const TypedBuffer in = in_place(sbuf) ? TypedBuffer{} : TypedBuffer{sbuf, scount, stype};
  return through_leader(
      k, root, in, nullptr, form_of<GatherProcsForm>(),
      [&](Exchange*& x) {
        x = new Exchange(k.c, [&](int) { return each; });
        x->allocate(k.c, !root_here);
        pack_local(k, *x);
        const int to = k.c->proc_of(root);
        return processes_collective([&](MPI_Request* req) {
          if (root_here)
            return PMPI_Igatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, x->bytes.data(), x->counts.data(),
                                 x->displs.data(), MPI_BYTE, to, k.c->coll_comm, req);
          return PMPI_Igatherv(x->bytes.data(), x->mine(k.c), MPI_BYTE, nullptr, x->counts.data(), x->displs.data(),
                               MPI_BYTE, to, k.c->coll_comm, req);
        });
      },
      [&](const Exchange& x) {
        if (k.me != root) return MPI_SUCCESS;
        for (int j = 0; j < k.size(); ++j) {
          if (j == root && in_place(sbuf)) continue;  // the root's block is already in place
          unpack(x.block(j), x.size_of(j), at(rbuf, static_cast<MPI_Aint>(j) * rcount, rcount, rtype));
        }
        return MPI_SUCCESS;
      });
}

int scatter_processes(const Coll& k, const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf,
                      MPI_Count rcount, MPI_Datatype rtype, int root) {
  const long long each = k.me == root ? block_bytes(scount, stype) : block_bytes(rcount, rtype);
  const bool root_here = k.c->is_local(root);
  const RootView view{sbuf, Blocks{{}, {}, scount}, stype};
  return through_leader(
      k, root, TypedBuffer{}, k.me == root ? &view : nullptr, form_of<ScatterProcsForm>(),
      [&](Exchange*& x) {
        x = new Exchange(k.c, [&](int) { return each; });
        x->allocate(k.c, !root_here);
        const int from = k.c->proc_of(root);
        if (root_here) {
          const RootView& v = root_view(k, root);
          for (int j = 0; j < k.size(); ++j) pack(at(v.buf, v.blocks.displ(j), v.blocks.count(j), v.type), x->block(j));
        }
        return processes_collective([&](MPI_Request* req) {
          if (root_here)
            return PMPI_Iscatterv(x->bytes.data(), x->counts.data(), x->displs.data(), MPI_BYTE, MPI_IN_PLACE, 0,
                                  MPI_DATATYPE_NULL, from, k.c->coll_comm, req);
          return PMPI_Iscatterv(nullptr, x->counts.data(), x->displs.data(), MPI_BYTE, x->bytes.data(), x->mine(k.c),
                                MPI_BYTE, from, k.c->coll_comm, req);
        });
      },
      [&](const Exchange& x) {
        if (k.me == root && in_place(rbuf)) return MPI_SUCCESS;  // the root's block stays where it is
        unpack(x.block(k.me), x.size_of(k.me), {rbuf, rcount, rtype});
        return MPI_SUCCESS;
      });
}

}  // namespace tsmpi::ranks::coll
