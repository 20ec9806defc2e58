// Which path each wrapper takes, from what the protections need of its function: the decision
// activate() makes at MPI_Init (runtime/activation.h) and tsmpi-info --function reports
// (runtime/describe.h). Pure functions of the table and the options.
#pragma once
#include <cstdint>

#include "runtime/function_table.h"
#include "runtime/options.h"

namespace tsmpi {

// What a wrapper does (fn_active's values):
enum FnMode : std::uint8_t {
  kPassThrough = 0,  // nothing: it calls PMPI directly
  kHooked = 1,       // the hooked path (wrappers/hook.h): every protection its rules select
  kPolicyOnly = 2,   // a receive-side function that only the probe policy needs: its handler is
                     // called straight from the wrapper (matching/policy_only.h), without the hook
  kLifetimeRead = 3, // a call that reads one object and needs only object lifetime: its fast read
                     // straight from the wrapper (wrappers/lifetime_read.h), without the hook
};

// Whether the options ask for serialize mode (underlying level below multiple).
bool serialize_mode(const Options& o);

// Functions that complete or free requests: a probe policy needs them only for persistent
// receives (activate_request_completion).
bool completes_requests(const FunctionInfo& f);

// What the protections want of one function.
struct Wants {
  bool policy = false;    // the probe policy (a matched family while matching is on)
  bool lifetime = false;  // object lifetime's rule selects it now (lifetime::needs)
  bool checks = false;    // checking mode is on and its rules select it
  bool own = false;       // the attached buffer's lock (Own)
  bool fast_read = false; // object lifetime may take its fast read (lifetime::g_fast_read)
};
FnMode mode_for(const FunctionInfo& f, const Options& o, const Wants& w);

}  // namespace tsmpi
