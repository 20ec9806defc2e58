#include "diagnostics/threads.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <time.h>

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

// CLOCK_MONOTONIC_COARSE: a few ns instead of tens on the hooked path of every call while the
// watchdog is on; its resolution (the kernel tick, a few ms) is far below the watchdog's seconds.
std::uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
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
    tl_info = nullptr;
    std::lock_guard<std::mutex> g(registry_mutex());
    auto& v = registry_threads();
    v.erase(std::remove(v.begin(), v.end(), &info), v.end());
  }
};

}  // namespace

constinit TSMPI_TLS ThreadInfo* tl_info = nullptr;

ThreadInfo& register_this_thread() {
  static thread_local Registration r;
  tl_info = &r.info;
  return r.info;
}

}  // namespace tsmpi::diag
