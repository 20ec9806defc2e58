// The registry behind for_each_thread (threads.h).
#pragma once
#include <mutex>
#include <vector>

namespace tsmpi::diag {

std::mutex& registry_mutex();
std::vector<ThreadInfo*>& registry_threads();  // guarded by registry_mutex()

template <class F>
void for_each_thread(F&& f) {
  std::lock_guard<std::mutex> g(registry_mutex());
  for (ThreadInfo* t : registry_threads()) f(*t);
}

}  // namespace tsmpi::diag
