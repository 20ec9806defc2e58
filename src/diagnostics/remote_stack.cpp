// Backtraces of other threads: the thread asked is signalled and takes its own stack in the
// handler (libunwind cannot unwind another thread of the process).
#include "diagnostics/remote_stack.h"

#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>

namespace tsmpi::diag {
namespace {

using Clock = std::chrono::steady_clock;
// A backtrace request unanswered after this long is given up (the thread may block signals).
constexpr auto kAnswerWait = std::chrono::seconds(1);


int backtrace_signal() { return SIGRTMIN + 7; }

// The thread asked for its stack; one at a time. A late answer finds another target (or none)
// and writes nothing.
std::atomic<ThreadInfo*> g_target{nullptr};

pid_t gettid_raw() { return static_cast<pid_t>(syscall(SYS_gettid)); }

std::uintptr_t interrupted_pc(void* uc) {
  const auto* u = static_cast<const ucontext_t*>(uc);
#if defined(__x86_64__)
  return static_cast<std::uintptr_t>(u->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<std::uintptr_t>(u->uc_mcontext.pc);
#else
  (void)u;
  return 0;
#endif
}

// Drops the handler's own frames and the signal trampoline: the stack starts where the thread
// was interrupted (found by its pc, so inlining cannot miscount).
void start_at_interrupted(Backtrace& bt, std::uintptr_t pc) {
  for (int i = 0; i < bt.frames; ++i) {
    if (reinterpret_cast<std::uintptr_t>(bt.pc[i]) != pc) continue;
    std::copy(bt.pc + i, bt.pc + bt.frames, bt.pc);
    bt.frames -= i;
    return;
  }
}

// Async-signal-safe: atomics, gettid, getpid and libunwind's local unwinder only.
void on_backtrace_signal(int, siginfo_t* si, void* uc) {
  const int saved_errno = errno;
  ThreadInfo* t = g_target.load(std::memory_order_acquire);
  if (t && si->si_code == SI_TKILL && si->si_pid == getpid() && t->tid == gettid_raw() &&
      t->stack_state.load(std::memory_order_relaxed) == 1) {
    capture_backtrace(t->stack, 1);
    start_at_interrupted(t->stack, interrupted_pc(uc));
    t->stack_state.store(2, std::memory_order_release);
  }
  errno = saved_errno;
}

}  // namespace

bool install_signal_handler() {
  struct sigaction old {};
  if (sigaction(backtrace_signal(), nullptr, &old) != 0) return false;
  const bool ours = (old.sa_flags & SA_SIGINFO) && old.sa_sigaction == on_backtrace_signal;
  if (!ours && old.sa_handler != SIG_DFL) return false;
  struct sigaction sa {};
  sa.sa_sigaction = on_backtrace_signal;
  sa.sa_flags = SA_RESTART | SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  return sigaction(backtrace_signal(), &sa, nullptr) == 0;
}

StackResult take_stack(ThreadInfo& t, Backtrace& out, bool handler_installed) {
  if (!handler_installed) return StackResult::Unavailable;
  t.stack_state.store(1, std::memory_order_relaxed);
  g_target.store(&t, std::memory_order_release);
  bool answered = false;
  if (syscall(SYS_tgkill, getpid(), t.tid, backtrace_signal()) == 0) {
    const auto deadline = Clock::now() + kAnswerWait;
    while (!(answered = t.stack_state.load(std::memory_order_acquire) == 2) && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  g_target.store(nullptr, std::memory_order_release);
  if (!answered) return StackResult::NoAnswer;
  out = t.stack;
  t.stack_state.store(0, std::memory_order_relaxed);
  return StackResult::Taken;
}

}  // namespace tsmpi::diag
