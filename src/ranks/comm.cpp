#include "ranks/comm.h"

#include <algorithm>

#include "checks/thread_rank_collectives.h"
#include "matching/mpi_calls.h"
#include "ranks/address_space.h"
#include "ranks/callbacks.h"
#include "ranks/handle_space.h"
#include "ranks/transport.h"
#include "runtime/config.h"

namespace tsmpi::ranks {

constinit TSMPI_TLS int tl_regions = 0;

namespace {
struct Identity {
  Family* family;
  int family_rank;
};
// Usually one entry; a thread in regions of two threadcomms has two.
std::vector<Identity>& identities() {
  static TSMPI_TLS std::vector<Identity> ids;
  return ids;
}
}  // namespace

void push_identity(Family* f, int family_rank) {
  identities().push_back({f, family_rank});
  forget_callers();
}

void pop_identity(Family* f) {
  forget_callers();
  auto& ids = identities();
  for (auto it = ids.rbegin(); it != ids.rend(); ++it)
    if (it->family == f) {
      ids.erase(std::next(it).base());
      return;
    }
}

int family_rank_of_caller(Family* f) {
  for (const Identity& id : identities())
    if (id.family == f) return id.family_rank;
  return -1;
}

Member* membership(Comm* c) {
  Family* f = c->family;
  const int fr = family_rank_of_caller(f);
  if (fr < 0) return nullptr;
  const int li = fr - f->offset[static_cast<std::size_t>(f->my_proc)];
  if (li < 0 || li >= f->nlocal) return nullptr;
  const int idx = c->local_of_family[static_cast<std::size_t>(li)];
  if (idx < 0) return nullptr;
  Member* m = c->local_members[static_cast<std::size_t>(idx)].get();
  return m->joined ? m : nullptr;
}

Comm* comm_of(MPI_Comm c) {
  const std::uintptr_t bits = handle_bits(c);
  if (Comm* p = asp::predefined(bits)) return p;
  return find_as<Comm>(Made::kComm, bits);
}

Comm* comm_for_process(MPI_Comm comm) {
  Comm* c = comm_of(comm);
  if (c && c != asp::g_world && asp::owns(c->family) && !membership(c)) return nullptr;
  return c;
}

int Comm::proc_of(int rank) const { return family->proc_of[static_cast<std::size_t>(members[static_cast<std::size_t>(rank)])]; }

ProcessOrder process_order(const Family* f, const std::vector<int>& members) {
  ProcessOrder o;
  o.place.assign(static_cast<std::size_t>(f->nprocs), -1);
  int last = -1;
  for (int m : members) {
    const int p = f->proc_of[static_cast<std::size_t>(m)];
    int& at = o.place[static_cast<std::size_t>(p)];
    if (p != last && at >= 0) o.contiguous = false;  // a process seen again after another
    if (at < 0) at = o.count++;
    last = p;
  }
  return o;
}

namespace {
Comm* make_comm(Family* f, std::uint64_t ctx, const std::vector<int>& members) {
  auto* c = new Comm;
  c->family = f;
  c->ctx = ctx;
  c->members = members;
  const int n = static_cast<int>(members.size());
  c->local_index.assign(static_cast<std::size_t>(n), -1);
  bool single = true;
  for (int r = 0; r < n; ++r) {
    int proc = f->proc_of[static_cast<std::size_t>(members[static_cast<std::size_t>(r)])];
    if (proc == f->my_proc) {
      c->local_index[static_cast<std::size_t>(r)] = static_cast<int>(c->local_ranks.size());
      c->local_ranks.push_back(r);
    } else {
      single = false;
    }
  }
  ProcessOrder order = process_order(f, members);
  c->coll_rank_of_proc = std::move(order.place);
  c->coll_size = order.count;
  c->blocked = order.contiguous;
  c->my_coll_rank = c->coll_rank_of_proc[static_cast<std::size_t>(f->my_proc)];
  c->single_process = single;
  const std::size_t nlocal = c->local_ranks.size();
  for (std::size_t i = 0; i < 2 * nlocal; ++i) {
    // A fast box has one producer unless several threads may send as one rank at once: an
    // address space's processes, and on the collectives' channel every family, where a rank's
    // nonblocking and persistent collectives run on worker threads side by side (two workers
    // filling one slot lost a message: rk_coll's persistent collectives hung in 3 runs of 100).
    const bool collectives = i % 2 == static_cast<std::size_t>(Channel::kColl);
    c->boxes.push_back(std::make_unique<Mailbox>(static_cast<int>(nlocal), f->shared_ranks || collectives));
    c->boxes.back()->set_owner(c, c->local_ranks[i / 2]);
  }
  c->local_of_family.assign(static_cast<std::size_t>(f->nlocal), -1);
  for (std::size_t i = 0; i < nlocal; ++i) {
    auto m = std::make_unique<Member>();
    m->comm = c;
    m->rank = c->local_ranks[i];
    const int li = members[static_cast<std::size_t>(m->rank)] - f->offset[static_cast<std::size_t>(f->my_proc)];
    c->local_of_family[static_cast<std::size_t>(li)] = static_cast<int>(i);
    c->local_members.push_back(std::move(m));
  }
  c->team.init(static_cast<int>(nlocal));
  c->local_alive.store(static_cast<int>(nlocal), std::memory_order_relaxed);
  c->handle = make_handle(Made::kComm, c);
  return c;
}
}  // namespace

Comm* find_or_make_comm(Family* f, std::uint64_t ctx, const std::vector<int>& members) {
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
  return c;
}

Member* join_member(Comm* c, int rank) {
  Member* m = c->local_members[static_cast<std::size_t>(c->local_index[static_cast<std::size_t>(rank)])].get();
  m->joined = true;
  return m;
}

Comm* join_comm(Family* f, std::uint64_t ctx, const std::vector<int>& members, int my_rank) {
  Comm* c = find_or_make_comm(f, ctx, members);
  join_member(c, my_rank);
  return c;
}

void release_member(Member* m) {
  if (m->attributes != MPI_COMM_NULL) {
    const MPI_Comm carrier = m->attributes;  // the delete callbacks get m's communicator
    mpi::locked([&] { return PMPI_Comm_free(&m->attributes); });
    drop_stand_in(carrier, m->comm->handle_value());
  }
  m->errhandler.release();
  m->collectives.restart();
  m->joined = false;
  forget_callers();
}

void leave_comm(Comm* c) {
  if (Member* m = membership(c)) release_member(m);
  if (c->local_alive.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  Family* f = c->family;
  {
    std::lock_guard g(f->mu);
    f->comms.erase(c->ctx);
  }
  forget_callers();
  release_handle(c->handle);
  checks::thread_rank_comm_gone(c);
  c->errhandler.release();
  if (c->coll_comm != MPI_COMM_NULL && c->coll_comm != f->coll)
    mpi::locked([&] { return PMPI_Comm_free(&c->coll_comm); });
  if (!c->root) delete c;
}

}  // namespace tsmpi::ranks
