// A call that reads one object (MPI_Comm_rank, MPI_Type_size, MPI_Info_get, ...) when object
// lifetime is the only protection it needs (fn_active's kLifetimeRead, runtime/activation_rules.h):
// the generated wrapper takes object lifetime's fast read here with the handle it was given,
// not through the hook (wrappers/hook.h), whose generic description of the arguments and
// layers cost more than the call itself (issue 17: a tracked handle cost +30 ns). What it keeps
// of the hook: a call from inside the MPI goes straight through, calls made inside it are
// inside it, and whatever the fast read cannot settle (a lock not biased, a freed handle,
// thread-rank communicators in the process) goes the hooked way.
#pragma once
#include <cstdint>

#include "locking/object_lifetime.h"
#include "ranks/route.h"
#include "runtime/config.h"
#include "runtime/thread_state.h"

namespace tsmpi::lifetime {

template <class Pmpi, class Hooked>
int read_one(Kind kind, std::uintptr_t bits, Pmpi&& pmpi, Hooked&& hooked) {
  ThreadState& t = tl_thread;
  if (TSMPI_UNLIKELY(t.depth != 0)) return pmpi();
  if (TSMPI_UNLIKELY(ranks::live())) return hooked();
  FastRead fast;
  if (fast.begin_one(kind, bits) == FastRead::kLock) return hooked();
  NestingScope inside(t);
  return pmpi();
}

}  // namespace tsmpi::lifetime
