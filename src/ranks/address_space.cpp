// MPI processes of one address space as local ranks of a family over MPI_COMM_WORLD
// (address_space.h): initialization, attaching threads, finalization.
#include "ranks/address_space.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "checks/checks.h"
#include "checks/thread_rank_collectives.h"
#include "matching/mpi_calls.h"
#include "ranks/buffered_sends.h"
#include "ranks/comm.h"
#include "ranks/errors.h"
#include "ranks/handle_space.h"
#include "ranks/native_calls.h"
#include "ranks/ranks_stats.h"
#include "ranks/route.h"
#include "ranks/transport.h"
#include "runtime/config.h"
#include "runtime/function_table.h"
#include "tsmpi.h"

namespace tsmpi::ranks::asp {

std::atomic<bool> g_live{false};
Comm* g_world = nullptr;
constinit TSMPI_TLS Comm* tl_self = nullptr;

// Contexts no split makes (a split's upper half is a family rank, below 2^31).
constexpr std::uint64_t kWorldContext = ~std::uint64_t{0} - 1;
constexpr std::uint64_t kSelfContext = std::uint64_t{1} << 63;

struct AddressSpace {
  int k = 0;
  bool reattach = false;
  Family* family = nullptr;
  std::vector<Comm*> selves;  // by index
  std::unique_ptr<std::atomic<const void*>[]> main_thread;  // first thread to attach to each index
  std::unique_ptr<std::atomic<bool>[]> finalized;
  std::atomic<int> finalized_count{0};
  const void* init_thread = nullptr;
  std::mutex finalize_mu;
  bool mpi_finalized = false;
};
AddressSpace g_as;

constinit TSMPI_TLS int tl_index = -1;  // the MPI process the thread is attached to
constinit TSMPI_TLS bool tl_finalized = false;
TSMPI_TLS char tl_token;  // its address names the thread

namespace {

int fail_outside(int code, const std::string& text) {
  std::fprintf(stderr, "tsmpi: %s\n", text.c_str());
  return code;
}

int error(const char* call, int error_class, const std::string& text) {
  std::fprintf(stderr, "tsmpi: %s\n", text.c_str());
  return raise(g_world, described_code(error_class, text), call);
}

// c becomes the communicator the program names by the MPI's own handle `as`.
Comm* predefined_comm(Comm* c, MPI_Comm as, const char* name) {
  forget_callers();
  release_handle(c->handle);  // the program names it by the MPI's own handle
  c->handle = handle_bits(as);
  c->default_name = name;
  MPI_Errhandler eh = MPI_ERRORS_ARE_FATAL;
  mpi::locked([&] { return PMPI_Comm_get_errhandler(as, &eh); });
  c->errhandler.set(eh);
  mpi::locked([&] { return PMPI_Errhandler_free(&eh); });
  for (int r : c->local_ranks) join_member(c, r);
  return c;
}

// The checks' name for a rank of an address space's communicator.
checks::RankNoun rank_noun(const void* comm) {
  if (owns(static_cast<const Comm*>(comm)->family)) return {"MPI process", "MPI processes"};
  return {"thread-rank", "thread-ranks"};
}

void start(int k, bool reattach) {
  g_as.k = k;
  g_as.reattach = reattach;
  g_as.main_thread = std::make_unique<std::atomic<const void*>[]>(static_cast<std::size_t>(k));
  g_as.finalized = std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(k));
  bsend::make_buffers(k);
  g_as.init_thread = &tl_token;
  Family* f = make_family(MPI_COMM_WORLD, k, kWorldContext, /*shared_ranks=*/true);
  g_as.family = f;
  Comm* world = predefined_comm(f->root, MPI_COMM_WORLD, "MPI_COMM_WORLD");
  for (int i = 0; i < k; ++i) {
    const int fr = f->offset[static_cast<std::size_t>(f->my_proc)] + i;
    Comm* self = find_or_make_comm(f, kSelfContext | static_cast<std::uint64_t>(fr), {fr});
    g_as.selves.push_back(predefined_comm(self, MPI_COMM_SELF, "MPI_COMM_SELF"));
  }
  // The MPI raises its own errors on these: they come back to tsmpi, which raises them through
  // the calling process's handler (raise_native).
  mpi::locked([&] { return PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); });
  mpi::locked([&] { return PMPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); });
  if (f->multi_process()) add_polled_family(f);
  checks::set_rank_noun(rank_noun);
  activate();
  g_counters.address_space_processes.store(static_cast<unsigned long long>(k), std::memory_order_relaxed);
  g_world = world;
  g_live.store(true, std::memory_order_release);
}

