#include "ranks/handle_space.h"

#include <mpi.h>
#include <sys/mman.h>

#include <deque>
#include <mutex>
#include <type_traits>
#include <vector>

namespace tsmpi::ranks {

namespace handle_space {
constinit Range g_range;
}

namespace {
using handle_space::g_range;
using handle_space::kSlots;
using handle_space::kStride;
using handle_space::slot_of;
// Released handles are reused oldest first, and only once this many others wait: a stale copy
// of a freed handle stays freed (MPI_ERR_COMM, not another object) for that long.
constexpr std::size_t kQuarantine = 1024;

struct Slot {
  std::atomic<void*> object{nullptr};
  std::atomic<Made> kind{Made::kFree};
};

struct Space {
  Slot slots[kSlots];
  std::mutex mu;  // taken to make and release handles, never to find them
  std::deque<std::uint32_t> free_list;  // released slots, oldest first
  std::atomic<int> live{0};
  Space() {
    std::uintptr_t base;
    if constexpr (std::is_pointer_v<MPI_Comm>) {
      void* region = mmap(nullptr, kSlots * kStride, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      base = reinterpret_cast<std::uintptr_t>(region);
    } else {
      // MPICH: handle kind bits (31..30) 00 = invalid, object type bits (29..26) 0 = none.
      base = 0x00100000;
    }
    g_range.base.store(base, std::memory_order_relaxed);  // published by g_range.next's first store
  }
  std::uintptr_t base() const { return g_range.base.load(std::memory_order_relaxed); }
};
Space& space() {
  static Space* s = new Space;
  return *s;
}
}  // namespace

std::uintptr_t make_handle(Made kind, void* object) {
  Space& s = space();
  std::lock_guard g(s.mu);
  std::uint32_t i;
  const bool fresh_left = g_range.next.load(std::memory_order_relaxed) < kSlots;
  if (s.free_list.size() > kQuarantine || (!fresh_left && !s.free_list.empty())) {
    i = s.free_list.front();
    s.free_list.pop_front();
  } else if (fresh_left) {
    i = g_range.next.load(std::memory_order_relaxed);
    g_range.next.store(i + 1, std::memory_order_release);
  } else {
    return 0;
  }
  s.slots[i].object.store(object, std::memory_order_relaxed);
  s.slots[i].kind.store(kind, std::memory_order_release);
  s.live.fetch_add(1, std::memory_order_relaxed);
  return s.base() + i * kStride;
}

void* find_handle(Made kind, std::uintptr_t bits) {
  Space& s = space();  // made first: its base is what slot_of reads
  std::uint32_t i;
  if (!slot_of(bits, &i)) return nullptr;
  Slot& slot = s.slots[i];
  if (slot.kind.load(std::memory_order_acquire) != kind) return nullptr;
  return slot.object.load(std::memory_order_relaxed);
}

void release_handle(std::uintptr_t bits) {
  Space& s = space();
  std::uint32_t i;
  if (!slot_of(bits, &i)) return;
  std::lock_guard g(s.mu);
  if (s.slots[i].kind.load(std::memory_order_relaxed) == Made::kFree) return;
  s.slots[i].kind.store(Made::kFree, std::memory_order_release);
  s.slots[i].object.store(nullptr, std::memory_order_relaxed);
  s.free_list.push_back(i);
  s.live.fetch_sub(1, std::memory_order_relaxed);
}

bool any_handles() { return space().live.load(std::memory_order_relaxed) != 0; }

bool ever_made() { return g_range.next.load(std::memory_order_relaxed) != 0; }

namespace {
constexpr std::uintptr_t kFortranBase = std::uintptr_t{1} << 30;  // Open MPI only
}

int handle_to_fortran(std::uintptr_t bits) {
  Space& s = space();
  if constexpr (!std::is_pointer_v<MPI_Comm>) return static_cast<int>(bits);
  return static_cast<int>(kFortranBase + (bits - s.base()) / kStride);
}

std::uintptr_t handle_from_fortran(int f) {
  Space& s = space();
  const auto u = static_cast<std::uintptr_t>(static_cast<unsigned>(f));
  if constexpr (!std::is_pointer_v<MPI_Comm>) return u - s.base() < kSlots ? u : 0;
  return u - kFortranBase < kSlots ? s.base() + (u - kFortranBase) * kStride : 0;
}

}  // namespace tsmpi::ranks
