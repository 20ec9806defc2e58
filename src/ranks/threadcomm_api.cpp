// MPIX_Threadcomm_init/start/finish/free (MPICH 4.2's API): a family of thread-ranks over a
// communicator's processes (comm.h).
#include <cstdio>
#include <cstring>
#include <sched.h>
#include <unistd.h>

#include "checks/checks.h"
#include "checks/thread_rank_collectives.h"
#include "matching/mpi_calls.h"
#include "ranks/comm.h"
#include "ranks/errors.h"
#include "ranks/handle_space.h"
#include "ranks/ranks_stats.h"
#include "ranks/route.h"
#include "ranks/transport.h"
#include "runtime/config.h"

namespace tsmpi::ranks {

namespace {
// The root communicator's context (split contexts put a family rank in the upper half).
constexpr std::uint64_t kRootContext = ~std::uint64_t{0};

int fail(MPI_Comm comm, int code, const char* what) {
  std::fprintf(stderr, "tsmpi: %s\n", what);
  if (comm == MPI_COMM_NULL) comm = MPI_COMM_WORLD;
  mpi::locked([&] { return PMPI_Comm_call_errhandler(comm, code); });
  return code;
}

Comm* root_of(MPI_Comm threadcomm) {
  Comm* c = comm_of(threadcomm);
  return c && c->root ? c : nullptr;
}
}  // namespace

}  // namespace tsmpi::ranks

using namespace tsmpi::ranks;
namespace mpi = tsmpi::mpi;

extern "C" TSMPI_EXPORT int MPIX_Threadcomm_init(MPI_Comm comm, int num_threads, MPI_Comm* newthreadcomm) {
  int initialized = 0;
  PMPI_Initialized(&initialized);
  if (!initialized) {
    std::fprintf(stderr, "tsmpi: MPIX_Threadcomm_init called before MPI_Init\n");
    return MPI_ERR_OTHER;
  }
  if (comm_of(comm)) return fail(MPI_COMM_NULL, MPI_ERR_COMM, "MPIX_Threadcomm_init: comm is itself a thread-rank communicator");
  if (tl_regions > 0) return fail(comm, MPI_ERR_OTHER, "MPIX_Threadcomm_init: called inside a threadcomm region");
  int inter = 0;
  if (int rc = mpi::locked([&] { return PMPI_Comm_test_inter(comm, &inter); })) return fail(MPI_COMM_NULL, rc, "MPIX_Threadcomm_init: invalid communicator");
  if (inter) return fail(comm, MPI_ERR_COMM, "MPIX_Threadcomm_init: comm is an intercommunicator");
  if (num_threads < 1) return fail(comm, MPI_ERR_ARG, "MPIX_Threadcomm_init: num_threads must be at least 1");

  auto* f = new Family;
  f->parent = comm;
  mpi::locked([&] { return PMPI_Comm_size(comm, &f->nprocs); });
  mpi::locked([&] { return PMPI_Comm_rank(comm, &f->my_proc); });
  f->nthreads.resize(static_cast<std::size_t>(f->nprocs));
  MPI_Request r;
  mpi::locked([&] { return PMPI_Iallgather(&num_threads, 1, MPI_INT, f->nthreads.data(), 1, MPI_INT, comm, &r); });
  mpi::wait(&r, MPI_STATUS_IGNORE);
  int total = 0;
  for (int p = 0; p < f->nprocs; ++p) {
    f->offset.push_back(total);
    for (int t = 0; t < f->nthreads[static_cast<std::size_t>(p)]; ++t) f->proc_of.push_back(p);
    total += f->nthreads[static_cast<std::size_t>(p)];
  }
  f->nlocal = num_threads;
  // Spin long only while every thread-rank of the process can have a core of its own: the cores
  // the process may run on (mpiexec often binds a process to one core).
  {
    static std::atomic<int> local_ranks{0};
    const int here = local_ranks.fetch_add(num_threads) + num_threads;
    cpu_set_t allowed;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) cores = CPU_COUNT(&allowed);
    g_spin_ns.store(here <= cores ? 50'000 : 2'000, std::memory_order_relaxed);
  }
  // The processes' world ranks, for diagnostics (ranks/introspect.h).
  {
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
  f->next_ctx.assign(static_cast<std::size_t>(num_threads), 0);
  // Private duplicates: one for messages between processes, one for the processes' collectives.
  mpi::locked([&] { return PMPI_Comm_dup(comm, &f->net); });
  mpi::locked([&] { return PMPI_Comm_dup(comm, &f->coll); });

  std::vector<int> members(static_cast<std::size_t>(total));
  for (int i = 0; i < total; ++i) members[static_cast<std::size_t>(i)] = i;
  // The root Comm is made like any other, then kept out of the caller's memberships (threads
  // join it at MPIX_Threadcomm_start).
  Comm* root = join_comm(f, kRootContext, members, 0);
  memberships().pop_back();
  root->root = true;
  root->coll_comm = f->multi_process() ? f->coll : MPI_COMM_NULL;
  MPI_Errhandler eh = MPI_ERRORS_ARE_FATAL;
  mpi::locked([&] { return PMPI_Comm_get_errhandler(comm, &eh); });
  root->errhandler.set(eh);
  mpi::locked([&] { return PMPI_Errhandler_free(&eh); });  // the slot holds its own reference
  f->root = root;
  if (f->multi_process()) add_polled_family(f);
  activate();
  count(g_counters.threadcomms);
  *newthreadcomm = root->handle_value();
  return MPI_SUCCESS;
}

