#include "locking/serialize_lock.h"

#include <chrono>

#include "runtime/stats.h"

namespace tsmpi::serial {

std::atomic<bool> g_enabled{false};

std::mutex& mpi_lock() {
  static std::mutex m;
  return m;
}

namespace {
std::atomic<int> g_lock_waiters{0};
}

int lock_waiters() { return g_lock_waiters.load(std::memory_order_relaxed); }

Guard::Guard() {
  std::mutex& m = mpi_lock();
  if (m.try_lock()) return;
  auto start = std::chrono::steady_clock::now();
  g_lock_waiters.fetch_add(1, std::memory_order_relaxed);
  m.lock();
  g_lock_waiters.fetch_sub(1, std::memory_order_relaxed);
  record_lock_wait(static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count()));
}

}  // namespace tsmpi::serial
