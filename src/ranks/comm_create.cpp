// MPI_Comm_create, MPI_Comm_create_group and MPI_Comm_split_type on thread-rank communicators.
// Create and split_type are splits with a color the call decides; create_group is collective
// over the group only, so its first member hands the new context to the others directly.
#include <algorithm>
#include <string>

#include "ranks/api.h"
#include "ranks/comm_ops.h"
#include "ranks/groups.h"
#include "ranks/p2p.h"
#include "tsmpi.h"

namespace tsmpi::ranks {

namespace {
int position(const std::vector<int>& v, int x) {
  auto it = std::find(v.begin(), v.end(), x);
  return it == v.end() ? -1 : static_cast<int>(it - v.begin());
}

// Every member of g is a member of c.
bool within(const Group* g, const Comm* c) {
  for (int fr : g->members)
    if (position(c->members, fr) < 0) return false;
  return true;
}

// Create_group's messages: a tag range no collective of the engine uses (collective tags stay
// below 2^30).
int create_group_tag(int tag) { return (1 << 30) | (tag & 0x3fffffff); }
}  // namespace

namespace api {

int comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  Caller k = caller(comm, "MPI_Comm_create");
  if (!k) return k.rc;
  if (freed_group(group)) return k.fail(MPI_ERR_GROUP, "MPI_Comm_create");
  Group* g = group_of(group);  // nullptr: MPI_GROUP_EMPTY
  if (g && (g->family != k.c->family || !within(g, k.c))) return k.fail(MPI_ERR_GROUP, "MPI_Comm_create");
  // Groups may differ between processes if they are disjoint (MPI-2.2): a group's first member
  // names it; ranks follow the group's order.
  const int fr = k.c->members[static_cast<std::size_t>(k.m->rank)];
  const int at = g ? position(g->members, fr) : -1;
  const int color = at >= 0 ? g->members.front() : MPI_UNDEFINED;
  return split(k, color, at, false, newcomm, "MPI_Comm_create");
}

int comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  const char* call = "MPI_Comm_create_group";
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  if (tag < 0) return k.fail(MPI_ERR_TAG, call);
  if (freed_group(group)) return k.fail(MPI_ERR_GROUP, call);
  Group* g = group_of(group);
  if (!g) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  Family* f = k.c->family;
  const int fr = k.c->members[static_cast<std::size_t>(k.m->rank)];
  const int at = position(g->members, fr);
  if (g->family != f || at < 0 || !within(g, k.c)) return k.fail(MPI_ERR_GROUP, call);
  const int leader = position(k.c->members, g->members.front());
  std::uint64_t ctx = 0;
  int rc = MPI_SUCCESS;
  if (at == 0) {
    const int my_local = fr - f->offset[static_cast<std::size_t>(f->my_proc)];
    ctx = (static_cast<std::uint64_t>(fr) << 32) | f->next_ctx[static_cast<std::size_t>(my_local)].fetch_add(1);
    for (std::size_t j = 1; j < g->members.size() && rc == MPI_SUCCESS; ++j)
      rc = send(k.c, k.m->rank, {&ctx, static_cast<MPI_Count>(sizeof ctx), MPI_BYTE}, position(k.c->members, g->members[j]),
                create_group_tag(tag), SendMode::kStandard, Channel::kColl);
  } else {
    rc = recv(k.c, k.m->rank, leader, create_group_tag(tag), {&ctx, static_cast<MPI_Count>(sizeof ctx), MPI_BYTE},
              Channel::kColl, MPI_STATUS_IGNORE);
  }
  if (rc != MPI_SUCCESS) return k.fail(rc, call);
  *newcomm = adopt(k, join_comm(f, ctx, g->members, at), at, MPI_COMM_NULL);
  return MPI_SUCCESS;
}

int comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Comm* newcomm) {
  const char* call = "MPI_Comm_split_type";
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  Family* f = k.c->family;
  const int proc = f->proc_of[static_cast<std::size_t>(k.c->members[static_cast<std::size_t>(k.m->rank)])];
  int color;
  if (split_type == MPI_UNDEFINED) {
    color = MPI_UNDEFINED;
  } else if (split_type == MPIX_COMM_TYPE_ADDRESS_SPACE) {
    color = proc;
  } else if (split_type == MPI_COMM_TYPE_SHARED
#ifdef OPEN_MPI
             || split_type == OMPI_COMM_TYPE_HOST
#endif
  ) {
    color = f->node_of_proc[static_cast<std::size_t>(proc)];
  } else {
    return k.fail(described_code(MPI_ERR_ARG, "MPI_Comm_split_type: split type " + std::to_string(split_type) +
                                                  " is not one thread-rank communicators know (MPI_COMM_TYPE_SHARED, "
                                                  "MPIX_COMM_TYPE_ADDRESS_SPACE or MPI_UNDEFINED)"),
                  call);
  }
  return split(k, color, key, false, newcomm, call);
}

}  // namespace api
}  // namespace tsmpi::ranks
