#include "ranks/introspect.h"

#include <mpi.h>

#include "ranks/address_space.h"
#include "ranks/comm.h"
#include "ranks/handle_space.h"

namespace tsmpi::ranks {

namespace {
// Asked from another thread (the watchdog): MPI_COMM_SELF cannot be told apart there.
Comm* find_comm(std::uintptr_t bits) {
  if (asp::live() && bits == handle_bits(MPI_COMM_WORLD)) return asp::g_world;
  return find_as<Comm>(Made::kComm, bits);
}
}  // namespace

bool view_comm(std::uintptr_t comm_bits, CommView* out) {
  Comm* c = find_comm(comm_bits);
  if (!c) return false;
  Family* f = c->family;
  out->root = c->root;
  out->address_space = asp::owns(f);
  const int n = c->size();
  out->process.resize(static_cast<std::size_t>(n));
  out->world.resize(static_cast<std::size_t>(n));
  out->thread.resize(static_cast<std::size_t>(n));
  out->family_rank.assign(c->members.begin(), c->members.end());
  for (int r = 0; r < n; ++r) {
    const int fr = c->members[static_cast<std::size_t>(r)];
    const int p = f->proc_of[static_cast<std::size_t>(fr)];
    out->process[static_cast<std::size_t>(r)] = p;
    out->world[static_cast<std::size_t>(r)] = f->world_rank_of_proc.empty() ? -1 : f->world_rank_of_proc[static_cast<std::size_t>(p)];
    out->thread[static_cast<std::size_t>(r)] = fr - f->offset[static_cast<std::size_t>(p)];
  }
  return true;
}

int caller_rank(std::uintptr_t comm_bits) {
  Comm* c = comm_of(handle_from_bits<MPI_Comm>(comm_bits));
  if (!c) return -1;
  Member* m = membership(c);
  return m ? m->rank : -1;
}

std::string rank_name(const CommView& v, int rank) {
  if (rank < 0 || rank >= static_cast<int>(v.process.size())) return "rank " + std::to_string(rank);
  const auto r = static_cast<std::size_t>(rank);
  if (v.address_space)
    return "rank " + std::to_string(v.family_rank[r]) + " (address space " + std::to_string(v.process[r]) +
           ", index " + std::to_string(v.thread[r]) + ")";
  const int proc = v.world[r] >= 0 ? v.world[r] : v.process[r];
  return std::string(v.root ? "threadcomm" : "thread-rank communicator") + " rank " + std::to_string(rank) +
         " = process " + std::to_string(proc) + " thread " + std::to_string(v.thread[r]);
}

}  // namespace tsmpi::ranks
