// A thread-rank's matching structure (seed 002): posted receives and messages not yet received,
// each kept in FIFOs keyed by (source, tag), with wildcard receives in a list of their own; a
// sequence number decides which of several candidates came first, so MPI's matching order holds
// with MPI_ANY_SOURCE and MPI_ANY_TAG.
//
// Senders never wait for the receiver: a message is pushed onto a lock-free list (`arrived_`,
// one compare-and-swap), and whoever holds the mailbox's lock matches what has arrived before it
// lets go; a sender that finds the lock free takes it and matches its message itself (a receive
// already posted then completes before the send returns). With one spin lock taken by both
// sides, sender and receiver spent most of a message's time spinning on each other (window 64:
// 60% of start_send's samples); interleaved runs on Open MPI 4.1 (2026-11-30): ping-pong at 8 B
// 0.71-0.94 against 1.02-1.34 µs, window 64 1.23-1.35 against 1.09-1.37 M/s. One sender's
// messages stay in order: the list is taken whole and reversed, by one holder at a time.
#pragma once
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "ranks/operations.h"
#include "ranks/wake.h"

namespace tsmpi::ranks {

class Mailbox {
  // Messages matched to posted receives while the lock was held, delivered after it is released
  // (copies, completions and wakes happen outside the lock).
  struct Matched {
    Packet* head = nullptr;
    Packet* tail = nullptr;
    bool arrivals = false;  // some went to the unexpected FIFOs: wake blocking probes
  };

 public:
  ~Mailbox();
  bool empty() const {
    return unexpected_count_ == 0 && posted_count_ == 0 && !arrived_.load(std::memory_order_acquire);
  }

  // Adds a message (any thread, no lock): matched by this call when the lock is free, else by
  // the thread holding it before that thread lets go. p->comm, src, tag must be set.
  void arrive(Packet* p);
  // After adding an unexpected message with a Guard and releasing it (arrive() does its own).
  void announce_arrival() {
    if (watchers_.load(std::memory_order_relaxed) != 0) arrivals_.advance();
  }

  // The lock, with every message that has arrived matched: the functions below need it.
  class Guard {
   public:
    explicit Guard(Mailbox& mb) : mb_(mb) {
      mb_.mu_.lock();
      mb_.match_arrived(done_);
    }
    // Only if the lock is free: owns() says whether it was taken.
    Guard(Mailbox& mb, std::try_to_lock_t) : mb_(mb), held_(mb.mu_.try_lock()) {
      if (held_) mb_.match_arrived(done_);
    }
    ~Guard() { release(); }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    bool owns() const { return held_; }
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

  // Blocking probes wait for messages to arrive. The thread that moves a message into the
  // unexpected FIFOs (with the lock held) announces it only while a probe watches: one read per
  // message instead of a shared read-modify-write. The lock orders the two sides: a watcher that
  // took it before that thread did is seen by its read; one that took it after sees the message.
  class Watch {
   public:
    explicit Watch(Mailbox& mb) : mb_(mb) { mb_.watchers_.fetch_add(1, std::memory_order_relaxed); }
    ~Watch() { mb_.watchers_.fetch_sub(1, std::memory_order_relaxed); }
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;
    // Read before looking at the mailbox; then wait_past(seen) if nothing was there.
    std::uint32_t now() const { return mb_.arrivals_.now(); }
    void wait_past(std::uint32_t seen) { mb_.arrivals_.wait_past(seen); }

   private:
    Mailbox& mb_;
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
  void sweep();
  // With the lock held: moves what has arrived into the FIFOs or onto posted receives.
  void match_arrived(Matched& m);
  // Matches what arrived, releases the lock, and takes it back while more has arrived (a sender
  // that found it held left its message to us); then delivers what matched.
  void unlock(Matched& m);
  SpinLock mu_;
  std::atomic<Packet*> arrived_{nullptr};  // newest first; beside mu_ (its own line was slower)

  Keyed<Packet> unexpected_;
  Keyed<RecvOp> posted_;
  Fifo<RecvOp> wildcard_;
  std::uint64_t seq_ = 0;
  std::size_t unexpected_count_ = 0, posted_count_ = 0;
  Gate arrivals_;
  std::atomic<int> watchers_{0};
};

}  // namespace tsmpi::ranks
