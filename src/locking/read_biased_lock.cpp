#include "locking/read_biased_lock.h"

#include <mutex>
#include <vector>

#include "locking/backoff.h"

namespace tsmpi {
namespace {

// Enough for the threads of any hybrid process; a thread beyond them locks as before.
constexpr int kSlots = 1024;
ReaderSlot g_slots[kSlots];
std::atomic<int> g_slots_used{0};  // high-water mark: writers scan [0, used)
std::mutex g_free_mutex;
std::vector<int> g_free;  // slots of threads that ended

// Gives the thread's slot back when the thread ends.
struct SlotOwner {
  int index = -1;
  ~SlotOwner() {
    if (index < 0) return;
    tl_reader_slot = nullptr;
    g_slots[index].reading.store(nullptr, std::memory_order_release);
    std::lock_guard<std::mutex> g(g_free_mutex);
    g_free.push_back(index);
  }
};
thread_local SlotOwner tl_owner;

}  // namespace

constinit TSMPI_TLS ReaderSlot* tl_reader_slot = nullptr;

ReaderSlot* assign_reader_slot() {
  int index = -1;
  {
    std::lock_guard<std::mutex> g(g_free_mutex);
    if (!g_free.empty()) {
      index = g_free.back();
      g_free.pop_back();
    }
  }
  if (index < 0) {
    index = g_slots_used.load(std::memory_order_relaxed);
    do {
      if (index >= kSlots) return nullptr;
    } while (!g_slots_used.compare_exchange_weak(index, index + 1, std::memory_order_seq_cst));
  }
  tl_owner.index = index;
  tl_reader_slot = &g_slots[index];
  return tl_reader_slot;
}

void wait_for_readers(const void* what) {
  const int used = g_slots_used.load(std::memory_order_seq_cst);
  for (int i = 0; i < used; ++i) {
    if (&g_slots[i] == tl_reader_slot) continue;  // a thread reading it itself cannot wait for itself
    Backoff backoff;
    while (g_slots[i].reading.load(std::memory_order_seq_cst) == what) backoff.pause();
  }
}

}  // namespace tsmpi
