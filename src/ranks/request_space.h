// Handles of the engine's own requests (requests.h): values the MPI never produces, as for the
// engine's communicators (handle_space.h), but made and released on every nonblocking call, so
// without a lock on the common path: each thread keeps a cache of free slots in front of a shared
// stack (the packet pool's scheme). On Open MPI (handles are pointers) a handle is an address in
// a reserved, inaccessible region, so an MPI ever handed one faults at once; on MPICH (ints) it
// carries MPICH's "invalid" handle kind, in a range of its own. Finding a request is inline
// arithmetic and one load: every wait, test and free does it for every handle.
#pragma once
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <type_traits>

namespace tsmpi::ranks {

struct Request;

// A handle for r; 0 when every slot is taken.
std::uintptr_t make_request_handle(Request* r);
void release_request_handle(std::uintptr_t bits);

namespace request_space {
// 2^20 requests in flight at once: 256 thread-ranks with windows of 4096 each.
constexpr std::uint32_t kSlots = 1u << 20;
// Between two handles, as in handle_space.cpp: a constant, so that finding a request's slot
// shifts instead of dividing.
constexpr std::uintptr_t kStride = std::is_pointer_v<MPI_Request> ? 16 : 1;
struct Space {
  std::atomic<std::uintptr_t> base{0};  // 0 until the first handle: set after `slots`
  std::atomic<Request*>* slots = nullptr;
  std::atomic<std::uint32_t> next{0};   // slots never used yet start here
};
extern constinit Space g_space;

inline bool slot_of(std::uintptr_t bits, std::uint32_t* i) {
  const std::uintptr_t base = g_space.base.load(std::memory_order_acquire);
  const std::uintptr_t off = bits - base;
  if (!base || off >= std::uintptr_t{kSlots} * kStride || off % kStride) return false;
  *i = static_cast<std::uint32_t>(off / kStride);
  return true;
}
}  // namespace request_space

// The request behind bits, or nullptr (not an engine request, or released).
inline Request* find_request(std::uintptr_t bits) {
  std::uint32_t i;
  if (!request_space::slot_of(bits, &i)) return nullptr;
  return request_space::g_space.slots[i].load(std::memory_order_acquire);
}
// True when bits lies in the request space (live or released): a released handle is refused by
// the engine with MPI_ERR_REQUEST instead of reaching the MPI.
inline bool in_request_space(std::uintptr_t bits) {
  std::uint32_t i;
  return request_space::slot_of(bits, &i) && i < request_space::g_space.next.load(std::memory_order_acquire);
}

// Both at once (the wait and test families classify every handle): nullptr with *ours true for
// a released handle of the space, *ours false for a handle that is not the engine's.
inline Request* find_request(std::uintptr_t bits, bool* ours) {
  std::uint32_t i;
  *ours = request_space::slot_of(bits, &i) && i < request_space::g_space.next.load(std::memory_order_acquire);
  return *ours ? request_space::g_space.slots[i].load(std::memory_order_acquire) : nullptr;
}

// True once any request handle has been made: until then no call needs to look.
extern std::atomic<bool> g_requests_made;
inline bool requests_made() { return g_requests_made.load(std::memory_order_relaxed); }

}  // namespace tsmpi::ranks
