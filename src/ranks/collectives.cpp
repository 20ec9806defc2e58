// Collectives on thread-rank communicators. Every collective has a generic algorithm over the
// engine's point-to-point on the communicator's collective channel (tag: the collective's
// sequence number, which every member counts alike), correct for any layout, datatype and
// operation. Barrier, Bcast, Reduce and Allreduce are hierarchical where the layout allows (all
// members in this process, or the threadcomm itself): the process's members combine in shared
// memory (collectives_team.cpp) and one of them makes the one call of the processes' collective.
// Allgather(v) does the same on the threadcomm (collectives_processes.cpp).
// Nonblocking forms run the same code on a worker thread (worker_pool.h).
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <vector>

#include "checks/checks.h"
#include "checks/thread_rank_collectives.h"
#include "matching/mpi_calls.h"
#include "ranks/api.h"
#include "ranks/caller.h"
#include "ranks/collective_parts.h"
#include "ranks/collective_run.h"
#include "ranks/local_reduction.h"
#include "ranks/p2p.h"
#include "ranks/ranks_stats.h"
#include "ranks/requests.h"
#include "ranks/worker_pool.h"
#include "runtime/function_table.h"

namespace tsmpi::ranks {

namespace coll {
void local_copy(const TypedBuffer& from, const TypedBuffer& to) {
  long long n = packed_bytes(from), m = packed_bytes(to);
  copy(from, to, static_cast<std::size_t>(n < m ? n : m));
}
int reduce_local(const void* in, void* inout, MPI_Count count, MPI_Datatype type, MPI_Op op) {
  if (reduce_predefined(in, inout, count, type, op)) return MPI_SUCCESS;
  return mpi::locked([&] { return PMPI_Reduce_local(in, inout, static_cast<int>(count), type, op); });
}
int collective_tag(std::uint32_t seq, const char* call) {
  std::uint32_t h = 0;
  for (const char* p = call; *p; ++p) h = h * 31 + static_cast<unsigned char>(*p);
  return static_cast<int>(((seq & 0x3fffff) << 8) | (h & 0xff));
}
}  // namespace coll

using namespace coll;

namespace {

// ---- generic algorithms ----------------------------------------------------------------------

int barrier_generic(const Coll& k) {
  Batch b(k);
  if (k.me == 0) {
    for (int i = 1; i < k.size(); ++i) b.recv(i, {nullptr, 0, MPI_BYTE});
    int rc = b.wait();
    for (int i = 1; i < k.size(); ++i) b.send(i, {nullptr, 0, MPI_BYTE});
    int rc2 = b.wait();
    return rc != MPI_SUCCESS ? rc : rc2;
  }
  b.send(0, {nullptr, 0, MPI_BYTE});
  b.recv(0, {nullptr, 0, MPI_BYTE});
  return b.wait();
}

int bcast_generic(const Coll& k, void* buf, MPI_Count count, MPI_Datatype type, int root) {
  Batch b(k);
  if (k.me == root) {
    for (int i = 0; i < k.size(); ++i)
      if (i != root) b.send(i, {buf, count, type});
  } else {
    b.recv(root, {buf, count, type});
  }
  return b.wait();
}

int gatherv_generic(const Coll& k, const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf,
                    const Blocks& r, MPI_Datatype rtype, int root) {
  Batch b(k);
  if (k.me != root) {
    b.send(root, {sbuf, scount, stype});
    return b.wait();
  }
  for (int i = 0; i < k.size(); ++i) {
    if (i == root) continue;
    b.recv(i, at(rbuf, r.displ(i), r.count(i), rtype));
  }
  if (!in_place(sbuf)) local_copy({sbuf, scount, stype}, at(rbuf, r.displ(root), r.count(root), rtype));
  return b.wait();
}

int scatterv_generic(const Coll& k, const void* sbuf, const Blocks& r, MPI_Datatype stype, void* rbuf,
                     MPI_Count rcount, MPI_Datatype rtype, int root) {
  Batch b(k);
  if (k.me != root) {
    b.recv(root, {rbuf, rcount, rtype});
    return b.wait();
  }
  for (int i = 0; i < k.size(); ++i) {
    if (i == root) continue;
    b.send(i, at(sbuf, r.displ(i), r.count(i), stype));
  }
  if (!in_place(rbuf)) local_copy(at(sbuf, r.displ(root), r.count(root), stype), {rbuf, rcount, rtype});
  return b.wait();
}

int allgatherv_generic(const Coll& k, const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf,
                       const Blocks& r, MPI_Datatype rtype) {
  Batch b(k);
  TypedBuffer mine = in_place(sbuf) ? at(rbuf, r.displ(k.me), r.count(k.me), rtype) : TypedBuffer{sbuf, scount, stype};
  for (int i = 0; i < k.size(); ++i) {
    if (i == k.me) continue;
    b.recv(i, at(rbuf, r.displ(i), r.count(i), rtype));
    b.send(i, mine);
  }
  if (!in_place(sbuf)) local_copy(mine, at(rbuf, r.displ(k.me), r.count(k.me), rtype));
  return b.wait();
}

// Alltoall(v,w): `send(i)` and `recv(i)` describe the blocks exchanged with rank i.
template <class SendOf, class RecvOf>
int alltoall_generic(const Coll& k, bool inplace, SendOf send_of, RecvOf recv_of) {
  Batch b(k);
  const int p = k.size();
  // In place: the outgoing blocks are read from the receive buffer, so they are packed first.
  std::vector<std::vector<char>> packed;
  if (inplace) {
    packed.resize(static_cast<std::size_t>(p));
    for (int i = 0; i < p; ++i) {
      TypedBuffer r = recv_of(i);
      packed[static_cast<std::size_t>(i)].resize(static_cast<std::size_t>(packed_bytes(r)) + 1);
      pack(r, packed[static_cast<std::size_t>(i)].data());
    }
  }
  auto outgoing = [&](int i) -> TypedBuffer {
    if (!inplace) return send_of(i);
    return {packed[static_cast<std::size_t>(i)].data(), static_cast<MPI_Count>(packed[static_cast<std::size_t>(i)].size() - 1),
            MPI_BYTE};
  };
  for (int i = 0; i < p; ++i) {
    if (i == k.me) continue;
    b.recv(i, recv_of(i));
    b.send(i, outgoing(i));
  }
  if (!inplace) local_copy(send_of(k.me), recv_of(k.me));
  return b.wait();
}

// Reduce to root by gathering every contribution and folding in rank order.
int reduce_generic(const Coll& k, const void* sbuf, void* rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                   int root) {
  Batch b(k);
  const void* mine = in_place(sbuf) ? rbuf : sbuf;
  if (k.me != root) {
    b.send(root, {mine, count, type});
    return b.wait();
  }
  const int p = k.size();
  std::vector<std::unique_ptr<TypedScratch>> parts(static_cast<std::size_t>(p));
  std::vector<const void*> contributions(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) {
    if (i == root) {
      contributions[static_cast<std::size_t>(i)] = mine;
      continue;
    }
    parts[static_cast<std::size_t>(i)] = std::make_unique<TypedScratch>(count, type);
    contributions[static_cast<std::size_t>(i)] = parts[static_cast<std::size_t>(i)]->data();
    b.recv(i, parts[static_cast<std::size_t>(i)]->typed());
  }
  int rc = b.wait();
  if (rc != MPI_SUCCESS) return rc;
  TypedScratch acc(count, type);
  rc = fold(p, [&](int i) { return contributions[static_cast<std::size_t>(i)]; }, acc.typed(), op);
  if (rc == MPI_SUCCESS) local_copy(acc.typed(), {rbuf, count, type});
  return rc;
}

int scan_generic(const Coll& k, const void* sbuf, void* rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                 bool exclusive) {
  Batch b(k);
  const int p = k.size();
  TypedScratch mine(count, type);  // x_me (rbuf may be both input and output)
  local_copy({in_place(sbuf) ? rbuf : sbuf, count, type}, mine.typed());
  TypedScratch total(count, type);  // x_0 op ... op x_me
  int rc = MPI_SUCCESS;
  if (k.me == 0) {
    local_copy(mine.typed(), total.typed());
  } else {
    TypedScratch before(count, type);  // x_0 op ... op x_(me-1)
    b.recv(k.me - 1, before.typed());
    rc = b.wait();
    if (rc != MPI_SUCCESS) return rc;
    local_copy(mine.typed(), total.typed());
    rc = reduce_local(before.data(), total.data(), count, type, op);
    if (exclusive) local_copy(before.typed(), {rbuf, count, type});
  }
  if (!exclusive) local_copy(total.typed(), {rbuf, count, type});
  if (k.me + 1 < p) {
    b.send(k.me + 1, total.typed());
    int rc2 = b.wait();
    if (rc == MPI_SUCCESS) rc = rc2;
  }
  return rc;
}

// ---- calls ------------------------------------------------------------------------------------

// The arguments of an alltoall, v or w call and the block each sends to and receives from rank i
// (as plain functions: a member of a single-process alltoall reads another's blocks).
struct AlltoallArgs {
  const void* sbuf;
  MPI_Count scount;
  MPI_Datatype stype;
  void* rbuf;
  MPI_Count rcount;
  MPI_Datatype rtype;
  static TypedBuffer send(const void* a, int i) {
    auto& x = *static_cast<const AlltoallArgs*>(a);
    return at(x.sbuf, static_cast<MPI_Aint>(i) * x.scount, x.scount, x.stype);
  }
  static TypedBuffer recv(const void* a, int i) {
    auto& x = *static_cast<const AlltoallArgs*>(a);
    return at(x.rbuf, static_cast<MPI_Aint>(i) * x.rcount, x.rcount, x.rtype);
  }
};
struct AlltoallvArgs {
  const void* sbuf;
  Counts scounts;
  Displs sdispls;
  MPI_Datatype stype;
  void* rbuf;
  Counts rcounts;
  Displs rdispls;
  MPI_Datatype rtype;
  static TypedBuffer send(const void* a, int i) {
    auto& x = *static_cast<const AlltoallvArgs*>(a);
    return at(x.sbuf, x.sdispls[i], x.scounts[i], x.stype);
  }
  static TypedBuffer recv(const void* a, int i) {
    auto& x = *static_cast<const AlltoallvArgs*>(a);
    return at(x.rbuf, x.rdispls[i], x.rcounts[i], x.rtype);
  }
};
struct AlltoallwArgs {  // displacements in bytes
  const void* sbuf;
  Counts scounts;
  Displs sdispls;
  const MPI_Datatype* stypes;
  void* rbuf;
  Counts rcounts;
  Displs rdispls;
  const MPI_Datatype* rtypes;
  static TypedBuffer send(const void* a, int i) {
    auto& x = *static_cast<const AlltoallwArgs*>(a);
    return at_bytes(x.sbuf, x.sdispls[i], x.scounts[i], x.stypes[i]);
  }
  static TypedBuffer recv(const void* a, int i) {
    auto& x = *static_cast<const AlltoallwArgs*>(a);
    return at_bytes(x.rbuf, x.rdispls[i], x.rcounts[i], x.rtypes[i]);
  }
};

// In shared memory when every member lives here and the call is not in place (all members
// use MPI_IN_PLACE or none: a member's blocks would be overwritten while others read them);
// across processes in place too (collectives_processes.cpp).
template <class Args>
int alltoall_run(Caller& k, const char* call, CollRequest nb, const Args& args) {
  if (k.c->single_process && !in_place(args.sbuf)) {
    return run(k, call, nb, -1, Path::kTeam,
               [=](const Coll& c) { return alltoall_pull(c, &args, &Args::send, &Args::recv); });
  }
  if (across_processes(k.c)) {
    // In place a member sends the blocks of its receive buffer.
    const bool ip = in_place(args.sbuf);
    return run(k, call, nb, -1, Path::kTeam, [=](const Coll& c) {
      return alltoall_processes(c, &args, ip ? &Args::recv : &Args::send, &Args::recv, ip);
    });
  }
  return run(k, call, nb, -1, Path::kGeneric, [=](const Coll& c) {
    return alltoall_generic(
        c, in_place(args.sbuf), [&](int i) { return Args::send(&args, i); }, [&](int i) { return Args::recv(&args, i); });
  });
}

}  // namespace

namespace api {

int barrier(MPI_Comm comm, CollRequest nb) {
  const char* call = nb.name("MPI_Ibarrier", "MPI_Barrier");
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  if (hierarchical(k.c)) {
    return run(k, call, nb, -1, Path::kTeam, [](const Coll& c) { return barrier_team(c); });
  }
  return run(k, call, nb, -1, Path::kGeneric, [](const Coll& c) { return barrier_generic(c); });
}

int bcast(void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm, CollRequest nb) {
  const char* call = nb.name("MPI_Ibcast", "MPI_Bcast");
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  if (int e = check_root(k.c, root)) return k.fail(e, call);
  if (hierarchical(k.c)) {
    return run(k, call, nb, root, Path::kTeam, [=](const Coll& c) { return bcast_team(c, buf, count, type, root); });
  }
  return run(k, call, nb, root, Path::kGeneric, [=](const Coll& c) { return bcast_generic(c, buf, count, type, root); });
}

int gather(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm, CollRequest nb) {
  const char* call = nb.name("MPI_Igather", "MPI_Gather");
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  if (int e = check_root(k.c, root)) return k.fail(e, call);
  if (k.c->single_process) {
    return run(k, call, nb, root, Path::kTeam, [=](const Coll& c) {
      return gather_pull(c, sendbuf, sendcount, sendtype, recvbuf, Blocks{{}, {}, recvcount}, recvtype, root);
    });
  }
  return run(k, call, nb, root, Path::kGeneric, [=](const Coll& c) {
    return gatherv_generic(c, sendbuf, sendcount, sendtype, recvbuf, Blocks{{}, {}, recvcount}, recvtype, root);
  });
}

int gatherv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, Counts recvcounts,
            Displs displs, MPI_Datatype recvtype, int root, MPI_Comm comm, CollRequest nb) {
  const char* call = nb.name("MPI_Igatherv", "MPI_Gatherv");
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  if (int e = check_root(k.c, root)) return k.fail(e, call);
  if (k.c->single_process) {
    return run(k, call, nb, root, Path::kTeam, [=](const Coll& c) {
      return gather_pull(c, sendbuf, sendcount, sendtype, recvbuf, Blocks{recvcounts, displs}, recvtype, root);
    });
  }
  return run(k, call, nb, root, Path::kGeneric, [=](const Coll& c) {
    return gatherv_generic(c, sendbuf, sendcount, sendtype, recvbuf, Blocks{recvcounts, displs}, recvtype, root);
  });
}

int scatter(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
            MPI_Datatype recvtype, int root, MPI_Comm comm, CollRequest nb) {
  const char* call = nb.name("MPI_Iscatter", "MPI_Scatter");
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  if (int e = check_root(k.c, root)) return k.fail(e, call);
  if (k.c->single_process) {
    return run(k, call, nb, root, Path::kTeam, [=](const Coll& c) {
      return scatter_pull(c, sendbuf, Blocks{{}, {}, sendcount}, sendtype, recvbuf, recvcount, recvtype, root);
    });
  }
  return run(k, call, nb, root, Path::kGeneric, [=](const Coll& c) {
    return scatterv_generic(c, sendbuf, Blocks{{}, {}, sendcount}, sendtype, recvbuf, recvcount, recvtype, root);
  });
}

int scatterv(const void* sendbuf, Counts sendcounts, Displs displs, MPI_Datatype sendtype, void* recvbuf,
             MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, CollRequest nb) {
  const char* call = nb.name("MPI_Iscatterv", "MPI_Scatterv");
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  if (int e = check_root(k.c, root)) return k.fail(e, call);
  if (k.c->single_process) {
    return run(k, call, nb, root, Path::kTeam, [=](const Coll& c) {
      return scatter_pull(c, sendbuf, Blocks{sendcounts, displs}, sendtype, recvbuf, recvcount, recvtype, root);
    });
  }
  return run(k, call, nb, root, Path::kGeneric, [=](const Coll& c) {
    return scatterv_generic(c, sendbuf, Blocks{sendcounts, displs}, sendtype, recvbuf, recvcount, recvtype, root);
  });
}

int allgather(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
              MPI_Datatype recvtype, MPI_Comm comm, CollRequest nb) {
  const char* call = nb.name("MPI_Iallgather", "MPI_Allgather");
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  if (k.c->single_process) {
    return run(k, call, nb, -1, Path::kTeam, [=](const Coll& c) {
      return allgather_pull(c, sendbuf, sendcount, sendtype, recvbuf, Blocks{{}, {}, recvcount}, recvtype);
    });
  }
  if (across_processes(k.c) && exchange_bytes(k.c, Blocks{{}, {}, recvcount}, recvtype) >= 0) {
    return run(k, call, nb, -1, Path::kTeam, [=](const Coll& c) {
      return allgather_processes(c, sendbuf, sendcount, sendtype, recvbuf, Blocks{{}, {}, recvcount}, recvtype);
    });
  }
  return run(k, call, nb, -1, Path::kGeneric, [=](const Coll& c) {
    return allgatherv_generic(c, sendbuf, sendcount, sendtype, recvbuf, Blocks{{}, {}, recvcount}, recvtype);
  });
}

int allgatherv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, Counts recvcounts,
               Displs displs, MPI_Datatype recvtype, MPI_Comm comm, CollRequest nb) {
  const char* call = nb.name("MPI_Iallgatherv", "MPI_Allgatherv");
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  if (k.c->single_process) {
    return run(k, call, nb, -1, Path::kTeam, [=](const Coll& c) {
      return allgather_pull(c, sendbuf, sendcount, sendtype, recvbuf, Blocks{recvcounts, displs}, recvtype);
    });
  }
  if (across_processes(k.c) && exchange_bytes(k.c, Blocks{recvcounts, displs}, recvtype) >= 0) {
    return run(k, call, nb, -1, Path::kTeam, [=](const Coll& c) {
      return allgather_processes(c, sendbuf, sendcount, sendtype, recvbuf, Blocks{recvcounts, displs}, recvtype);
    });
  }
  return run(k, call, nb, -1, Path::kGeneric, [=](const Coll& c) {
    return allgatherv_generic(c, sendbuf, sendcount, sendtype, recvbuf, Blocks{recvcounts, displs}, recvtype);
  });
}

