// The report of two MPI calls the rules forbid to be concurrent and the program does not order:
// "no ordering between thread A's MPI_X and thread B's MPI_Y on <object>", with both threads'
// stacks; once per distinct pair of call sites (the program's frames that made the calls).
#pragma once
#include <string>

#include "checks/happens_before/history.h"

namespace tsmpi::hb {

// An error (TSMPI_CHECK=abort ends the job), or a program tsmpi keeps correct that another MPI
// would not (a warning: "WARNING: non-portable: ...").
enum class Severity { kError, kNonPortable };

// `earlier` happened first in this run, `later` is the calling thread's. `earlier_call` and
// `later_call` name the calls ("MPI_Probe+MPI_Recv"); empty: the events' functions.
void report_unordered(const std::string& object, const std::string& why, const Event& earlier, const Event& later,
                      const std::string& earlier_call = {}, const std::string& later_call = {},
                      Severity severity = Severity::kError);

// The same layout for a message text of the caller's own.
void report_pair(const std::string& what, const Event& earlier, const std::string& earlier_line, const Event& later,
                 const std::string& later_line, Severity severity = Severity::kError);

}  // namespace tsmpi::hb
