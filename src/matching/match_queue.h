// Per-communicator matching engine of the `helper` probe policy (seed 001 §2.2, "matching outside
// of MPI"): a helper thread pulls every message out of MPI in MPI's order (MPI_Mprobe with
// MPI_ANY_SOURCE/MPI_ANY_TAG) and hands it to arrive(); application threads post receives and
// probes against this queue instead of against MPI. The engine implements MPI's matching rules:
//
//   * an arriving message goes to the EARLIEST-POSTED waiting receive whose pattern matches it;
//   * a receive takes the EARLIEST-ARRIVED unexpected message that matches its pattern;
//   * source and tag may each be a wildcard (kAny).
//
// Because arrive() is called in MPI's per-sender order, MPI's non-overtaking rule follows.
//
// Data structure (seed 001 §2.2, seed 002 §2-3: a hash table keyed by (source, tag)):
//   * every unexpected message is ONE node linked into FOUR arrival-ordered, intrusive, doubly
//     linked lists, keyed (s,t), (s,*), (*,t) and (*,*); take(P) reads the head of the list keyed
//     by P itself, and removing a message unlinks it from all four lists in O(1);
//   * every posted waiter is in ONE post-ordered list keyed by its own pattern; arrive(s,t) looks
//     at the heads of the four lists that can match it, (s,t), (s,*), (*,t), (*,*), and takes the
//     one with the smallest post sequence number.
// All operations are O(1) expected, independent of queue lengths. Keyed lists live in hash maps
// that drop a list as soon as it is empty (so ever-new tags do not grow memory over a long run);
// the map nodes and the message nodes are recycled through small bounded pools, so the steady
// state does no allocation.
//
// No MPI types here: Payload is whatever the transport hands over (in tsmpi an MPI_Message plus
// its MPI_Status; in the unit tests plain values). Payload must be default-constructible and
// movable; it is moved, never copied, except by peek().
#pragma once
#include <algorithm>
#include <cassert>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/source_tag_key.h"

namespace tsmpi::matching {

// Wildcard source or tag. Callers translate MPI_ANY_SOURCE / MPI_ANY_TAG to it; real sources and
// tags are never INT32_MIN.
inline constexpr int kAny = INT32_MIN;

// A message's actual source and tag (never kAny).
struct Envelope {
  int source;
  int tag;
  friend bool operator==(const Envelope&, const Envelope&) = default;
};

// What a receive or probe asks for; kAny = wildcard.
struct Pattern {
  int source;
  int tag;
  friend bool operator==(const Pattern&, const Pattern&) = default;
};

inline constexpr bool matches(Pattern p, Envelope e) noexcept {
  return (p.source == kAny || p.source == e.source) && (p.tag == kAny || p.tag == e.tag);
}

namespace detail {

// The four shapes of a key. kExact = (s,t), kAnyTag = (s,*), kAnySource = (*,t), kAll = (*,*).
enum Kind : int { kExact = 0, kAnyTag = 1, kAnySource = 2, kAll = 3 };

inline constexpr int kind_of(Pattern p) noexcept {
  return (p.source == kAny ? kAnySource : 0) | (p.tag == kAny ? kAnyTag : 0);
}

// The pattern of shape `kind` that `e` belongs to.
inline constexpr Pattern pattern_of(int kind, Envelope e) noexcept {
  return Pattern{(kind & kAnySource) ? kAny : e.source, (kind & kAnyTag) ? kAny : e.tag};
}

inline constexpr std::uint64_t key_of(Pattern p) noexcept { return source_tag_key(p.source, p.tag); }

// Key -> list head. Holds only non-empty lists: callers erase() a list when it becomes empty.
// Erased map nodes are kept (up to kMaxSpare) and reused, so creating a list does not allocate
// in the steady state. Pointers to a List stay valid until that list is erased (unordered_map
// never moves its elements, not even on rehash).
template <class List>
class ListMap {
  using Map = std::unordered_map<std::uint64_t, List, MixedHash>;

 public:
  static constexpr std::size_t kMaxSpare = 256;

