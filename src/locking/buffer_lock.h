// Own (seed 000 §3, seed 004 §3.4.3): MPI_Buffer_attach, MPI_Buffer_detach and the buffered
// sends (families buffer and bsend) run under one lock of their own, since the attached buffer
// is process-wide state: two attaches at once, a detach under a buffered send, or two buffered
// sends carving the buffer at once are serialized. A buffered send is local (it copies into the
// buffer and returns), so holding the lock across it waits for no other process;
// MPI_Buffer_detach waits for the buffered messages to leave and holds the lock meanwhile, so
// a buffered send racing with a detach waits for it (and then finds no buffer, as it would
// have if the detach had come first).
#pragma once
#include <mutex>

#include "runtime/function_table.h"

namespace tsmpi::own {

std::mutex& buffer_lock();

inline bool uses_attached_buffer(Family f) { return f == Family::kBsend || f == Family::kBuffer; }

// On when threads may call the MPI at once (tsmpi provides MPI_THREAD_MULTIPLE); set at MPI_Init.
extern bool g_enabled;

inline bool applies(fn::Id id) { return g_enabled && uses_attached_buffer(kFunctions[id].family); }

}  // namespace tsmpi::own
