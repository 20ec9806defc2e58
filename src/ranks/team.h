// The local members of a communicator meeting in shared memory for one collective (the
// intra-process half of a hierarchical collective): each member leaves pointers to its buffers,
// the last to arrive combines them (and makes the one call of the process's underlying
// collective), then releases the others, who copy their results out in parallel. Rounds are
// numbered per member (CollectiveCount); a member enters round k+1 only after everyone
// has left round k.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include "ranks/typed_buffer.h"
#include "ranks/wake.h"

namespace tsmpi::ranks {

// A rank's collectives on a communicator: how many it started (each one's number) and how many
// of those met the other local members as a team (team.h rounds). One atomic step takes both,
// so that two threads of one MPI process starting collectives at once (erroneous: checking mode
// reports it) get numbers and rounds in the same order and never share a round.
class CollectiveCount {
 public:
  struct Ticket {
    std::uint32_t seq, round;
  };
  Ticket take(bool team) {
    const std::uint64_t v = v_.fetch_add(team ? kRound + 1 : 1, std::memory_order_relaxed);
    return {static_cast<std::uint32_t>(v), static_cast<std::uint32_t>(v >> 32)};
  }
  std::uint32_t started() const { return static_cast<std::uint32_t>(v_.load(std::memory_order_relaxed)); }
  // A new region or membership numbers its collectives from 0; rounds go on with the team.
  void restart() { v_.fetch_and(~(kRound - 1), std::memory_order_relaxed); }

 private:
  static constexpr std::uint64_t kRound = std::uint64_t{1} << 32;
  std::atomic<std::uint64_t> v_{0};
};

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
  }
  int size() const { return static_cast<int>(n_); }
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