extern "C" TSMPI_EXPORT int MPIX_Threadcomm_start(MPI_Comm threadcomm) {
  Comm* c = root_of(threadcomm);
  if (!c) return fail(MPI_COMM_NULL, MPI_ERR_COMM, "MPIX_Threadcomm_start: not a threadcomm");
  if (membership(c)) return fail(MPI_COMM_NULL, MPI_ERR_OTHER, "MPIX_Threadcomm_start: this thread has already started it");
  Family* f = c->family;
  // Ranks in arrival order, as MPICH gives them; the barrier makes every rank exist before any
  // thread goes on to use the communicator.
  int index = f->arrivals.fetch_add(1, std::memory_order_acq_rel);
  if (index >= f->nlocal) {
    f->arrivals.fetch_sub(1, std::memory_order_acq_rel);
    return fail(MPI_COMM_NULL, MPI_ERR_OTHER, "MPIX_Threadcomm_start: more threads than num_threads");
  }
  Member m;
  m.comm = c;
  m.rank = f->offset[static_cast<std::size_t>(f->my_proc)] + index;
  memberships().push_back(m);
  ++tl_regions;
  f->in_region.fetch_add(1, std::memory_order_relaxed);
  f->region_barrier.wait(f->nlocal);
  if (index == 0) f->arrivals.store(0, std::memory_order_release);  // every thread has its index now
  return MPI_SUCCESS;
}

extern "C" TSMPI_EXPORT int MPIX_Threadcomm_finish(MPI_Comm threadcomm) {
  Comm* c = root_of(threadcomm);
  if (!c) return fail(MPI_COMM_NULL, MPI_ERR_COMM, "MPIX_Threadcomm_finish: not a threadcomm");
  Member* m = membership(c);
  if (!m) return fail(MPI_COMM_NULL, MPI_ERR_OTHER, "MPIX_Threadcomm_finish: this thread has not started it");
  Family* f = c->family;
  if (tsmpi::checks::g_on) tsmpi::checks::thread_rank_leaves(c, m->coll_seq, m->rank, "MPIX_Threadcomm_finish", f->nlocal);
  // Everyone is done with the region (and its messages) before attributes go.
  f->region_barrier.wait(f->nlocal);
  if (m->attributes != MPI_COMM_NULL) mpi::locked([&] { return PMPI_Comm_free(&m->attributes); });
  m->errhandler.release();
  auto& v = memberships();
  v.erase(v.begin() + (m - v.data()));
  --tl_regions;
  f->in_region.fetch_sub(1, std::memory_order_relaxed);
  f->region_barrier.wait(f->nlocal);
  return MPI_SUCCESS;
}

extern "C" TSMPI_EXPORT int MPIX_Threadcomm_free(MPI_Comm* threadcomm) {
  Comm* c = root_of(*threadcomm);
  if (!c) return fail(MPI_COMM_NULL, MPI_ERR_COMM, "MPIX_Threadcomm_free: not a threadcomm");
  Family* f = c->family;
  if (f->in_region.load(std::memory_order_relaxed) != 0)
    return fail(f->parent, MPI_ERR_OTHER, "MPIX_Threadcomm_free: called inside the threadcomm's region");
  if (f->multi_process()) remove_polled_family(f);
  // The processes agree that the family is done before its private communicators go.
  MPI_Request r;
  mpi::locked([&] { return PMPI_Ibarrier(f->net, &r); });
  mpi::wait(&r, MPI_STATUS_IGNORE);
  {
    std::lock_guard g(f->mu);
    f->comms.erase(c->ctx);
    for (auto& [ctx, arrivals] : f->orphans)
      for (auto& a : arrivals) free_packet(a.packet);
  }
  release_handle(c->handle);
  tsmpi::checks::thread_rank_comm_gone(c);
  mpi::locked([&] { return PMPI_Comm_free(&f->net); });
  mpi::locked([&] { return PMPI_Comm_free(&f->coll); });
  c->errhandler.release();
  delete c;
  delete f;
  *threadcomm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}
