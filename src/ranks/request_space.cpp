#include "ranks/request_space.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "runtime/config.h"

namespace tsmpi::ranks {

std::atomic<bool> g_requests_made{false};

namespace request_space {
constinit Space g_space;
}

namespace {
using request_space::g_space;
using request_space::kSlots;
using request_space::kStride;

constexpr unsigned kCacheMax = 64;

// Free slots no thread caches; taken once per kCacheMax/2 handles.
struct Shared {
  std::mutex mu;
  std::vector<std::uint32_t> free;
  std::atomic<std::size_t> size{0};  // free.size(), read without the lock: empty, no need to take it
};
Shared& shared() {
  static Shared* s = new Shared;  // never destroyed: requests may be completed during exit
  return *s;
}

// Reserves the table and the handles' range, once (under the shared lock).
void reserve_space() {
  void* s = mmap(nullptr, sizeof(std::atomic<Request*>) * kSlots, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (s == MAP_FAILED) {
    std::fprintf(stderr, "tsmpi: cannot reserve the thread-rank request table\n");
    std::abort();
  }
  g_space.slots = static_cast<std::atomic<Request*>*>(s);  // zero-filled: every slot empty
  std::uintptr_t base;
  if constexpr (std::is_pointer_v<MPI_Request>) {
    void* region = mmap(nullptr, std::size_t{kSlots} * kStride, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (region == MAP_FAILED) {
      std::fprintf(stderr, "tsmpi: cannot reserve the thread-rank request handles\n");
      std::abort();
    }
    base = reinterpret_cast<std::uintptr_t>(region);
  } else {
    // MPICH: kind bits (31..30) 00 = invalid, object type bits (29..26) 0; above the range of
    // the engine's other handles (handle_space.cpp: 0x00100000 + 2^16).
    base = 0x00200000;
  }
  g_space.base.store(base, std::memory_order_release);
}

// A thread's free slots: a plain thread-local array (constinit: one TLS access, no guard), handed
// to the shared stack when the thread ends (Flusher, made on the thread's first release).
struct Cache {
  std::uint32_t items[kCacheMax];
  unsigned n;
  bool armed;
};
constinit TSMPI_TLS Cache tl_cache{};
struct Flusher {
  bool touched = false;
  ~Flusher() {
    Cache& c = tl_cache;
    if (c.n == 0) return;
    Shared& s = shared();
    std::lock_guard g(s.mu);
    s.free.insert(s.free.end(), c.items, c.items + c.n);
    s.size.store(s.free.size(), std::memory_order_relaxed);
    c.n = 0;
  }
};
TSMPI_TLS Flusher tl_flusher;

void refill(Cache& c) {
  Shared& s = shared();
  if (g_space.base.load(std::memory_order_relaxed) && s.size.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard g(s.mu);
  if (!g_space.base.load(std::memory_order_relaxed)) reserve_space();
  const std::size_t take = std::min<std::size_t>(s.free.size(), kCacheMax / 2);
  for (std::size_t i = 0; i < take; ++i) {
    c.items[c.n++] = s.free.back();
    s.free.pop_back();
  }
  s.size.store(s.free.size(), std::memory_order_relaxed);
}
}  // namespace

std::uintptr_t make_request_handle(Request* r) {
  Cache& c = tl_cache;
  if (c.n == 0) refill(c);  // also reserves the space on the first handle of all
  std::uint32_t i;
  if (c.n != 0) {
    i = c.items[--c.n];
  } else {
    i = g_space.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= kSlots) {
      g_space.next.store(kSlots, std::memory_order_relaxed);
      return 0;
    }
  }
  g_space.slots[i].store(r, std::memory_order_release);
  if (!g_requests_made.load(std::memory_order_relaxed)) g_requests_made.store(true, std::memory_order_release);
  return g_space.base.load(std::memory_order_relaxed) + i * kStride;
}

void release_request_handle(std::uintptr_t bits) {
  std::uint32_t i;
  if (!request_space::slot_of(bits, &i)) return;
  g_space.slots[i].store(nullptr, std::memory_order_release);
  Cache& c = tl_cache;
  if (!c.armed) {
    tl_flusher.touched = true;  // constructs it, so its destructor runs at the thread's end
    c.armed = true;
  }
  if (c.n == kCacheMax) {
    Shared& s = shared();
    std::lock_guard g(s.mu);
    s.free.insert(s.free.end(), c.items + kCacheMax / 2, c.items + c.n);
    s.size.store(s.free.size(), std::memory_order_relaxed);
    c.n = kCacheMax / 2;
  }
  c.items[c.n++] = i;
}

}  // namespace tsmpi::ranks