int alltoall(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
             MPI_Datatype recvtype, MPI_Comm comm, CollRequest nb) {
  const char* call = nb.name("MPI_Ialltoall", "MPI_Alltoall");
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  return alltoall_run<AlltoallArgs>(k, call, nb, {sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype});
}

int alltoallv(const void* sendbuf, Counts sendcounts, Displs sdispls, MPI_Datatype sendtype, void* recvbuf,
              Counts recvcounts, Displs rdispls, MPI_Datatype recvtype, MPI_Comm comm, CollRequest nb) {
  const char* call = nb.name("MPI_Ialltoallv", "MPI_Alltoallv");
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  return alltoall_run<AlltoallvArgs>(k, call, nb,
                                     {sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype});
}

int alltoallw(const void* sendbuf, Counts sendcounts, Displs sdispls, const MPI_Datatype* sendtypes, void* recvbuf,
              Counts recvcounts, Displs rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm, CollRequest nb) {
  const char* call = nb.name("MPI_Ialltoallw", "MPI_Alltoallw");
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  return alltoall_run<AlltoallwArgs>(
      k, call, nb, {sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes});
}

int reduce(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, int root,
           MPI_Comm comm, CollRequest nb) {
  const char* call = nb.name("MPI_Ireduce", "MPI_Reduce");
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  if (int e = check_root(k.c, root)) return k.fail(e, call);
  if (hierarchical(k.c)) {
    return run(k, call, nb, root, Path::kTeam, [=](const Coll& c) { return reduce_team(c, sendbuf, recvbuf, count, type, op, root); });
  }
  return run(k, call, nb, root, Path::kGeneric, [=](const Coll& c) { return reduce_generic(c, sendbuf, recvbuf, count, type, op, root); });
}

