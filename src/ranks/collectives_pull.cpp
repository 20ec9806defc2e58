// Gather, Scatter, Allgather, Alltoall (their v and w forms), Reduce_scatter and Scan/Exscan
// among thread-ranks that all live in this process: every member leaves a description of its
// buffers (a view, on its stack), meets the others (team.h), reads what it needs straight from
// their buffers into its own (one copy, no message), departs, and returns once every member has
// departed (the others may have been reading its buffers until then). A result that lands in a
// buffer the others read (the in-place forms of the reductions) is computed aside and written
// after that.
#include <memory>

#include "ranks/collective_parts.h"

namespace tsmpi::ranks::coll {

namespace {

// The one shape of every form here: publish `view`, meet, `pull(view_of)`, depart, wait for the
// others' departures, then `after()`.
template <class View, class Pull, class After>
int pull_team(const Coll& k, int root, const View& view, const void* form, Pull&& pull, After&& after) {
  Team& t = k.c->team;
  const int li = index_of(k);
  int rc = arrive_and_meet(t, k, li, team_call(k, root, DataPath::kBuffers), form,
                           [&](Team::Note&) { t.buffers(li, k.round).view = &view; });
  auto view_of = [&](int rank) -> const View& {
    return *static_cast<const View*>(t.buffers_of(k.c->local_index[static_cast<std::size_t>(rank)], k.round).view);
  };
  if (rc == MPI_SUCCESS) rc = pull(view_of);
  t.depart(li, k.round);
  t.wait_departed(li, k.round);
  if (rc == MPI_SUCCESS) rc = after();
  return rc;
}
template <class View, class Pull>
int pull_team(const Coll& k, int root, const View& view, Pull&& pull) {
  return pull_team(k, root, view, form_of<View>(), std::forward<Pull>(pull), [] { return MPI_SUCCESS; });
}

struct GatherView {
  TypedBuffer send;
};
struct ScatterView {
  const void* sbuf;
  Blocks blocks;
  MPI_Datatype type;
};
struct AllgatherView {
  TypedBuffer mine;
};
struct AlltoallView {
  const void* args;
  BlockOf send_of;
};
struct ReductionView {
  const void* input;
};
struct ReduceScatterForm;
struct ScanForm;
struct ExscanForm;

// Where a reduction's result goes first: straight into the receive buffer, or (in place, where
// the others read that buffer) aside until they are done.
class ResultBuffer {
 public:
  ResultBuffer(bool aside, void* rbuf, MPI_Count count, MPI_Datatype type) : rbuf_{rbuf, count, type} {
    if (aside) scratch_ = std::make_unique<TypedScratch>(count, type);
  }
  TypedBuffer target() const { return scratch_ ? scratch_->typed() : rbuf_; }
  int finish() const {
    if (scratch_) local_copy(scratch_->typed(), rbuf_);
    return MPI_SUCCESS;
  }

 private:
  TypedBuffer rbuf_;
  std::unique_ptr<TypedScratch> scratch_;
};

}  // namespace

int gather_pull(const Coll& k, const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, const Blocks& r,
                MPI_Datatype rtype, int root) {
  // MPI_IN_PLACE (the root only): its block is already in place.
  const GatherView view{in_place(sbuf) ? TypedBuffer{} : TypedBuffer{sbuf, scount, stype}};
  return pull_team(k, root, view, [&](auto view_of) {
    if (k.me != root) return MPI_SUCCESS;
    for (int j = 0; j < k.size(); ++j) {
      if (j == root && in_place(sbuf)) continue;
      local_copy(view_of(j).send, at(rbuf, r.displ(j), r.count(j), rtype));
    }
    return MPI_SUCCESS;
  });
}

int scatter_pull(const Coll& k, const void* sbuf, const Blocks& s, MPI_Datatype stype, void* rbuf, MPI_Count rcount,
                 MPI_Datatype rtype, int root) {
  const ScatterView view{sbuf, s, stype};  // only the root's is read
  return pull_team(k, root, view, [&](auto view_of) {
    if (k.me == root && in_place(rbuf)) return MPI_SUCCESS;  // the root's block stays where it is
    const ScatterView& from = view_of(root);
    local_copy(at(from.sbuf, from.blocks.displ(k.me), from.blocks.count(k.me), from.type), {rbuf, rcount, rtype});
    return MPI_SUCCESS;
  });
}

int allgather_pull(const Coll& k, const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, const Blocks& r,
                   MPI_Datatype rtype) {
  // In place, a member's block of its receive buffer is what it gives (the others read it while
  // it writes its other blocks: receive blocks do not overlap).
  const TypedBuffer own = at(rbuf, r.displ(k.me), r.count(k.me), rtype);
  const AllgatherView view{in_place(sbuf) ? own : TypedBuffer{sbuf, scount, stype}};
  return pull_team(k, -1, view, [&](auto view_of) {
    for (int j = 0; j < k.size(); ++j) {
      if (j == k.me && in_place(sbuf)) continue;
      local_copy(view_of(j).mine, at(rbuf, r.displ(j), r.count(j), rtype));
    }
    return MPI_SUCCESS;
  });
}

int alltoall_pull(const Coll& k, const void* args, BlockOf send_of, BlockOf recv_of) {
  const AlltoallView view{args, send_of};
  // The form is the call's own block function: alltoall, v and w read each other's args as
  // their own kind only if they are the same call.
  return pull_team(
      k, -1, view, reinterpret_cast<const void*>(send_of),
      [&](auto view_of) {
        for (int j = 0; j < k.size(); ++j) {
          const AlltoallView& from = view_of(j);
          local_copy(from.send_of(from.args, k.me), recv_of(args, j));
        }
        return MPI_SUCCESS;
      },
      [] { return MPI_SUCCESS; });
}

int reduce_scatter_pull(const Coll& k, const void* sbuf, void* rbuf, Counts counts, MPI_Count block, MPI_Datatype type,
                        MPI_Op op) {
  // This member's block of the whole vector: counts[me] (or `block`) elements after the others'.
  MPI_Count mine = counts.null() ? block : counts[k.me], before = 0;
  for (int j = 0; j < k.me; ++j) before += counts.null() ? block : counts[j];
  const bool in_place_input = in_place(sbuf);
  const ReductionView view{in_place_input ? rbuf : sbuf};
  ResultBuffer result(in_place_input, rbuf, mine, type);
  return pull_team(
      k, -1, view, form_of<ReduceScatterForm>(),
      [&](auto view_of) {
        if (mine == 0) return MPI_SUCCESS;
        return fold(k.size(), [&](int j) -> const void* { return element(view_of(j).input, before, type); },
                    result.target(), op);
      },
      [&] { return result.finish(); });
}

int scan_pull(const Coll& k, const void* sbuf, void* rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
              bool exclusive) {
  const bool in_place_input = in_place(sbuf);
  const ReductionView view{in_place_input ? rbuf : sbuf};
  // Exscan leaves rank 0's receive buffer as it is (undefined by the standard).
  const int upto = exclusive ? k.me : k.me + 1;
  ResultBuffer result(in_place_input && upto > 0, rbuf, count, type);
  return pull_team(
      k, -1, view, exclusive ? form_of<ExscanForm>() : form_of<ScanForm>(),
      [&](auto view_of) {
        if (upto == 0) return MPI_SUCCESS;
        return fold(upto, [&](int j) { return view_of(j).input; }, result.target(), op);
      },
      [&] { return upto > 0 ? result.finish() : MPI_SUCCESS; });
}

}  // namespace tsmpi::ranks::coll
