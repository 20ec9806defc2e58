// The request slots a call reads (waits, tests, frees, starts): every element of its request
// arguments that are not outputs. What request_waiters, tsan_annotations and
// unordered_completions walk.
#pragma once
#include "runtime/handles.h"

namespace tsmpi::checks {

// Calls f(handle argument, index) for each slot.
template <class F>
void for_each_request(const CallArgs& args, F&& f) {
  for (int i = 0; i < args.handle_count; ++i) {
    const HandleArg& h = args.handles[i];
    if (h.kind != Kind::Request || h.use == Use::Out || h.use == Use::ArrayOut || h.count < 0) continue;
    for (int j = 0; j < h.count; ++j) f(h, j);
  }
}

}  // namespace tsmpi::checks
