// How a thread waits for something another thread or process must do (seed 000 §4.6): spin
// briefly, then yield, then sleep with exponential backoff up to a bound. On oversubscribed
// 2-core machines spinning alone starves the thread that would make progress.
#pragma once
#include <sched.h>
#include <time.h>

#include <algorithm>

namespace tsmpi {

class Backoff {
 public:
  static constexpr unsigned kSpins = 16;
  static constexpr unsigned kYields = 16;
  static constexpr long kFirstSleepNs = 2'000;
  static constexpr long kMaxSleepNs = 200'000;

  void pause() {
    if (round_ < kSpins) {
      for (unsigned i = 0; i < 1u << std::min(round_, 6u); ++i) __builtin_ia32_pause();
    } else if (round_ < kSpins + kYields) {
      sched_yield();
    } else {
      timespec ts{0, sleep_ns_};
      nanosleep(&ts, nullptr);
      sleep_ns_ = std::min(sleep_ns_ * 2, kMaxSleepNs);
    }
    ++round_;
  }
 private:
  unsigned round_ = 0;
  long sleep_ns_ = kFirstSleepNs;
};

}  // namespace tsmpi
