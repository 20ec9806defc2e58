#include "checks/mark.h"

#include "diagnostics/remote_stack.h"
#include "runtime/function_table.h"

namespace tsmpi::checks {
namespace {

bool g_other_stacks = false;  // our signal handler is installed (the program has none of its own)

// The stack of a mark_call, from its thread while it is still in the marked call.
void take_late_stack(const Mark& m) {
  if (m.stack || !m.thread) return;
  auto bt = std::make_shared<diag::Backtrace>();
  diag::ThreadInfo& me = diag::this_thread();
  if (m.thread == &me) {
    diag::capture_backtrace(*bt, 2);
    m.stack = bt;
    return;
  }
  bool taken = false;
  diag::for_each_thread([&](diag::ThreadInfo& t) {
    if (&t != m.thread || t.call.fn.load(std::memory_order_acquire) != m.fn ||
        t.call.since_ns.load(std::memory_order_relaxed) != m.call_since)
      return;  // it has left the call: its stack now would be another one's
    taken = diag::take_stack(t, *bt, g_other_stacks) == diag::StackResult::Taken;
  });
  if (taken) m.stack = bt;
}

}  // namespace

void start_marks() {
  diag::g_track_calls = true;
  g_other_stacks = diag::install_signal_handler();
}

Mark mark_here(int fn, int skip) {
  diag::ThreadInfo& t = diag::this_thread();
  Mark m{fn, t.index, t.tid, std::make_shared<diag::Backtrace>()};
  diag::capture_backtrace_fast(*m.stack, skip + 1);
  return m;
}

Mark mark_thread(int fn) {
  diag::ThreadInfo& t = diag::this_thread();
  return Mark{fn, t.index, t.tid, nullptr};
}

Mark mark_call(int fn) {
  diag::ThreadInfo& t = diag::this_thread();
  Mark m = mark_thread(fn);
  m.thread = &t;
  m.call_since = t.call.since_ns.load(std::memory_order_relaxed);
  return m;
}

const char* fn_name(int fn) {
  if (fn == kLeaving) return "(without calling it)";
  return fn >= 0 && fn < fn::kCount ? kFunctions[fn].name : "MPI_Session_finalize";
}

diag::Involved involved(const Mark& m, const std::string& what) {
  take_late_stack(m);
  std::string call = what + " " + fn_name(m.fn);
  if (!m.stack && m.thread) call += " (left the call before its stack could be taken)";
  return {m.thread_index, m.tid, call, m.stack.get()};
}

}  // namespace tsmpi::checks
