// Call and lock-wait statistics (TSMPI_STATS=1), one counter block per thread so counting
// never contends; blocks are summed at MPI_Finalize.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "runtime/category.h"
#include "runtime/thread_state.h"

namespace tsmpi {

struct ThreadCounters {
  // Written only by the owning thread (load + store, no read-modify-write); read at finalize.
  std::atomic<std::uint64_t> calls[kCategoryCount] = {};
  std::atomic<std::uint64_t> lock_wait_ns{0};
  std::atomic<std::uint64_t> lock_waits{0};
  std::atomic<std::uint64_t>* per_function = nullptr;  // TSMPI_STATS=2: calls of each function
};

extern bool g_count_functions;  // TSMPI_STATS=2

ThreadCounters& make_thread_counters();  // registers a block for the calling thread

inline ThreadCounters& thread_counters(ThreadState& t) {
  if (TSMPI_UNLIKELY(t.counters == nullptr)) t.counters = &make_thread_counters();
  return *t.counters;
}

inline void bump(std::atomic<std::uint64_t>& c, std::uint64_t by = 1) {
  c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

// One call of function `fn` of category `category` by the calling thread (TSMPI_STATS >= 1).
inline void count_call(ThreadState& t, Category category, int fn) {
  ThreadCounters& c = thread_counters(t);
  bump(c.calls[static_cast<int>(category)]);
  if (c.per_function) bump(c.per_function[fn]);
}

// Called by tsmpi's locks (src/locking/) when a thread had to wait for one.
inline void record_lock_wait(std::uint64_t ns) {
  ThreadCounters& c = thread_counters(tl_thread);
  bump(c.lock_wait_ns, ns);
  bump(c.lock_waits);
}

struct StatsTotals {
  std::uint64_t calls[kCategoryCount] = {};
  std::vector<std::uint64_t> per_function;  // TSMPI_STATS=2, indexed by fn::Id
  std::uint64_t lock_wait_ns = 0;
  std::uint64_t lock_waits = 0;
  int threads = 0;
};
StatsTotals stats_totals();

// The block printed at MPI_Finalize; first line starts with "tsmpi". `extra` holds further
// indented lines from the protections in force (may be empty).
void print_stats(std::FILE* out, const char* rank_label, const char* extra = "");

}  // namespace tsmpi