void detach() {
  pop_identity(g_as.family);
  tl_self = nullptr;
  tl_index = -1;
  --tl_regions;
}

void mark_finalized(int index) {
  if (g_as.finalized[static_cast<std::size_t>(index)].exchange(true)) return;
  g_as.finalized_count.fetch_add(1);
  // Checking mode: a local MPI process that finalizes while another waits in a collective on
  // MPI_COMM_WORLD it never called (seed 004 Listing 3.4).
  if (checks::g_on) {
    Comm* w = g_world;
    Member* m = w->local_members[static_cast<std::size_t>(index)].get();
    checks::thread_rank_leaves(w, m->collectives.started(), m->rank, "MPI_Finalize", g_as.k);
  }
}

// The last MPI process is done: every address space's processes have stopped sending once
// all have passed a barrier, then the family's private communicators go.
void stop() {
  Family* f = g_as.family;
  MPI_Request r;
  mpi::locked([&] { return PMPI_Ibarrier(f->net, &r); });
  mpi::wait(&r, MPI_STATUS_IGNORE);
  if (f->multi_process()) remove_polled_family(f);
  mpi::locked([&] { return PMPI_Comm_free(&f->net); });
  mpi::locked([&] { return PMPI_Comm_free(&f->coll); });
  g_live.store(false, std::memory_order_release);
}
}  // namespace

int init(int k, int required, int tsmpi_provided, int reported) {
  const std::string value = std::to_string(k);
  mpi::locked([&] { return PMPI_Info_set(MPI_INFO_ENV, "asp", value.c_str()); });
  const bool attach_level = required == MPIX_THREAD_ATTACH || required == MPIX_THREAD_REATTACH;
  if (!attach_level) {
    if (k == 1) return reported;  // one MPI process per OS process: the MPI's own model
    std::fprintf(stderr,
                 "tsmpi: TSMPI_ASP=%d (tsmpirun -asp %d) runs %d MPI processes in each OS process, and threads "
                 "join them with MPIX_Thread_attach: MPI_Init_thread must ask for MPIX_THREAD_ATTACH or "
                 "MPIX_THREAD_REATTACH (include/tsmpi.h), not MPI_Init or a level up to MPI_THREAD_MULTIPLE\n",
                 k, k, k);
    std::fflush(stderr);
    PMPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (tsmpi_provided != MPI_THREAD_MULTIPLE) {
    std::fprintf(stderr,
                 "tsmpi: MPI processes in one address space need threads to call the MPI at once, but the MPI "
                 "provides only a lower level (TSMPI_UNDERLYING_LEVEL=funneled cannot be serialized)\n");
    std::fflush(stderr);
    PMPI_Abort(MPI_COMM_WORLD, 1);
  }
  start(k, required == MPIX_THREAD_REATTACH);
  return required;
}

int attach(int index) {
  int initialized = 0;
  PMPI_Initialized(&initialized);
  if (!initialized) return fail_outside(MPI_ERR_OTHER, "MPIX_Thread_attach called before MPI_Init_thread");
  if (!live()) {
    std::string text = "MPIX_Thread_attach: MPI was not initialized at MPIX_THREAD_ATTACH or MPIX_THREAD_REATTACH "
                       "under tsmpirun -asp K";
    std::fprintf(stderr, "tsmpi: %s\n", text.c_str());
    int code = described_code(MPI_ERR_OTHER, text);
    mpi::locked([&] { return PMPI_Comm_call_errhandler(MPI_COMM_WORLD, code); });
    return code;
  }
  if (index < 0 || index >= g_as.k)
    return error("MPIX_Thread_attach", MPI_ERR_ARG,
                 "MPIX_Thread_attach: index " + std::to_string(index) + " is not an MPI process of this address "
                 "space (0 to " + std::to_string(g_as.k - 1) + "; asp = " + std::to_string(g_as.k) + ")");
  if (tl_index >= 0) {
    if (!g_as.reattach)
      return error("MPIX_Thread_attach", MPI_ERR_OTHER,
                   "MPIX_Thread_attach: the thread is attached already (to index " + std::to_string(tl_index) +
                   "); at MPIX_THREAD_ATTACH a thread attaches once, MPIX_THREAD_REATTACH lets it move");
    detach();
  }
  if (g_as.finalized[static_cast<std::size_t>(index)].load())
    return error("MPIX_Thread_attach", MPI_ERR_OTHER,
                 "MPIX_Thread_attach: MPI process " + std::to_string(index) + " of this address space has finalized");
  Family* f = g_as.family;
  push_identity(f, f->offset[static_cast<std::size_t>(f->my_proc)] + index);
  tl_self = g_as.selves[static_cast<std::size_t>(index)];
  tl_index = index;
  ++tl_regions;
  const void* none = nullptr;
  g_as.main_thread[static_cast<std::size_t>(index)].compare_exchange_strong(none, &tl_token);
  return MPI_SUCCESS;
}

bool finalize(int* rc) {
  *rc = MPI_SUCCESS;
  std::lock_guard g(g_as.finalize_mu);
  if (g_as.mpi_finalized) {
    *rc = fail_outside(MPI_ERR_OTHER, "MPI_Finalize: every MPI process of this address space has finalized already");
    return false;
  }
  if (tl_index >= 0) {
    const int i = tl_index;
    detach();
    mark_finalized(i);
  } else if (&tl_token == g_as.init_thread) {
    for (int i = 0; i < g_as.k; ++i) mark_finalized(i);
  } else {
    *rc = error("MPI_Finalize", MPI_ERR_OTHER,
                "MPI_Finalize from a thread that is not attached to an MPI process (MPIX_Thread_attach) and did "
                "not initialize MPI");
    return false;
  }
  tl_finalized = true;
  if (g_as.finalized_count.load() < g_as.k) return false;
  g_as.mpi_finalized = true;
  stop();
  return true;
}

bool owns(const Family* f) { return g_as.family && f == g_as.family; }

bool initialized() { return tl_index >= 0 || tl_finalized; }

bool finalized() {
  return tl_finalized || (tl_index >= 0 && g_as.finalized[static_cast<std::size_t>(tl_index)].load());
}

int attached_index() { return tl_index; }

bool is_thread_main() {
  return tl_index >= 0 && g_as.main_thread[static_cast<std::size_t>(tl_index)].load() == &tl_token;
}

int raise_native(int fn, int code) {
  const std::string_view name = kFunctions[fn].name;
  for (std::string_view own : {"MPI_File_", "MPI_Win_", "MPI_Session_"})
    if (name.substr(0, own.size()) == own) return code;
  // Open MPI 4.1 and MPICH 4.0 both raise such errors on MPI_COMM_WORLD.
  return raise(g_world, code, kFunctions[fn].name);
}

int not_attached_code(const char* call) {
  std::string text = std::string(call) + ": the calling thread is not attached to an MPI process of this address "
                                         "space (call MPIX_Thread_attach first)";
  std::fprintf(stderr, "tsmpi: %s\n", text.c_str());
  return described_code(MPI_ERR_OTHER, text);
}

}  // namespace tsmpi::ranks::asp

