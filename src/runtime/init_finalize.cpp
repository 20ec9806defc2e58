// MPI_Init / MPI_Init_thread / MPI_Finalize / thread-level queries and MPI-4 sessions:
// read the options, ask the MPI for TSMPI_UNDERLYING_LEVEL, tell the application the level
// tsmpi provides, switch the wrappers on, and print statistics at the end.
#include "runtime/mpi_version.h"
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "checks/checks.h"
#include "diagnostics/hang_watchdog.h"
#include "diagnostics/report.h"
#include "fortran/coverage.h"
#include "fortran/redirect.h"
#include "fortran/request_variables.h"
#include "locking/admission.h"
#include "locking/buffer_lock.h"
#include "locking/collective_sequence.h"
#include "locking/group_agreement.h"
#include "locking/object_lifetime.h"
#include "locking/object_registry.h"
#include "locking/serialize_lock.h"
#include "matching/probe_policy.h"
#include "ranks/address_space.h"
#include "ranks/ranks_stats.h"
#include "runtime/activation.h"
#include "runtime/function_table.h"
#include "runtime/one_write.h"
#include "runtime/options.h"
#include "runtime/stats.h"
#include "runtime/thread_state.h"
#include "wrappers/handlers.h"

namespace tsmpi {
namespace {

struct InitState {
  std::atomic<bool> world_initialized{false};
  int mpi_provided = MPI_THREAD_SINGLE;    // what the MPI gave tsmpi
  int tsmpi_provided = MPI_THREAD_SINGLE;  // what tsmpi can give the application (and protects)
  // What the application was told (MPI_Init_thread's provided, MPI_Query_thread): the level it
  // asked for when tsmpi can give it, as MPI-4.0 §11.2.1 prescribes, else tsmpi's.
  int reported = MPI_THREAD_SINGLE;
  std::atomic<int> live_sessions{0};
  bool sessions_started = false;  // protections started by a session, without MPI_Init
  std::atomic<bool> stats_printed{false};
};
InitState g_init;

int requested_level(UnderlyingLevel l) {
  switch (l) {
    case UnderlyingLevel::Single: return MPI_THREAD_SINGLE;
    case UnderlyingLevel::Serialized: return MPI_THREAD_SERIALIZED;
    case UnderlyingLevel::Multiple: return MPI_THREAD_MULTIPLE;
  }
  return MPI_THREAD_MULTIPLE;
}

const char* level_name(int level) {
  if (level == MPI_THREAD_SINGLE) return "MPI_THREAD_SINGLE";
  if (level == MPI_THREAD_FUNNELED) return "MPI_THREAD_FUNNELED";
  if (level == MPI_THREAD_SERIALIZED) return "MPI_THREAD_SERIALIZED";
  if (level == MPI_THREAD_MULTIPLE) return "MPI_THREAD_MULTIPLE";
  return "unknown";
}

// "rank/size" of MPI_COMM_WORLD, or the launcher's rank when only sessions are in use.
std::string rank_label() {
  if (g_init.world_initialized.load()) {
    int rank = -1, size = 0, finalized = 0;
    PMPI_Finalized(&finalized);
    if (!finalized && PMPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS &&
        PMPI_Comm_size(MPI_COMM_WORLD, &size) == MPI_SUCCESS)
      return std::to_string(rank) + "/" + std::to_string(size);
  }
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char* v = std::getenv(var)) return v;
  return "?";
}

void count_handled_call(fn::Id id) {
  if (const Options* o = loaded_options(); o && o->stats) count_call(tl_thread, kFunctions[id].category, id);
}

void say_hello(const Options& o) {
  if (o.verbose < 1) return;
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = 0;
  PMPI_Get_library_version(version, &len);
  std::string first_line(version, std::string(version).find_first_of("\n,") == std::string::npos
                                      ? std::string(version).size()
                                      : std::string(version).find_first_of("\n,"));
  write_formatted(2,
                  "tsmpi: rank %s: %s (built for %s); asked the MPI for %s, got %s; providing %s; "
                  "%d of %d wrappers active\n",
                  rank_label().c_str(), first_line.c_str(), fn::kBuiltFor,
                  level_name(requested_level(o.underlying_level)), level_name(g_init.mpi_provided),
                  level_name(g_init.tsmpi_provided), active_count(), static_cast<int>(fn::kCount));
  if (o.verbose >= 2) {
    int per_category[kCategoryCount] = {};
    for (int i = 0; i < fn::kCount; ++i)
      if (!pass_through(static_cast<fn::Id>(i))) ++per_category[static_cast<int>(kFunctions[i].category)];
    std::string text = "tsmpi: active wrappers per category:";
    for (int c = 0; c < kCategoryCount; ++c)
      text += std::string(" ") + category_name(static_cast<Category>(c)) + "=" + std::to_string(per_category[c]);
    text += "\ntsmpi: Fortran: " + fortran::coverage_line() + "\n";
    (void)!::write(2, text.data(), text.size());
  }
}

void print_stats_once() {
  const Options* o = loaded_options();
  if (!o || !o->stats || g_init.stats_printed.exchange(true)) return;
  std::string extra;
  if (serial::enabled()) {
    serial::AdmissionCounters a = serial::admission_counters();
    extra = "  serialize: admissions=" + std::to_string(a.admissions) + " retries=" + std::to_string(a.retries) +
            " deferred=" + std::to_string(serial::deferred_count()) + "\n";
  }
  extra += matching::policy_stats_line();
  extra += lifetime::stats_line();
  extra += ranks::stats_line();
  print_stats(stderr, rank_label().c_str(), extra.c_str());
}

}  // namespace

