// The hooked path of a generated wrapper. A wrapper reaches here only when fn_active says its
// function has work to do: record the call for the hang watchdog, count it, mark the thread as
// inside the MPI, then, outermost first: the attached buffer's lock (Own), checking mode, object
// lifetime, the probe policy, and serialize mode's strategy (src/locking/serialize.h). Each
// protection is one mechanism applied to the functions its rule selects from the table, in the
// manner of Score-P's wrapgen2 tasks.
#pragma once
#include <type_traits>
#include <utility>

#include "checks/checks.h"
#include "diagnostics/threads.h"
#include "fn_ids.h"
#include "locking/buffer_lock.h"
#include "locking/object_lifetime.h"
#include "locking/serialize.h"
#include "matching/handlers.h"
#include "matching/probe_policy.h"
#include "ranks/calls.h"
#include "ranks/introspect.h"
#include "ranks/address_space.h"
#include "ranks/handle_space.h"
#include "ranks/route.h"
#include "runtime/category.h"
#include "runtime/handles.h"
#include "runtime/stats.h"
#include "runtime/strategy.h"
#include "runtime/thread_state.h"
#include "wrappers/call_shapes.h"

namespace tsmpi {

extern bool g_count_calls;  // TSMPI_STATS >= 1

// Marks a function the probe policies do not see.
struct Unmatched {};

// The thread-rank engine's direct entry, tested first by the hooked wrapper of every `engine` row
// that acts on a communicator (codegen/generate.py): a call on a thread-rank communicator goes to
// the engine as Hook::call's routing would send it, without the argument tables that the
// protections read, when nothing records or counts calls (the hang watchdog, checking mode under
// TSan, TSMPI_STATS take Hook::call's path).
inline bool direct_to_engine(std::uintptr_t comm) {
  return !g_count_calls && !diag::g_track_calls && ranks::in_space(comm);
}

// What the protections' path (protected_MPI_X, a function of its own so that the direct entry
// has a small frame) returned, passed through an empty asm: the call cannot become a tail call,
// so hooked_MPI_X stays on the stack, where hang and checking reports name the wrapper
// (diagnostics/backtrace.cpp shows hooked_MPI_X frames and hides the rest of tsmpi's).
template <class T>
inline T kept_frame(T result) {
  asm volatile("" : "+m"(result));
  return result;
}

template <Category C, Strategy S>
struct Hook {
  // `matched` is given for the receive-side functions (src/matching/handlers.h): with a probe
  // policy on it gets the call as it would run without one and decides what to do.
  // `ranked` is given for the functions the table's threadcomm column routes to the thread-rank
  // engine (src/ranks/): it carries the call out there, or is ranks::Refused.
  template <class Pmpi, class Extra, class Matched = Unmatched, class Ranked = ranks::Unranked>
  static auto call(fn::Id id, Pmpi&& pmpi, const Objects& objects, const CallArgs& args, Extra&& extra,
                   Matched&& matched = {}, Ranked&& ranked = {}) {
    ThreadState& t = tl_thread;
    // Thread-rank communicators first, even from inside the MPI: a callback the engine runs (an
    // error handler, a reduction) may call MPI on one, which the MPI itself cannot take.
    if constexpr (!std::is_same_v<std::decay_t<Ranked>, ranks::Unranked>) {
      if (TSMPI_UNLIKELY(ranks::live())) {
        if constexpr (std::is_same_v<std::decay_t<Ranked>, ranks::Refused>) {
          if constexpr (std::is_same_v<decltype(pmpi()), int>) {
            int rc;
            if (ranks::refuses(id, args, &rc)) return rc;
          }
        } else if (ranks::routes(id, objects.in, args, t.depth)) {
          if (g_count_calls) count_call(t, C, id);
          NestingScope inside(t);  // what the engine calls on the program's behalf goes straight through
          if (TSMPI_UNLIKELY(diag::g_track_calls)) {
            // The hang watchdog sees thread-ranks too, with the caller's rank.
            diag::CallScope scope(id, objects.in, args.peer,
                                  objects.in.kind == Kind::Comm ? ranks::caller_rank(objects.in.bits) : -1);
            // Checking mode in a program built with -fsanitize=thread: thread-ranks' buffers too.
            if (TSMPI_UNLIKELY(checks::tsan::g_on) && t.depth == 1) return checks::tsan::annotated(id, objects, args, ranked);
            return ranked();
          }
          return ranked();
        }
      }
    }
    if (t.depth != 0) {  // called from inside the MPI: straight through
      if constexpr (std::is_same_v<decltype(pmpi()), int>) {
        if (TSMPI_UNLIKELY(lifetime::g_rules[id].creates)) return lifetime::nested_created(args, pmpi());
      }
      return pmpi();
    }
    if (TSMPI_UNLIKELY(diag::g_track_calls)) {
      diag::CallScope scope(id, objects.in, args.peer);  // the hang watchdog reads it
      return run(t, id, pmpi, objects, args, extra, matched);
    }
    return run(t, id, pmpi, objects, args, extra, matched);
  }

 private:
  template <class Pmpi, class Extra, class Matched>
  static auto run(ThreadState& t, fn::Id id, Pmpi& pmpi, const Objects& objects, const CallArgs& args,
                  Extra& extra, Matched& matched) {
    if (g_count_calls) count_call(t, C, id);
    NestingScope inside(t);
    using Result = decltype(pmpi());
    auto original = [&]() -> Result {
      if (!serial::enabled()) return pmpi();
      return serial::run<S>(id, pmpi, objects, args, extra);
    };
    auto received = [&]() -> Result {
      if constexpr (!std::is_same_v<std::decay_t<Matched>, Unmatched>) {
        if (matching::matching()) return matched(original);  // a policy, or serialize mode's PROC_NULL fix
      }
      return original();
    };
    if constexpr (std::is_same_v<Result, int>) {  // calls on MPI objects all return an error code
      auto alive = [&]() -> int {
        if (lifetime::g_rules[id].access == lifetime::Access::kNone) return received();
        return lifetime::guarded(id, args, received);
      };
      auto checked = [&]() -> int {
        if (TSMPI_UNLIKELY(checks::g_on)) return checks::guarded(id, objects, args, alive);
        return alive();
      };
      int rc;
      if (own::applies(id)) {
        std::lock_guard<std::mutex> g(own::buffer_lock());
        rc = checked();
      } else {
        rc = checked();
      }
      // MPI processes of an address space: the MPI raised the error (on its MPI_COMM_WORLD or
      // MPI_COMM_SELF, which return it there), the calling process's handler takes it. (What
      // MPI_X_c2f returns, category None, is a Fortran handle.)
      if (TSMPI_UNLIKELY(rc != MPI_SUCCESS) && C != Category::None && ranks::asp::live())
        return ranks::asp::raise_native(id, rc);
      return rc;
    } else {
      return received();
    }
  }
};

}  // namespace tsmpi
