// TSMPI_PROBE=lock2d specifics beyond the shared policy operations (matching/policies.h).
#pragma once
#include <cstdint>
#include <cstdio>

namespace tsmpi::matching::lock2d_policy {

// At MPI_Finalize: entries still held by a probe whose message was never received are released,
// reported when `report`, and counted. Returns how many there were.
std::size_t finish_held(std::FILE* out, const char* rank_label, bool report);
// A communicator was freed: its lock map is retired.
void retire(std::uintptr_t comm_bits);

}  // namespace tsmpi::matching::lock2d_policy