  List* find(std::uint64_t k) noexcept {
    auto it = map_.find(k);
    return it == map_.end() ? nullptr : &it->second;
  }
  const List* find(std::uint64_t k) const noexcept {
    auto it = map_.find(k);
    return it == map_.end() ? nullptr : &it->second;
  }
  List& get_or_create(std::uint64_t k) {
    auto it = map_.find(k);
    if (it != map_.end()) return it->second;
    if (!spare_.empty()) {
      typename Map::node_type nh = std::move(spare_.back());
      spare_.pop_back();
      nh.key() = k;
      nh.mapped() = List{};
      return map_.insert(std::move(nh)).position->second;
    }
    return map_.try_emplace(k).first->second;
  }
  void erase(std::uint64_t k) {
    typename Map::node_type nh = map_.extract(k);
    assert(!nh.empty());
    if (spare_.size() >= kMaxSpare) return;  // nh frees the node
    try {
      spare_.push_back(std::move(nh));
    } catch (...) {  // out of memory growing the pool: just free the node (callers are mid-unlink)
    }
  }
  std::size_t size() const noexcept { return map_.size(); }
  template <class F>
  void for_each(F&& f) const {
    for (const auto& [k, list] : map_) f(k, list);
  }

 private:
  Map map_;
  std::vector<typename Map::node_type> spare_;
};

}  // namespace detail

template <class Payload, class Mutex = std::mutex>
class MatchQueue {
  struct WaiterList;

 public:
  // A posted receive or probe. Owned by the caller, who keeps it alive (and does not change its
  // pattern) while it is posted: until arrive() has returned it, or cancel() has removed it.
  // Callers may derive from it to add their own completion flag.
  //
  // Completion hand-off: arrive() fills envelope/payload under the queue's lock and returns the
  // waiter; the caller of arrive() then has to wake its owner (set a flag, notify). So the owner
  // must not destroy or reuse the waiter before that wake-up has finished touching it, also when
  // cancel() returned false ("already matched") -- then the wake-up is still on its way. A flag
  // that the waker touches after publishing completion (std::atomic::notify_one after the store)
  // needs a waiter that outlives the call; a mutex + condition variable whose notify happens under
  // the mutex does not.
  struct Waiter {
    Pattern pattern{};
    Envelope envelope{};  // filled when matched
    Payload payload{};    // filled when matched

    Waiter() = default;
    explicit Waiter(Pattern p) : pattern(p) {}
    Waiter(const Waiter&) = delete;  // the queue links to it by address
    Waiter& operator=(const Waiter&) = delete;

   private:
    friend class MatchQueue;
    std::uint64_t seq_ = 0;        // post order
    Waiter* prev_ = nullptr;       // links in the list keyed by `pattern`
    Waiter* next_ = nullptr;
    WaiterList* list_ = nullptr;   // non-null exactly while posted
  };

  MatchQueue() = default;
  MatchQueue(const MatchQueue&) = delete;
  MatchQueue& operator=(const MatchQueue&) = delete;
  ~MatchQueue() {
    for (Node* n = all_.head; n != nullptr;) {
      Node* next = n->next[detail::kAll];
      delete n;
      n = next;
    }
    while (free_ != nullptr) {
      Node* next = free_->next[0];
      delete free_;
      free_ = next;
    }
  }

  // One message from the transport, in the transport's order. If a posted waiter matches, the
  // earliest-posted matching one is removed, receives envelope and payload, and is returned (the
  // caller must then wake its owner); otherwise the message is queued as unexpected and nullptr
  // is returned.
  Waiter* arrive(Envelope e, Payload p) {
    assert(e.source != kAny && e.tag != kAny);
    Lock lock(mu_);
    if (posted_count_ != 0) {
      Waiter* best = nullptr;
      for (int k = 0; k < 4; ++k) {
        if (posted_by_kind_[k] == 0) continue;
        const WaiterList* l = waiter_list(k, detail::pattern_of(k, e));
        if (l != nullptr && (best == nullptr || l->head->seq_ < best->seq_)) best = l->head;
      }
      if (best != nullptr) {
        unpost(best);
        best->envelope = e;
        best->payload = std::move(p);
        return best;
      }
    }
    // Create the keyed lists first (the only step that can throw), then link.
    NodeList* lists[3];
    for (int k = 0; k < 3; ++k)
      lists[k] = &ulists_.get_or_create(detail::key_of(detail::pattern_of(k, e)));
    Node* n = alloc_node();
    n->envelope = e;
    n->payload = std::move(p);
    for (int k = 0; k < 3; ++k) {
      n->list[k] = lists[k];
      append(*lists[k], n, k);
    }
    append(all_, n, detail::kAll);
    ++unexpected_count_;
    return nullptr;
  }

