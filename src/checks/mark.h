// A thread at an MPI call, as a report names it: the call, the thread, its stack then.
#pragma once
#include <sys/types.h>

#include <memory>
#include <string>

#include "diagnostics/backtrace.h"
#include "diagnostics/report.h"

namespace tsmpi::checks {

struct Mark {
  int fn = -1;  // fn::Id (fn::kCount: MPI_Session_finalize)
  int thread_index = 0;
  pid_t tid = 0;
  std::shared_ptr<diag::Backtrace> stack;
};

// The calling thread in `fn` now, with its backtrace (without tsmpi's `skip` innermost frames).
Mark mark_here(int fn, int skip);

const char* fn_name(int fn);

// The mark as a report's line: "in MPI_X<suffix>", or `what` + " in MPI_X".
diag::Involved involved(const Mark& m, const std::string& what);

}  // namespace tsmpi::checks
