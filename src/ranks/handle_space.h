// The handles the engine gives the program for its communicators, groups and matched messages:
// values the MPI never produces, found again with a range check and one load. On Open MPI
// (handles are pointers) they are addresses inside a reserved, inaccessible region, so an MPI
// that were ever handed one faults at once; on MPICH (handles are ints) they carry MPICH's
// "invalid" handle kind, which it refuses.
#pragma once
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "runtime/handles.h"

namespace tsmpi::ranks {

// kRequest: the engine's requests, which have a space of their own (request_space.h).
enum class Made : std::uint8_t { kFree, kComm, kGroup, kMessage, kRequest };

// A new handle for `object`; 0 when the space is full.
std::uintptr_t make_handle(Made kind, void* object);
// The object behind `bits` if it is an engine handle of that kind, else nullptr.
void* find_handle(Made kind, std::uintptr_t bits);
void release_handle(std::uintptr_t bits);
// True when some engine handle of any kind exists (cheap test before lookups).
bool any_handles();
// True once any handle has been made (a released one may still be in the program's hands).
bool ever_made();
namespace handle_space {
constexpr std::uintptr_t kSlots = 1 << 16;
// Between two handles: on Open MPI addresses 16 bytes apart in a reserved region (never an
// object's), on MPICH consecutive integers. A constant, so that finding a handle's slot (every
// call on a thread-rank communicator) shifts instead of dividing.
constexpr std::uintptr_t kStride = std::is_pointer_v<MPI_Comm> ? 16 : 1;
// Where the handles lie: `base` is set before the first handle is made (released with `next`,
// the slots used so far). Inline, as every wrapped call on a communicator asks in_space.
struct Range {
  std::atomic<std::uintptr_t> base{0};
  std::atomic<std::uint32_t> next{0};
};
extern constinit Range g_range;

// The slot bits would name (*i), if it lies in the handles' range.
inline bool slot_of(std::uintptr_t bits, std::uint32_t* i) {
  const std::uintptr_t off = bits - g_range.base.load(std::memory_order_relaxed);
  if (off >= kSlots * kStride || off % kStride) return false;
  *i = static_cast<std::uint32_t>(off / kStride);
  return true;
}
}  // namespace handle_space

// True when bits is a handle the engine made, live or released: a released one is a freed
// object, refused with its error class by the engine instead of reaching the MPI.
inline bool in_space(std::uintptr_t bits) {
  const std::uint32_t used = handle_space::g_range.next.load(std::memory_order_acquire);  // before base
  std::uint32_t i;
  return handle_space::slot_of(bits, &i) && i < used;
}

// The Fortran INTEGER of an engine handle (MPI_Comm_c2f, MPI_Group_c2f, MPI_Message_c2f), and
// back: on MPICH the handle itself (its handles are ints already); on Open MPI, whose handles
// are pointers and whose Fortran handles are indices counted from 0, the handle's slot above
// 2^30, where its own indices never go. Pure arithmetic, so a freed handle converts to a freed
// handle, which the engine then refuses. handle_from_fortran: 0 when f is outside the range.
int handle_to_fortran(std::uintptr_t bits);
std::uintptr_t handle_from_fortran(int f);

template <class T>
T* find_as(Made kind, std::uintptr_t bits) {
  return static_cast<T*>(find_handle(kind, bits));
}

}  // namespace tsmpi::ranks
