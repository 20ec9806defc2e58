// Every thread that has called MPI through tsmpi, with the MPI call it is inside now: what the
// checking mode names in its reports and what the hang watchdog prints.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <cstdint>

#include "diagnostics/backtrace.h"
#include "runtime/config.h"
#include "runtime/handles.h"

namespace tsmpi::diag {

// The call a thread is inside. Written only by its thread; read by others without a lock (a
// report may see a call that has just ended, never a torn one: `fn` is published last).
struct CurrentCall {
  std::atomic<int> fn{-1};                // fn::Id, -1 when not inside MPI
  std::atomic<std::uint64_t> since_ns{0};  // steady clock when it began
  HandleRef object;                       // the communicator, window or file it works on
  int peer = kNoPeer;                      // its source or dest argument, if it has one
  int thread_rank = -1;                    // the thread's rank in `object` when that is a thread-rank
                                           // communicator (src/ranks/introspect.h), else -1
};

struct ThreadInfo {
  int index = 0;   // 1, 2, ... in order of first MPI call (the main thread is usually 1)
  pid_t tid = 0;   // the kernel's thread id
  CurrentCall call;
  // Filled by the thread itself, in a signal handler, when the watchdog asks for its stack.
  Backtrace stack;
  std::atomic<int> stack_state{0};  // 0 idle, 1 asked, 2 written
};

// The calling thread's entry, made and registered on first use; unregistered when it ends.
// The pointer is an initial-exec thread-local (one %fs-relative load); the entry itself is a
// thread_local with a destructor, reached only on the first call.
extern constinit TSMPI_TLS ThreadInfo* tl_info;
ThreadInfo& register_this_thread();
inline ThreadInfo& this_thread() {
  if (TSMPI_LIKELY(tl_info != nullptr)) return *tl_info;
  return register_this_thread();
}

// Calls f(ThreadInfo&) for every live registered thread, under the registry's lock (a thread
// ending waits until it is released).
template <class F>
void for_each_thread(F&& f);

std::uint64_t now_ns();  // steady clock

// Set while something reads CurrentCall (hang watchdog): the hooked path records calls only then.
extern bool g_track_calls;

// Records the call for its duration (the hooked path, when g_track_calls).
class CallScope {
 public:
  CallScope(int fn, const HandleRef& object, int peer, int thread_rank = -1) : t_(this_thread()) {
    t_.call.since_ns.store(now_ns(), std::memory_order_relaxed);
    t_.call.object = object;
    t_.call.peer = peer;
    t_.call.thread_rank = thread_rank;
    t_.call.fn.store(fn, std::memory_order_release);
  }
  ~CallScope() { t_.call.fn.store(-1, std::memory_order_release); }
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

 private:
  ThreadInfo& t_;
};

}  // namespace tsmpi::diag

#include "diagnostics/threads_impl.h"
