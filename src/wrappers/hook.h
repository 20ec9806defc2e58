// The hooked path of a generated wrapper, one mechanism per category (as in Score-P's
// wrapgen2, where each behaviour is a task applied to a group of functions). A wrapper reaches
// here only when fn_active says its function has work to do.
#pragma once
#include "fn_ids.h"
#include "runtime/category.h"
#include "runtime/stats.h"
#include "runtime/thread_state.h"

namespace tsmpi {

template <Category C>
struct Hook {
  template <class Pmpi>
  static auto call(fn::Id /*id*/, Pmpi&& pmpi) {
    ThreadState& t = tl_thread;
    if (t.depth != 0) return pmpi();  // called from inside the MPI: straight through
    bump(thread_counters(t).calls[static_cast<int>(C)]);
    NestingScope inside(t);
    return pmpi();
  }
};

}  // namespace tsmpi