int allreduce(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
              CollRequest nb) {
  const char* call = nb.name("MPI_Iallreduce", "MPI_Allreduce");
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  if (hierarchical(k.c)) {
    return run(k, call, nb, -1, Path::kTeam, [=](const Coll& c) { return reduce_team(c, sendbuf, recvbuf, count, type, op, -1); });
  }
  return run(k, call, nb, -1, Path::kGeneric, [=](const Coll& c) {
    int rc = reduce_generic(c, sendbuf, recvbuf, count, type, op, 0);
    int rc2 = bcast_generic(c, recvbuf, count, type, 0);
    return rc != MPI_SUCCESS ? rc : rc2;
  });
}

namespace {
// Reduce-scatter: the whole vector is reduced at rank 0, then scattered.
int reduce_scatter_generic(const Coll& c, const void* sendbuf, void* recvbuf, Counts counts, MPI_Count block,
                           MPI_Datatype type, MPI_Op op) {
  const int p = c.size();
  std::vector<MPI_Count> n(static_cast<std::size_t>(p)), d(static_cast<std::size_t>(p));
  MPI_Count total = 0;
  for (int i = 0; i < p; ++i) {
    n[static_cast<std::size_t>(i)] = counts.null() ? block : counts[i];
    d[static_cast<std::size_t>(i)] = total;
    total += n[static_cast<std::size_t>(i)];
  }
  // In place: the input is the receive buffer, which holds the whole vector.
  const void* input = in_place(sendbuf) ? recvbuf : sendbuf;
  std::unique_ptr<TypedScratch> whole;
  if (c.me == 0) whole = std::make_unique<TypedScratch>(total, type);
  int rc = reduce_generic(c, input, whole ? whole->data() : nullptr, total, type, op, 0);
  std::vector<MPI_Aint> displs(d.begin(), d.end());
  int rc2 = scatterv_generic(c, whole ? whole->data() : nullptr, Blocks{Counts(n.data()), Displs(displs.data())}, type,
                             recvbuf, n[static_cast<std::size_t>(c.me)], type, 0);
  return rc != MPI_SUCCESS ? rc : rc2;
}
}  // namespace

