// How a thread waits for something another thread or process must do (seed 000 §4.6): spin
// briefly, then yield, then sleep with exponential backoff up to a bound. On oversubscribed
// 2-core machines spinning alone starves the thread that would make progress. Yielding goes on
// for kYieldNs before the first sleep: a sleep lasts at least the kernel's timer slack (50 us),
// which would double the latency of a 64 KiB message (bench/overhead.c in serialize mode),
// while sched_yield hands the core to any thread that can use it.
// Sleeps stop doubling at 1 ms. With a 200 us bound, the waiters of the lock2d and helper probe
// policies (each wake-up an MPI_Iprobe, so a pass through the MPI's progress engine, which
// itself yields when oversubscribed) woke 5000 times a second each; in a job that is a session
// of its own (setsid, as batch systems start jobs) Linux 6.x's scheduler then left other
// processes runnable but unscheduled for 2-40 s at a time, mpiexec's own among them (a job
// ending 30 s after MPI_Abort: tests/mpi/faults.c). At 1 ms, no such stall in 40 runs.
#pragma once
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstdint>

#include "runtime/os.h"

namespace tsmpi {

class Backoff {
 public:
  // Short spins, many of them: a pause costs up to ~140 cycles, and a waiter that spins 64 of
  // them between tests notices a message microseconds late (ping-pong in serialize mode).
  static constexpr unsigned kSpins = 64;
  static constexpr unsigned kMaxPausesPerSpin = 4;
  static constexpr std::int64_t kYieldNs = 100'000;
  static constexpr long kFirstSleepNs = 2'000;
  static constexpr long kMaxSleepNs = 1'000'000;

  void pause() {
    pause([](long ns) {
      timespec ts{0, ns};
      nanosleep(&ts, nullptr);
    });
  }
  // The same steps, with the sleeps done by `sleep_for(ns)`: a waiter that can be woken early
  // (a futex with a timeout) sleeps there instead.
  template <class SleepFor>
  void pause(SleepFor&& sleep_for) {
    if (round_ < kSpins) {
      for (unsigned i = 0; i < std::min(1u << std::min(round_, 8u), kMaxPausesPerSpin); ++i) __builtin_ia32_pause();
      ++round_;
    } else if (yielding()) {
      sched_yield();
    } else {
      sleep_for(sleep_ns_);
      sleep_ns_ = std::min(sleep_ns_ * 2, kMaxSleepNs);
    }
  }

 private:
  bool yielding() {
    if (sleeping_) return false;
    if (yield_start_ == 0) yield_start_ = monotonic_ns();
    else if (monotonic_ns() - yield_start_ > kYieldNs) sleeping_ = true;
    return !sleeping_;
  }

  unsigned round_ = 0;
  bool sleeping_ = false;
  std::int64_t yield_start_ = 0;
  long sleep_ns_ = kFirstSleepNs;
};

}  // namespace tsmpi
