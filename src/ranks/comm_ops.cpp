// Communicator, group, attribute, name and error-handler calls on thread-rank communicators.
// Attributes belong to each thread-rank: each member keeps them on a private communicator of
// its own (made on first use), so the MPI runs the program's copy and delete callbacks when the
// communicator is duplicated or freed, and MPICH's rule that a thread-rank's attributes go at
// MPIX_Threadcomm_finish holds. The callbacks get the thread-rank communicator: the private one
// stands in for it (callbacks.h).
#include <algorithm>
#include <cstring>
#include <numeric>

#include "checks/checks.h"
#include "checks/thread_rank_collectives.h"
#include "matching/mpi_calls.h"
#include "ranks/api.h"
#include "ranks/callbacks.h"
#include "ranks/caller.h"
#include "ranks/comm_ops.h"
#include "ranks/groups.h"
#include "ranks/handle_space.h"
#include "ranks/p2p.h"
#include "ranks/requests.h"
#include "ranks/worker_pool.h"

namespace tsmpi::ranks {

namespace {
// A member's private communicator for its attributes, made on first use.
int attribute_carrier(Member* m, MPI_Comm* out) {
  std::lock_guard g(m->comm->mu);  // threads of one MPI process share the Member
  if (m->attributes == MPI_COMM_NULL) {
    int rc = private_comm(&m->attributes);
    if (rc != MPI_SUCCESS) return rc;
    stand_in(m->attributes, m->comm->handle_value());
  }
  *out = m->attributes;
  return MPI_SUCCESS;
}

bool predefined_attribute(int keyval) {
  return keyval == MPI_TAG_UB || keyval == MPI_HOST || keyval == MPI_IO || keyval == MPI_WTIME_IS_GLOBAL ||
         keyval == MPI_UNIVERSE_SIZE || keyval == MPI_LASTUSEDCODE || keyval == MPI_APPNUM;
}

// What a member brings to a split, taken when it calls: its context number (threads of one MPI
// process may split at once), the collective's tag (its place among the communicator's
// collectives) and, for a duplicate, a copy of its attributes. MPI_Comm_idup is MPI_Comm_dup
// done at the call (MPI-4.0 §7.4.2): the copy callbacks run then, on the rank's own thread.
struct SplitStart {
  SplitRecord mine;
  int tag;
  bool team = false;  // has_processes_comm: a team round follows the exchange
  bool dup = false;
  std::uint32_t round = 0;
  MPI_Comm attributes = MPI_COMM_NULL;
};

SplitStart begin_split(Caller& k, int color, int key, bool nonblocking, bool dup) {
  Family* f = k.c->family;
  const int family_rank = k.c->members[static_cast<std::size_t>(k.m->rank)];
  const int my_local = family_rank - f->offset[static_cast<std::size_t>(f->my_proc)];
  SplitStart s{{color, key, f->next_ctx[static_cast<std::size_t>(my_local)].fetch_add(1), family_rank}, 0};
  s.team = has_processes_comm(k.c);
  s.dup = dup;
  s.tag = comm_op_tag(k.m, nonblocking, s.team, &s.round);
  if (dup && k.m->attributes != MPI_COMM_NULL)
    mpi::locked([&] { return PMPI_Comm_dup(k.m->attributes, &s.attributes); });
  return s;
}

// Exchanges the records and joins the new communicator; uses only k.c and k.m, so a worker can
// run it for MPI_Comm_idup. Returns an error code without raising it.
int finish_split(Caller& k, SplitStart& s, MPI_Comm* newcomm) {
  std::vector<SplitRecord> all(static_cast<std::size_t>(k.c->size()));
  int rc = allgather_bytes(k.c, k.m->rank, s.tag, &s.mine, sizeof s.mine, all.data());
  if (s.team) rc = make_processes_comms(k.c, k.m->rank, s.tag, s.round, all, s.dup, rc);
  const int color = s.mine.color;
  if (rc != MPI_SUCCESS || color == MPI_UNDEFINED) {
    if (s.attributes != MPI_COMM_NULL) mpi::locked([&] { return PMPI_Comm_free(&s.attributes); });
    if (rc == MPI_SUCCESS) *newcomm = MPI_COMM_NULL;
    return rc;
  }
  std::vector<int> ranks;
  const NewComm n = new_comm(all, color, &ranks);
  const int my_new_rank = static_cast<int>(std::find(ranks.begin(), ranks.end(), k.m->rank) - ranks.begin());
  *newcomm = adopt(k, join_comm(k.c->family, n.ctx, n.members, my_new_rank), my_new_rank, s.attributes);
  if (s.dup) copy_topology(k.c, k.m->rank, *newcomm);  // a duplicate keeps the topology (MPI-4.0 §7.4.2)
  return MPI_SUCCESS;
}
}  // namespace

NewComm new_comm(const std::vector<SplitRecord>& all, int color, std::vector<int>* ranks_out) {
  std::vector<int> ranks;
  for (std::size_t r = 0; r < all.size(); ++r)
    if (all[r].color == color) ranks.push_back(static_cast<int>(r));
  std::stable_sort(ranks.begin(), ranks.end(), [&](int a, int b) {
    return all[static_cast<std::size_t>(a)].key < all[static_cast<std::size_t>(b)].key;
  });
  // The new communicator's context: its first member's family rank and that member's counter.
  NewComm n;
  const SplitRecord& leader = all[static_cast<std::size_t>(ranks[0])];
  n.ctx = (static_cast<std::uint64_t>(leader.family_rank) << 32) | leader.next_ctx;
  for (int r : ranks) n.members.push_back(all[static_cast<std::size_t>(r)].family_rank);
  if (ranks_out) *ranks_out = std::move(ranks);
  return n;
}

int split(Caller& k, int color, int key, bool dup, MPI_Comm* newcomm, const char* call) {
  SplitStart s = begin_split(k, color, key, false, dup);
  const int rc = finish_split(k, s, newcomm);
  return rc == MPI_SUCCESS ? rc : k.fail(rc, call);
}

MPI_Comm adopt(Caller& k, Comm* nc, int my_rank, MPI_Comm attributes) {
  // The new communicator's handler at this rank is the one the parent has at this rank.
  MPI_Errhandler eh;
  {
    std::lock_guard g(k.c->mu);
    eh = k.m->errhandler.is_set() ? k.m->errhandler.value() : k.c->errhandler.value();
  }
  // By rank, not by the calling thread: a worker completes MPI_Comm_idup for its rank.
  Member* nm = nc->local_members[static_cast<std::size_t>(nc->local_index[static_cast<std::size_t>(my_rank)])].get();
  {
    std::lock_guard g(nc->mu);
    if (!nc->errhandler.is_set()) nc->errhandler.set(eh);
    nm->errhandler.set(eh);
  }
  nm->attributes = attributes;
  if (attributes != MPI_COMM_NULL) stand_in(attributes, nc->handle_value());
  return nc->handle_value();
}

namespace api {

int comm_rank(MPI_Comm comm, int* rank) {
  Caller k = caller(comm, "MPI_Comm_rank");
  if (!k) return k.rc;
  *rank = k.m->rank;
  return MPI_SUCCESS;
}

int comm_size(MPI_Comm comm, int* size) {
  Comm* c = comm_for_process(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, "MPI_Comm_size");
  *size = c->size();
  return MPI_SUCCESS;
}

int comm_compare(MPI_Comm a, MPI_Comm b, int* result) {
  Comm* x = comm_of(a);
  Comm* y = comm_of(b);
  if (!x || !y) {
    *result = MPI_UNEQUAL;
  } else if (x == y) {
    *result = MPI_IDENT;
  } else {
    int r = x->family == y->family ? compare_members(x->members, y->members) : MPI_UNEQUAL;
    *result = r == MPI_IDENT ? MPI_CONGRUENT : r;
  }
  return MPI_SUCCESS;
}

int comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  Caller k = caller(comm, "MPI_Comm_dup");
  if (!k) return k.rc;
  return split(k, 0, k.m->rank, true, newcomm, "MPI_Comm_dup");
}

// The duplication takes its place among the communicator's collectives now and completes on a
// worker (as the nonblocking collectives do), so the rank may go on communicating meanwhile;
// newcomm is written when the request completes.
int comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request, const char* call) {
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  SplitStart s = begin_split(k, 0, k.m->rank, true, true);
  Request* r = new_request(k.c, k.m->rank, 1, request);
  if (!r) return k.fail(MPI_ERR_INTERN, call);
  run_in_background([r, k, s, newcomm]() mutable {
    r->err = finish_split(k, s, newcomm);
    part_done(r);
  });
  return MPI_SUCCESS;
}

int comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  Caller k = caller(comm, "MPI_Comm_split");
  if (!k) return k.rc;
  if (color < 0 && color != MPI_UNDEFINED) return k.fail(MPI_ERR_ARG, "MPI_Comm_split");
  return split(k, color, key, false, newcomm, "MPI_Comm_split");
}

int comm_free(MPI_Comm* comm) {
  Caller k = caller(*comm, "MPI_Comm_free");
  if (!k) return k.rc;
  if (k.c->root) return k.fail(MPI_ERR_COMM, "MPI_Comm_free (a threadcomm is freed with MPIX_Threadcomm_free)");
  if (checks::g_on) checks::thread_rank_leaves(k.c, k.m->collectives.started(), k.m->rank, "MPI_Comm_free",
                                                 static_cast<int>(k.c->local_ranks.size()));
  leave_comm(k.c);
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

int comm_group(MPI_Comm comm, MPI_Group* group) {
  Comm* c = comm_for_process(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, "MPI_Comm_group");
  *group = new_group(c->family, c->members);
  return MPI_SUCCESS;
}

int comm_test_inter(MPI_Comm, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}

int comm_set_attr(MPI_Comm comm, int keyval, void* value) {
  Caller k = caller(comm, "MPI_Comm_set_attr");
  if (!k) return k.rc;
  MPI_Comm carrier;
  int rc = attribute_carrier(k.m, &carrier);
  if (rc == MPI_SUCCESS) rc = mpi::locked([&] { return PMPI_Comm_set_attr(carrier, keyval, value); });
  return raise(k.c, rc, "MPI_Comm_set_attr");
}

int comm_get_attr(MPI_Comm comm, int keyval, void* value, int* flag) {
  Caller k = caller(comm, "MPI_Comm_get_attr");
  if (!k) return k.rc;
  // The predefined attributes are the process's (MPI_TAG_UB: the engine carries tags as ints
  // end to end, so the MPI's own bound holds).
  MPI_Comm from = predefined_attribute(keyval) ? k.c->family->parent : k.m->attributes;
  if (from == MPI_COMM_NULL) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  return raise(k.c, mpi::locked([&] { return PMPI_Comm_get_attr(from, keyval, value, flag); }), "MPI_Comm_get_attr");
}

int attribute_comm(MPI_Comm comm, int keyval, MPI_Comm* holder, const char* call) {
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  if (predefined_attribute(keyval)) {
    *holder = k.c->family->parent;
    return MPI_SUCCESS;
  }
  return raise(k.c, attribute_carrier(k.m, holder), call);
}

int comm_delete_attr(MPI_Comm comm, int keyval) {
  Caller k = caller(comm, "MPI_Comm_delete_attr");
  if (!k) return k.rc;
  MPI_Comm carrier;
  int rc = attribute_carrier(k.m, &carrier);
  if (rc == MPI_SUCCESS) rc = mpi::locked([&] { return PMPI_Comm_delete_attr(carrier, keyval); });
  return raise(k.c, rc, "MPI_Comm_delete_attr");
}

int comm_set_name(MPI_Comm comm, const char* name) {
  Comm* c = comm_for_process(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, "MPI_Comm_set_name");
  std::lock_guard g(c->mu);
  c->name.assign(name, strnlen(name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

int comm_get_name(MPI_Comm comm, char* name, int* resultlen) {
  Comm* c = comm_for_process(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, "MPI_Comm_get_name");
  std::lock_guard g(c->mu);
  std::string n = c->name.empty() ? std::string(c->default_name) : c->name;
  std::memcpy(name, n.c_str(), n.size() + 1);
  *resultlen = static_cast<int>(n.size());
  return MPI_SUCCESS;
}

// A member sets and reads its own handler; another thread (outside the region) the default.
int comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  Comm* c = comm_for_process(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, "MPI_Comm_set_errhandler");
  Member* m = membership(c);
  std::lock_guard g(c->mu);
  return m ? m->errhandler.set(errhandler) : c->errhandler.set(errhandler);
}

int comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  Comm* c = comm_for_process(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, "MPI_Comm_get_errhandler");
  Member* m = membership(c);
  std::lock_guard g(c->mu);
  return m && m->errhandler.is_set() ? m->errhandler.get(errhandler) : c->errhandler.get(errhandler);
}

int comm_call_errhandler(MPI_Comm comm, int code) {
  Comm* c = comm_for_process(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, "MPI_Comm_call_errhandler");
  raise(c, code, "MPI_Comm_call_errhandler");
  return MPI_SUCCESS;
}

int abort(MPI_Comm comm, int code) {
  Comm* c = comm_of(comm);
  return PMPI_Abort(c ? c->family->parent : MPI_COMM_WORLD, code);
}

int pack(const void* inbuf, MPI_Count incount, MPI_Datatype type, void* outbuf, MPI_Count outsize,
         MPI_Count* position) {
  int pos = static_cast<int>(*position);
  int rc = mpi::locked([&] {
    return PMPI_Pack(inbuf, static_cast<int>(incount), type, outbuf, static_cast<int>(outsize), &pos, MPI_COMM_SELF);
  });
  *position = pos;
  return rc;
}

int pack_size(MPI_Count incount, MPI_Datatype type, MPI_Count* size) {
  int s = 0;
  int rc = mpi::locked([&] { return PMPI_Pack_size(static_cast<int>(incount), type, MPI_COMM_SELF, &s); });
  *size = s;
  return rc;
}

int unpack(const void* inbuf, MPI_Count insize, MPI_Count* position, void* outbuf, MPI_Count outcount,
           MPI_Datatype type) {
  int pos = static_cast<int>(*position);
  int rc = mpi::locked([&] {
    return PMPI_Unpack(inbuf, static_cast<int>(insize), &pos, outbuf, static_cast<int>(outcount), type, MPI_COMM_SELF);
  });
  *position = pos;
  return rc;
}

}  // namespace api
}  // namespace tsmpi::ranks
