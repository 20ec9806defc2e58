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

bool serialize_mode(const Options& o) { return o.underlying_level != UnderlyingLevel::Multiple; }

namespace {
// Functions that complete or free requests: a probe policy needs them only for persistent
// receives (activate_request_completion).
bool completes_requests(const FunctionInfo& f) {
  return f.family == Family::kWait || f.family == Family::kTest || f.family == Family::kCancel ||
         std::string_view(f.name) == "MPI_Request_free";
}
}  // namespace

void activate(const Options& o) {
  g_count_calls = o.stats > 0;
  g_count_functions = o.stats == 2;
  lifetime::init(o);
  checks::g_on = o.check != CheckMode::Off;
  checks::init(o.check_order == CheckOrder::HappensBefore);
  for (int i = 0; i < fn::kCount; ++i) {
    // Statistics count every call and the hang watchdog must see every call a thread may block
    // in; serialize mode takes every function that needs its lock; a probe policy takes the
    // receive-side families; object lifetime, checking mode and the attached buffer's lock the
    // functions their rules select.
    // MPI processes of address spaces: the MPI's errors go to the calling process's handler.
    const bool policy = matching::matching() && kFunctions[i].matched && !completes_requests(kFunctions[i]);
    const bool others = o.stats || o.hang_timeout > 0 || o.asp > 0 ||
                        (serialize_mode(o) && kFunctions[i].serial != Strategy::kUnlocked) || lifetime::needs(i) ||
                        (checks::g_on && checks::needs(i)) || own::applies(static_cast<fn::Id>(i));
    // Only the probe policy: the wrapper calls its handler directly (no statistics, watchdog,
    // serialize mode, object lifetime or checking mode to apply). Object lifetime and the
    // thread-rank engine switch such a function to the hooked path when they start needing it.
    const bool policy_only = policy && !others && !serialize_mode(o) && !checks::g_on;
    fn_active[i].store(policy_only ? kPolicyOnly : (policy || others) ? kHooked : kPassThrough,
                       std::memory_order_relaxed);
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
