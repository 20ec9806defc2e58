// Switching the probe policy on at MPI_Init and off at MPI_Finalize.
#pragma once
#include <cstdio>
#include <string>

#include "checks/unordered.h"
#include "locking/serialize_lock.h"
#include "matching/policies.h"
#include "runtime/options.h"

namespace tsmpi::matching {

// Whether the wrappers of the matched families go through src/matching/handlers.h (read on
// their hooked path): a policy is on, serialize mode needs the MPI_PROC_NULL fix there, or
// checking mode follows probes and receives (checks/unordered.h).
inline bool matching() { return g_policy != Policy::kOff || serial::enabled() || checks::unordered::g_probes; }

// At MPI_Init, after the MPI is initialized: `threads` tells whether the application may call
// MPI from several threads at once (else no probe can race and the policy stays off).
void start_policy(const Options& o, bool threads);
// At MPI_Finalize, before the MPI is finalized: stops the helper thread, reports (TSMPI_CHECK)
// and drains messages probed but never received. Returns false if TSMPI_CHECK=abort found some.
bool finish_policy(const Options& o, const char* rank_label);
// "  probe: policy=... reserved=..." for the statistics block ("" when no policy ran).
std::string policy_stats_line();

}  // namespace tsmpi::matching
