// The local members of a communicator meeting in shared memory for one collective (the
// intra-process half of a hierarchical collective): each member leaves pointers to its buffers,
// the last to arrive combines them (and makes the one call of the process's underlying
// collective), then releases the others, who copy their results out in parallel. Rounds are
// numbered per member; a member enters round k+1 only after everyone has left round k.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include "ranks/typed_buffer.h"
#include "ranks/wake.h"

namespace tsmpi::ranks {

class Team {
 public:
  struct Slot {
    TypedBuffer in;  // what the member contributes (or, for a broadcast, its buffer)
    void* out = nullptr;
    int rank = 0;
    std::int64_t call = 0;  // which collective (its tag) and root: members must agree
  };
  void init(int n) {
    n_ = static_cast<std::uint32_t>(n);
    slots_.assign(static_cast<std::size_t>(n), Slot{});
    rounds_ = std::vector<std::uint32_t>(static_cast<std::size_t>(n), 0);
  }
  int size() const { return static_cast<int>(n_); }
  // Member i's next round number (each member counts its own).
  std::uint32_t next_round(int i) { return rounds_[static_cast<std::size_t>(i)]++; }
  // Enters round k with its buffers; true for the last to arrive, which must call release(k).
  bool arrive(int i, std::uint32_t k, const TypedBuffer& in, void* out, int rank, std::int64_t call) {
    departed_.wait_until(n_ * k);
    slots_[static_cast<std::size_t>(i)] = {in, out, rank, call};
    return arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_ * (k + 1);
  }
  void release(std::uint32_t k) { released_.store_and_wake(k + 1); }
  void wait_released(std::uint32_t k) { released_.wait_until(k + 1); }
  void depart() { departed_.advance(); }
  // For a member whose buffer the others read: returns once all have left round k.
  void wait_departed(std::uint32_t k) { departed_.wait_until(n_ * (k + 1)); }
  const Slot& slot(int i) const { return slots_[static_cast<std::size_t>(i)]; }
  // For the last arriver: every member came with the same collective (an erroneous program's
  // members may meet in one round with different calls, whose buffers must not be combined).
  bool same_call() const {
    for (const Slot& s : slots_)
      if (s.call != slots_[0].call) return false;
    return true;
  }
  // What the last arriver leaves for the others (a result buffer, an error code).
  void* shared = nullptr;
  int shared_index = 0;
  int shared_err = 0;

 private:
  std::uint32_t n_ = 0;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> rounds_;
  std::atomic<std::uint32_t> arrived_{0};
  Gate released_, departed_;
};

// A reusable barrier among n threads (MPIX_Threadcomm_start/finish).
class ThreadBarrier {
 public:
  // Returns the arrival index of the caller (0 .. n-1).
  int wait(int n) {
    std::uint32_t g = gen_.now();
    int index = count_.fetch_add(1, std::memory_order_acq_rel);
    if (index + 1 == n) {
      count_.store(0, std::memory_order_relaxed);
      gen_.advance();
    } else {
      gen_.wait_past(g);
    }
    return index;
  }

 private:
  std::atomic<int> count_{0};
  Gate gen_;
};

}  // namespace tsmpi::ranks