int reduce_scatter(const void* sendbuf, void* recvbuf, Counts recvcounts, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, CollRequest nb) {
  const char* call = nb.name("MPI_Ireduce_scatter", "MPI_Reduce_scatter");
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  if (k.c->single_process) {
    return run(k, call, nb, -1, Path::kTeam, [=](const Coll& c) {
      return reduce_scatter_pull(c, sendbuf, recvbuf, recvcounts, 0, type, op);
    });
  }
  if (across_processes(k.c) && reduce_scatter_counts_fit(k.c, Blocks{recvcounts, {}})) {
    return run(k, call, nb, -1, Path::kTeam, [=](const Coll& c) {
      return reduce_scatter_processes(c, sendbuf, recvbuf, Blocks{recvcounts, {}}, type, op);
    });
  }
  return run(k, call, nb, -1, Path::kGeneric, [=](const Coll& c) {
    return reduce_scatter_generic(c, sendbuf, recvbuf, recvcounts, 0, type, op);
  });
}

int reduce_scatter_block(const void* sendbuf, void* recvbuf, MPI_Count recvcount, MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm, CollRequest nb) {
  const char* call = nb.name("MPI_Ireduce_scatter_block", "MPI_Reduce_scatter_block");
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  if (k.c->single_process) {
    return run(k, call, nb, -1, Path::kTeam, [=](const Coll& c) {
      return reduce_scatter_pull(c, sendbuf, recvbuf, {}, recvcount, type, op);
    });
  }
  if (across_processes(k.c) && reduce_scatter_counts_fit(k.c, Blocks{{}, {}, recvcount})) {
    return run(k, call, nb, -1, Path::kTeam, [=](const Coll& c) {
      return reduce_scatter_processes(c, sendbuf, recvbuf, Blocks{{}, {}, recvcount}, type, op);
    });
  }
  return run(k, call, nb, -1, Path::kGeneric, [=](const Coll& c) {
    return reduce_scatter_generic(c, sendbuf, recvbuf, {}, recvcount, type, op);
  });
}

