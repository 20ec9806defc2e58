#include "ranks/mailbox.h"

namespace tsmpi::ranks {

Mailbox::~Mailbox() {
  for (auto& [k, f] : unexpected_.map)
    while (f.head) free_packet(f.pop());
  for (Packet* p = arrived_.load(std::memory_order_acquire); p;) {
    Packet* next = p->next;
    free_packet(p);
    p = next;
  }
}

void Mailbox::arrive(Packet* p) {
  Packet* head = arrived_.load(std::memory_order_relaxed);
  do p->next = head;
  while (!arrived_.compare_exchange_weak(head, p, std::memory_order_seq_cst, std::memory_order_relaxed));
  // Pushed, then look at the lock (seq_cst both): either the holder's unlock() sees the message
  // or this thread sees the lock free. A failed try_lock means a holder that will look again.
  if (mu_.held() || !mu_.try_lock()) return;
  Matched m;
  match_arrived(m);
  unlock(m);
}

void Mailbox::match_arrived(Matched& m) {
  if (!arrived_.load(std::memory_order_relaxed)) return;
  Packet* newest = arrived_.exchange(nullptr, std::memory_order_acquire);
  Packet* oldest = nullptr;  // reversed: arrival order
  while (newest) {
    Packet* next = newest->next;
    newest->next = oldest;
    oldest = newest;
    newest = next;
  }
  for (Packet* next; oldest; oldest = next) {
    next = oldest->next;
    if (RecvOp* r = take_posted(oldest->src, oldest->tag)) {
      oldest->taker = r;
      oldest->next = nullptr;
      if (m.tail) m.tail->next = oldest;
      else m.head = oldest;
      m.tail = oldest;
    } else {
      add_unexpected(oldest);
      m.arrivals = true;
    }
  }
}

void Mailbox::unlock(Matched& m) {
  do {
    match_arrived(m);
    mu_.unlock_then_look();
  } while (arrived_.load(std::memory_order_seq_cst) && mu_.try_lock());
  deliver_taken(m.head);
  m.head = m.tail = nullptr;
  if (m.arrivals) announce_arrival();
}

RecvOp* Mailbox::take_posted(int src, int tag) {
  Fifo<RecvOp>* fifo = posted_.find(key(src, tag));
  RecvOp* exact = fifo ? fifo->head : nullptr;
  RecvOp* wild = nullptr;
  for (RecvOp* r = wildcard_.head; r; r = r->next)
    if (accepts(r->src, r->tag, src, tag)) {
      wild = r;
      break;
    }
  if (!exact && !wild) return nullptr;
  --posted_count_;
  if (exact && (!wild || exact->seq < wild->seq)) return fifo->pop();
  wildcard_.remove(wild);
  return wild;
}

void Mailbox::post(RecvOp* r) {
  r->seq = ++seq_;
  ++posted_count_;
  if (r->src == MPI_ANY_SOURCE || r->tag == MPI_ANY_TAG) {
    wildcard_.push(r);
    return;
  }
  posted_.get(key(r->src, r->tag)).push(r);
  if (posted_.size() > 64 && posted_.size() > 4 * posted_count_) sweep();
}

bool Mailbox::unpost(RecvOp* r) {
  bool removed = false;
  if (r->src == MPI_ANY_SOURCE || r->tag == MPI_ANY_TAG) {
    removed = wildcard_.remove(r);
  } else {
    Fifo<RecvOp>* fifo = posted_.find(key(r->src, r->tag));
    removed = fifo && fifo->remove(r);
  }
  if (removed) --posted_count_;
  return removed;
}

Packet* Mailbox::find(int src, int tag, Fifo<Packet>** where) {
  if (src != MPI_ANY_SOURCE && tag != MPI_ANY_TAG) {
    Fifo<Packet>* fifo = unexpected_.find(key(src, tag));
    if (!fifo || !fifo->head) return nullptr;
    *where = fifo;
    return fifo->head;
  }
  Packet* best = nullptr;
  for (auto& [k, f] : unexpected_.map) {
    Packet* p = f.head;
    if (p && accepts(src, tag, p->src, p->tag) && (!best || p->seq < best->seq)) {
      best = p;
      *where = &f;
    }
  }
  return best;
}

Packet* Mailbox::find_unexpected(int src, int tag) {
  if (unexpected_count_ == 0) return nullptr;
  Fifo<Packet>* f = nullptr;
  return find(src, tag, &f);
}

Packet* Mailbox::take_unexpected(int src, int tag) {
  if (unexpected_count_ == 0) return nullptr;
  Fifo<Packet>* f = nullptr;
  Packet* p = find(src, tag, &f);
  if (!p) return nullptr;
  f->pop();
  --unexpected_count_;
  return p;
}

Packet* Mailbox::withdraw(int src, int tag, std::uint64_t ident) {
  Fifo<Packet>* f = unexpected_.find(key(src, tag));
  if (!f) return nullptr;
  for (Packet* p = f->head; p; p = p->next) {
    if (p->ident != ident) continue;
    f->remove(p);
    --unexpected_count_;
    return p;
  }
  return nullptr;
}

void Mailbox::add_unexpected(Packet* p) {
  p->seq = ++seq_;
  ++unexpected_count_;
  unexpected_.get(key(p->src, p->tag)).push(p);
  // Keyed FIFOs stay while their key is in use (no allocation per message); the empty ones are
  // dropped once they outnumber the messages waiting, so memory follows what is alive.
  if (unexpected_.size() > 64 && unexpected_.size() > 4 * unexpected_count_) sweep();
}

void Mailbox::sweep() {
  unexpected_.drop_empty();
  posted_.drop_empty();
}

}  // namespace tsmpi::ranks
