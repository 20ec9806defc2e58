// How a thread-rank waits for another thread of its process: spin briefly (a peer on another
// core answers within a few hundred nanoseconds), then yield the core for a while (on an
// oversubscribed machine the peer may need this core to answer at all), then park in the kernel
// on a futex until woken. Seed 002's cheap wait/signal: the waker makes a system call only when
// someone sleeps.
#pragma once
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "runtime/config.h"
#include "runtime/os.h"

namespace tsmpi::ranks {

// How long a waiter spins before it yields, at most: long while the process's thread-ranks fit
// on the cores it may run on (the peer runs at the same time and answers within microseconds; a
// yield or a sleep would cost a scheduler round trip per message), short when they outnumber
// them (the peer may need this core). Set at MPIX_Threadcomm_init.
extern std::atomic<std::int64_t> g_spin_ns;
// How many times a waiter yields the core after its spin before it sleeps in the kernel: many
// while the thread-ranks fit on the cores (a yield on a core nobody else wants returns at once,
// and a sleeper's wake-up costs tens of microseconds: with 64, a 1 MiB ping-pong, whose every
// wait outlasts the spin, measured 7.9 GB/s against 13.5-16.0 with 2048), few when they
// outnumber the cores (yielders would take turns with the thread that has work). Set with
// g_spin_ns.
extern std::atomic<int> g_yields;
// Each thread adapts below that bound, as adaptive mutexes do: a wait that its spin ended
// doubles the thread's next spin, one that had to yield halves it. On a machine whose other
// load takes the peer's core, spinning stops wasting the time slice the peer needs.
inline constexpr std::int64_t kMinSpinNs = 500;
extern constinit TSMPI_TLS std::int64_t tl_spin_ns;

// Spins, then yields, while `pending()`; false if it is still pending after that.
template <class Pending>
bool spin_then_yield(Pending&& pending) {
  for (int i = 0; i < 64; ++i) {
    if (!pending()) return true;
    __builtin_ia32_pause();
  }
  const std::int64_t bound = g_spin_ns.load(std::memory_order_relaxed);
  if (tl_spin_ns <= 0 || tl_spin_ns > bound) tl_spin_ns = bound;
  const std::int64_t start = monotonic_ns();
  while (monotonic_ns() - start < tl_spin_ns) {
    for (int i = 0; i < 32; ++i) {
      if (!pending()) {
        tl_spin_ns = std::min(tl_spin_ns * 2, bound);
        return true;
      }
      __builtin_ia32_pause();
    }
  }
  tl_spin_ns = std::max(tl_spin_ns / 2, kMinSpinNs);
  for (int i = 0, n = g_yields.load(std::memory_order_relaxed); i < n; ++i) {
    if (!pending()) return true;
    sched_yield();
  }
  return !pending();
}

// A lock for critical sections of a few dozen instructions (a mailbox's match): spins, then
// yields, never sleeps in the kernel. std::mutex made the receiver and its sender meet in
// futex system calls on every message when they collided.
class SpinLock {
 public:
  void lock() {
    for (unsigned i = 0; !try_lock(); ++i) {
      if (i < 128) __builtin_ia32_pause();
      else sched_yield();  // the holder may need this core
    }
  }
  bool try_lock() {
    return !held_.load(std::memory_order_relaxed) && !held_.exchange(true, std::memory_order_acquire);
  }
  void unlock() { held_.store(false, std::memory_order_release); }
  // For a Dekker-style hand-off (mailbox.h): the holder releases and then reads another flag; a
  // second thread writes that flag and then reads whether the lock is held. seq_cst on both
  // sides means one of the two sees the other.
  void unlock_then_look() { held_.store(false, std::memory_order_seq_cst); }
  bool held() const { return held_.load(std::memory_order_seq_cst); }

