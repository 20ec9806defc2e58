#include "locking/serialize_lock.h"

#include <chrono>
#include <thread>

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

bool try_lock_for(long long ns) {
  std::mutex& m = mpi_lock();
  if (m.try_lock()) return true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
  g_lock_waiters.fetch_add(1, std::memory_order_relaxed);
  bool got = false;
  while (!(got = m.try_lock()) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  g_lock_waiters.fetch_sub(1, std::memory_order_relaxed);
  return got;
}

constinit TSMPI_TLS bool tl_holds = false;

Guard::Guard() {
  std::mutex& m = mpi_lock();
  if (m.try_lock()) {
    tl_holds = true;
    return;
  }
  auto start = std::chrono::steady_clock::now();
  g_lock_waiters.fetch_add(1, std::memory_order_relaxed);
  m.lock();
  tl_holds = true;
  g_lock_waiters.fetch_sub(1, std::memory_order_relaxed);
  record_lock_wait(static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count()));
}

}  // namespace tsmpi::serial
