#include "ranks/request_space.h"

#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <type_traits>

#include "ranks/pools.h"

namespace tsmpi::ranks {

std::atomic<bool> g_requests_made{false};

namespace request_space {
constinit Space g_space;
}

namespace {
using request_space::g_space;
using request_space::kSlots;
using request_space::kStride;

// Free slot numbers: per-thread caches in front of a shared stack (pools.h).
struct RequestSlots;
using FreeSlots = FreeList<std::uint32_t, RequestSlots>;

// Reserves the table and the handles' range, on the first handle of all.
void reserve_space() {
  static std::mutex mu;
  std::lock_guard g(mu);
  if (g_space.base.load(std::memory_order_relaxed)) return;  // another thread was first
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
}  // namespace

std::uintptr_t make_request_handle(Request* r) {
  if (!g_space.base.load(std::memory_order_acquire)) reserve_space();
  std::uint32_t i;
  if (!FreeSlots::take(&i)) {
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
  FreeSlots::give(i);
}

}  // namespace tsmpi::ranks
