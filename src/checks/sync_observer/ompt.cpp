// LLVM libomp (clang -fopenmp, and gcc-built code run on libomp): observed through OMPT, the
// OpenMP tools interface (OpenMP 5.0 §4), which libomp offers to a tool that defines
// ompt_start_tool. The types below are the interface's, declared here so that tsmpi builds with
// gcc, whose headers do not have omp-tools.h.
#include <cstdint>
#include <cstdlib>
#include <dlfcn.h>

#include "checks/sync_observer/observer.h"
#include "checks/sync_observer/openmp.h"

namespace tsmpi::sync {

bool g_ompt_observes = false;
thread_local Team* tl_team = nullptr;

void forget_team(Team& t) {
  tsmpi_hb_forget(&t.fork);
  tsmpi_hb_forget(&t.join);
  tsmpi_hb_forget(&t.barrier);
  tsmpi_hb_forget(&t.tasks);
  tsmpi_hb_forget(&t.ordered);
}

int team_size() {
  if (tl_team && tl_team->size > 0) return tl_team->size;
  static int (*num_threads)() = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_num_threads"));
  return num_threads ? num_threads() : 1;
}

}  // namespace tsmpi::sync

using namespace tsmpi::sync;

namespace {

union ompt_data_t {
  std::uint64_t value;
  void* ptr;
};
using ompt_interface_fn_t = void (*)();
using ompt_function_lookup_t = ompt_interface_fn_t (*)(const char*);
using ompt_set_callback_t = int (*)(int event, ompt_interface_fn_t callback);
struct ompt_start_tool_result_t {
  int (*initialize)(ompt_function_lookup_t, int, ompt_data_t*);
  void (*finalize)(ompt_data_t*);
  ompt_data_t tool_data;
};
struct ompt_dependence_t {
  ompt_data_t variable;
  int dependence_type;
};

enum : int {
  kParallelBegin = 3,
  kParallelEnd = 4,
  kTaskCreate = 5,
  kTaskSchedule = 6,
  kImplicitTask = 7,
  kMutexReleased = 17,
  kDependences = 18,
  kSyncRegion = 23,
  kMutexAcquired = 27,
  kNestLock = 28,
};
enum : int { kScopeBegin = 1, kScopeEnd = 2 };
enum : int { kTaskComplete = 1, kTaskInitial = 1 };
enum : int { kSyncTaskwait = 5, kSyncTaskgroup = 6, kSyncReduction = 7 };

// An implicit task: its team, and the thread's team around it.
struct Member {
  Team* team;
  Team* outer;
};

// An explicit task, from its creation to its completion.
struct Task {
  Team* team;
  bool started = false;
  int ndeps = 0;
  void* deps[8];
};

bool observing() { return counts(); }

void on_parallel_begin(ompt_data_t*, const void*, ompt_data_t* parallel, unsigned, int, const void*) {
  auto* team = new Team;
  parallel->ptr = team;
  if (observing()) tsmpi_hb_release(&team->fork);
}

void on_parallel_end(ompt_data_t* parallel, ompt_data_t*, int, const void*) {
  auto* team = static_cast<Team*>(parallel->ptr);
  if (!team) return;
  if (observing()) {
    tsmpi_hb_acquire(&team->join);
    tsmpi_hb_acquire(&team->tasks);
  }
  forget_team(*team);
  delete team;
  parallel->ptr = nullptr;
}

void on_implicit_task(int endpoint, ompt_data_t* parallel, ompt_data_t* task, unsigned actual, unsigned, int flags) {
  if (flags & kTaskInitial) return;
  if (endpoint == kScopeBegin) {
    Team* team = parallel ? static_cast<Team*>(parallel->ptr) : nullptr;
    if (!team) return;
    if (actual > 0) __atomic_store_n(&team->size, static_cast<int>(actual), __ATOMIC_RELAXED);
    task->ptr = new Member{team, tl_team};
    tl_team = team;
    if (observing()) tsmpi_hb_acquire(&team->fork);
  } else if (endpoint == kScopeEnd) {
    auto* m = static_cast<Member*>(task->ptr);
    if (!m) return;
    if (observing()) tsmpi_hb_release(&m->team->join);
    tl_team = m->outer;
    delete m;
    task->ptr = nullptr;
  }
}

thread_local unsigned long tl_barrier_round = 0;

void on_sync_region(int kind, int endpoint, ompt_data_t*, ompt_data_t*, const void*) {
  if (!observing() || !tl_team) return;
  if (kind == kSyncTaskwait || kind == kSyncTaskgroup) {
    if (endpoint == kScopeEnd) tsmpi_hb_acquire(&tl_team->tasks);
    return;
  }
  if (kind == kSyncReduction) return;
  if (endpoint == kScopeBegin) {
    tl_barrier_round = tsmpi_hb_barrier_arrive(&tl_team->barrier, team_size());
  } else if (endpoint == kScopeEnd) {
    tsmpi_hb_barrier_leave(&tl_team->barrier, tl_barrier_round);
    tsmpi_hb_acquire(&tl_team->tasks);
  }
}

void on_mutex_acquired(int, std::uint64_t wait_id, const void*) {
  if (observing()) tsmpi_hb_acquire(reinterpret_cast<void*>(wait_id));
}

void on_mutex_released(int, std::uint64_t wait_id, const void*) {
  if (observing()) tsmpi_hb_release(reinterpret_cast<void*>(wait_id));
}

void on_nest_lock(int endpoint, std::uint64_t wait_id, const void*) {
  if (!observing()) return;
  if (endpoint == kScopeBegin)
    tsmpi_hb_acquire(reinterpret_cast<void*>(wait_id));
  else
    tsmpi_hb_release(reinterpret_cast<void*>(wait_id));
}

void on_task_create(ompt_data_t*, const void*, ompt_data_t* task, int flags, int, const void*) {
  if (flags & kTaskInitial) return;
  auto* t = new Task{tl_team, false, 0, {}};
  task->ptr = t;
  if (observing()) tsmpi_hb_release(t);
}

void on_dependences(ompt_data_t* task, const ompt_dependence_t* deps, int ndeps) {
  auto* t = static_cast<Task*>(task->ptr);
  if (!t) return;
  t->ndeps = ndeps <= 8 ? ndeps : 0;  // more: the task is not ordered by its dependences here
  for (int i = 0; i < t->ndeps; ++i) t->deps[i] = deps[i].variable.ptr;
}

void on_task_schedule(ompt_data_t* prior, int prior_status, ompt_data_t* next_task) {
  if (prior && prior_status == kTaskComplete) {
    if (auto* t = static_cast<Task*>(prior->ptr)) {
      if (observing()) {
        for (int i = 0; i < t->ndeps; ++i) tsmpi_hb_release(t->deps[i]);
        if (t->team) tsmpi_hb_release(&t->team->tasks);
      }
      tsmpi_hb_forget(t);
      delete t;
      prior->ptr = nullptr;
    }
  }
  if (next_task) {
    auto* t = static_cast<Task*>(next_task->ptr);
    if (t && !t->started) {
      t->started = true;
      if (observing()) {
        tsmpi_hb_acquire(t);
        for (int i = 0; i < t->ndeps; ++i) tsmpi_hb_acquire(t->deps[i]);
      }
    }
  }
}

template <class F>
void set(ompt_set_callback_t set_callback, int event, F f) {
  set_callback(event, reinterpret_cast<ompt_interface_fn_t>(f));
}

int initialize(ompt_function_lookup_t lookup, int, ompt_data_t*) {
  auto set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (!set_callback) return 0;
  set(set_callback, kParallelBegin, on_parallel_begin);
  set(set_callback, kParallelEnd, on_parallel_end);
  set(set_callback, kImplicitTask, on_implicit_task);
  set(set_callback, kSyncRegion, on_sync_region);
  set(set_callback, kMutexAcquired, on_mutex_acquired);
  set(set_callback, kMutexReleased, on_mutex_released);
  set(set_callback, kNestLock, on_nest_lock);
  set(set_callback, kTaskCreate, on_task_create);
  set(set_callback, kDependences, on_dependences);
  set(set_callback, kTaskSchedule, on_task_schedule);
  g_ompt_observes = true;
  return 1;  // keep the tool
}

void finalize(ompt_data_t*) { g_ompt_observes = false; }

ompt_start_tool_result_t g_tool{initialize, finalize, {0}};

}  // namespace

extern "C" ompt_start_tool_result_t* ompt_start_tool(unsigned, const char*) {
  return g_active ? &g_tool : nullptr;
}
