#include "runtime/activation.h"

#include "matching/probe_policy.h"
#include <mutex>
#include <string_view>

#include "checks/checks.h"
#include "locking/buffer_lock.h"
#include "locking/object_lifetime.h"
#include "runtime/function_table.h"
#include "runtime/stats.h"

namespace tsmpi {

std::atomic<std::uint8_t> fn_active[fn::kCount] = {};
bool g_count_calls = false;

void activate(const Options& o) {
  g_count_calls = o.stats > 0;
  g_count_functions = o.stats == 2;
  lifetime::init(o);
  checks::g_on = o.check != CheckMode::Off;
  checks::init(o.check_order == CheckOrder::HappensBefore);
  for (int i = 0; i < fn::kCount; ++i) {
    Wants w;
    w.policy = matching::matching() && kFunctions[i].matched && !completes_requests(kFunctions[i]);
    w.lifetime = lifetime::needs(i);
    w.checks = checks::g_on && checks::needs(i);
    w.own = own::applies(static_cast<fn::Id>(i));
    w.fast_read = lifetime::g_fast_read[i];
    fn_active[i].store(mode_for(kFunctions[i], o, w), std::memory_order_relaxed);
    // When object lifetime switches a waiting call on (the program's first object of its kinds).
    Wants on = w;
    on.lifetime = true;
    lifetime::g_mode_when_on[i] = mode_for(kFunctions[i], o, on);
  }
}

void activate_request_completion() {
  // call_once, not a flag tested first: a second thread making a persistent receive must not
  // go on (and reach MPI_Wait through a still pass-through wrapper) before every completion
  // function is switched on.
  static std::once_flag once;
  std::call_once(once, [] {
    for (int i = 0; i < fn::kCount; ++i)
      if (kFunctions[i].matched && completes_requests(kFunctions[i])) fn_active[i].store(kHooked, std::memory_order_release);
  });
}

void deactivate() {
  for (auto& a : fn_active) a.store(kPassThrough, std::memory_order_relaxed);
}

int active_count() {
  int n = 0;
  for (const auto& a : fn_active) n += a.load(std::memory_order_relaxed) != kPassThrough;
  return n;
}

}  // namespace tsmpi
