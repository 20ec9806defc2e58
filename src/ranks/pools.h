// Per-thread free lists (seed 002's packet pools): a thread takes items from and returns them to
// a cache of its own with no lock, so a steady stream of messages and requests allocates nothing
// and takes no lock. Items a thread frees that another thread took (a receiver frees the sender's
// packets) overflow, half a cache at a time, into a shared stack under one mutex, from which
// empty caches refill. A thread's cache goes to the shared stack when it ends.
// FreeList holds any kind of item (Pool's object addresses, the request space's slot numbers);
// Pool makes objects of one type on it and never gives their memory back: a pool holds the most
// objects ever alive at once.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <new>
#include <vector>

#include "runtime/config.h"

namespace tsmpi::ranks {

// One free list per Tag.
template <class Item, class Tag>
class FreeList {
 public:
  // An item from the calling thread's cache (refilled from the shared stack); false when both
  // are empty.
  static bool take(Item* out) {
    Cache& c = tl_cache;
    if (c.n == 0) refill(c);  // also a thread's first use
    if (c.n == 0) return false;
    *out = c.items[--c.n];
    return true;
  }
  static void give(Item x) {
    Cache& c = tl_cache;
    if (!c.armed) arm(c);
    if (c.n == kCacheMax) spill(c);
    c.items[c.n++] = x;
  }

 private:
  static constexpr unsigned kCacheMax = 64;
  struct Cache {
    Item items[kCacheMax];
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
    std::vector<Item> free;
    std::atomic<std::size_t> size{0};  // free.size(), read without the lock: empty, no need to take it
  };
  static Shared& shared() {
    static Shared* s = new Shared;  // never destroyed: threads may end after exit begins
    return *s;
  }

  static void arm(Cache& c) {
    tl_flusher.touched = true;  // constructs it, so its destructor runs at the thread's end
    c.armed = true;
  }
  static void refill(Cache& c) {
    if (!c.armed) arm(c);
    Shared& s = shared();
    if (s.size.load(std::memory_order_relaxed) == 0) return;
    std::lock_guard g(s.mu);
    const std::size_t k = std::min<std::size_t>(s.free.size(), kCacheMax / 2);
    for (std::size_t i = 0; i < k; ++i) {
      c.items[c.n++] = s.free.back();
      s.free.pop_back();
    }
    s.size.store(s.free.size(), std::memory_order_relaxed);
  }
  static void spill(Cache& c) {
    Shared& s = shared();
    std::lock_guard g(s.mu);
    s.free.insert(s.free.end(), c.items + kCacheMax / 2, c.items + c.n);
    s.size.store(s.free.size(), std::memory_order_relaxed);
    c.n = kCacheMax / 2;
  }
  static void flush() {
    Cache& c = tl_cache;
    if (c.n == 0) return;
    Shared& s = shared();
    std::lock_guard g(s.mu);
    s.free.insert(s.free.end(), c.items, c.items + c.n);
    s.size.store(s.free.size(), std::memory_order_relaxed);
    c.n = 0;
  }
};

template <class T>
class Pool {
 public:
  // A default-initialized T (members with initializers get them; others, such as a packet's
  // inline bytes, are not zeroed).
  static T* make() { return new (take()) T; }
  static void destroy(T* p) {
    p->~T();
    Free::give(p);
  }

 private:
  using Free = FreeList<void*, T>;
  // Whole cache lines: objects of different threads never share one (a request's lines are
  // written by its thread on every use; a neighbour of another thread's on the same line made
  // each a cache miss).
  static constexpr std::size_t kAlign = alignof(T) > 64 ? alignof(T) : 64;
  static constexpr std::size_t kBytes = (sizeof(T) + kAlign - 1) / kAlign * kAlign;

  static void* take() {
    void* p;
    if (Free::take(&p)) return p;
    return ::operator new(kBytes, std::align_val_t(kAlign));
  }
};

}  // namespace tsmpi::ranks
