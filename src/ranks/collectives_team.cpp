// Barrier, Bcast, Reduce and Allreduce among the local members of a communicator in shared
// memory (team.h). Every member arrives, meets the others (every call compared) and then:
// small data (up to Team::kInline bytes) travel in the members' notes, so a small collective of
// one process is one meeting and nothing else; larger data are read from the members' own
// buffers, combined once by the leader (local member 0), whose buffer's readers it waits for.
// Where members live in several processes, the leader also makes the one call of the processes'
// collective and publishes its outcome.
#include <algorithm>
#include <cstring>

#include "ranks/collective_parts.h"
#include "ranks/errors.h"

namespace tsmpi::ranks::coll {

namespace {

constexpr int kFoldEverywhere = 8;

struct BarrierForm;
struct BcastForm;
struct ReduceForm;

}  // namespace

std::uint64_t team_call(const Coll& k, int root, DataPath path) {
  return ((static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.tag)) << 32) | static_cast<std::uint32_t>(root)) ^
         (static_cast<std::uint64_t>(path) << 62);
}

int mismatch_code() {
  return described_code(MPI_ERR_OTHER, "thread-ranks of one process called different collectives as the same "
                                       "collective of a communicator (each member must call the same collectives "
                                       "in the same order; TSMPI_CHECK=warn names them)");
}

int barrier_team(const Coll& k) {
  Comm* c = k.c;
  Team& t = c->team;
  const int li = index_of(k);
  int rc = arrive_and_meet(t, k, li, team_call(k, -1, DataPath::kNone), form_of<BarrierForm>(), [](Team::Note&) {});
  if (rc == MPI_SUCCESS && !c->single_process) {
    if (li == kLeader) {
      rc = processes_collective([&](MPI_Request* r) { return PMPI_Ibarrier(c->coll_comm, r); });
      t.publish(li, k.round, {rc});
    } else {
      rc = t.wait_published(kLeader, k.round).err;
    }
  }
  t.depart(li, k.round);
  return rc;
}

namespace {

// A small broadcast within one process: the root leaves its data in its note and returns; the
// others wait for that note alone (team.h: the root may run kDepth rounds ahead).
int bcast_small(const Coll& k, const TypedBuffer& mine, long long bytes, int root) {
  Team& t = k.c->team;
  const int li = index_of(k);
  const int src = k.c->local_index[static_cast<std::size_t>(root)];
  enter_and_arrive(t, k, li, team_call(k, root, DataPath::kInline), form_of<BcastForm>(), [&](Team::Note& n) {
    if (li != src) return;
    pack(mine, n.data);
    n.bytes = static_cast<int>(bytes);
  });
  int rc = MPI_SUCCESS;
  if (li != src) {
    if (t.meet_one(li, src, k.round)) {
      const Team::Note& s = t.note(src, k.round);
      unpack(s.data, static_cast<std::size_t>(std::min<long long>(s.bytes, bytes)), mine);
    } else {
      rc = mismatch_code();
    }
  }
  t.depart(li, k.round);
  return rc;
}

}  // namespace