  // Takes the earliest-arrived unexpected message matching `p`; false if none. `e` and `out` may
  // be null.
  bool take(Pattern p, Envelope* e, Payload* out) {
    Lock lock(mu_);
    return take_locked(p, e, out);
  }

  // Looks without taking (the engine-level "iprobe"); false if none. Copies the payload, so it
  // needs a copyable Payload when `out` is used.
  bool peek(Pattern p, Envelope* e, Payload* out) const {
    Lock lock(mu_);
    const Node* n = first_unexpected(p);
    if (n == nullptr) return false;
    if (e != nullptr) *e = n->envelope;
    if (out != nullptr) *out = n->payload;
    return true;
  }

  // take(w->pattern, ...) into w; if nothing matches, posts w so that a later arrive() matches it.
  // true = matched now (w is not posted). w must not be posted already.
  //
  // Why one mutex for the whole queue: "look for an unexpected message, else post" here and "look
  // for a posted waiter, else queue as unexpected" in arrive() must each be atomic with respect to
  // the other -- otherwise a message and a matching waiter can pass each other and both wait
  // forever. And a wildcard operation reads several lists at once ((s,t), (s,*), (*,t), (*,*) for
  // arrive; one message node is linked into four lists), so per-key locks would have to be taken
  // in groups and still could not order a wildcard against an exact match consistently. Every
  // critical section is a handful of pointer operations and at most four hash look-ups.
  bool take_or_post(Waiter* w) {
    Lock lock(mu_);
    assert(w->list_ == nullptr);
    if (take_locked(w->pattern, &w->envelope, &w->payload)) return true;
    const int kind = detail::kind_of(w->pattern);
    WaiterList& l =
        kind == detail::kAll ? posted_all_ : plists_.get_or_create(detail::key_of(w->pattern));
    w->seq_ = next_seq_++;
    w->next_ = nullptr;
    w->prev_ = l.tail;
    if (l.tail != nullptr) l.tail->next_ = w; else l.head = w;
    l.tail = w;
    w->list_ = &l;
    ++posted_count_;
    ++posted_by_kind_[kind];
    return false;
  }

  // Removes w if it is still posted. true = removed (cancelled); false = it was not posted (already
  // matched -- see the hand-off note at Waiter -- or never posted).
  bool cancel(Waiter* w) {
    Lock lock(mu_);
    if (w->list_ == nullptr) return false;
    unpost(w);
    return true;
  }

  std::size_t unexpected_count() const {
    Lock lock(mu_);
    return unexpected_count_;
  }
  std::size_t posted_count() const {
    Lock lock(mu_);
    return posted_count_;
  }
  // Number of keyed lists currently held (both kinds); for tests of the memory bound.
  std::size_t keyed_list_count() const {
    Lock lock(mu_);
    return ulists_.size() + plists_.size();
  }

  // Calls f(envelope, payload) for every unexpected message in arrival order, under the queue's
  // lock: f must not call back into this queue.
  template <class F>
  void for_each_unexpected(F&& f) const {
    Lock lock(mu_);
    for (const Node* n = all_.head; n != nullptr; n = n->next[detail::kAll])
      f(static_cast<const Envelope&>(n->envelope), static_cast<const Payload&>(n->payload));
  }

  // Removes every unexpected message in arrival order, calling f(envelope, Payload&&) for each
  // (shutdown: receive or report the leftovers). Under the lock: f must not call back into this
  // queue. Returns the number removed.
  template <class F>
  std::size_t drain_unexpected(F&& f) {
    Lock lock(mu_);
    std::size_t count = 0;
    while (Node* n = all_.head) {
      f(static_cast<const Envelope&>(n->envelope), std::move(n->payload));
      unlink_and_free(n);
      ++count;
    }
    return count;
  }

