#include "matching/probe_policy.h"

#include "matching/comm_table.h"
#include "matching/helper_policy.h"
#include "matching/lock2d_policy.h"
#include "matching/match_stats.h"
#include "matching/policies.h"
#include "matching/reservations.h"

namespace tsmpi::matching {

Policy g_policy = Policy::kOff;
MatchStats g_match_stats;
Policy g_started = Policy::kOff;  // for the statistics printed after finish_policy

namespace {
const char* policy_name(Policy p) {
  switch (p) {
    case Policy::kMprobe: return "mprobe";
    case Policy::kLock2d: return "lock2d";
    case Policy::kHelper: return "helper";
    default: return "off";
  }
}
}  // namespace

void start_policy(const Options& o, bool threads) {
  switch (o.probe) {
    case ProbePolicy::Mprobe: g_policy = Policy::kMprobe; break;
    case ProbePolicy::Lock2d: g_policy = Policy::kLock2d; break;
    case ProbePolicy::Helper: g_policy = Policy::kHelper; break;
    case ProbePolicy::Off: g_policy = Policy::kOff; break;
  }
  if (!threads) g_policy = Policy::kOff;
  g_started = g_policy;
  if (g_policy != Policy::kOff) comm_keyval_init();
}

bool finish_policy(const Options& o, const char* rank_label) {
  if (g_policy == Policy::kOff) return true;
  // Also under mprobe: its MPI_Isendrecv of a probed message may have started the helper thread.
  helper_policy::stop();
  bool report = o.check != CheckMode::Off;
  std::size_t left = 0;
  if (g_policy == Policy::kLock2d) left = lock2d_policy::finish_held(stderr, rank_label, report);
  else left = finish_unreceived(stderr, rank_label, report);
  g_policy = Policy::kOff;
  comm_keyval_free();
  return !(left && o.check == CheckMode::Abort);
}

void retire_comm(std::uintptr_t bits) {
  if (g_policy == Policy::kLock2d) lock2d_policy::retire(bits);
  if (g_policy == Policy::kHelper) helper_policy::retire(bits);
}

std::string match_stats_line(const char* policy) {
  const MatchStats& s = g_match_stats;
  auto v = [](const std::atomic<std::uint64_t>& c) { return std::to_string(c.load(std::memory_order_relaxed)); };
  std::string line = std::string("  probe: policy=") + policy + " reserved=" + v(s.reserved) +
                     " reprobes=" + v(s.reprobes) + " taken=" + v(s.taken) + " unreceived=" + v(s.unreceived);
  if (std::string(policy) == "lock2d")
    line += " lock_retries=" + v(s.lock_retries) + " polling_switches=" + v(s.polling_switches);
  if (std::string(policy) == "helper")
    line += " pulled=" + v(s.pulled) + " to_waiters=" + v(s.to_waiters) + " helper_sleeps=" + v(s.helper_sleeps);
  return line + "\n";
}

std::string policy_stats_line() {
  if (g_started == Policy::kOff) return "";
  return match_stats_line(policy_name(g_started));
}

}  // namespace tsmpi::matching
