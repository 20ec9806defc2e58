// TSMPI_CHECK: a handle used after it was freed. Object lifetime (src/locking/object_lifetime.h)
// refuses such calls in any mode; with checking on it also notes who freed each object and
// reports the use with both threads' backtraces.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <memory>

#include "diagnostics/backtrace.h"
#include "fn_ids.h"

namespace tsmpi::checks {

// Who freed an object: kept in its lifetime record (only when checking is on).
struct FreedBy {
  int fn = -1;  // fn::Id, fn::kCount for MPI_Session_finalize
  int thread_index = 0;
  pid_t tid = 0;
  std::unique_ptr<diag::Backtrace> stack;
};

// The calling thread frees the object now.
void note_free(FreedBy& by, int fn);

// The calling thread used a freed object in `fn`; prints the report (and aborts with abort).
void report_use_after_free(int fn, const char* kind, std::uintptr_t bits, const FreedBy& by);

}  // namespace tsmpi::checks
