#include "ranks/ranks_stats.h"

namespace tsmpi::ranks {

Counters g_counters;

std::string stats_line() {
  const Counters& c = g_counters;
  if (c.threadcomms.load() == 0 && c.address_space_processes.load() == 0) return "";
  auto v = [](const std::atomic<unsigned long long>& a) { return std::to_string(a.load(std::memory_order_relaxed)); };
  return "  ranks: threadcomms=" + v(c.threadcomms) + " asp=" + v(c.address_space_processes) + " local_messages=" + v(c.local_messages) +
         " local_bytes=" + v(c.local_bytes) + " remote_messages=" + v(c.remote_messages) +
         " remote_bytes=" + v(c.remote_bytes) + " collectives=" + v(c.collectives) + "\n";
}

}  // namespace tsmpi::ranks
