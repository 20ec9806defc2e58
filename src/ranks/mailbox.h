// A thread-rank's matching structure (seed 002): posted receives and messages not yet received,
// each kept in FIFOs keyed by (source, tag), with wildcard receives in a list of their own; a
// sequence number decides which of several candidates came first, so MPI's matching order holds
// with MPI_ANY_SOURCE and MPI_ANY_TAG.
//
// Receivers match (seed 002's receiver-side matching). A sender of this process (local index i
// of the communicator) publishes its message in its own fast box (fast_box.h) and returns: no
// lock, no compare-and-swap, no fence. The receiver matches in its own thread when it posts a
// receive, waits, tests or probes (poll()), so the posted receives, their requests and buffers
// stay in its cache, and the lines that cross cores per message are the packet's and its
// slot's. Box messages no posted receive wants stay in their slots until a receive asks for
// them (match_arrived, receive()). A bitmap says which senders have used their box (set by the
// sender, cleared only when a waiter parks), so a poll looks only at those. Whoever waits for a message to be matched
// polls: a receiver its own mailbox, a sender waiting for its receive (rendezvous, synchronous)
// the receiver's. Before a waiter sleeps in the kernel it marks the mailbox (Parked): local
// senders then match themselves, and the match wakes it; blocking probes park too (Watch), as
// does a receive freed while active (MPI_Request_free). Once a request has been handed to the
// MPI as a generalized request (MPI_Request_c2f: the MPI's own tests then wait for it without
// polling), every local sender matches (g_senders_match). Before this (one lock-free list that
// senders pushed onto and matched from when the lock was free), each send paid read-modify-
// writes on lines the receiver was reading: Open MPI 4.1, window 64, 1.4-1.6 M/s; after,
// 2.1-2.3 M/s (2026-11-30, same machine, processes 8.3-11.2 M/s).
//
// Messages of other processes (the network's poller) go onto a lock-free list (`arrived_`, one
// compare-and-swap) and receives posted while the lock is held onto another (`posting_`);
// whoever holds the lock matches both before it lets go, and a thread that pushes and finds the
// lock free takes it and matches. One sender's messages stay in order: one ring per local
// sender, and the list is taken whole and reversed, by one holder at a time.
#pragma once
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "ranks/fast_box.h"
#include "ranks/operations.h"
#include "ranks/wake.h"

namespace tsmpi::ranks {

// Set once a request has been promoted to an MPI generalized request: local senders match.
extern std::atomic<bool> g_senders_match;

class Mailbox {
  // Messages matched to posted receives while the lock was held, delivered after it is released
  // (copies, completions and wakes happen outside the lock).
  struct Matched {
    Packet* head = nullptr;
    Packet* tail = nullptr;
    bool arrivals = false;  // some went to the unexpected FIFOs: wake blocking probes
    RecvOp* filled = nullptr;  // receives a small message was copied into: to complete
    void add(Packet* p, RecvOp* r);
  };

 public:
  // `senders`: the local members that may send here through fast boxes (arrive_from).
  // `shared`: several threads may send as one rank at once.
  explicit Mailbox(int senders = 0, bool shared = false);
  ~Mailbox();
  bool empty() const {
    return unexpected_count_ == 0 && posted_count_ == 0 && !arrived_.load(std::memory_order_acquire) &&
           !posting_.load(std::memory_order_acquire) && !boxes_hold();
  }

  // A receive (any thread, never waiting for the lock): the earliest message it accepts,
  // removed, to be delivered by the caller; or nullptr, r then posted, or left to the thread
  // holding the lock, which takes a message for it (and delivers it) or posts it before it lets
  // go. A receiver posting while a sender matches no longer spins on the lock.
  // `sender`: r's source as a local sender (0 <= sender < senders), or -1 (any source, or another
  // process). A small message of that sender's fast box is then copied from its slot into r's
  // buffer (r is completed before this returns) when nothing posted earlier could take it.
  Packet* receive(RecvOp* r, int sender = -1);
  // A blocking receive's first phase, by the one thread acting as its rank, from local sender
  // `sender` (0 <= sender < senders): the earliest message r accepts, taken as receive() would
  // (a small one copied into r: kFilled) but r is never posted, so the receiver can wait on the
  // sender's box alone, without a posted receive's matching and completion. kPost: r must be
  // posted (receive()) instead, as receives posted earlier come first.
  enum class Take { kNone, kTaken, kFilled, kPost };
  Take take_for(RecvOp* r, int sender, Packet** p);
  // Whether a message of `sender` may wait in its box (an unsynchronized look: a hint to try
  // take_for).
  bool box_holds(int sender) const {
    const FastBox* b = fast_[sender].load(std::memory_order_acquire);
    return b && b->holds();
  }

