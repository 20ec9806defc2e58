// The handles the engine gives the program for its communicators, groups and matched messages:
// values the MPI never produces, found again with a range check and one load. On Open MPI
// (handles are pointers) they are addresses inside a reserved, inaccessible region, so an MPI
// that were ever handed one faults at once; on MPICH (handles are ints) they carry MPICH's
// "invalid" handle kind, which it refuses.
#pragma once
#include <atomic>
#include <cstdint>

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
// True when bits is a handle the engine made, live or released: a released one is a freed
// object, refused with its error class by the engine instead of reaching the MPI.
bool in_space(std::uintptr_t bits);

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
