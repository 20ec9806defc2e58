// TSMPI_STATS for thread-ranks: threadcomms made, messages and bytes between thread-ranks of one
// process and between processes, collectives. Counted only with statistics on (one flag test
// otherwise); printed as the `ranks:` line at MPI_Finalize.
#pragma once
#include <atomic>
#include <cstddef>
#include <string>

namespace tsmpi {
extern bool g_count_calls;
}

namespace tsmpi::ranks {

struct Counters {
  std::atomic<unsigned long long> threadcomms{0}, address_space_processes{0}, local_messages{0}, local_bytes{0}, remote_messages{0},
      remote_bytes{0}, collectives{0};
};
extern Counters g_counters;

inline void count(std::atomic<unsigned long long>& c, unsigned long long n = 1) {
  if (g_count_calls) c.fetch_add(n, std::memory_order_relaxed);
}

// "  ranks: threadcomms=1 asp=0 local_messages=... \n" (asp: MPI processes in this address space),
// or "" when neither was made.
std::string stats_line();

}  // namespace tsmpi::ranks
