// A thread at an MPI call, as a report names it: the call, the thread, its stack.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "diagnostics/backtrace.h"
#include "diagnostics/report.h"
#include "diagnostics/threads.h"

namespace tsmpi::checks {

// Mark::fn of a thread-rank leaving a communicator (checks/thread_rank_collectives.h).
inline constexpr int kLeaving = -2;

struct Mark {
  int fn = -1;  // fn::Id (fn::kCount: MPI_Session_finalize)
  int thread_index = 0;
  pid_t tid = 0;
  // Taken at the mark, or when a report first needs it (mutable: marks are read as copies).
  mutable std::shared_ptr<diag::Backtrace> stack;
  // A mark without a stack: the thread, inside the call since call_since, whose stack a report
  // takes from it then (diagnostics/remote_stack.h).
  diag::ThreadInfo* thread = nullptr;
  std::uint64_t call_since = 0;
};

// At checking mode's start: calls are recorded (CallScope) and other threads' stacks can be
// taken, so that marks need no stack until a report.
void start_marks();

// The calling thread in `fn` now, with its backtrace (without tsmpi's `skip` innermost frames):
// for what outlives the call (a nonblocking operation's buffer, a free).
Mark mark_here(int fn, int skip);

// The calling thread in `fn`, without a stack.
Mark mark_thread(int fn);

// The calling thread in `fn`, for as long as it stays inside it: no stack is taken unless a
// report names the mark, then from the thread itself. A backtrace per call cost checking mode
// ~8 us per message (bench/overhead.c).
Mark mark_call(int fn);

const char* fn_name(int fn);

// The mark as a report's line: "in MPI_X<suffix>", or `what` + " in MPI_X", with its stack
// (taken now for a mark_call, if the thread is still in that call).
diag::Involved involved(const Mark& m, const std::string& what);

}  // namespace tsmpi::checks
