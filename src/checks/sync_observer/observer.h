// libtsmpi_sync.so: the program's thread synchronization, observed for checking mode's
// happens-before (src/checks/happens_before/clock.h). A library of its own, which tsmpirun
// preloads only under TSMPI_CHECK, so that a program's mutexes cost nothing extra otherwise.
#pragma once
#include <dlfcn.h>

#include "checks/happens_before/clock.h"

namespace tsmpi::sync {

// TSMPI_CHECK is warn or abort (read at load): the observer does anything at all.
extern bool g_active;

// Whether `caller` (a return address) is code of libtsmpi, the MPI's libraries or the C
// runtime: their locks are not the program's. (Not this library's: a program function its
// wrappers call, a parallel region's body, may end with a tail call to pthread_mutex_unlock,
// which then returns into the wrapper.) A thread's registry entry, for one, is locked at its first MPI call
// and at its end, outside any MPI call: counted, every thread that ends would be ordered
// before every thread that calls MPI for the first time after.
bool from_tsmpi(const void* caller);
// Takes the address ranges of those libraries again (at load, and at the end of MPI_Init, when
// the MPI has loaded its components).
void refresh_excluded();

// The program's own synchronization, now: the observer is active, the calling thread is not
// inside an MPI call, and the caller is not tsmpi.
#define TSMPI_SYNC_COUNTS() \
  (::tsmpi::sync::g_active && tsmpi_hb_counts() && !::tsmpi::sync::from_tsmpi(__builtin_return_address(0)))
inline bool counts() { return g_active && tsmpi_hb_counts(); }

// The next definition of `name` (libtsan's interceptor when the program is built with
// -fsanitize=thread, else libc's, libgomp's ...); null while dlsym itself runs on this thread
// (it may lock a mutex), or when there is none and `required` is false.
void* next_symbol(const char* name, const char* version, bool required);

// The next definition, looked up once; `fallback` (uncached) while it cannot be looked up. (It
// may be the very function found: glibc's pthread_mutex_lock is __pthread_mutex_lock. Caching
// only what differed from it looked the symbol up again at every lock, 40% of a checked
// probe -> receive.)
template <class F>
F next(F& cache, const char* name, const char* version = nullptr, F fallback = nullptr) {
  F f = __atomic_load_n(&cache, __ATOMIC_ACQUIRE);
  if (f) return f;
  void* found = next_symbol(name, version, fallback == nullptr);
  if (!found) return fallback;
  f = reinterpret_cast<F>(found);
  __atomic_store_n(&cache, f, __ATOMIC_RELEASE);
  return f;
}

}  // namespace tsmpi::sync
