// TSMPI_CHECK: a handle used after it was freed. Object lifetime (src/locking/object_lifetime.h)
// refuses such calls in any mode; with checking on it also notes who freed each object and
// reports the use with both threads' backtraces.
#pragma once
#include <sys/types.h>

#include <cstdint>

#include "checks/mark.h"

namespace tsmpi::checks {

// Who freed an object: kept in its lifetime record (only when checking is on).
using FreedBy = Mark;

// The calling thread frees the object now; with_stack false for messages (one per MPI_Mrecv:
// a backtrace each would cost more than the receive), whose reports name the freeing thread only.
void note_free(FreedBy& by, int fn, bool with_stack);

// The calling thread used a freed object in `fn`; prints the report (and aborts with abort).
void report_use_after_free(int fn, const char* kind, std::uintptr_t bits, const FreedBy& by);

}  // namespace tsmpi::checks
