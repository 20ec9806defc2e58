#include "runtime/activation_rules.h"

#include <string_view>

namespace tsmpi {

bool serialize_mode(const Options& o) { return o.underlying_level != UnderlyingLevel::Multiple; }

bool completes_requests(const FunctionInfo& f) {
  return f.family == Family::kWait || f.family == Family::kTest || f.family == Family::kCancel ||
         std::string_view(f.name) == "MPI_Request_free";
}

FnMode mode_for(const FunctionInfo& f, const Options& o, const Wants& w) {
  // Statistics count every call and the hang watchdog must see every call a thread may block
  // in; serialize mode takes every function that needs its lock; a probe policy takes the
  // receive-side families; object lifetime, checking mode and the attached buffer's lock the
  // functions their rules select.
  // MPI processes of address spaces: the MPI's errors go to the calling process's handler.
  const bool besides_policy_and_lifetime = o.stats || o.hang_timeout > 0 || o.asp > 0 ||
                                          (serialize_mode(o) && f.serial != Strategy::kUnlocked) || w.checks ||
                                          w.own;
  // One protection alone lets the wrapper skip the hook, unless serialize or checking mode is on
  // (they need every call's bookkeeping). Only the probe policy: the wrapper calls its handler
  // directly. Only object lifetime, on a call that reads one object it names as a single handle
  // (the generator marks such functions one_read): the wrapper takes the fast read itself.
  // Object lifetime and the thread-rank engine switch such a function to the hooked path when
  // they start needing it.
  const bool may_skip_hook = !besides_policy_and_lifetime && !serialize_mode(o) && o.check == CheckMode::Off;
  if (may_skip_hook && w.policy && !w.lifetime) return kPolicyOnly;
  if (may_skip_hook && !w.policy && w.lifetime && w.fast_read && f.one_read) return kLifetimeRead;
  return (w.policy || w.lifetime || besides_policy_and_lifetime) ? kHooked : kPassThrough;
}

}  // namespace tsmpi