int scan(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
         CollRequest nb) {
  const char* call = nb.name("MPI_Iscan", "MPI_Scan");
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  if (k.c->single_process) {
    return run(k, call, nb, -1, Path::kTeam,
               [=](const Coll& c) { return scan_pull(c, sendbuf, recvbuf, count, type, op, false); });
  }
  return run(k, call, nb, -1, Path::kGeneric,
             [=](const Coll& c) { return scan_generic(c, sendbuf, recvbuf, count, type, op, false); });
}

int exscan(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
           CollRequest nb) {
  const char* call = nb.name("MPI_Iexscan", "MPI_Exscan");
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  if (k.c->single_process) {
    return run(k, call, nb, -1, Path::kTeam,
               [=](const Coll& c) { return scan_pull(c, sendbuf, recvbuf, count, type, op, true); });
  }
  return run(k, call, nb, -1, Path::kGeneric,
             [=](const Coll& c) { return scan_generic(c, sendbuf, recvbuf, count, type, op, true); });
}

}  // namespace api

// Used by comm_ops.cpp: an allgather of fixed-size records over a communicator's members.
int comm_op_tag(Member* m, bool nonblocking, bool team, std::uint32_t* round) {
  const CollectiveCount::Ticket t = m->collectives.take(team);
  if (round) *round = t.round;
  return collective_tag(t.seq, nonblocking ? "MPI_Comm_idup" : "MPI_Comm_split");
}

int allgather_bytes(Comm* c, int me, int tag, const void* mine, std::size_t bytes, void* all) {
  Coll k{c, me, tag};
  return allgatherv_generic(k, mine, static_cast<MPI_Count>(bytes), MPI_BYTE, all,
                            Blocks{{}, {}, static_cast<MPI_Count>(bytes)}, MPI_BYTE);
}

}  // namespace tsmpi::ranks