  // Calls f(const Waiter&) for every posted waiter in post order (reports at shutdown), under the
  // lock. O(n log n).
  template <class F>
  void for_each_posted(F&& f) const {
    Lock lock(mu_);
    std::vector<const Waiter*> all;
    all.reserve(posted_count_);
    auto collect = [&all](const WaiterList& l) {
      for (const Waiter* w = l.head; w != nullptr; w = w->next_) all.push_back(w);
    };
    collect(posted_all_);
    plists_.for_each([&](std::uint64_t, const WaiterList& l) { collect(l); });
    std::sort(all.begin(), all.end(),
              [](const Waiter* a, const Waiter* b) { return a->seq_ < b->seq_; });
    for (const Waiter* w : all) f(*w);
  }

  // Debug aid, O(n): checks every list's links and keys, the counts, and the matching invariant
  // "no posted waiter matches an unexpected message". True if all hold.
  bool check_invariants() const {
    Lock lock(mu_);
    std::size_t n_all = 0;
    const Node* prev = nullptr;
    for (const Node* n = all_.head; n != nullptr; prev = n, n = n->next[detail::kAll]) {
      if (n->prev[detail::kAll] != prev) return false;
      ++n_all;
      for (int k = 0; k < 3; ++k)
        if (n->list[k] != ulists_.find(detail::key_of(detail::pattern_of(k, n->envelope))))
          return false;
      // Matching invariant: no posted list that this message could match is non-empty.
      for (int k = 0; k < 4; ++k)
        if (waiter_list(k, detail::pattern_of(k, n->envelope)) != nullptr) return false;
    }
    if (all_.tail != prev || n_all != unexpected_count_) return false;
    std::size_t n_keyed = 0;
    bool ok = true;
    ulists_.for_each([&](std::uint64_t key, const NodeList& l) {
      if (l.head == nullptr) { ok = false; return; }
      const Node* p = nullptr;
      for (const Node* n = l.head; n != nullptr; p = n, n = n->next[kind_of_key(key)]) {
        const int k = kind_of_key(key);
        if (k == detail::kAll || n->prev[k] != p || n->list[k] != &l ||
            detail::key_of(detail::pattern_of(k, n->envelope)) != key)
          ok = false;
        ++n_keyed;
      }
      if (l.tail != p) ok = false;
    });
    if (!ok || n_keyed != 3 * unexpected_count_) return false;
    std::size_t n_posted = 0;
    std::size_t by_kind[4] = {};
    auto check_waiters = [&](std::uint64_t key, const WaiterList& l) {
      if (l.head == nullptr) { ok = false; return; }
      const Waiter* p = nullptr;
      for (const Waiter* w = l.head; w != nullptr; p = w, w = w->next_) {
        if (w->prev_ != p || w->list_ != &l || detail::key_of(w->pattern) != key ||
            (p != nullptr && p->seq_ >= w->seq_))
          ok = false;
        ++n_posted;
        ++by_kind[detail::kind_of(w->pattern)];
      }
      if (l.tail != p) ok = false;
    };
    if (posted_all_.head != nullptr) check_waiters(detail::key_of({kAny, kAny}), posted_all_);
    plists_.for_each(check_waiters);
    if (!ok || n_posted != posted_count_) return false;
    for (int k = 0; k < 4; ++k)
      if (by_kind[k] != posted_by_kind_[k]) return false;
    return true;
  }

 private:
  using Lock = std::lock_guard<Mutex>;

  struct NodeList;
  // One unexpected message, linked into the four lists of its shapes (index = detail::Kind).
  struct Node {
    Envelope envelope{};
    Payload payload{};
    Node* prev[4] = {};
    Node* next[4] = {};
    NodeList* list[3] = {};  // the keyed lists of shapes kExact, kAnyTag, kAnySource
  };
  struct NodeList {
    Node* head = nullptr;
    Node* tail = nullptr;
  };
  struct WaiterList {
    Waiter* head = nullptr;
    Waiter* tail = nullptr;
  };

