#include "ranks/request_space.h"

#include <mpi.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <type_traits>
#include <vector>

#include "runtime/config.h"

namespace tsmpi::ranks {

std::atomic<bool> g_requests_made{false};

namespace {
// 2^20 requests in flight at once: 256 thread-ranks with windows of 4096 each.
constexpr std::uint32_t kSlots = 1u << 20;
constexpr std::size_t kCacheMax = 64;
// Between two handles, as in handle_space.cpp: a constant, so that finding a request's slot
// (every test, wait and free) shifts instead of dividing.
constexpr std::uintptr_t kStride = std::is_pointer_v<MPI_Request> ? 16 : 1;

struct Space {
  std::uintptr_t base = 0;
  std::atomic<Request*>* slots = nullptr;  // mapped on demand: untouched pages cost nothing
  std::atomic<std::uint32_t> next{0};      // slots never used yet start here
  std::mutex mu;                           // guards `free`, taken once per kCacheMax/2 handles
  std::vector<std::uint32_t> free;
  Space() {
    void* s = mmap(nullptr, sizeof(std::atomic<Request*>) * kSlots, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (s == MAP_FAILED) {
      std::fprintf(stderr, "tsmpi: cannot reserve the thread-rank request table\n");
      std::abort();
    }
    slots = static_cast<std::atomic<Request*>*>(s);  // zero-filled: every slot empty
    if constexpr (std::is_pointer_v<MPI_Request>) {
      void* region = mmap(nullptr, std::size_t{kSlots} * kStride, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      base = reinterpret_cast<std::uintptr_t>(region);
    } else {
      // MPICH: kind bits (31..30) 00 = invalid, object type bits (29..26) 0; above the range of
      // the engine's other handles (handle_space.cpp: 0x00100000 + 2^16).
      base = 0x00200000;
    }
  }
};
Space& space() {
  static Space* s = new Space;  // never destroyed: requests may be completed during exit
  return *s;
}

struct Cache {
  std::vector<std::uint32_t> free;
  ~Cache() {
    Space& s = space();
    std::lock_guard g(s.mu);
    s.free.insert(s.free.end(), free.begin(), free.end());
  }
};
TSMPI_TLS Cache tl_cache;

bool slot_of(std::uintptr_t bits, std::uint32_t* i) {
  Space& s = space();
  std::uintptr_t off = bits - s.base;
  if (off >= std::uintptr_t{kSlots} * kStride || off % kStride) return false;
  *i = static_cast<std::uint32_t>(off / kStride);
  return true;
}
}  // namespace

std::uintptr_t make_request_handle(Request* r) {
  Space& s = space();
  auto& c = tl_cache.free;
  if (c.empty()) {
    std::lock_guard g(s.mu);
    std::size_t take = std::min(s.free.size(), kCacheMax / 2);
    c.insert(c.end(), s.free.end() - static_cast<long>(take), s.free.end());
    s.free.resize(s.free.size() - take);
  }
  std::uint32_t i;
  if (!c.empty()) {
    i = c.back();
    c.pop_back();
  } else {
    i = s.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= kSlots) {
      s.next.store(kSlots, std::memory_order_relaxed);
      return 0;
    }
  }
  s.slots[i].store(r, std::memory_order_release);
  if (!g_requests_made.load(std::memory_order_relaxed)) g_requests_made.store(true, std::memory_order_release);
  return s.base + i * kStride;
}

Request* find_request(std::uintptr_t bits) {
  std::uint32_t i;
  if (!slot_of(bits, &i)) return nullptr;
  return space().slots[i].load(std::memory_order_acquire);
}

bool in_request_space(std::uintptr_t bits) {
  std::uint32_t i;
  return slot_of(bits, &i) && i < space().next.load(std::memory_order_acquire);
}

void release_request_handle(std::uintptr_t bits) {
  std::uint32_t i;
  if (!slot_of(bits, &i)) return;
  Space& s = space();
  s.slots[i].store(nullptr, std::memory_order_release);
  auto& c = tl_cache.free;
  c.push_back(i);
  if (c.size() > kCacheMax) {
    std::lock_guard g(s.mu);
    s.free.insert(s.free.end(), c.begin() + kCacheMax / 2, c.end());
    c.resize(kCacheMax / 2);
  }
}

}  // namespace tsmpi::ranks
