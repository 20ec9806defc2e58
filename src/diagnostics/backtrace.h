// Backtraces for tsmpi's reports (checking mode, hang watchdog), taken with libunwind.
#pragma once
#include <cstdio>

namespace tsmpi::diag {

struct Backtrace {
  static constexpr int kMaxFrames = 48;
  void* pc[kMaxFrames];
  int frames = 0;
};

// The calling thread's stack, without its innermost `skip` frames. Async-signal-safe: the hang
// watchdog calls it from a signal handler in the thread it inspects.
void capture_backtrace(Backtrace& bt, int skip = 1);

// The same, fast (libunwind's cached trace, ~0.1 us instead of ~8 us), for a thread at the
// entry of an MPI call: checking mode's marks of operations that outlive their call. Not in a
// signal handler, and not from inside the MPI.
void capture_backtrace_fast(Backtrace& bt, int skip = 1);
// Set when ThreadSanitizer is in the process (checks/tsan_annotations.h): libunwind's cached
// trace keeps a per-thread cache whose destructor runs after TSan has let the thread go (a crash
// at thread exit); capture_backtrace_fast then uses glibc's backtrace(), which keeps none.
extern bool g_plain_unwinder;

// One line per frame: "<prefix>#<i> <address> <function>+<offset> (<module>)".
void print_backtrace(std::FILE* out, const Backtrace& bt, const char* prefix);

}  // namespace tsmpi::diag
