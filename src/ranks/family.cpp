// Making a family: the processes of a communicator, how many local ranks each has, where they
// run, and the private duplicates that carry the family's traffic between processes.

#include "matching/mpi_calls.h"
#include "ranks/comm.h"
#include "ranks/operations.h"
#include "runtime/os.h"

namespace tsmpi::ranks {

namespace {
// Spin and yield long only while every local rank of the process can have a core of its own:
// the cores the process may run on (mpiexec often binds a process to one core).
void tune_spinning(int num_threads) {
  static std::atomic<int> local_ranks{0};
  const int here = local_ranks.fetch_add(num_threads) + num_threads;
  const bool fit = here <= usable_cores();
  g_spin_ns.store(fit ? 50'000 : 2'000, std::memory_order_relaxed);
  g_yields.store(fit ? 2048 : 64, std::memory_order_relaxed);
}

void gather_int(MPI_Comm comm, int mine, std::vector<int>& all) {
  MPI_Request r;
  mpi::locked([&] { return PMPI_Iallgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, comm, &r); });
  mpi::wait(&r, MPI_STATUS_IGNORE);
}

// The processes' world ranks, for diagnostics (ranks/introspect.h).
void learn_world_ranks(Family* f, MPI_Comm comm) {
  MPI_Group g, world;
  std::vector<int> in(static_cast<std::size_t>(f->nprocs));
  for (int p = 0; p < f->nprocs; ++p) in[static_cast<std::size_t>(p)] = p;
  f->world_rank_of_proc.assign(static_cast<std::size_t>(f->nprocs), MPI_UNDEFINED);
  mpi::locked([&] { return PMPI_Comm_group(comm, &g); });
  mpi::locked([&] { return PMPI_Comm_group(MPI_COMM_WORLD, &world); });
  mpi::locked([&] { return PMPI_Group_translate_ranks(g, f->nprocs, in.data(), world, f->world_rank_of_proc.data()); });
  mpi::locked([&] { return PMPI_Group_free(&g); });
  mpi::locked([&] { return PMPI_Group_free(&world); });
  for (int& w : f->world_rank_of_proc) if (w == MPI_UNDEFINED) w = -1;
}

// Each process's node, named by the lowest process on it (MPI_COMM_TYPE_SHARED).
void learn_nodes(Family* f) {
  MPI_Comm node;
  mpi::locked([&] { return PMPI_Comm_split_type(f->coll, MPI_COMM_TYPE_SHARED, f->my_proc, MPI_INFO_NULL, &node); });
  int first = f->my_proc;
  MPI_Request r;
  mpi::locked([&] { return PMPI_Iallreduce(&f->my_proc, &first, 1, MPI_INT, MPI_MIN, node, &r); });
  mpi::wait(&r, MPI_STATUS_IGNORE);
  mpi::locked([&] { return PMPI_Comm_free(&node); });
  f->node_of_proc.assign(static_cast<std::size_t>(f->nprocs), 0);
  gather_int(f->coll, first, f->node_of_proc);
}
}  // namespace

Family* make_family(MPI_Comm parent, int num_threads, std::uint64_t root_ctx, bool shared_ranks) {
  auto* f = new Family;
  f->shared_ranks = shared_ranks;
  f->parent = parent;
  mpi::locked([&] { return PMPI_Comm_size(parent, &f->nprocs); });
  mpi::locked([&] { return PMPI_Comm_rank(parent, &f->my_proc); });
  f->nthreads.resize(static_cast<std::size_t>(f->nprocs));
  gather_int(parent, num_threads, f->nthreads);
  int total = 0;
  for (int p = 0; p < f->nprocs; ++p) {
    f->offset.push_back(total);
    for (int t = 0; t < f->nthreads[static_cast<std::size_t>(p)]; ++t) f->proc_of.push_back(p);
    total += f->nthreads[static_cast<std::size_t>(p)];
  }
  f->nlocal = num_threads;
  tune_spinning(num_threads);
  learn_world_ranks(f, parent);
  f->next_ctx = std::make_unique<std::atomic<std::uint32_t>[]>(static_cast<std::size_t>(num_threads));
  // Private duplicates: one for messages between processes, one for the processes' collectives.
  mpi::locked([&] { return PMPI_Comm_dup(parent, &f->net); });
  mpi::locked([&] { return PMPI_Comm_dup(parent, &f->coll); });
  learn_nodes(f);

  std::vector<int> members(static_cast<std::size_t>(total));
  for (int i = 0; i < total; ++i) members[static_cast<std::size_t>(i)] = i;
  Comm* root = find_or_make_comm(f, root_ctx, members);
  root->root = true;
  root->coll_comm = f->multi_process() ? f->coll : MPI_COMM_NULL;
  f->root = root;
  return f;
}

}  // namespace tsmpi::ranks
