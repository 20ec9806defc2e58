// MPIX_Threadcomm_init/start/finish/free (MPICH 4.2's API): a family of thread-ranks over a
// communicator's processes (comm.h).
#include <cstdio>
#include <cstring>

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
#include "runtime/mpi_version.h"
#include "runtime/options.h"

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

#if TSMPI_HAVE_NATIVE_THREADCOMM
extern "C" int tsmpi_native_MPIX_Threadcomm_init(MPI_Comm comm, int num_threads, MPI_Comm* newthreadcomm);
extern "C" int tsmpi_native_MPIX_Threadcomm_start(MPI_Comm threadcomm);
extern "C" int tsmpi_native_MPIX_Threadcomm_finish(MPI_Comm threadcomm);
extern "C" int tsmpi_native_MPIX_Threadcomm_free(MPI_Comm* threadcomm);
// TSMPI_THREADCOMM=native: the MPI's own threadcomm, through its generated wrapper (the same
// protections as any communicator call).
#define TSMPI_NATIVE_THREADCOMM(call) \
  if (tsmpi::native_threadcomm_chosen()) return tsmpi_native_##call
#else
#define TSMPI_NATIVE_THREADCOMM(call) \
  if (false) return 0
#endif

extern "C" TSMPI_EXPORT int MPIX_Threadcomm_init(MPI_Comm comm, int num_threads, MPI_Comm* newthreadcomm) {
  TSMPI_NATIVE_THREADCOMM(MPIX_Threadcomm_init(comm, num_threads, newthreadcomm));
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

  Family* f = make_family(comm, num_threads, kRootContext);
  Comm* root = f->root;
  root->default_name = "MPIX_THREADCOMM";
  MPI_Errhandler eh = MPI_ERRORS_ARE_FATAL;
  mpi::locked([&] { return PMPI_Comm_get_errhandler(comm, &eh); });
  root->errhandler.set(eh);
  mpi::locked([&] { return PMPI_Errhandler_free(&eh); });  // the slot holds its own reference
  if (f->multi_process()) add_polled_family(f);
  activate();
  count(g_counters.threadcomms);
  *newthreadcomm = root->handle_value();
  return MPI_SUCCESS;
}

extern "C" TSMPI_EXPORT int MPIX_Threadcomm_start(MPI_Comm threadcomm) {
  TSMPI_NATIVE_THREADCOMM(MPIX_Threadcomm_start(threadcomm));
  Comm* c = root_of(threadcomm);
  if (!c) return fail(MPI_COMM_NULL, MPI_ERR_COMM, "MPIX_Threadcomm_start: not a threadcomm");
  Family* f = c->family;
  if (family_rank_of_caller(f) >= 0)
    return fail(MPI_COMM_NULL, MPI_ERR_OTHER, "MPIX_Threadcomm_start: this thread has already started it");
  // Ranks in arrival order, as MPICH gives them; the barrier makes every rank exist before any
  // thread goes on to use the communicator.
  int index = f->arrivals.fetch_add(1, std::memory_order_acq_rel);
  if (index >= f->nlocal) {
    f->arrivals.fetch_sub(1, std::memory_order_acq_rel);
    return fail(MPI_COMM_NULL, MPI_ERR_OTHER, "MPIX_Threadcomm_start: more threads than num_threads");
  }
  const int rank = f->offset[static_cast<std::size_t>(f->my_proc)] + index;
  push_identity(f, rank);
  join_member(c, rank);
  ++tl_regions;
  f->in_region.fetch_add(1, std::memory_order_relaxed);
  f->region_barrier.wait(f->nlocal);
  if (index == 0) f->arrivals.store(0, std::memory_order_release);  // every thread has its index now
  return MPI_SUCCESS;
}

extern "C" TSMPI_EXPORT int MPIX_Threadcomm_finish(MPI_Comm threadcomm) {
  TSMPI_NATIVE_THREADCOMM(MPIX_Threadcomm_finish(threadcomm));
  Comm* c = root_of(threadcomm);
  if (!c) return fail(MPI_COMM_NULL, MPI_ERR_COMM, "MPIX_Threadcomm_finish: not a threadcomm");
  Member* m = membership(c);
  if (!m) return fail(MPI_COMM_NULL, MPI_ERR_OTHER, "MPIX_Threadcomm_finish: this thread has not started it");
  Family* f = c->family;
  if (tsmpi::checks::g_on) tsmpi::checks::thread_rank_leaves(c, m->collectives.started(), m->rank, "MPIX_Threadcomm_finish", f->nlocal);
  // Everyone is done with the region (and its messages) before attributes go.
  f->region_barrier.wait(f->nlocal);
  release_member(m);  // the next region starts afresh
  pop_identity(f);
  --tl_regions;
  f->in_region.fetch_sub(1, std::memory_order_relaxed);
  f->region_barrier.wait(f->nlocal);
  return MPI_SUCCESS;
}

extern "C" TSMPI_EXPORT int MPIX_Threadcomm_free(MPI_Comm* threadcomm) {
  TSMPI_NATIVE_THREADCOMM(MPIX_Threadcomm_free(threadcomm));
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
  forget_callers();
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