namespace handlers {

namespace {
int init(fn::Id id, int* argc, char*** argv, int required, int* provided);
}

int MPI_Init(int* argc, char*** argv) { return init(fn::MPI_Init, argc, argv, MPI_THREAD_SINGLE, nullptr); }

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return init(fn::MPI_Init_thread, argc, argv, required, provided);
}

namespace {
int init(fn::Id id, int* argc, char*** argv, int required, int* provided) {
  const Options& o = options_or_exit();
  fortran::redirect_loaded_libraries();  // Fortran libraries opened after load (dlopen)
  int rc;
  {
    NestingScope inside(tl_thread);
    rc = PMPI_Init_thread(argc, argv, requested_level(o.underlying_level), &g_init.mpi_provided);
  }
  if (rc != MPI_SUCCESS) return rc;
  // Serialize mode makes calls mutually exclusive itself, so the application gets
  // MPI_THREAD_MULTIPLE from an MPI at SINGLE or SERIALIZED. FUNNELED cannot be lifted that way
  // (only the main thread may enter such an MPI), so it is passed on as it is.
  if (serialize_mode(o) && g_init.mpi_provided != MPI_THREAD_FUNNELED) {
    serial::registry_init();
    serial::group_agreement_init();
    serial::g_enabled.store(true);
    fortran::g_late_handles = true;  // MPI_Comm_idup's newcomm is written late (creation_in_flight.h)
    g_init.tsmpi_provided = MPI_THREAD_MULTIPLE;
  } else {
    g_init.tsmpi_provided = g_init.mpi_provided;
  }
  // The MPI underneath stays at its level, and tsmpi's protections at tsmpi_provided, whatever
  // the application asked for: a program that asks for less and uses threads anyway is common.
  const bool valid = required >= MPI_THREAD_SINGLE && required <= MPI_THREAD_MULTIPLE;
  g_init.reported = valid && required < g_init.tsmpi_provided ? required : g_init.tsmpi_provided;
  // Probes can only race, and the attached buffer is only shared, when threads call the MPI at once.
  matching::start_policy(o, g_init.tsmpi_provided == MPI_THREAD_MULTIPLE);
  own::g_enabled = g_init.tsmpi_provided == MPI_THREAD_MULTIPLE;
  activate(o);
  if (checks::g_on) {
    NestingScope inside(tl_thread);
    checks::learn_shared_requests();
  }
  if (o.asp) {  // MPI processes in one address space (src/ranks/address_space.h)
    NestingScope inside(tl_thread);
    g_init.reported = ranks::asp::init(o.asp, required, g_init.tsmpi_provided, g_init.reported);
  }
  if (provided) *provided = g_init.reported;
  g_init.world_initialized.store(true);
  diag::set_rank_label(rank_label());
  diag::start_hang_watchdog(o);
  count_handled_call(id);
  say_hello(o);
  return rc;
}
}  // namespace