  // Adds a message (any thread, no lock): matched by this call when the lock is free, else by
  // the thread holding it before that thread lets go. p->comm, src, tag must be set.
  void arrive(Packet* p);
  // The same from local sender `sender` (0 <= sender < senders), through its fast box. Waits
  // (matching what the box holds) when the box is full. The caller must not hold the lock.
  void arrive_from(int sender, Packet* p);
  // A message of at most FastBox::kInlineBytes, written into its slot by fill(char* data).
  template <class Fill>
  void arrive_small_from(int sender, int src, int tag, std::uint64_t ident, std::uint32_t bytes, Fill&& fill) {
    FastBox* b;
    FastBox::Slot* s = claim_from(sender, &b);
    s->ident = ident;
    s->src = src;
    s->tag = tag;
    s->bytes = bytes;
    fill(s->data);
    published_from(sender, b);
  }
  bool has_fast_boxes() const { return senders_ > 0; }
  // Who receives here: packets made from inline messages are addressed to them.
  void set_owner(Comm* c, int rank) {
    comm_ = c;
    rank_ = rank;
  }
  // Parked's two halves, for a receive nobody will wait for (MPI_Request_free of an active one):
  // senders match until it completes.
  // `sweep`: also the heavy barrier and a look at every box (sweep_boxes), without which a
  // sender that read parked_ just before it changed may have left its message unmatched; a
  // waiter that sleeps only briefly first sweeps after that sleep (wait_done).
  void park(bool sweep) {
    parked_.fetch_add(1, std::memory_order_seq_cst);
    if (sweep) sweep_boxes();
    else Guard g(*this);  // matches what every sender had published when it looked
  }
  void unpark() { parked_.fetch_sub(1, std::memory_order_seq_cst); }
  // Whether a local sender must match its message itself (a waiter sleeps).
  bool parked() const { return parked_.load(std::memory_order_seq_cst) != 0; }
  // Matches what has arrived (delivering it) unless another thread holds the lock: that thread
  // matches it before letting go.
  void poll() {
    if (!arrived_.load(std::memory_order_acquire) && !boxes_hold()) return;
    Guard g(*this, std::try_to_lock);
  }
  // After adding an unexpected message with a Guard and releasing it (arrive() does its own).
  void announce_arrival() {
    if (watchers_.load(std::memory_order_relaxed) != 0) arrivals_.advance();
  }

  // The lock, with every message that has arrived matched: the functions below need it.
  class Guard {
   public:
    explicit Guard(Mailbox& mb) : mb_(mb) {
      mb_.mu_.lock();
      mb_.match_arrived(done_, /*all_boxes=*/true);
    }
    // Only if the lock is free: owns() says whether it was taken.
    Guard(Mailbox& mb, std::try_to_lock_t, bool attempt = true) : mb_(mb), held_(attempt && mb.mu_.try_lock()) {
      if (held_) mb_.match_arrived(done_, /*all_boxes=*/true);
    }
    ~Guard() { release(); }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    bool owns() const { return held_; }
    Matched& matched() { return done_; }
    void release() {
      if (!held_) return;
      held_ = false;
      mb_.unlock(done_);
    }

   private:
    Mailbox& mb_;
    Matched done_;
    bool held_ = true;
  };

  // A thread about to sleep until something this mailbox's matching does: from construction
  // to destruction local senders match. Asymmetric Dekker with arrive_from(): a sender
  // publishes, then reads parked_ (light barrier); the waiter sets parked_, passes the heavy
  // barrier and matches what every box holds, so a message published before it looked is
  // matched by it, and one after by its sender (or the lock's holder).
  class Parked {
   public:
    explicit Parked(Mailbox& mb, bool sweep = true) : mb_(mb) { mb_.park(sweep); }
    ~Parked() { mb_.unpark(); }
    Parked(const Parked&) = delete;
    Parked& operator=(const Parked&) = delete;

   private:
    Mailbox& mb_;
  };

