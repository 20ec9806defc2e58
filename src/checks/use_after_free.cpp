#include "checks/use_after_free.h"

#include <cstdio>

#include "diagnostics/report.h"
#include "diagnostics/threads.h"
#include "runtime/function_table.h"

namespace tsmpi::checks {
namespace {
const char* fn_name(int fn) { return fn >= 0 && fn < fn::kCount ? kFunctions[fn].name : "MPI_Session_finalize"; }
}  // namespace

void note_free(FreedBy& by, int fn) {
  diag::ThreadInfo& t = diag::this_thread();
  by.fn = fn;
  by.thread_index = t.index;
  by.tid = t.tid;
  if (!by.stack) by.stack = std::make_unique<diag::Backtrace>();
  diag::capture_backtrace(*by.stack, 2);
}

void report_use_after_free(int fn, const char* kind, std::uintptr_t bits, const FreedBy& by) {
  diag::ThreadInfo& t = diag::this_thread();
  diag::Backtrace here;
  diag::capture_backtrace(here, 2);
  char handle[32];
  std::snprintf(handle, sizeof handle, "%#lx", static_cast<unsigned long>(bits));
  std::vector<diag::Involved> threads;
  threads.push_back({t.index, t.tid, std::string("uses it in ") + fn_name(fn), &here});
  if (by.fn >= 0)
    threads.push_back({by.thread_index, by.tid, std::string("freed it in ") + fn_name(by.fn), by.stack.get()});
  diag::report_error(std::string("use after free: ") + fn_name(fn) + " on " + kind + " " + handle +
                         (by.fn >= 0 ? std::string(", freed before by ") + fn_name(by.fn) : std::string()),
                     threads);
}

}  // namespace tsmpi::checks
