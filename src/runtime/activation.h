// Which wrappers have work to do. One byte per MPI function, written only while MPI is being
// initialized or finalized (no other thread may call MPI then), read by every wrapper: the
// pass-through path is this load and a branch.
#pragma once
#include <atomic>
#include <cstdint>

#include "fn_ids.h"
#include "runtime/activation_rules.h"
#include "runtime/options.h"

namespace tsmpi {

// Atomic because MPI-4 sessions may be initialized by one thread while others call MPI; a
// relaxed byte load compiles to the same single compare as a plain one.
extern std::atomic<std::uint8_t> fn_active[fn::kCount];

// True when the wrapper of `id` has nothing to do and calls PMPI directly.
inline bool pass_through(fn::Id id) { return fn_active[id].load(std::memory_order_relaxed) == kPassThrough; }
inline std::uint8_t fn_mode(fn::Id id) { return fn_active[id].load(std::memory_order_relaxed); }

// Sets fn_active from the options: a function is active when any feature needs to see it.
void activate(const Options& o);
// Probe policies: the completion functions (wait, test, cancel, MPI_Request_free,
// MPI_Request_get_status) have work only once a persistent receive exists; they are switched
// on then, from pass-through, so that programs without one never pay for them. Safe while other
// threads run: a thread can only complete a request another thread made after synchronizing
// with it, which orders this store before its load; and a thread making its own persistent
// receive returns from here only once all are switched on (std::call_once).
void activate_request_completion();
// Back to pass-through everywhere (after MPI_Finalize).
void deactivate();
// How many wrappers are active now.
int active_count();

}  // namespace tsmpi