  // Blocking probes wait for messages to arrive. The thread that moves a message into the
  // unexpected FIFOs (with the lock held) announces it only while a probe watches: one read per
  // message instead of a shared read-modify-write. The lock orders the two sides: a watcher that
  // took it before that thread did is seen by its read; one that took it after sees the message.
  class Watch {
   public:
    // Parked: senders match, so the arrival is announced to a sleeping probe.
    explicit Watch(Mailbox& mb) : mb_(mb), parked_(mb) { mb_.watchers_.fetch_add(1, std::memory_order_relaxed); }
    ~Watch() { mb_.watchers_.fetch_sub(1, std::memory_order_relaxed); }
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;
    // Read before looking at the mailbox; then wait_past(seen) if nothing was there.
    std::uint32_t now() const { return mb_.arrivals_.now(); }
    void wait_past(std::uint32_t seen) { mb_.arrivals_.wait_past(seen); }

   private:
    Mailbox& mb_;
    Parked parked_;
  };

  // With a Guard:
  // The earliest posted receive that accepts a message (src, tag), removed; nullptr if none.
  RecvOp* take_posted(int src, int tag);
  void post(RecvOp* r);
  bool unpost(RecvOp* r);  // cancel: true when it was still posted
  // The earliest message a receive (src, tag) accepts; removed by take_unexpected.
  Packet* find_unexpected(int src, int tag);
  Packet* take_unexpected(int src, int tag);
  void add_unexpected(Packet* p);
  // The message (src, tag) with sequence number seq, removed if it is still waiting (a cancelled
  // send); nullptr when a receive or matched probe took it.
  Packet* withdraw(int src, int tag, std::uint64_t ident);

