// Per-thread pools of one kind of object (seed 002's packet pools): a thread takes objects from
// and returns them to a cache of its own with no lock and no call to the allocator, so a steady
// stream of messages and requests allocates nothing. Objects a thread frees that another thread
// took (a receiver frees the sender's packets) overflow, half a cache at a time, into a shared
// stack under one mutex, from which empty caches refill. Memory is never given back: a pool holds
// the most objects ever alive at once. A thread's cache goes to the shared stack when it ends.
#pragma once
#include <algorithm>
#include <cstddef>
#include <mutex>
#include <new>
#include <vector>

#include "runtime/config.h"

namespace tsmpi::ranks {

template <class T>
class Pool {
 public:
  // A default-initialized T (members with initializers get them; others, such as a packet's
  // inline bytes, are not zeroed).
  static T* make() { return new (take()) T; }
  static void destroy(T* p) {
    p->~T();
    give(p);
  }

 private:
  static constexpr unsigned kCacheMax = 64;
  // Whole cache lines: objects of different threads never share one (a request's lines are
  // written by its thread on every use; a neighbour of another thread's on the same line made
  // each a cache miss).
  static constexpr std::size_t kAlign = alignof(T) > 64 ? alignof(T) : 64;
  static constexpr std::size_t kBytes = (sizeof(T) + kAlign - 1) / kAlign * kAlign;
  struct Cache {
    void* items[kCacheMax];
    unsigned n;
    bool armed;  // the thread's Flusher exists
  };
  // constinit: a plain thread-local array (one TLS access, no guard on the hot path).
  static inline constinit TSMPI_TLS Cache tl_cache{};
  // Hands the cache to the shared stack when the thread ends; made on the thread's first use.
  struct Flusher {
    bool touched = false;
    ~Flusher() { flush(); }
  };
  static inline TSMPI_TLS Flusher tl_flusher;
  struct Shared {
    std::mutex mu;
    std::vector<void*> free;
  };
  static Shared& shared() {
    static Shared* s = new Shared;  // never destroyed: threads may end after exit begins
    return *s;
  }

  static void* take() {
    Cache& c = tl_cache;
    if (c.n == 0) refill(c);  // also a thread's first use
    if (c.n == 0) return ::operator new(kBytes, std::align_val_t(kAlign));
    return c.items[--c.n];
  }
  static void give(void* p) {
    Cache& c = tl_cache;
    if (!c.armed) arm(c);
    if (c.n == kCacheMax) spill(c);
    c.items[c.n++] = p;
  }
  static void arm(Cache& c) {
    tl_flusher.touched = true;  // constructs it, so its destructor runs at the thread's end
    c.armed = true;
  }
  static void refill(Cache& c) {
    if (!c.armed) arm(c);
    Shared& s = shared();
    std::lock_guard g(s.mu);
    const std::size_t k = std::min<std::size_t>(s.free.size(), kCacheMax / 2);
    for (std::size_t i = 0; i < k; ++i) {
      c.items[c.n++] = s.free.back();
      s.free.pop_back();
    }
  }
  static void spill(Cache& c) {
    Shared& s = shared();
    std::lock_guard g(s.mu);
    s.free.insert(s.free.end(), c.items + kCacheMax / 2, c.items + c.n);
    c.n = kCacheMax / 2;
  }
  static void flush() {
    Cache& c = tl_cache;
    if (c.n == 0) return;
    Shared& s = shared();
    std::lock_guard g(s.mu);
    s.free.insert(s.free.end(), c.items, c.items + c.n);
    c.n = 0;
  }
};

}  // namespace tsmpi::ranks