  static constexpr std::size_t kMaxFreeNodes = 1024;

  static constexpr int kind_of_key(std::uint64_t key) noexcept {
    return detail::kind_of(Pattern{static_cast<int>(static_cast<std::uint32_t>(key >> 32)),
                                   static_cast<int>(static_cast<std::uint32_t>(key))});
  }

  static void append(NodeList& l, Node* n, int k) noexcept {
    n->next[k] = nullptr;
    n->prev[k] = l.tail;
    if (l.tail != nullptr) l.tail->next[k] = n; else l.head = n;
    l.tail = n;
  }
  static void unlink(NodeList& l, Node* n, int k) noexcept {
    if (n->prev[k] != nullptr) n->prev[k]->next[k] = n->next[k]; else l.head = n->next[k];
    if (n->next[k] != nullptr) n->next[k]->prev[k] = n->prev[k]; else l.tail = n->prev[k];
  }

  // Posted list of shape `kind` for pattern `p`, or null if there is none (lists are never empty).
  const WaiterList* waiter_list(int kind, Pattern p) const noexcept {
    if (kind == detail::kAll) return posted_all_.head != nullptr ? &posted_all_ : nullptr;
    return plists_.find(detail::key_of(p));
  }

  const Node* first_unexpected(Pattern p) const noexcept {
    if (unexpected_count_ == 0) return nullptr;
    const int kind = detail::kind_of(p);
    if (kind == detail::kAll) return all_.head;
    const NodeList* l = ulists_.find(detail::key_of(p));
    return l != nullptr ? l->head : nullptr;
  }

  bool take_locked(Pattern p, Envelope* e, Payload* out) {
    Node* n = const_cast<Node*>(first_unexpected(p));
    if (n == nullptr) return false;
    if (e != nullptr) *e = n->envelope;
    if (out != nullptr) *out = std::move(n->payload);
    unlink_and_free(n);
    return true;
  }

  void unlink_and_free(Node* n) {
    for (int k = 0; k < 3; ++k) {
      NodeList& l = *n->list[k];
      unlink(l, n, k);
      if (l.head == nullptr) ulists_.erase(detail::key_of(detail::pattern_of(k, n->envelope)));
    }
    unlink(all_, n, detail::kAll);
    --unexpected_count_;
    free_node(n);
  }

  void unpost(Waiter* w) {
    WaiterList& l = *w->list_;
    if (w->prev_ != nullptr) w->prev_->next_ = w->next_; else l.head = w->next_;
    if (w->next_ != nullptr) w->next_->prev_ = w->prev_; else l.tail = w->prev_;
    w->prev_ = w->next_ = nullptr;
    w->list_ = nullptr;
    const int kind = detail::kind_of(w->pattern);
    if (l.head == nullptr && kind != detail::kAll) plists_.erase(detail::key_of(w->pattern));
    --posted_count_;
    --posted_by_kind_[kind];
  }

  Node* alloc_node() {
    if (free_ == nullptr) return new Node;
    Node* n = free_;
    free_ = n->next[0];
    --free_count_;
    return n;
  }
  void free_node(Node* n) {
    if (free_count_ >= kMaxFreeNodes) {
      delete n;
      return;
    }
    n->payload = Payload{};  // drop whatever the payload held now, not when the node is reused
    n->next[0] = free_;
    free_ = n;
    ++free_count_;
  }

  mutable Mutex mu_;
  // Unexpected messages: the (*,*) list (= all of them, in arrival order) and the keyed lists.
  NodeList all_;
  detail::ListMap<NodeList> ulists_;
  std::size_t unexpected_count_ = 0;
  // Posted waiters: the (*,*) list and the keyed lists; how many are posted of each shape, so
  // arrive() skips the look-ups of shapes nobody is waiting with.
  WaiterList posted_all_;
  detail::ListMap<WaiterList> plists_;
  std::size_t posted_count_ = 0;
  std::size_t posted_by_kind_[4] = {};
  std::uint64_t next_seq_ = 0;
  // Recycled message nodes (singly linked through next[0]).
  Node* free_ = nullptr;
  std::size_t free_count_ = 0;
};

}  // namespace tsmpi::matching
