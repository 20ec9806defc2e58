#include "runtime/activation.h"

#include "matching/probe_policy.h"
#include "runtime/function_table.h"

namespace tsmpi {

std::atomic<std::uint8_t> fn_active[fn::kCount] = {};
bool g_count_calls = false;

bool serialize_mode(const Options& o) { return o.underlying_level != UnderlyingLevel::Multiple; }

void activate(const Options& o) {
  g_count_calls = o.stats;
  for (int i = 0; i < fn::kCount; ++i) {
    // Statistics count every call; serialize mode takes every function that needs its lock;
    // a probe policy takes the receive-side families.
    bool active = o.stats || (serialize_mode(o) && kFunctions[i].serial != Strategy::kUnlocked) ||
                  (matching::matching() && kFunctions[i].matched);
    fn_active[i].store(active ? 1 : 0, std::memory_order_relaxed);
  }
}

void deactivate() {
  for (auto& a : fn_active) a.store(0, std::memory_order_relaxed);
}

int active_count() {
  int n = 0;
  for (const auto& a : fn_active) n += a.load(std::memory_order_relaxed);
  return n;
}

}  // namespace tsmpi
