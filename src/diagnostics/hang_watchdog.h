// The hang watchdog (TSMPI_HANG_TIMEOUT=N): when a thread has been inside one MPI call for more
// than N seconds, the rank prints every thread's current MPI call with its main arguments and
// a backtrace, once; the ranks' blocked calls are gathered and a wait-for cycle is named.
#pragma once
#include "runtime/options.h"

namespace tsmpi::diag {

// At the end of MPI_Init/MPI_Init_thread, when o.hang_timeout > 0 (sets g_track_calls).
void start_hang_watchdog(const Options& o);

// At MPI_Finalize, before PMPI_Finalize: the watchdog thread ends (joins) and makes no MPI call
// afterwards. Safe to call when it was never started.
void stop_hang_watchdog();

}  // namespace tsmpi::diag
