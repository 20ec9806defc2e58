// A reader-writer lock for objects read far more often than written (object lifetime's records:
// MPI_Comm_rank on a communicator, MPI_Type_size of a datatype), after BRAVO (Dice and Kogan,
// "BRAVO: Biased Locking for Reader-Writer Locks", USENIX ATC 2019). While the lock is biased
// towards readers, a reader does not touch the lock at all: it publishes the lock's address in
// a slot of its own thread and checks the bias, a store, a fence and a load on lines no other
// thread writes. A writer first takes the underlying lock, then, if the lock is biased, clears
// the bias and waits until no thread's slot names the lock; so a writer still excludes every
// reader, fast or not, as the plain lock did. Readers that find the bias cleared take the
// underlying lock shared and set the bias again once a while has passed since the last
// revocation (nine times what that revocation cost, as BRAVO does), so objects that are
// written often stay on the plain lock.
#pragma once
#include <atomic>
#include <cstdint>
#include <shared_mutex>

#include "runtime/config.h"
#include "runtime/os.h"

namespace tsmpi {

struct alignas(64) ReaderSlot {
  std::atomic<const void*> reading{nullptr};
};

// This thread's slot, or nullptr when every slot is taken (the thread then always locks).
// Slots go back when their thread ends.
// constinit: no thread_local initialization wrapper call on the fast read.
extern constinit TSMPI_TLS ReaderSlot* tl_reader_slot;
ReaderSlot* assign_reader_slot();
inline ReaderSlot* my_reader_slot() { return tl_reader_slot ? tl_reader_slot : assign_reader_slot(); }
// Waits until no thread other than the caller reads `what` through its slot.
void wait_for_readers(const void* what);

class ReadBiasedLock {
 public:
  void lock() {
    m_.lock();
    revoke();
  }
  bool try_lock() {
    if (!m_.try_lock()) return false;
    revoke();
    return true;
  }
  void unlock() { m_.unlock(); }
  void lock_shared() {
    m_.lock_shared();
    if (!biased_.load(std::memory_order_relaxed) &&
        monotonic_ns() >= inhibit_until_.load(std::memory_order_relaxed))
      biased_.store(true, std::memory_order_relaxed);  // no writer can hold the lock now
  }
  void unlock_shared() { m_.unlock_shared(); }

  // The fast read: true if the reader may go on without the lock (until end_read); false, with
  // the slot cleared, if it must lock.
  bool try_read(ReaderSlot* s) {
    s->reading.store(this, std::memory_order_seq_cst);
    if (biased_.load(std::memory_order_seq_cst)) return true;
    s->reading.store(nullptr, std::memory_order_release);
    return false;
  }
  static void end_read(ReaderSlot* s) { s->reading.store(nullptr, std::memory_order_release); }

 private:
  void revoke() {
    if (!biased_.load(std::memory_order_relaxed)) return;
    const std::int64_t start = monotonic_ns();
    biased_.store(false, std::memory_order_seq_cst);
    wait_for_readers(this);
    const std::int64_t end = monotonic_ns();
    inhibit_until_.store(end + 9 * (end - start), std::memory_order_relaxed);
  }

  std::shared_mutex m_;
  std::atomic<bool> biased_{false};
  std::atomic<std::int64_t> inhibit_until_{0};
};

}  // namespace tsmpi
