#include "runtime/activation.h"

#include "runtime/function_table.h"

namespace tsmpi {

std::atomic<std::uint8_t> fn_active[fn::kCount] = {};

void activate(const Options& o) {
  for (int i = 0; i < fn::kCount; ++i) {
    // Statistics count every call. Protections (serialize mode, probe policies, checks) add
    // their categories and families here as they are built.
    bool active = o.stats;
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
