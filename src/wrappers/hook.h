// The hooked path of a generated wrapper. A wrapper reaches here only when fn_active says its
// function has work to do: count it, mark the thread as inside the MPI, and in serialize mode
// carry it out by its strategy (src/locking/serialize.h). Protections attach here by category
// and strategy, in the manner of Score-P's wrapgen2 tasks.
#pragma once
#include <utility>

#include "fn_ids.h"
#include "locking/serialize.h"
#include "matching/handlers.h"
#include "matching/probe_policy.h"
#include "runtime/category.h"
#include "runtime/handles.h"
#include "runtime/stats.h"
#include "runtime/strategy.h"
#include "runtime/thread_state.h"
#include "wrappers/call_shapes.h"

namespace tsmpi {

extern bool g_count_calls;  // TSMPI_STATS=1

template <Category C, Strategy S>
struct Hook {
  template <class Pmpi, class Extra>
  static auto call(fn::Id id, Pmpi&& pmpi, const Objects& objects, Extra&& extra) {
    ThreadState& t = tl_thread;
    if (t.depth != 0) return pmpi();  // called from inside the MPI: straight through
    if (g_count_calls) bump(thread_counters(t).calls[static_cast<int>(C)]);
    NestingScope inside(t);
    if (!serial::enabled()) return pmpi();
    return serial::run<S>(id, std::forward<Pmpi>(pmpi), objects, std::forward<Extra>(extra));
  }

  // Receive-side functions (src/matching/handlers.h): with a probe policy on, `matched` gets the
  // call as it would run without one and decides what to do.
  template <class Pmpi, class Extra, class Matched>
  static auto call(fn::Id id, Pmpi&& pmpi, const Objects& objects, Extra&& extra, Matched&& matched) {
    ThreadState& t = tl_thread;
    if (t.depth != 0) return pmpi();
    if (g_count_calls) bump(thread_counters(t).calls[static_cast<int>(C)]);
    NestingScope inside(t);
    auto original = [&]() -> int {
      if (!serial::enabled()) return pmpi();
      return serial::run<S>(id, pmpi, objects, extra);
    };
    if (matching::matching()) return matched(original);  // a policy, or serialize mode's PROC_NULL fix
    return original();
  }
};

}  // namespace tsmpi