namespace tsmpi::ranks {

namespace api {

// The buffer of the calling thread's MPI process of the address space (bsend::engine_buffer()).
// Threads of one MPI process attach and detach in turn (MPI-4.0 §3.6.1 asks no more of them).
int buffer_attach(void* buffer, MPI_Count size) {
  return raise(asp::g_world, bsend::attach(asp::tl_index, buffer, size), "MPI_Buffer_attach");
}

int buffer_detach(void* buffer_addr, MPI_Count* size) {
  return raise(asp::g_world, bsend::detach(asp::tl_index, buffer_addr, size), "MPI_Buffer_detach");
}

}  // namespace api

int native_comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  if (split_type != MPIX_COMM_TYPE_ADDRESS_SPACE) return PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
  int rank = 0;
  if (int rc = PMPI_Comm_rank(comm, &rank)) return rc;
  return PMPI_Comm_split(comm, rank, key, newcomm);
}

}  // namespace tsmpi::ranks

extern "C" TSMPI_EXPORT int MPIX_Thread_attach(int index) { return tsmpi::ranks::asp::attach(index); }

// Fortran (every binding passes INTEGERs by reference; gfortran's manglings): CALL
// MPIX_THREAD_ATTACH(INDEX, IERROR). The constants are in include/tsmpif.h.
extern "C" TSMPI_EXPORT void mpix_thread_attach_(const MPI_Fint* index, MPI_Fint* ierror) {
  const int rc = tsmpi::ranks::asp::attach(static_cast<int>(*index));
  if (ierror) *ierror = static_cast<MPI_Fint>(rc);
}
extern "C" TSMPI_EXPORT void mpix_thread_attach(const MPI_Fint* index, MPI_Fint* ierror) { mpix_thread_attach_(index, ierror); }
extern "C" TSMPI_EXPORT void mpix_thread_attach__(const MPI_Fint* index, MPI_Fint* ierror) { mpix_thread_attach_(index, ierror); }
