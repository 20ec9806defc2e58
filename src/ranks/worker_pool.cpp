#include "ranks/worker_pool.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace tsmpi::ranks {

namespace {
struct Workers {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> tasks;
  int idle = 0;
};
Workers& pool() {
  static Workers* p = new Workers;  // workers outlive static destruction
  return *p;
}

void worker() {
  Workers& p = pool();
  std::unique_lock lock(p.mu);
  for (;;) {
    ++p.idle;
    p.cv.wait(lock, [&] { return !p.tasks.empty(); });
    --p.idle;
    auto task = std::move(p.tasks.front());
    p.tasks.pop_front();
    lock.unlock();
    task();
    lock.lock();
  }
}
}  // namespace

void run_in_background(std::function<void()> task) {
  Workers& p = pool();
  bool spawn;
  {
    std::lock_guard g(p.mu);
    p.tasks.push_back(std::move(task));
    spawn = static_cast<int>(p.tasks.size()) > p.idle;
  }
  if (spawn) std::thread(worker).detach();
  else p.cv.notify_one();
}

}  // namespace tsmpi::ranks
