// A thread-rank's matching structure (seed 002): posted receives and messages not yet received,
// each kept in FIFOs keyed by (source, tag), with wildcard receives in a list of their own; a
// sequence number decides which of several candidates came first, so MPI's matching order holds
// with MPI_ANY_SOURCE and MPI_ANY_TAG. One spin lock per mailbox: it is contended only by the
// thread-rank itself and the threads sending to it at that moment, for a match at a time.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "ranks/operations.h"
#include "ranks/wake.h"

namespace tsmpi::ranks {

class Mailbox {
 public:
  ~Mailbox();
  SpinLock mu;
  // Arrivals of messages, for blocking probes to wait on.
  Gate arrivals;

  // With mu held:
  // The earliest posted receive that accepts a message (src, tag), removed; nullptr if none.
  RecvOp* take_posted(int src, int tag);
  void post(RecvOp* r);
  bool unpost(RecvOp* r);  // cancel: true when it was still posted
  // The earliest message a receive (src, tag) accepts; removed by take_unexpected.
  Packet* find_unexpected(int src, int tag);
  Packet* take_unexpected(int src, int tag);
  void add_unexpected(Packet* p);
  bool empty() const { return unexpected_count_ == 0 && posted_count_ == 0; }

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
  Packet* find(int src, int tag, Fifo<Packet>** where);
  void sweep();

  std::unordered_map<std::uint64_t, Fifo<Packet>> unexpected_;
  std::unordered_map<std::uint64_t, Fifo<RecvOp>> posted_;
  Fifo<RecvOp> wildcard_;
  std::uint64_t seq_ = 0;
  std::size_t unexpected_count_ = 0, posted_count_ = 0;
};

}  // namespace tsmpi::ranks
