// The receive-side functions when the probe policy is the only protection they need (no
// statistics, hang watchdog, serialize mode, object lifetime or checking mode: fn_active's
// kPolicyOnly, runtime/activation.h): the generated wrapper calls the function's handler
// (matching/handlers.h) through this, not through the hook (wrappers/hook.h), whose generic
// argument description, layers and checks cost the mprobe policy a third of native MPI_Mprobe's
// instructions per probe -> receive. What it keeps of the hook: a call from inside the MPI goes
// straight through, and the calls the handler makes are inside it.
#pragma once
#include "runtime/config.h"
#include "runtime/thread_state.h"

namespace tsmpi::matching {

template <class Pmpi, class Handler>
int policy_only(Pmpi&& pmpi, Handler&& handler) {
  ThreadState& t = tl_thread;
  if (TSMPI_UNLIKELY(t.depth != 0)) return pmpi();
  NestingScope inside(t);
  return handler(pmpi);
}

}  // namespace tsmpi::matching
