#include "ranks/operations.h"

#include "ranks/wake.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace tsmpi::ranks {

std::atomic<std::int64_t> g_spin_ns{2'000};  // wake.h
constinit thread_local std::int64_t tl_spin_ns = 0;

namespace {
// Packet pool (seed 002): a per-thread cache in front of a shared stack, so a steady stream of
// messages allocates nothing. Senders take packets and receivers free them, so caches overflow
// into the shared stack and refill from it.
constexpr std::size_t kCacheMax = 64;
struct SharedPool {
  std::mutex mu;
  std::vector<Packet*> free;
};
SharedPool& shared_pool() {
  static SharedPool* p = new SharedPool;  // never destroyed: threads may end after exit begins
  return *p;
}
struct Cache {
  std::vector<Packet*> free;
  ~Cache() {
    SharedPool& s = shared_pool();
    std::lock_guard g(s.mu);
    s.free.insert(s.free.end(), free.begin(), free.end());
  }
};
thread_local Cache tl_cache;
}  // namespace

char* Packet::reserve(std::size_t n) {
  if (n <= kInlineBytes) return data = small;
  heap = static_cast<char*>(std::malloc(n));
  return data = heap;
}

Packet* new_packet() {
  auto& c = tl_cache.free;
  if (c.empty()) {
    SharedPool& s = shared_pool();
    std::lock_guard g(s.mu);
    std::size_t take = std::min(s.free.size(), kCacheMax / 2);
    c.insert(c.end(), s.free.end() - static_cast<long>(take), s.free.end());
    s.free.resize(s.free.size() - take);
  }
  if (c.empty()) return new Packet;
  Packet* p = c.back();
  c.pop_back();
  return p;
}

void free_packet(Packet* p) {
  std::free(p->heap);
  p->heap = nullptr;
  p->data = nullptr;
  p->sender = nullptr;
  p->ack_proc = -1;
  p->comm = nullptr;
  p->next = nullptr;
  auto& c = tl_cache.free;
  c.push_back(p);
  if (c.size() > kCacheMax) {
    SharedPool& s = shared_pool();
    std::lock_guard g(s.mu);
    s.free.insert(s.free.end(), c.begin() + kCacheMax / 2, c.end());
    c.resize(kCacheMax / 2);
  }
}

}  // namespace tsmpi::ranks
