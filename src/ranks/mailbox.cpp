#include "ranks/mailbox.h"

#include <cstring>

namespace tsmpi::ranks {

std::atomic<bool> g_senders_match{false};

Mailbox::Mailbox(int senders, bool shared)
    : senders_(senders),
      ready_words_((senders + 63) / 64),
      shared_(shared),
      // A ring per pair: 64 slots (4 KiB) while few thread-ranks share a process, fewer with many
      // (an all-to-all of 256 thread-ranks makes 65 280 boxes per channel: 32 MiB at 8 slots).
      box_slots_(senders <= 16 ? 64 : senders <= 64 ? 32 : 8),
      fast_(senders > 0 ? std::make_unique<std::atomic<FastBox*>[]>(static_cast<std::size_t>(senders)) : nullptr),
      ready_(ready_words_ > 0 ? std::make_unique<ReadyWord[]>(static_cast<std::size_t>(ready_words_)) : nullptr) {}

Mailbox::~Mailbox() {
  for (auto& [k, f] : unexpected_.map)
    while (f.head) free_packet(f.pop());
  for (int i = 0; i < senders_; ++i) {
    FastBox* b = fast_[i].load(std::memory_order_acquire);
    if (!b) continue;
    b->drain([](const FastBox::Slot& s) {
      if (s.bytes == FastBox::kViaPacket) free_packet(s.packet());
    });
    delete b;
  }
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
  match_if_free();
}

FastBox* Mailbox::fast_box(int sender) {
  std::atomic<FastBox*>& slot = fast_[sender];
  FastBox* b = slot.load(std::memory_order_acquire);
  if (b) return b;
  auto* made = new FastBox(box_slots_);
  if (slot.compare_exchange_strong(b, made, std::memory_order_acq_rel)) return made;
  delete made;  // another thread acting as the same rank made it first
  return b;
}

FastBox::Slot* Mailbox::claim_from(int sender, FastBox** box) {
  FastBox* b = *box = fast_box(sender);
  std::atomic<std::uint64_t>& word = ready_word(sender);
  const std::uint64_t bit = ready_bit(sender);
  if (!(word.load(std::memory_order_relaxed) & bit)) word.fetch_or(bit, std::memory_order_seq_cst);
  if (shared_) b->produce_lock().lock();
  FastBox::Slot* s;
  while (!(s = b->claim())) {
    // Full: take the lock (its holder never takes a producer's) and match what the boxes hold.
    word.fetch_or(bit, std::memory_order_seq_cst);
    Guard g(*this);
  }
  return s;
}

void Mailbox::published_from(int sender, FastBox* b) {
  b->publish();
  if (shared_) b->produce_lock().unlock();
  // Published; the bit was set before (a sleeper's sweep may have cleared it since: set it again,
  // so the message is looked at). Then whether anyone sleeps: if not, the receiver polls.
  std::atomic<std::uint64_t>& word = ready_word(sender);
  const std::uint64_t bit = ready_bit(sender);
  light_barrier();
  if (!(word.load(std::memory_order_relaxed) & bit)) word.fetch_or(bit, std::memory_order_seq_cst);
  if (!parked_.load(std::memory_order_relaxed) && !g_senders_match.load(std::memory_order_relaxed)) return;
  full_fence();  // Dekker with the holder's unlock()
  match_if_free();
}

void Mailbox::arrive_from(int sender, Packet* p) {
  if (sender < 0 || sender >= senders_) return arrive(p);
  FastBox* b;
  claim_from(sender, &b)->set_packet(p);
  published_from(sender, b);
}

Packet* Mailbox::packet_of(const FastBox::Slot& s) {
  if (s.bytes == FastBox::kViaPacket) return s.packet();
  Packet* p = new_packet(s.ident);  // from the receiver's own pool: no line of the sender's
  p->src = s.src;
  p->tag = s.tag;
  p->bytes = s.bytes;
  std::memcpy(p->reserve(s.bytes), s.data, s.bytes);
  p->comm = comm_;
  p->dst = rank_;
  return p;
}

void Mailbox::sweep_boxes() {
  Guard g(*this);  // the holder also matches: it must not miss a box whose bit is cleared here
  for (int w = 0; w < ready_words_; ++w) ready_[w].bits.store(0, std::memory_order_seq_cst);
  heavy_barrier();
  Matched& m = g.matched();
  for (int i = 0; i < senders_; ++i) {
    FastBox* b = fast_[i].load(std::memory_order_acquire);
    if (b && b->holds()) {
      ready_word(i).fetch_or(ready_bit(i), std::memory_order_seq_cst);
      drain_box(b, m);
    }
  }
}

Packet* Mailbox::receive(RecvOp* r, int sender) {
  if (mu_.try_lock()) {
    Matched m;
    match_arrived(m, /*all_boxes=*/sender < 0);
    bool filled = false;
    Packet* p = take_earliest(r, sender, m, &filled);
    if (filled) {
      r->next = m.filled;
      m.filled = r;
    } else if (!p) {
      r->unseen = false;
      post(r);
    }
    unlock(m);
    return p;
  }
  r->unseen = false;
  RecvOp* head = posting_.load(std::memory_order_relaxed);
  do r->next = head;
  while (!posting_.compare_exchange_weak(head, r, std::memory_order_seq_cst, std::memory_order_relaxed));
  // As arrive(): either the holder's unlock() sees r, or this thread takes the lock.
  match_if_free();
  return nullptr;
}

Mailbox::Take Mailbox::take_for(RecvOp* r, int sender, Packet** p) {
  if (!mu_.try_lock()) return Take::kNone;  // its holder matches, and may leave r's message in the FIFOs
  Matched m;
  match_arrived(m, /*all_boxes=*/false);
  Take t = Take::kPost;
  if (posted_count_ == 0) {
    bool filled = false;
    *p = take_earliest(r, sender, m, &filled);
    t = filled ? Take::kFilled : *p ? Take::kTaken : Take::kNone;
  }
  unlock(m);
  return t;
}

Packet* Mailbox::take_earliest(RecvOp* r, int sender, Matched& m, bool* filled) {
  if (Packet* p = take_unexpected(r->src, r->tag)) return p;
  // Nothing posted: no earlier receive takes a message of this sender's box; those before r's
  // are now in the FIFOs, so r's earliest is the first its box holds that it accepts.
  if (sender >= 0 && sender < senders_ && posted_count_ == 0) return take_from_box(sender, r, m, filled);
  return nullptr;
}

namespace {
template <class T>
T* reversed(T* newest) {
  T* oldest = nullptr;
  while (newest) {
    T* next = newest->next;
    newest->next = oldest;
    oldest = newest;
    newest = next;
  }
  return oldest;
}
}  // namespace

void Mailbox::Matched::add(Packet* p, RecvOp* r) {
  p->taker = r;
  p->next = nullptr;
  if (tail) tail->next = p;
  else head = p;
  tail = p;
}

void Mailbox::take_arrival(Packet* p, Matched& m) {
  if (RecvOp* r = take_posted(p->src, p->tag)) {
    m.add(p, r);
  } else {
    add_unexpected(p);
    m.arrivals = true;
  }
}

void Mailbox::drain_box(FastBox* b, Matched& m) {
  b->drain([&](const FastBox::Slot& s) {
    // A small message for a posted receive goes from its slot straight into the buffer.
    if (s.bytes != FastBox::kViaPacket) {
      if (RecvOp* r = take_posted(s.src, s.tag)) {
        if (deliver_in_place(s.data, s.bytes, s.src, s.tag, r)) {
          r->next = m.filled;
          m.filled = r;
        } else {
          m.add(packet_of(s), r);
        }
        return;
      }
    }
    take_arrival(packet_of(s), m);
  });
}

Packet* Mailbox::take_from_box(int sender, RecvOp* r, Matched& m, bool* filled) {
  FastBox* b = fast_[sender].load(std::memory_order_acquire);
  if (!b) return nullptr;
  Packet* taken = nullptr;
  b->drain_until([&](const FastBox::Slot& s) {
    // A slot holding a packet has no envelope of its own (its fields are an earlier message's).
    const bool via_packet = s.bytes == FastBox::kViaPacket;
    const int src = via_packet ? s.packet()->src : s.src, tag = via_packet ? s.packet()->tag : s.tag;
    if (!accepts(r->src, r->tag, src, tag)) {
      take_arrival(packet_of(s), m);
      return true;
    }
    if (!via_packet && deliver_in_place(s.data, s.bytes, src, tag, r)) *filled = true;
    else taken = packet_of(s);
    return false;
  });
  return taken;
}

void Mailbox::match_arrived(Matched& m, bool all_boxes) {
  // Receives first: each was posted before the holder looked, as were the messages below; in
  // either order a sender's messages meet a receiver's receives in the order of each.
  if (posting_.load(std::memory_order_relaxed)) {
    for (RecvOp *r = reversed(posting_.exchange(nullptr, std::memory_order_acquire)), *next; r; r = next) {
      next = r->next;
      if (Packet* p = take_unexpected(r->src, r->tag)) m.add(p, r);
      else post(r);
    }
  }
  if (all_boxes || posted_count_ > 0 || drain_wanted())
    for (int w = 0; w < ready_words_; ++w)
      for (std::uint64_t bits = ready_[w].bits.load(std::memory_order_acquire); bits; bits &= bits - 1)
        drain_box(fast_[w * 64 + __builtin_ctzll(bits)].load(std::memory_order_acquire), m);
  if (!arrived_.load(std::memory_order_relaxed)) return;
  Packet* oldest = reversed(arrived_.exchange(nullptr, std::memory_order_acquire));  // arrival order
  for (Packet* next; oldest; oldest = next) {
    next = oldest->next;
    take_arrival(oldest, m);
  }
}

void Mailbox::unlock(Matched& m) {
  // Boxes need a look after the release only while a receive is posted (read with the lock held)
  // or someone relies on it (drain_wanted()).
  bool posted;
  do {
    match_arrived(m, /*all_boxes=*/false);
    posted = posted_count_ > 0;
    mu_.unlock_then_look();
  } while ((arrived_.load(std::memory_order_seq_cst) || posting_.load(std::memory_order_seq_cst) ||
            ((posted || drain_wanted()) && boxes_hold())) &&
           mu_.try_lock());
  deliver_taken(m.head);
  m.head = m.tail = nullptr;
  for (RecvOp *r = m.filled, *next; r; r = next) {
    next = r->next;
    r->complete_or_mark();  // a receive filled before it was posted is its caller's to complete
  }
  m.filled = nullptr;
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
