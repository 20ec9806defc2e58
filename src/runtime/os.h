// What tsmpi's waiting code asks of the operating system, in one place: the monotonic clock,
// the cores the process may run on, and futex waits and wakes on a 32-bit atomic word.
#pragma once
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>

namespace tsmpi {

inline std::int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// The cores the process may run on (mpiexec often binds a process to one), at least 1.
inline int usable_cores() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) > 0) return CPU_COUNT(&allowed);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

// Sleeps while `word` holds `expected`, at most `timeout_ns` if it is not negative.
inline void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, long timeout_ns = -1) {
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
  timespec ts{timeout_ns / 1'000'000'000, timeout_ns % 1'000'000'000};
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected,
          timeout_ns < 0 ? nullptr : &ts, nullptr, 0);
}
inline void futex_wake(std::atomic<std::uint32_t>& word, int waiters = INT_MAX) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, waiters, nullptr, nullptr, 0);
}

}  // namespace tsmpi
