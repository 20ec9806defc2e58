// Serialize mode's one lock: every entry into an MPI that takes no locks of its own
// (TSMPI_UNDERLYING_LEVEL=single|serialized) goes through it, never across a blocking wait.
#pragma once
#include <atomic>
#include <mutex>

#include "runtime/config.h"

namespace tsmpi::serial {

extern std::atomic<bool> g_enabled;
inline bool enabled() { return g_enabled.load(std::memory_order_relaxed); }

std::mutex& mpi_lock();
// Threads blocked on the lock right now (the poller of wait_room.h lets them in).
int lock_waiters();
// Takes the lock if it can within `ns` nanoseconds, counted among its waiters meanwhile (so a
// poller spinning under it lets this thread in); false if it could not.
bool try_lock_for(long long ns);

// Whether the calling thread holds the lock through a Guard.
extern constinit TSMPI_TLS bool tl_holds;

// Holds the lock for its lifetime; time spent waiting for it goes to the statistics.
class Guard {
 public:
  Guard();
  ~Guard() {
    tl_holds = false;
    mpi_lock().unlock();
  }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;
};

// f() under the lock in serialize mode, as it is otherwise: for the short local MPI calls
// tsmpi makes itself (queries, error handler calls, attribute deletion). A thread that holds
// it already runs f() as it is: a program's attribute callback, run by the MPI inside such a
// call, may call the thread-rank engine, which makes calls of this kind.
template <class F>
auto locked(F&& f) {
  if (!enabled() || tl_holds) return f();
  Guard g;
  return f();
}

}  // namespace tsmpi::serial
