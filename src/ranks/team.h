// The local members of a communicator meeting in shared memory for one collective (the
// intra-process half of a hierarchical collective), and the counters that number their rounds.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
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

// The local members of a communicator meeting in shared memory for one collective. Each
// member owns its cache lines and is their only writer: no member does a read-modify-write on a
// line another member writes, and a small collective costs about one transfer of a line from
// each member to each other. In round k member i fills its note (the collective it called and
// up to kInline bytes of data, on the line that also says it arrived) and arrives; every member
// then waits until all have arrived and compares their calls (meet()). A small broadcast or
// reduction is done by then: each member reads the data it needs from the others' notes. Larger
// data stay in the members' buffers (buffers()): a leader combines them, publishes the result,
// and whoever owns a buffer others read waits for their departures before it returns.
// A small broadcast needs no meeting: its root fills its note and leaves, the others wait for
// that one note (meet_one()). So that a root can run ahead of slower members, as a process's
// eager broadcast does, every member has kDepth notes used in turn, and refilling the note of
// round k - kDepth needs everyone to have left that round. enter() checks the others'
// departures once every kDepth / 2 rounds, for the next kDepth / 2 rounds at once; in a round
// where everyone meets they are already past it. Buffers rotate with the notes: a member
// departs before it waits for its buffers' readers, so its next round (a nonblocking collective
// on a worker thread) may start while they still read. A member's rounds run in order (enter()
// waits for its previous round to end), which a nonblocking collective on a worker thread may
// otherwise not do.
// An identity per algorithm (per type T): members that meet with different algorithms must not
// read each other's buffers as their own kind.
template <class T>
const void* form_of() {
  static const char id = 0;
  return &id;
}

// The member of a process's team that speaks for it: folds, publishes, talks to other processes.
constexpr int kLeader = 0;

class Team {
 public:
  static constexpr std::size_t kInline = 32;
  // Rounds a member's notes last: how far a broadcast's root may run ahead (64: on 2 cores,
  // Bcast of 8 B among T = 16 thread-ranks took 0.9-1.2 us with 64, 1.4-2.1 us with 32).
  static constexpr std::uint32_t kDepth = 64;
  static constexpr std::uint32_t kCheckEvery = kDepth / 2;
  struct Note {
    Gate arrived;           // k+1 once the member arrived at round k (rounds of this slot)
    std::uint64_t call = 0;  // which collective, root and path: members must agree
    const void* form = nullptr;  // which algorithm (form_of<>): what buffers().view points to
    int rank = 0;
    int bytes = 0;          // of data used
    alignas(8) unsigned char data[kInline];
  };
  struct Buffers {
    TypedBuffer in;  // what the member contributes (or, for a broadcast, its buffer)
    void* out = nullptr;
    const void* view = nullptr;  // an algorithm's description of the member's buffers
  };
  struct Published {
    int err = 0;
    int index = 0;
    void* shared = nullptr;
  };

  void init(int n) {
    n_ = n;
    members_ = std::make_unique<MemberLines[]>(static_cast<std::size_t>(n));
  }
  int size() const { return n_; }

  // Member i starts round k: returns its note, to fill before arrive().
  Note& enter(int i, std::uint32_t k) {
    lines(i).departed.wait_until(k);  // its round k-1 (possibly on another thread) is over
    // Rounds k .. k + kCheckEvery - 1 refill the slots of rounds up to k - kCheckEvery - 1.
    if (k % kCheckEvery == 0 && k >= kCheckEvery)
      for (int j = 0; j < n_; ++j)
        if (j != i) lines(j).departed.wait_until(k - kCheckEvery);
    return lines(i).note[k % kDepth];
  }
  Buffers& buffers(int i, std::uint32_t k) { return lines(i).buffers[k % kDepth]; }
  void arrive(int i, std::uint32_t k) { lines(i).note[k % kDepth].arrived.store_and_wake(k + 1); }
  // Waits until every member arrived at round k; false when one came with another call.
  bool meet(int i, std::uint32_t k) {
    const Note& mine = note(i, k);
    bool same = true;
    for (int j = 0; j < n_; ++j) {
      if (j == i) continue;
      if (!same_call(mine, j, k)) same = false;
    }
    return same;
  }
  // Waits until member j arrived at round k; false when it came with another call.
  bool meet_one(int i, int j, std::uint32_t k) { return same_call(note(i, k), j, k); }
  const Note& note(int j, std::uint32_t k) const { return members_[static_cast<std::size_t>(j)].note[k % kDepth]; }
  const Buffers& buffers_of(int j, std::uint32_t k) const {
    return members_[static_cast<std::size_t>(j)].buffers[k % kDepth];
  }
  // The leader's verdict and result of round k, for the others.
  void publish(int i, std::uint32_t k, const Published& p) {
    lines(i).published = p;
    lines(i).published_round.store_and_wake(k + 1);
  }
  Published wait_published(int leader, std::uint32_t k) {
    lines(leader).published_round.wait_until(k + 1);
    return lines(leader).published;
  }
  void depart(int i, std::uint32_t k) { lines(i).departed.store_and_wake(k + 1); }
  // For a member whose buffer the others read: returns once all have left round k.
  void wait_departed(int i, std::uint32_t k) {
    for (int j = 0; j < n_; ++j)
      if (j != i) lines(j).departed.wait_until(k + 1);
  }

 private:
  bool same_call(const Note& mine, int j, std::uint32_t k) {
    Note& o = lines(j).note[k % kDepth];
    o.arrived.wait_until(k + 1);
    return o.call == mine.call && o.form == mine.form;
  }
  struct alignas(64) MemberLines {
    Note note[kDepth];
    alignas(64) Buffers buffers[kDepth];
    alignas(64) Gate published_round;
    Published published;
    alignas(64) Gate departed;  // k+1 once the member left round k
  };
  static_assert(sizeof(Note) <= 64, "a note is one cache line");
  MemberLines& lines(int i) { return members_[static_cast<std::size_t>(i)]; }

  int n_ = 0;
  std::unique_ptr<MemberLines[]> members_;
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
