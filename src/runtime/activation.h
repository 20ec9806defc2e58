// Which wrappers have work to do. One byte per MPI function, written only while MPI is being
// initialized or finalized (no other thread may call MPI then), read by every wrapper: the
// pass-through path is this load and a branch.
#pragma once
#include <cstdint>

#include "fn_ids.h"
#include "runtime/options.h"

namespace tsmpi {

extern std::uint8_t fn_active[fn::kCount];

// Sets fn_active from the options: a function is active when any feature needs to see it.
void activate(const Options& o);
// Back to pass-through everywhere (after MPI_Finalize).
void deactivate();
// How many wrappers are active now.
int active_count();

}  // namespace tsmpi
