#include "ranks/comm.h"

#include <algorithm>

#include "checks/thread_rank_collectives.h"
#include "matching/mpi_calls.h"
#include "ranks/handle_space.h"
#include "ranks/transport.h"

namespace tsmpi::ranks {

constinit thread_local int tl_regions = 0;

std::vector<Member>& memberships() {
  thread_local std::vector<Member> m;
  return m;
}

Member* membership(Comm* c) {
  auto& v = memberships();
  for (auto it = v.rbegin(); it != v.rend(); ++it)
    if (it->comm == c) return &*it;
  return nullptr;
}

Comm* comm_of(MPI_Comm c) { return find_as<Comm>(Made::kComm, handle_bits(c)); }

int family_rank_of_caller(Family* f) {
  Member* m = membership(f->root);
  return m ? m->rank : -1;
}

int Comm::proc_of(int rank) const { return family->proc_of[static_cast<std::size_t>(members[static_cast<std::size_t>(rank)])]; }

namespace {
Comm* make_comm(Family* f, std::uint64_t ctx, const std::vector<int>& members) {
  auto* c = new Comm;
  c->family = f;
  c->ctx = ctx;
  c->members = members;
  const int n = static_cast<int>(members.size());
  c->local_index.assign(static_cast<std::size_t>(n), -1);
  bool single = true, blocked = true;
  int last_proc = -1;
  for (int r = 0; r < n; ++r) {
    int proc = f->proc_of[static_cast<std::size_t>(members[static_cast<std::size_t>(r)])];
    if (proc == f->my_proc) {
      c->local_index[static_cast<std::size_t>(r)] = static_cast<int>(c->local_ranks.size());
      c->local_ranks.push_back(r);
    } else {
      single = false;
    }
    if (proc < last_proc) blocked = false;
    last_proc = proc;
  }
  // Blocked only if each process's ranks are also contiguous (a process seen once in a run).
  for (int r = 1; r < n && blocked; ++r) {
    int a = f->proc_of[static_cast<std::size_t>(members[static_cast<std::size_t>(r - 1)])];
    int b = f->proc_of[static_cast<std::size_t>(members[static_cast<std::size_t>(r)])];
    if (a != b && b < a) blocked = false;
  }
  c->single_process = single;
  c->blocked = blocked;
  const std::size_t nlocal = c->local_ranks.size();
  for (std::size_t i = 0; i < 2 * nlocal; ++i) c->boxes.push_back(std::make_unique<Mailbox>());
  c->team.init(static_cast<int>(nlocal));
  c->local_alive.store(static_cast<int>(nlocal), std::memory_order_relaxed);
  c->handle = make_handle(Made::kComm, c);
  return c;
}
}  // namespace

Comm* join_comm(Family* f, std::uint64_t ctx, const std::vector<int>& members, int my_rank) {
  Comm* c = nullptr;
  bool made = false;
  {
    std::lock_guard g(f->mu);
    auto it = f->comms.find(ctx);
    if (it != f->comms.end()) {
      c = it->second;
    } else {
      c = make_comm(f, ctx, members);
      f->comms[ctx] = c;
      made = true;
    }
  }
  if (made) adopt_orphans(c);
  Member m;
  m.comm = c;
  m.rank = my_rank;
  memberships().push_back(m);
  return c;
}

void leave_comm(Comm* c) {
  auto& v = memberships();
  for (auto it = v.begin(); it != v.end(); ++it)
    if (it->comm == c) {
      if (it->attributes != MPI_COMM_NULL) mpi::locked([&] { return PMPI_Comm_free(&it->attributes); });
      it->errhandler.release();
      v.erase(it);
      break;
    }
  if (c->local_alive.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  Family* f = c->family;
  {
    std::lock_guard g(f->mu);
    f->comms.erase(c->ctx);
  }
  release_handle(c->handle);
  checks::thread_rank_comm_gone(c);
  c->errhandler.release();
  if (c->coll_comm != MPI_COMM_NULL && c->coll_comm != f->coll)
    mpi::locked([&] { return PMPI_Comm_free(&c->coll_comm); });
  if (!c->root) delete c;
}

}  // namespace tsmpi::ranks