int MPI_Finalize() {
  if (ranks::asp::live()) {
    // Each MPI process of the address space finalizes; the last one finalizes the MPI.
    int rc;
    NestingScope inside(tl_thread);
    if (!ranks::asp::finalize(&rc)) return rc;
  }
  count_handled_call(fn::MPI_Finalize);
  if (serial::enabled()) {  // what serialize mode has yet to give the MPI (collective_sequence.h)
    NestingScope inside(tl_thread);
    serial::drain_sequences();
  }
  diag::stop_hang_watchdog();
  bool clean = matching::finish_policy(options_or_exit(), rank_label().c_str());
  print_stats_once();
  NestingScope inside(tl_thread);
  lifetime::finish();  // the MPI frees what is still in quarantine
  int rc;
  if (!serial::enabled()) {
    rc = PMPI_Finalize();
  } else {
    serial::Guard g;
    rc = PMPI_Finalize();
  }
  if (!clean) {
    // TSMPI_CHECK=abort: the process ends with status 1 once the MPI is finalized. (MPI_Abort
    // here lets the launcher drop the report: Hydra often kills the job before forwarding it.)
    std::fprintf(stderr, "tsmpi: TSMPI_CHECK=abort: exiting with status 1\n");
    std::fflush(nullptr);
    std::_Exit(1);
  }
  return rc;
}

int MPI_Query_thread(int* provided) {
  count_handled_call(fn::MPI_Query_thread);
  if (!g_init.world_initialized.load()) {
    NestingScope inside(tl_thread);
    return PMPI_Query_thread(provided);
  }
  *provided = g_init.reported;
  return MPI_SUCCESS;
}

int MPI_Is_thread_main(int* flag) {
  count_handled_call(fn::MPI_Is_thread_main);
  if (ranks::asp::live()) {  // the first thread that attached to the caller's MPI process
    *flag = ranks::asp::is_thread_main();
    return MPI_SUCCESS;
  }
  // tsmpi calls PMPI_Init_thread from the application's thread, so the MPI's answer is ours.
  NestingScope inside(tl_thread);
  return PMPI_Is_thread_main(flag);
}

// Under -asp a thread belongs to an MPI process once it has attached (ticket 310, §12.5).
int MPI_Initialized(int* flag) {
  count_handled_call(fn::MPI_Initialized);
  if (ranks::asp::live()) {
    *flag = ranks::asp::initialized();
    return MPI_SUCCESS;
  }
  NestingScope inside(tl_thread);
  return PMPI_Initialized(flag);
}

int MPI_Finalized(int* flag) {
  count_handled_call(fn::MPI_Finalized);
  if (ranks::asp::live()) {
    *flag = ranks::asp::finalized();
    return MPI_SUCCESS;
  }
  NestingScope inside(tl_thread);
  return PMPI_Finalized(flag);
}

#if TSMPI_HAVE_SESSIONS
int info_create_env(int argc, char* argv[], MPI_Info* info) {
  const int rc = PMPI_Info_create_env(argc, argv, info);
  if (rc != MPI_SUCCESS || !g_init.world_initialized.load() || g_init.reported == g_init.mpi_provided) return rc;
  int flag = 0;
  char value[64] = "";
  PMPI_Info_get(*info, "thread_level", sizeof value - 1, value, &flag);
  if (flag) PMPI_Info_set(*info, "thread_level", level_name(g_init.reported));
  return rc;
}

