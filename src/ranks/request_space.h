// Handles of the engine's own requests (requests.h): values the MPI never produces, as for the
// engine's communicators (handle_space.h), but made and released on every nonblocking call, so
// without a lock on the common path: each thread keeps a cache of free slots in front of a shared
// stack (the packet pool's scheme). On Open MPI (handles are pointers) a handle is an address in
// a reserved, inaccessible region, so an MPI ever handed one faults at once; on MPICH (ints) it
// carries MPICH's "invalid" handle kind, in a range of its own.
#pragma once
#include <atomic>
#include <cstdint>

namespace tsmpi::ranks {

struct Request;

// A handle for r; 0 when every slot is taken.
std::uintptr_t make_request_handle(Request* r);
// The request behind bits, or nullptr (not an engine request, or released).
Request* find_request(std::uintptr_t bits);
// True when bits lies in the request space (live or released): a released handle is refused by
// the engine with MPI_ERR_REQUEST instead of reaching the MPI.
bool in_request_space(std::uintptr_t bits);
void release_request_handle(std::uintptr_t bits);

// True once any request handle has been made: until then no call needs to look.
extern std::atomic<bool> g_requests_made;
inline bool requests_made() { return g_requests_made.load(std::memory_order_relaxed); }

}  // namespace tsmpi::ranks
