// A fast box: the messages of one local sender to one mailbox, in a ring of packet pointers
// (MPICH's threadcomm and the shared-memory transports have one per pair of ranks). The sender
// writes a slot and publishes it with a plain store; the mailbox lock's holder takes slots in
// order. No read-modify-write on a line the other side uses: a message between cores costs the
// lines of its packet and of its slot, and a sender that fills several slots before the
// receiver looks moves them in one transfer. One sender's messages stay in order (one ring per
// sender); a full ring waits for the holder to take slots.
//
// A sender publishes with plain stores: no fence and no read-modify-write, which would wait for
// its earlier slots to reach the receiver's core, so a stream of sends does not stall on the
// receiver's polling. What a sender must then read without a fence (whether the receiver sleeps,
// Mailbox::parked) pairs with a heavy barrier on the sleeper's side (asymmetric Dekker, as
// liburcu and folly do): membarrier(2) makes every thread of the process pass a full fence.
// Where the kernel refuses membarrier, senders fence instead (light_barrier).
//
// Several threads may send as one rank (the MPI processes of an address space): their boxes take
// a producer lock.
#pragma once
#include <atomic>
#include <cstdint>

#include "ranks/wake.h"

namespace tsmpi::ranks {

struct Packet;

class FastBox {
 public:
  static constexpr std::uint32_t kSlots = 32;

  // Producer side (with produce_lock() held): false when the ring is full.
  bool push(Packet* p) {
    const std::uint32_t t = tail_.load(std::memory_order_relaxed);
    if (t - head_seen_ == kSlots) {
      head_seen_ = head_.load(std::memory_order_acquire);
      if (t - head_seen_ == kSlots) return false;
    }
    slots_[t % kSlots].store(p, std::memory_order_relaxed);
    tail_.store(t + 1, std::memory_order_release);
    return true;
  }
  SpinLock& produce_lock() { return producer_mu_; }
  // Whether a message waits (the holder's view).
  bool holds() const { return head_.load(std::memory_order_relaxed) != tail_.load(std::memory_order_acquire); }

  // Consumer side (the mailbox lock's holder): calls take(p) for each message in order.
  template <class Take>
  void drain(Take&& take) {
    std::uint32_t h = head_.load(std::memory_order_relaxed);
    const std::uint32_t t = tail_.load(std::memory_order_acquire);
    if (h == t) return;
    // The packets' lines come from the sender's core: fetch a few ahead, so their transfers
    // overlap instead of each waiting for the last.
    constexpr std::uint32_t kAhead = 4;
    for (std::uint32_t i = h; i != t && i - h < kAhead; ++i)
      __builtin_prefetch(slots_[i % kSlots].load(std::memory_order_relaxed));
    for (; h != t; ++h) {
      if (t - h > kAhead) __builtin_prefetch(slots_[(h + kAhead) % kSlots].load(std::memory_order_relaxed));
      take(slots_[h % kSlots].load(std::memory_order_relaxed));
    }
    head_.store(h, std::memory_order_release);
  }

 private:
  // The producer's line: where it writes next and the consumer's position it last saw.
  alignas(64) std::atomic<std::uint32_t> tail_{0};
  std::uint32_t head_seen_ = 0;
  SpinLock producer_mu_;
  // The consumer's line.
  alignas(64) std::atomic<std::uint32_t> head_{0};
  alignas(64) std::atomic<Packet*> slots_[kSlots] = {};
};

// After a sender's publishing stores, before it reads what a sleeper wrote: a compiler barrier
// when heavy_barrier() works, else a full fence.
extern bool g_light_is_fence;
inline void light_barrier() {
  if (g_light_is_fence) std::atomic_thread_fence(std::memory_order_seq_cst);
  else std::atomic_signal_fence(std::memory_order_seq_cst);
}
// On the sleeper's side, between its store and its reads: every thread of the process passes a
// full fence.
void heavy_barrier();

}  // namespace tsmpi::ranks
