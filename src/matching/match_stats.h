// Process-wide counters of the probe policies, printed with TSMPI_STATS=1. Counted only then:
// threads share these cache lines, and a probe→receive pair would otherwise pay two contended
// read-modify-writes.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>

namespace tsmpi {
extern bool g_count_calls;  // TSMPI_STATS=1 (runtime/activation.cpp)
}

namespace tsmpi::matching {

struct MatchStats {
  std::atomic<std::uint64_t> reserved{0};     // probes that matched and reserved a message
  std::atomic<std::uint64_t> reprobes{0};     // probes answered from a reservation
  std::atomic<std::uint64_t> taken{0};        // receives that took a reserved message
  std::atomic<std::uint64_t> unreceived{0};   // reserved messages never received (at finalize)
  std::atomic<std::uint64_t> lock_retries{0}; // lock2d: acquisitions that found an overlapping key held
  std::atomic<std::uint64_t> polling_switches{0};  // lock2d: communicators switched to polling
  std::atomic<std::uint64_t> pulled{0};       // helper: messages taken out of the MPI
  std::atomic<std::uint64_t> to_waiters{0};   // helper: of those, matched to a posted receive or probe
  std::atomic<std::uint64_t> helper_sleeps{0};  // helper: times the helper thread went idle
};
extern MatchStats g_match_stats;

inline void count(std::atomic<std::uint64_t>& c, std::uint64_t by = 1) {
  if (g_count_calls) c.fetch_add(by, std::memory_order_relaxed);
}

// One line for the statistics block.
std::string match_stats_line(const char* policy);

}  // namespace tsmpi::matching
