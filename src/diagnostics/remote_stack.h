// Backtraces of other threads for the hang watchdog: the thread is signalled (SIGRTMIN+7) and
// its handler takes its own stack with libunwind's async-signal-safe local unwinder.
#pragma once
#include "diagnostics/backtrace.h"
#include "diagnostics/threads.h"

namespace tsmpi::diag {

// Installs the handler; false if the program has a handler of its own on the signal (then no
// backtraces of other threads, rather than taking it away).
bool install_signal_handler();

enum class StackResult { None, Taken, NoAnswer, Unavailable };

// Signals `t` and sleeps (1 ms steps) until its handler has written its stack, or gives up
// after a second. The caller keeps `t` alive (holds the registry lock).
StackResult take_stack(ThreadInfo& t, Backtrace& out, bool handler_installed);

}  // namespace tsmpi::diag
