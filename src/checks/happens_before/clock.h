// Happens-before for checking mode (issue 16): a vector clock per thread, advanced only by the
// program's own synchronization — thread create/join, mutexes, condition variables, barriers,
// OpenMP regions, barriers, critical sections, locks and tasks — which libtsmpi_sync.so observes
// (src/checks/sync_observer/) and reports through the tsmpi_hb_* calls below. What the MPI or
// tsmpi synchronize inside a call is not the program's ordering and is ignored.
//
// Epochs follow FastTrack (Flanagan & Freund): a thread's own entry advances only at a release,
// so every event between two releases has the same epoch, and event (t, v) happens before the
// present of thread u iff u's clock has C_u[t] >= v.
#pragma once
#include <cstdint>
#include <vector>

#include "runtime/config.h"

namespace tsmpi::hb {

// Checking mode is on and libtsmpi_sync.so observes the program's synchronization: the
// happens-before detections run (src/checks/unordered_*). Set at MPI_Init.
extern bool g_on;
// libtsmpi_sync.so announced itself (its constructor, before main).
bool observed();

using Clock = std::vector<std::uint32_t>;

struct Epoch {
  int slot = -1;  // the thread's clock index (its order of first synchronization or MPI event)
  std::uint32_t value = 0;
};

// The calling thread's present epoch.
Epoch now();
// Whether event `e` happens before the calling thread's present (always for its own events).
bool ordered_before_now(const Epoch& e);
// A copy of the calling thread's clock (for checks against later events of other threads).
Clock clock_now();
// The same into `c`, without allocating once `c` has the room (a probe per message takes one).
void clock_now_into(Clock& c);
// Whether event `e` happens before the point where `c` was taken.
inline bool ordered_before(const Epoch& e, const Clock& c) {
  return e.slot >= 0 && static_cast<std::size_t>(e.slot) < c.size() && c[e.slot] >= e.value;
}

}  // namespace tsmpi::hb

// What libtsmpi_sync.so calls (C, exported). Keys are addresses of synchronization objects
// (a mutex, an OpenMP lock, a region's join point); a key's clock lives until it is forgotten.
extern "C" {
// Whether the calling thread's synchronization counts now: not inside an MPI call.
TSMPI_EXPORT int tsmpi_hb_counts(void);
TSMPI_EXPORT void tsmpi_hb_announce(void);
// The calling thread publishes its present to `key` (joined with what is there), then advances.
TSMPI_EXPORT void tsmpi_hb_release(const void* key);
// The calling thread learns everything published to `key`.
TSMPI_EXPORT void tsmpi_hb_acquire(const void* key);
TSMPI_EXPORT void tsmpi_hb_forget(const void* key);
// A thread made by pthread_create begins: it takes what its creator published to `key` (and a
// clock slot of an ended thread only if that end happened before), then forgets the key.
TSMPI_EXPORT void tsmpi_hb_thread_begins(const void* key);
// The thread's start routine returned (or it called pthread_exit): it publishes its present to
// `key` for pthread_join; its synchronization after that (destructors) no longer counts.
TSMPI_EXPORT void tsmpi_hb_thread_ends(const void* key);
// Barrier of `count` threads on `key`: arrive before waiting, leave after; arrive returns the
// round to pass to leave. Each round's result is kept apart from the next one's, so a fast
// thread arriving at the next round never orders a slow one after it.
// A count of 0 takes the one given to tsmpi_hb_barrier_init (pthread barriers).
TSMPI_EXPORT void tsmpi_hb_barrier_init(const void* key, int count);
TSMPI_EXPORT unsigned long tsmpi_hb_barrier_arrive(const void* key, int count);
TSMPI_EXPORT void tsmpi_hb_barrier_leave(const void* key, unsigned long round);
}