 private:
  std::atomic<bool> held_{false};
};

// A one-shot completion flag: 0 pending, 1 done, 2 pending with a sleeper, 3 pending with a
// sleeper that kick() woke.
class Done {
 public:
  bool is() const { return word_.load(std::memory_order_acquire) == 1; }
  // seq_cst: requests.cpp's part_done reads whether any request was promoted right after; and
  // sleep_while's caller orders its own flag against the sleeper mark.
  void set() {
    if (word_.exchange(1, std::memory_order_seq_cst) == 2) futex_wake(word_);
  }
  void reset() { word_.store(0, std::memory_order_relaxed); }
  // set() for a flag no other thread can see yet: a plain store. A read-modify-write would wait
  // for the thread's earlier stores (a message just published to another core) to get there.
  void set_unseen() { word_.store(1, std::memory_order_release); }
  // Sleeps in the kernel while pending and `keep_sleeping()`, checked after the sleeper mark is
  // set, so a caller that clears the condition and then kick()s never misses this sleeper.
  // Returns when set, kicked, or the condition is false; leaves the flag pending or done.
  template <class Condition>
  void sleep_while(Condition&& keep_sleeping) {
    std::uint32_t s = 0;
    if (!word_.compare_exchange_strong(s, 2, std::memory_order_seq_cst) && s != 2) {
      if (s == 3) word_.compare_exchange_strong(s, 0, std::memory_order_relaxed);
      return;
    }
    while (keep_sleeping() && word_.load(std::memory_order_acquire) == 2) futex_wait(word_, 2);
    for (std::uint32_t w = word_.load(std::memory_order_relaxed); w == 2 || w == 3;)
      if (word_.compare_exchange_weak(w, 0, std::memory_order_relaxed)) break;
  }
  // Wakes a sleep_while sleeper without completing the flag.
  void kick() {
    std::uint32_t s = 2;
    if (word_.compare_exchange_strong(s, 3, std::memory_order_seq_cst)) futex_wake(word_);
  }
  // Blocks until set() (for waits no other process can satisfy).
  void wait() {
    if (spin_then_yield([&] { return !is(); })) return;
    park();
  }
  // Sleeps in the kernel until set() or for about `ns`; true when set. The sleeper mark stays,
  // for park() to sleep on.
  bool park_for(long ns) {
    std::uint32_t s = 0;
    if (!word_.compare_exchange_strong(s, 2, std::memory_order_seq_cst) && s == 1) return true;
    if (word_.load(std::memory_order_acquire) == 2) futex_wait(word_, 2, ns);
    return is();
  }
  // Sleeps in the kernel until set(), without spinning first.
  void park() {
    std::uint32_t s = 0;
    if (!word_.compare_exchange_strong(s, 2, std::memory_order_acq_rel) && s == 1) return;
    while (word_.load(std::memory_order_acquire) == 2) futex_wait(word_, 2);
  }

 private:
  std::atomic<std::uint32_t> word_{0};
};

// A counter threads wait on to change (arrivals at a mailbox, generations of a team).
class Gate {
 public:
  std::uint32_t now() const { return value_.load(std::memory_order_acquire); }
  void advance() {
    value_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) != 0) futex_wake(value_);
  }
  void store_and_wake(std::uint32_t v) {
    value_.store(v, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) != 0) futex_wake(value_);
  }
  // Blocks until the value has reached `target` (counted modulo 2^32).
  void wait_until(std::uint32_t target) {
    for (std::uint32_t v = now(); static_cast<std::int32_t>(v - target) < 0; v = now()) wait_past(v);
  }
  // Blocks until the value differs from `seen`.
  void wait_past(std::uint32_t seen) {
    if (spin_then_yield([&] { return now() == seen; })) return;
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    while (value_.load(std::memory_order_seq_cst) == seen) futex_wait(value_, seen);
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  }

 private:
  std::atomic<std::uint32_t> value_{0};
  std::atomic<std::uint32_t> sleepers_{0};
};

}  // namespace tsmpi::ranks