 private:
  template <class T>
  struct Fifo {
    T* head = nullptr;
    T* tail = nullptr;
    void push(T* x) {
      x->next = nullptr;
      if (tail) tail->next = x;
      else head = x;
      tail = x;
    }
    T* pop() {
      T* x = head;
      head = x->next;
      if (!head) tail = nullptr;
      return x;
    }
    bool remove(T* x) {
      T* prev = nullptr;
      for (T* c = head; c; prev = c, c = c->next) {
        if (c != x) continue;
        if (prev) prev->next = c->next;
        else head = c->next;
        if (tail == c) tail = prev;
        return true;
      }
      return false;
    }
  };
  static std::uint64_t key(int src, int tag) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) << 32) | static_cast<std::uint32_t>(tag);
  }
  static bool accepts(int want_src, int want_tag, int src, int tag) {
    return (want_src == MPI_ANY_SOURCE || want_src == src) && (want_tag == MPI_ANY_TAG || want_tag == tag);
  }
  // FIFOs by key, remembering the last key looked up: a stream of messages with one (source,
  // tag) finds its FIFO without hashing. Map nodes never move, and only sweep() erases them.
  template <class T>
  struct Keyed {
    std::unordered_map<std::uint64_t, Fifo<T>> map;
    std::uint64_t last_key = ~std::uint64_t{0};  // no (source, tag) has this key
    Fifo<T>* last = nullptr;
    Fifo<T>* find(std::uint64_t k) {
      if (k == last_key) return last;
      auto it = map.find(k);
      if (it == map.end()) return nullptr;
      last_key = k;
      return last = &it->second;
    }
    Fifo<T>& get(std::uint64_t k) {
      if (k == last_key) return *last;
      last_key = k;
      return *(last = &map[k]);
    }
    std::size_t size() const { return map.size(); }
    void drop_empty() {
      for (auto it = map.begin(); it != map.end();) it = it->second.head ? std::next(it) : map.erase(it);
      last_key = ~std::uint64_t{0};
      last = nullptr;
    }
  };
  Packet* find(int src, int tag, Fifo<Packet>** where);
  FastBox* fast_box(int sender);
  std::atomic<std::uint64_t>& ready_word(int sender) { return ready_[sender / 64].bits; }
  static std::uint64_t ready_bit(int sender) { return std::uint64_t{1} << (sender % 64); }
  // Matches what has arrived if the lock is free (seq_cst read first: the Dekker with the
  // holder's unlock()); else its holder does before letting go.
  void match_if_free() {
    if (mu_.held()) return;
    Guard g(*this, std::try_to_lock);
  }
  // A free slot of the sender's box (waiting, and matching what the boxes hold, while it is
  // full); the box's producer lock is held until published_from().
  FastBox::Slot* claim_from(int sender, FastBox** box);
  // Publishes the claimed slot; then, if a waiter sleeps, matches.
  void published_from(int sender, FastBox* b);
  // The message of a slot as a packet (the slot is given back after the drain).
  Packet* packet_of(const FastBox::Slot& s);
  // Whether a fast box of a sender whose bit is set holds a message.
  bool boxes_hold() const {
    for (int w = 0; w < ready_words_; ++w)
      for (std::uint64_t bits = ready_[w].bits.load(std::memory_order_acquire); bits; bits &= bits - 1)
        if (fast_[w * 64 + __builtin_ctzll(bits)].load(std::memory_order_acquire)->holds()) return true;
    return false;
  }
  bool boxes_ready() const {
    for (int w = 0; w < ready_words_; ++w)
      if (ready_[w].bits.load(std::memory_order_acquire)) return true;
    return false;
  }
 public:
  // Parked: clears the bitmap, passes the heavy barrier and matches what every box holds (a
  // sender that published before sees its bit cleared afterwards and sets it again).
  void sweep_boxes();

 private:
  // With the lock held: one message matched to a posted receive or added to the FIFOs.
  void take_arrival(Packet* p, Matched& m);
  void drain_box(FastBox* b, Matched& m);
  void sweep();
  // With the lock held: posts the receives left to it (or gives them a waiting message), then
  // moves what has arrived into the FIFOs or onto posted receives. The fast boxes' messages only
  // when `all_boxes`, a receive is posted, or drain_wanted(): otherwise they stay in their slots
  // until a receive asks for them (receive()), which copies a small one straight into its buffer;
  // moving each into a packet first cost most of a message's time in a stream of sends whose
  // receives came late.
  void match_arrived(Matched& m, bool all_boxes);
  // Whether a thread relies on the lock's holder to match every box: a waiter sleeps (parked), a
  // probe watches, or senders match (promoted requests).
  bool drain_wanted() const {
    return parked_.load(std::memory_order_seq_cst) != 0 || watchers_.load(std::memory_order_seq_cst) != 0 ||
           g_senders_match.load(std::memory_order_seq_cst);
  }
  // With the lock held and nothing posted: moves the messages of `sender`'s box that r does not
  // accept to the FIFOs, up to the first one it does, which is returned as a packet or copied into
  // r (*filled).
  Packet* take_from_box(int sender, RecvOp* r, Matched& m, bool* filled);
  // With the lock held, for receive() and take_for(): the earliest message r accepts, from the
  // FIFOs or (sender >= 0, nothing posted) the sender's box, removed or copied into r (*filled).
  Packet* take_earliest(RecvOp* r, int sender, Matched& m, bool* filled);
  // Matches what arrived, releases the lock, and takes it back while more has arrived (a sender
  // or receiver that found it held left its message or receive to us); then delivers what
  // matched.
  void unlock(Matched& m);
  SpinLock mu_;
  std::atomic<Packet*> arrived_{nullptr};  // newest first; beside mu_ (its own line was slower)
  std::atomic<RecvOp*> posting_{nullptr};  // receives left to the holder, newest first
  // Parked waiters; read by every local sender after it publishes, written only when a waiter
  // goes to sleep or wakes, so on a line of its own.
  alignas(64) std::atomic<int> parked_{0};
  // Fast boxes by sender, made on a sender's first message; bit i of the bitmap set while box i
  // may hold messages (set by the sender after it pushes, cleared by the holder before it takes).
  struct alignas(64) ReadyWord {
    std::atomic<std::uint64_t> bits{0};
  };
  int senders_ = 0, ready_words_ = 0;
  bool shared_ = false;
  std::uint32_t box_slots_ = 0;
  Comm* comm_ = nullptr;
  int rank_ = 0;
  std::unique_ptr<std::atomic<FastBox*>[]> fast_;
  std::unique_ptr<ReadyWord[]> ready_;

  Keyed<Packet> unexpected_;
  Keyed<RecvOp> posted_;
  Fifo<RecvOp> wildcard_;
  std::uint64_t seq_ = 0;
  std::size_t unexpected_count_ = 0, posted_count_ = 0;
  Gate arrivals_;
  std::atomic<int> watchers_{0};
};

}  // namespace tsmpi::ranks
