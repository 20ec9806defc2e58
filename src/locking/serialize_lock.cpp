#include "locking/serialize_lock.h"

#include <chrono>

#include "runtime/stats.h"

namespace tsmpi::serial {

std::atomic<bool> g_enabled{false};

std::mutex& mpi_lock() {
  static std::mutex m;
  return m;
}

Guard::Guard() {
  std::mutex& m = mpi_lock();
  if (m.try_lock()) return;
  auto start = std::chrono::steady_clock::now();
  m.lock();
  record_lock_wait(static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count()));
}

}  // namespace tsmpi::serial