namespace {
// The thread level a session got (MPI-4.0 §11.3.1: its info's "thread_level").
int session_thread_level(MPI_Session session) {
  MPI_Info info = MPI_INFO_NULL;
  if (PMPI_Session_get_info(session, &info) != MPI_SUCCESS || info == MPI_INFO_NULL) return MPI_THREAD_SINGLE;
  char value[64] = "";
  int flag = 0;
  PMPI_Info_get(info, "thread_level", sizeof value - 1, value, &flag);
  PMPI_Info_free(&info);
  const std::string v = flag ? value : "";
  for (int l : {MPI_THREAD_MULTIPLE, MPI_THREAD_SERIALIZED, MPI_THREAD_FUNNELED})
    if (v == level_name(l)) return l;
  return MPI_THREAD_SINGLE;
}

// Serialize mode and the hang watchdog are built on MPI_COMM_WORLD: asked for in a program that
// starts MPI with a session and no MPI_Init, they stop it, saying so. Before the MPI starts, as
// for an invalid option: a process that leaves after its MPI connected to the launcher may have
// its status lost (Hydra 4.2 reports 0 when several processes end without finalizing).
void refuse_without_world(const Options& o) {
  const char* refused = serialize_mode(o) ? "TSMPI_UNDERLYING_LEVEL" : o.hang_timeout > 0 ? "TSMPI_HANG_TIMEOUT" : nullptr;
  if (!refused) return;
  std::fprintf(stderr,
               "tsmpi: %s=%s is refused: this program starts MPI with MPI_Session_init and no MPI_Init, and %s "
               "is built on MPI_COMM_WORLD\n",
               refused, option_value(o, refused).c_str(), serialize_mode(o) ? "serialize mode" : "the hang watchdog");
  std::fflush(stderr);
  std::exit(2);
}

// A program that starts MPI with a session and no MPI_Init: the protections that do not need
// MPI_COMM_WORLD start with its first session, at the level that session got.
void start_for_sessions(const Options& o, MPI_Session session) {
  const int level = session_thread_level(session);
  g_init.tsmpi_provided = g_init.mpi_provided = level;
  matching::start_policy(o, level == MPI_THREAD_MULTIPLE);
  own::g_enabled = level == MPI_THREAD_MULTIPLE;
  activate(o);
  if (checks::g_on) checks::learn_shared_requests();
  g_init.sessions_started = true;
  say_hello(o);
}
}  // namespace

int MPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session* session) {
  const Options& o = options_or_exit();
  if (g_init.live_sessions.load() == 0 && !g_init.world_initialized.load()) refuse_without_world(o);
  int rc;
  {
    NestingScope inside(tl_thread);
    rc = PMPI_Session_init(info, errhandler, session);
  }
  if (rc != MPI_SUCCESS) return rc;
  if (g_init.live_sessions.fetch_add(1) == 0 && !g_init.world_initialized.load()) {
    NestingScope inside(tl_thread);
    start_for_sessions(o, *session);
  }
  lifetime::adopt_session(handle_bits(*session));
  count_handled_call(fn::MPI_Session_init);
  return rc;
}

int MPI_Session_finalize(MPI_Session* session) {
  count_handled_call(fn::MPI_Session_finalize);
  int rc;
  {
    NestingScope inside(tl_thread);
    // A session finalized before (by this or another thread) is refused, not handed to the MPI.
    if (session && (rc = lifetime::end_session(handle_bits(*session))) != MPI_SUCCESS) return rc;
  }
  bool last = g_init.live_sessions.load() == 1;
  bool clean = true;
  if (last && !g_init.world_initialized.load()) {
    if (g_init.sessions_started) {  // probes left unreceived, while the MPI still runs
      NestingScope inside(tl_thread);
      clean = matching::finish_policy(options_or_exit(), rank_label().c_str());
    }
    print_stats_once();
  }
  {
    NestingScope inside(tl_thread);
    rc = PMPI_Session_finalize(session);
  }
  if (rc == MPI_SUCCESS) g_init.live_sessions.fetch_sub(1);
  if (!clean) {
    std::fprintf(stderr, "tsmpi: TSMPI_CHECK=abort: exiting with status 1\n");
    std::fflush(nullptr);
    std::_Exit(1);
  }
  return rc;
}
#endif

}  // namespace handlers
}  // namespace tsmpi