int bcast_team(const Coll& k, void* buf, MPI_Count count, MPI_Datatype type, int root) {
  Comm* c = k.c;
  Team& t = c->team;
  const int li = index_of(k);
  const TypedBuffer mine{buf, count, type};
  // Every member's packed size is the same (matching type signatures), so all choose alike.
  const long long bytes = packed_bytes(mine);
  const bool inline_data = c->single_process && bytes >= 0 && bytes <= static_cast<long long>(Team::kInline);
  if (inline_data) return bcast_small(k, mine, bytes, root);
  int rc = arrive_and_meet(t, k, li, team_call(k, root, DataPath::kBuffers), form_of<BcastForm>(),
                           [&](Team::Note&) { t.buffers(li, k.round) = {mine, buf}; });
  int src = -1;  // the local member whose buffer the others copy
  if (rc == MPI_SUCCESS && c->single_process) {
    src = c->local_index[static_cast<std::size_t>(root)];
    if (li != src) local_copy(t.buffers_of(src, k.round).in, mine);
  } else if (rc == MPI_SUCCESS) {
    if (li == kLeader) {
      // The root's buffer if it lives here, else the leader's receives the processes' broadcast.
      src = c->is_local(root) ? c->local_index[static_cast<std::size_t>(root)] : kLeader;
      const TypedBuffer& s = t.buffers_of(src, k.round).in;
      rc = processes_collective([&](MPI_Request* r) {
        return PMPI_Ibcast(const_cast<void*>(s.buf), static_cast<int>(s.count), s.type, c->coll_rank(root),
                           c->coll_comm, r);
      });
      t.publish(li, k.round, {rc, src});
    } else {
      const Team::Published p = t.wait_published(kLeader, k.round);
      rc = p.err;
      src = p.index;
    }
    if (rc == MPI_SUCCESS && li != src) local_copy(t.buffers_of(src, k.round).in, mine);
  }
  t.depart(li, k.round);
  if (li == src) t.wait_departed(li, k.round);  // the others read this buffer
  return rc;
}

int reduce_team(const Coll& k, const void* sbuf, void* rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                int root) {
  Comm* c = k.c;
  Team& t = c->team;
  const int li = index_of(k);
  const TypedBuffer in{in_place(sbuf) ? rbuf : sbuf, count, type};
  const long long bytes = packed_bytes(in);
  // Inline contributions must be laid out as packed (predefined datatypes) for the MPI's
  // reduction to read them; members of a reduction use the same datatype and count. Every
  // member folding all T contributions costs T^2 reductions in all: beyond kFoldEverywhere
  // members the leader folds once (measured at T = 64 on 2 cores: 522 against 183 us).
  const bool inline_data = c->single_process && t.size() <= kFoldEverywhere && contiguous_without_mpi(in) &&
                           bytes >= 0 && bytes <= static_cast<long long>(Team::kInline);
  const bool wants_result = root < 0 || root == k.me;
  int rc = arrive_and_meet(t, k, li, team_call(k, root, inline_data ? DataPath::kInline : DataPath::kBuffers),
                           form_of<ReduceForm>(), [&](Team::Note& n) {
                             t.buffers(li, k.round) = {in, rbuf};
                             if (!inline_data) return;
                             std::memcpy(n.data, in.buf, static_cast<std::size_t>(bytes));
                             n.bytes = static_cast<int>(bytes);
                           });
  if (inline_data) {
    // Every member that wants the result folds the notes itself, in rank order (the same order
    // everywhere, so floating-point results agree bit for bit).
    if (rc == MPI_SUCCESS && wants_result)
      rc = fold(t.size(), [&](int j) { return static_cast<const void*>(t.note(j, k.round).data); },
                {rbuf, count, type}, op);
    t.depart(li, k.round);
    return rc;
  }
  TypedScratch* acc = nullptr;
  if (rc == MPI_SUCCESS && li == kLeader) {
    acc = new TypedScratch(count, type);
    rc = fold(t.size(), [&](int j) { return t.buffers_of(j, k.round).in.buf; }, acc->typed(), op);
    if (rc == MPI_SUCCESS && !c->single_process)
      rc = processes_collective([&](MPI_Request* r) {
        return PMPI_Iallreduce(MPI_IN_PLACE, acc->data(), static_cast<int>(count), type, op, c->coll_comm, r);
      });
    t.publish(li, k.round, {rc, 0, acc});
  } else if (rc == MPI_SUCCESS) {
    const Team::Published p = t.wait_published(kLeader, k.round);  // the leader has read our buffers
    rc = p.err;
    acc = static_cast<TypedScratch*>(p.shared);
  }
  if (rc == MPI_SUCCESS && wants_result) local_copy(acc->typed(), {rbuf, count, type});
  t.depart(li, k.round);
  if (li == kLeader && acc) {
    t.wait_departed(li, k.round);
    delete acc;
  }
  return rc;
}

}  // namespace tsmpi::ranks::coll
