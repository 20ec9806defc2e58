// TSMPI_PROBE=helper specifics beyond the shared policy operations (matching/policies.h).
#pragma once
#include <cstdint>

namespace tsmpi::matching::helper_policy {

// At MPI_Finalize: stops and joins the helper thread (if it was started) and receives the
// messages it took out of the MPI that nobody asked for.
void stop();
// A communicator was freed: its match queue is retired.
void retire(std::uintptr_t comm_bits);

}  // namespace tsmpi::matching::helper_policy
