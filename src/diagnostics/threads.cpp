#include "diagnostics/threads.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "runtime/config.h"

namespace tsmpi::diag {

bool g_track_calls = false;

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

std::vector<ThreadInfo*>& registry_threads() {
  static std::vector<ThreadInfo*> v;
  return v;
}

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

namespace {

std::atomic<int> g_next_index{1};

// Owns a thread's entry: registers it on construction, removes it when the thread ends.
struct Registration {
  ThreadInfo info;
  Registration() {
    info.index = g_next_index.fetch_add(1);
    info.tid = static_cast<pid_t>(syscall(SYS_gettid));
    std::lock_guard<std::mutex> g(registry_mutex());
    registry_threads().push_back(&info);
  }
  ~Registration() {
    std::lock_guard<std::mutex> g(registry_mutex());
    auto& v = registry_threads();
    v.erase(std::remove(v.begin(), v.end(), &info), v.end());
  }
};

}  // namespace

ThreadInfo& this_thread() {
  static thread_local Registration r;
  return r.info;
}

}  // namespace tsmpi::diag
