// Per-thread state of tsmpi (seed 000 §4.2: thread-private nesting level).
#pragma once
#include "runtime/config.h"

namespace tsmpi {

struct ThreadCounters;

struct ThreadState {
  // How many tsmpi-hooked MPI calls this thread is inside. Calls made while it is non-zero come
  // from inside the MPI (ROMIO, reduction operators, attribute/errhandler/grequest callbacks)
  // and go straight to PMPI without any protection.
  int depth = 0;
  ThreadCounters* counters = nullptr;  // this thread's statistics block, made on first use
  // Probe policies: how many probed messages (or held lock-map entries) this thread has not yet
  // received. Read first by every receive, so a thread without any pays one load and a branch.
  int reserved = 0;
};

// constinit: no thread_local initialization wrapper call on the hooked path.
extern constinit TSMPI_TLS ThreadState tl_thread;

// Marks the calling thread as inside the MPI for its lifetime.
class NestingScope {
 public:
  explicit NestingScope(ThreadState& t) : t_(t) { ++t_.depth; }
  ~NestingScope() { --t_.depth; }
  NestingScope(const NestingScope&) = delete;
  NestingScope& operator=(const NestingScope&) = delete;

 private:
  ThreadState& t_;
};

}  // namespace tsmpi
