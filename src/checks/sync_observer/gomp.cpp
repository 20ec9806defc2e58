// GNU libgomp (gcc, gfortran): parallel regions as fork and join, team barriers (explicit, and
// the implicit ones at the end of worksharing constructs), critical sections, ordered and atomic
// regions, OpenMP locks, tasks and taskloops, observed at the GOMP_* entry points the compiler
// calls.
// LLVM libomp exports the same entry points for gcc-built code; where it runs, OMPT (ompt.cpp)
// observes it instead and these pass straight through.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "checks/sync_observer/observer.h"
#include "checks/sync_observer/openmp.h"

using namespace tsmpi::sync;

namespace {

using Body = void (*)(void*);

// A parallel region: its fork and join points, its team's barrier and the completion of its
// tasks, each a happens-before key (the member's address).
struct Region {
  Body fn;
  void* data;
  Team team;
};

void region_body(void* p) {
  auto* r = static_cast<Region*>(p);
  Team* outer = tl_team;
  tl_team = &r->team;
  tsmpi_hb_acquire(&r->team.fork);
  r->fn(r->data);
  tsmpi_hb_release(&r->team.join);
  tl_team = outer;
}

// Runs a GOMP_parallel* entry with the region's body wrapped; the encountering thread joins
// the team's end afterwards.
template <class Call>
auto in_region(Body fn, void* data, Call&& call) {
  Region r{fn, data, {}};
  tsmpi_hb_release(&r.team.fork);
  struct Joined {
    Region& r;
    ~Joined() {
      tsmpi_hb_acquire(&r.team.join);
      tsmpi_hb_acquire(&r.team.tasks);
      forget_team(r.team);
    }
  } joined{r};
  return call(region_body, static_cast<void*>(&r));
}

bool gomp_observing() { return counts() && !g_ompt_observes; }

#define NEXT(name, type) next(g_##name, #name)
using ParallelFn = void (*)(Body, void*, unsigned, unsigned);
using LoopFn = void (*)(Body, void*, unsigned, long, long, long, long, unsigned);
using RuntimeLoopFn = void (*)(Body, void*, unsigned, long, long, long, unsigned);
using SectionsFn = void (*)(Body, void*, unsigned, unsigned, unsigned);
using ReductionsFn = unsigned (*)(Body, void*, unsigned, unsigned);
using VoidFn = void (*)();
using BoolFn = bool (*)();
using NamedFn = void (*)(void**);
using LockFn = void (*)(void*);
using TestLockFn = int (*)(void*);
using TaskFn = void (*)(Body, void*, void (*)(void*, void*), long, long, bool, unsigned, void**, int, void*);
template <class T>
using TaskloopFn = void (*)(Body, void*, void (*)(void*, void*), long, long, unsigned, unsigned long, int, T, T, T);

ParallelFn g_GOMP_parallel;
LoopFn g_GOMP_parallel_loop_static, g_GOMP_parallel_loop_dynamic, g_GOMP_parallel_loop_guided,
    g_GOMP_parallel_loop_nonmonotonic_dynamic, g_GOMP_parallel_loop_nonmonotonic_guided;
RuntimeLoopFn g_GOMP_parallel_loop_runtime, g_GOMP_parallel_loop_nonmonotonic_runtime,
    g_GOMP_parallel_loop_maybe_nonmonotonic_runtime;
SectionsFn g_GOMP_parallel_sections;
ReductionsFn g_GOMP_parallel_reductions;
VoidFn g_GOMP_barrier, g_GOMP_loop_end, g_GOMP_sections_end, g_GOMP_critical_start, g_GOMP_critical_end,
    g_GOMP_atomic_start, g_GOMP_atomic_end, g_GOMP_ordered_start, g_GOMP_ordered_end, g_GOMP_taskwait,
    g_GOMP_taskgroup_end;
BoolFn g_GOMP_barrier_cancel, g_GOMP_loop_end_cancel, g_GOMP_sections_end_cancel;
NamedFn g_GOMP_critical_name_start, g_GOMP_critical_name_end;
LockFn g_omp_set_lock, g_omp_unset_lock, g_omp_set_nest_lock, g_omp_unset_nest_lock, g_omp_set_lock_,
    g_omp_unset_lock_, g_omp_set_nest_lock_, g_omp_unset_nest_lock_;
TestLockFn g_omp_test_lock, g_omp_test_nest_lock, g_omp_test_lock_, g_omp_test_nest_lock_;
TaskFn g_GOMP_task;
TaskloopFn<long> g_GOMP_taskloop;
TaskloopFn<unsigned long long> g_GOMP_taskloop_ull;

// The unnamed critical section, and atomic regions done with a lock.
char g_unnamed_critical, g_atomic;

template <class Wait>
auto team_barrier(Wait&& wait) {
  if (!gomp_observing() || !tl_team) return wait();
  const unsigned long round = tsmpi_hb_barrier_arrive(&tl_team->barrier, team_size());
  auto rc = wait();
  tsmpi_hb_barrier_leave(&tl_team->barrier, round);
  tsmpi_hb_acquire(&tl_team->tasks);  // the team's tasks are complete at a barrier
  return rc;
}

// A task (GOMP_task, or each task of GOMP_taskloop): it begins after its creator's present and
// after its depend addresses' last writers, and ends before whoever waits for it. libgomp copies
// the task's argument block (with the program's copy function, or memcpy) into the task when it
// creates it, on the creating thread; tsmpi's copy function does the same and files the block's
// address with the creation's context, which the task's body (tsmpi's too) takes back when it
// runs. The block keeps libgomp's layout: taskloop writes each task's bounds into it, task
// reductions and detach handles live in it.
struct Creation {
  Body fn;
  void (*cpyfn)(void*, void*);
  long arg_size;
  Team* team;
  std::vector<void*> deps;
  char created = 0;  // key: the creator's present
  char done = 0;     // key: the tasks' ends (taskloop's implicit taskgroup)
  std::atomic<int> refs{1};
};

void release_ref(Creation* c) {
  if (c->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  tsmpi_hb_forget(&c->created);
  tsmpi_hb_forget(&c->done);
  delete c;
}

// Argument block -> its creation, from the copy to the body.
std::mutex g_blocks_lock;
std::unordered_map<void*, Creation*>& g_blocks = *new std::unordered_map<void*, Creation*>;  // never destroyed
thread_local Creation* tl_creating = nullptr;  // the creation GOMP_task/GOMP_taskloop is making

void copy_block(void* dst, void* src) {
  Creation* c = tl_creating;
  if (c->cpyfn)
    c->cpyfn(dst, src);
  else if (c->arg_size > 0)
    std::memcpy(dst, src, static_cast<std::size_t>(c->arg_size));
  c->refs.fetch_add(1, std::memory_order_relaxed);
  const std::lock_guard<std::mutex> hold(g_blocks_lock);
  g_blocks[dst] = c;
}

void task_body(void* arg) {
  Creation* c = nullptr;
  {
    const std::lock_guard<std::mutex> hold(g_blocks_lock);
    auto it = g_blocks.find(arg);
    if (it != g_blocks.end()) {
      c = it->second;
      g_blocks.erase(it);
    }
  }
  if (!c) std::abort();  // every block passes copy_block first
  Team* outer = tl_team;
  if (c->team) tl_team = c->team;
  tsmpi_hb_acquire(&c->created);
  for (void* d : c->deps) tsmpi_hb_acquire(d);
  c->fn(arg);
  for (void* d : c->deps) tsmpi_hb_release(d);
  tsmpi_hb_release(&c->done);
  if (c->team) tsmpi_hb_release(&c->team->tasks);
  tl_team = outer;
  release_ref(c);
}

// The addresses of a depend clause (libgomp's two layouts).
void depend_addresses(void** depend, std::vector<void*>& out) {
  std::uintptr_t n;
  void** addr;
  if (reinterpret_cast<std::uintptr_t>(depend[0]) != 0) {
    n = reinterpret_cast<std::uintptr_t>(depend[0]);
    addr = depend + 2;
  } else {
    n = reinterpret_cast<std::uintptr_t>(depend[1]);
    addr = depend + 5;
  }
  out.assign(addr, addr + n);
}

constexpr unsigned kTaskFlagDepend = 1u << 3, kTaskloopFlagNogroup = 1u << 11;

// Runs libgomp's task creation `create(body, copy)` for `c`, on the creating thread.
template <class Create>
void creating(Creation* c, Create&& create) {
  tsmpi_hb_release(&c->created);
  Creation* outer = tl_creating;  // a task run undeferred inside may create tasks of its own
  tl_creating = c;
  create();
  tl_creating = outer;
}

template <class T>
void taskloop(TaskloopFn<T> real, Body fn, void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align,
              unsigned flags, unsigned long num_tasks, int priority, T start, T end, T step) {
  if (!gomp_observing()) return real(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start, end, step);
  auto* c = new Creation{fn, cpyfn, arg_size, tl_team, {}};
  creating(c, [&] { real(task_body, data, copy_block, arg_size, arg_align, flags, num_tasks, priority, start, end, step); });
  // Without nogroup the construct is a taskgroup: its tasks are complete when it returns.
  if (!(flags & kTaskloopFlagNogroup)) tsmpi_hb_acquire(&c->done);
  release_ref(c);
}

}  // namespace

extern "C" {

void GOMP_parallel(Body fn, void* data, unsigned n, unsigned flags) {
  auto real = NEXT(GOMP_parallel, ParallelFn);
  if (!gomp_observing()) return real(fn, data, n, flags);
  in_region(fn, data, [&](Body b, void* d) { real(b, d, n, flags); });
}

#define TSMPI_PARALLEL_LOOP(name)                                                                         \
  void name(Body fn, void* data, unsigned n, long start, long end, long incr, long chunk, unsigned flags) { \
    auto real = next(g_##name, #name);                                                                     \
    if (!gomp_observing()) return real(fn, data, n, start, end, incr, chunk, flags);                      \
    in_region(fn, data, [&](Body b, void* d) { real(b, d, n, start, end, incr, chunk, flags); });          \
  }
TSMPI_PARALLEL_LOOP(GOMP_parallel_loop_static)
TSMPI_PARALLEL_LOOP(GOMP_parallel_loop_dynamic)
TSMPI_PARALLEL_LOOP(GOMP_parallel_loop_guided)
TSMPI_PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic)
TSMPI_PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_guided)

#define TSMPI_PARALLEL_RUNTIME_LOOP(name)                                                         \
  void name(Body fn, void* data, unsigned n, long start, long end, long incr, unsigned flags) {   \
    auto real = next(g_##name, #name);                                                           \
    if (!gomp_observing()) return real(fn, data, n, start, end, incr, flags);                   \
    in_region(fn, data, [&](Body b, void* d) { real(b, d, n, start, end, incr, flags); });       \
  }
TSMPI_PARALLEL_RUNTIME_LOOP(GOMP_parallel_loop_runtime)
TSMPI_PARALLEL_RUNTIME_LOOP(GOMP_parallel_loop_nonmonotonic_runtime)
TSMPI_PARALLEL_RUNTIME_LOOP(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

void GOMP_parallel_sections(Body fn, void* data, unsigned n, unsigned count, unsigned flags) {
  auto real = NEXT(GOMP_parallel_sections, SectionsFn);
  if (!gomp_observing()) return real(fn, data, n, count, flags);
  in_region(fn, data, [&](Body b, void* d) { real(b, d, n, count, flags); });
}

unsigned GOMP_parallel_reductions(Body fn, void* data, unsigned n, unsigned flags) {
  auto real = NEXT(GOMP_parallel_reductions, ReductionsFn);
  if (!gomp_observing()) return real(fn, data, n, flags);
  return in_region(fn, data, [&](Body b, void* d) { return real(b, d, n, flags); });
}

void GOMP_barrier(void) {
  auto real = NEXT(GOMP_barrier, VoidFn);
  team_barrier([&] { real(); return 0; });
}
bool GOMP_barrier_cancel(void) {
  auto real = NEXT(GOMP_barrier_cancel, BoolFn);
  return team_barrier([&] { return real(); });
}
void GOMP_loop_end(void) {
  auto real = NEXT(GOMP_loop_end, VoidFn);
  team_barrier([&] { real(); return 0; });
}
bool GOMP_loop_end_cancel(void) {
  auto real = NEXT(GOMP_loop_end_cancel, BoolFn);
  return team_barrier([&] { return real(); });
}
void GOMP_sections_end(void) {
  auto real = NEXT(GOMP_sections_end, VoidFn);
  team_barrier([&] { real(); return 0; });
}
bool GOMP_sections_end_cancel(void) {
  auto real = NEXT(GOMP_sections_end_cancel, BoolFn);
  return team_barrier([&] { return real(); });
}

// Lock-like constructs: acquire after entering, release before leaving.
#define TSMPI_LOCK_PAIR(enter, leave, Fn, key_expr, ...)          \
  void enter(__VA_ARGS__) {                                       \
    next(g_##enter, #enter)(TSMPI_ARGS);                          \
    if (gomp_observing()) tsmpi_hb_acquire(key_expr);             \
  }                                                               \
  void leave(__VA_ARGS__) {                                       \
    if (gomp_observing()) tsmpi_hb_release(key_expr);             \
    next(g_##leave, #leave)(TSMPI_ARGS);                          \
  }
#define TSMPI_ARGS
TSMPI_LOCK_PAIR(GOMP_critical_start, GOMP_critical_end, VoidFn, &g_unnamed_critical, void)
TSMPI_LOCK_PAIR(GOMP_atomic_start, GOMP_atomic_end, VoidFn, &g_atomic, void)
TSMPI_LOCK_PAIR(GOMP_ordered_start, GOMP_ordered_end, VoidFn, tl_team ? &tl_team->ordered : &g_atomic, void)
#undef TSMPI_ARGS
#define TSMPI_ARGS p
TSMPI_LOCK_PAIR(GOMP_critical_name_start, GOMP_critical_name_end, NamedFn, p, void** p)
TSMPI_LOCK_PAIR(omp_set_lock, omp_unset_lock, LockFn, p, void* p)
TSMPI_LOCK_PAIR(omp_set_nest_lock, omp_unset_nest_lock, LockFn, p, void* p)
TSMPI_LOCK_PAIR(omp_set_lock_, omp_unset_lock_, LockFn, p, void* p)
TSMPI_LOCK_PAIR(omp_set_nest_lock_, omp_unset_nest_lock_, LockFn, p, void* p)
#undef TSMPI_ARGS

#define TSMPI_TEST_LOCK(name)                        \
  int name(void* p) {                                \
    int got = next(g_##name, #name)(p);              \
    if (got && gomp_observing()) tsmpi_hb_acquire(p); \
    return got;                                      \
  }
TSMPI_TEST_LOCK(omp_test_lock)
TSMPI_TEST_LOCK(omp_test_nest_lock)
TSMPI_TEST_LOCK(omp_test_lock_)
TSMPI_TEST_LOCK(omp_test_nest_lock_)

void GOMP_task(Body fn, void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align, bool if_clause,
               unsigned flags, void** depend, int priority, void* detach) {
  auto real = NEXT(GOMP_task, TaskFn);
  if (!gomp_observing()) return real(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach);
  auto* c = new Creation{fn, cpyfn, arg_size, tl_team, {}};
  if ((flags & kTaskFlagDepend) && depend) depend_addresses(depend, c->deps);
  creating(c, [&] { real(task_body, data, copy_block, arg_size, arg_align, if_clause, flags, depend, priority, detach); });
  release_ref(c);
}

void GOMP_taskloop(Body fn, void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align, unsigned flags,
                   unsigned long num_tasks, int priority, long start, long end, long step) {
  taskloop<long>(NEXT(GOMP_taskloop, TaskloopFn<long>), fn, data, cpyfn, arg_size, arg_align, flags, num_tasks,
                 priority, start, end, step);
}

void GOMP_taskloop_ull(Body fn, void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align,
                       unsigned flags, unsigned long num_tasks, int priority, unsigned long long start,
                       unsigned long long end, unsigned long long step) {
  taskloop<unsigned long long>(NEXT(GOMP_taskloop_ull, TaskloopFn<unsigned long long>), fn, data, cpyfn, arg_size,
                               arg_align, flags, num_tasks, priority, start, end, step);
}

void GOMP_taskwait(void) {
  NEXT(GOMP_taskwait, VoidFn)();
  if (gomp_observing() && tl_team) tsmpi_hb_acquire(&tl_team->tasks);
}

void GOMP_taskgroup_end(void) {
  NEXT(GOMP_taskgroup_end, VoidFn)();
  if (gomp_observing() && tl_team) tsmpi_hb_acquire(&tl_team->tasks);
}

}  // extern "C"
