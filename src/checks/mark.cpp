#include "checks/mark.h"

#include "diagnostics/threads.h"
#include "runtime/function_table.h"

namespace tsmpi::checks {

Mark mark_here(int fn, int skip) {
  diag::ThreadInfo& t = diag::this_thread();
  Mark m{fn, t.index, t.tid, std::make_shared<diag::Backtrace>()};
  diag::capture_backtrace(*m.stack, skip + 1);
  return m;
}

const char* fn_name(int fn) { return fn >= 0 && fn < fn::kCount ? kFunctions[fn].name : "MPI_Session_finalize"; }

diag::Involved involved(const Mark& m, const std::string& what) {
  return {m.thread_index, m.tid, what + " " + fn_name(m.fn), m.stack.get()};
}

}  // namespace tsmpi::checks
