// A fast box: the messages of one local sender to one mailbox, in a ring of cache-line slots
// (MPICH's threadcomm and the shared-memory transports have one per pair of ranks). A small
// message travels in its slot (envelope and data in one line), a larger one as a packet whose
// pointer the slot holds. The mailbox lock's holder takes slots in order. One sender's messages
// stay in order (one ring per sender); a full ring is matched by its sender under the mailbox's
// lock.
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
  // One cache line per message: its envelope and, up to kInlineBytes, its data (the receiver
  // reads consecutive lines, which the hardware prefetches); a larger or synchronous message
  // travels as a packet, its pointer in the slot.
  static constexpr std::uint32_t kInlineBytes = 40;
  static constexpr std::uint32_t kViaPacket = ~std::uint32_t{0};
  struct alignas(64) Slot {
    // Position + 1 of the message the slot holds (released by the producer last): the consumer
    // polls the slot it takes next, so a message moves in its own line and no index line
    // bounces between the cores (the shared-memory transports' fast boxes do the same).
    std::atomic<std::uint32_t> seq;
    std::uint32_t bytes;  // kViaPacket: `data` holds a Packet*
    std::uint64_t ident;  // the message's identity (MPI_Cancel of its send)
    int src, tag;
    char data[kInlineBytes];
    Packet* packet() const {
      Packet* p;
      __builtin_memcpy(&p, data, sizeof p);
      return p;
    }
    void set_packet(Packet* p) {
      bytes = kViaPacket;
      __builtin_memcpy(data, &p, sizeof p);
    }
  };
  static_assert(sizeof(Slot) == 64);

  // `slots`: a power of two.
  explicit FastBox(std::uint32_t slots) : put_mask_(slots - 1), put_slots_(new Slot[slots]), mask_(slots - 1), slots_(put_slots_) {
    for (std::uint32_t i = 0; i < slots; ++i) slots_[i].seq.store(0, std::memory_order_relaxed);  // position 0 waits for 1
  }
  ~FastBox() { delete[] slots_; }
  FastBox(const FastBox&) = delete;
  FastBox& operator=(const FastBox&) = delete;

  // Producer side (with produce_lock() held where several threads send as one rank): the next
  // free slot, to fill and then publish(); nullptr when the ring is full.
  Slot* claim() {
    const std::uint32_t t = tail_;
    if (t - head_seen_ > put_mask_) {
      head_seen_ = head_.load(std::memory_order_acquire);
      if (t - head_seen_ > put_mask_) return nullptr;
    }
    return &put_slots_[t & put_mask_];
  }
  void publish() {
    const std::uint32_t t = tail_++;
    put_slots_[t & put_mask_].seq.store(t + 1, std::memory_order_release);
  }
  SpinLock& produce_lock() { return producer_mu_; }
  // Whether a message waits (any thread may ask; the answer may be stale at once).
  bool holds() const {
    const std::uint32_t h = head_.load(std::memory_order_acquire);
    return slots_[h & mask_].seq.load(std::memory_order_acquire) == h + 1;
  }

  // Consumer side (the mailbox lock's holder): calls take(slot) for each message in order until
  // it returns false (that slot taken too); the slots are given back when it returns.
  template <class Take>
  void drain_until(Take&& take) {
    const std::uint32_t first = head_.load(std::memory_order_relaxed);
    std::uint32_t h = first;
    while (slots_[h & mask_].seq.load(std::memory_order_acquire) == h + 1)
      if (!take(slots_[h++ & mask_])) break;
    if (h != first) head_.store(h, std::memory_order_release);
  }
  // Calls take(slot) for each message in order; the slots are given back when it returns.
  template <class Take>
  void drain(Take&& take) {
    drain_until([&](const Slot& s) {
      take(s);
      return true;
    });
  }

 private:
  // The producer's line: where it writes next (its own: the consumer reads the slots), the
  // consumer's position it last saw, and its own copy of the ring's shape (reading the
  // consumer's copy would fetch the line the consumer writes on every drain: a cache miss per
  // message, measured).
  alignas(64) std::uint32_t tail_ = 0;
  std::uint32_t head_seen_ = 0;
  const std::uint32_t put_mask_;
  Slot* const put_slots_;
  SpinLock producer_mu_;
  // The consumer's line.
  alignas(64) std::atomic<std::uint32_t> head_{0};
  const std::uint32_t mask_;
  Slot* const slots_;
};

// After a sender's publishing stores, before it reads what a sleeper wrote: a compiler barrier
// when heavy_barrier() works, else a full fence.
extern bool g_light_is_fence;
// A full fence; ThreadSanitizer does not model fences, so under it a seq_cst read-modify-write.
inline void full_fence() {
#if defined(__SANITIZE_THREAD__)
  static std::atomic<int> dummy{0};
  dummy.fetch_add(0, std::memory_order_seq_cst);
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}
inline void light_barrier() {
  if (g_light_is_fence) full_fence();
  else std::atomic_signal_fence(std::memory_order_seq_cst);
}
// On the sleeper's side, between its store and its reads: every thread of the process passes a
// full fence.
void heavy_barrier();

}  // namespace tsmpi::ranks
