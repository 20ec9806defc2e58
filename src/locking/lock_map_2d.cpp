// Why two overlapping try_lock calls never both succeed (all atomics seq_cst):
//   Same key: the first step is a CAS 0->1 on the key's own flag; only one CAS wins.
//   Different overlapping keys: each side first writes its own announcement, then reads the
//   other's; Dekker with one total order S over seq_cst operations: whichever write comes
//   first in S is seen by the other side's later read, so at least one side fails.
//     (s,t) vs (s,*): row(s).usage++ then read row(s).held  | CAS row(s).held then read row(s).usage
//     (s,t) vs (*,t): col(t).usage++ then read col(t).held  | CAS col(t).held then read col(t).usage
//     (s,t), (s,*), (*,t) vs (*,*): matrix_usage_++ then read matrix_held_ | CAS matrix_held_
//                                   then read matrix_usage_
//     (s,*) vs (*,t) (always overlap, at (s,t)): held_rows_++ then read held_cols_ | held_cols_++
//                                                then read held_rows_
//   A counter read sees the other's +1 until that side's -1, which only comes after it failed or
//   unlocked. Non-overlapping pairs touch different flags/lines, or only each other's counters in
//   ways their checks ignore (distinct rows never read each other's state).
// A failed attempt undoes its announcements, so it may make a concurrent overlapping attempt fail
// too (both fail), but never leaves anything behind. Single-threaded, results are exact.
// Unlock writes are releases and the checks are acquires, so the next holder sees the previous
// holder's writes.
#include "locking/lock_map_2d.h"

#include <sched.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <iterator>
#include <tuple>
#include <utility>

namespace tsmpi::locking {

PatternClass pattern_class(LockKey k) {
  const bool any_src = k.source == kAny, any_tag = k.tag == kAny;
  if (any_src && any_tag) return PatternClass::kAnyBoth;
  if (any_src) return PatternClass::kAnySource;
  if (any_tag) return PatternClass::kAnyTag;
  return PatternClass::kDirected;
}

bool overlaps(LockKey a, LockKey b) {
  const bool src = a.source == kAny || b.source == kAny || a.source == b.source;
  const bool tag = a.tag == kAny || b.tag == kAny || a.tag == b.tag;
  return src && tag;
}

// Counts an operation in active_ for its duration, waiting out a reclaim in progress.
class LockMap2D::Operation {
 public:
  explicit Operation(LockMap2D& m) : m_(m) {
    while (true) {
      m_.active_.fetch_add(1);
      if (!m_.reclaiming_.load()) return;
      m_.active_.fetch_sub(1);
      while (m_.reclaiming_.load()) sched_yield();
    }
  }
  ~Operation() { m_.active_.fetch_sub(1); }

 private:
  LockMap2D& m_;
};

template <class Map, class Key>
typename Map::mapped_type& LockMap2D::entry(Map& m, Key key) {
  auto it = m.find(key);
  if (it == m.end())  // lost races just return the winner's entry
    it = m.emplace(std::piecewise_construct, std::forward_as_tuple(key), std::tuple<>()).first;
  return it->second;
}

std::size_t LockMap2D::entry_count() const { return points_.size() + rows_.size() + cols_.size(); }

void LockMap2D::maybe_reclaim() {
  if (entry_count() < reclaim_at_.load(std::memory_order_relaxed)) return;
  bool expected = false;
  if (!reclaiming_.compare_exchange_strong(expected, true)) return;  // someone else does it
  // Operations never wait inside the map, so the ones in flight finish promptly.
  while (active_.load() != 0) sched_yield();
  reclaim();
  reclaim_at_.store(std::max(kReclaimFloor, 2 * entry_count()), std::memory_order_relaxed);
  reclaiming_.store(false);
}

// Erases the entries no held or half-acquired key uses: a held point marks its row and column
// in use, a held line is held, so what is all zero concerns nobody. Alone in the map.
void LockMap2D::reclaim() {
  for (auto it = points_.begin(); it != points_.end();)
    it = it->second.load() == 0 ? points_.unsafe_erase(it) : std::next(it);
  for (LineMap* lines : {&rows_, &cols_})
    for (auto it = lines->begin(); it != lines->end();)
      it = it->second.held.load() == 0 && it->second.usage.load() == 0 ? lines->unsafe_erase(it) : std::next(it);
}

bool LockMap2D::lock_point(LockKey k) {
  auto& p = point(k);
  int expected = 0;
  if (!p.compare_exchange_strong(expected, 1)) return false;
  auto& r = row(k.source);
  auto& c = col(k.tag);
  r.usage.fetch_add(1);
  c.usage.fetch_add(1);
  matrix_usage_.fetch_add(1);
  if (matrix_held_.load() || r.held.load() || c.held.load()) {
    matrix_usage_.fetch_sub(1);
    c.usage.fetch_sub(1);
    r.usage.fetch_sub(1);
    p.store(0);
    return false;
  }
  return true;
}

bool LockMap2D::lock_line(Line& line, std::atomic<int>& held_here, const std::atomic<int>& crossing) {
  int expected = 0;
  if (!line.held.compare_exchange_strong(expected, 1)) return false;
  held_here.fetch_add(1);
  matrix_usage_.fetch_add(1);
  if (matrix_held_.load() || line.usage.load() > 0 || crossing.load() > 0) {
    unlock_line(line, held_here);
    return false;
  }
  return true;
}

void LockMap2D::unlock_line(Line& line, std::atomic<int>& held_here) {
  matrix_usage_.fetch_sub(1);
  held_here.fetch_sub(1);
  line.held.store(0);
}

bool LockMap2D::lock_matrix() {
  int expected = 0;
  if (!matrix_held_.compare_exchange_strong(expected, 1)) return false;
  if (matrix_usage_.load() > 0) {
    matrix_held_.store(0);
    return false;
  }
  return true;
}

bool LockMap2D::try_lock(LockKey k) {
  maybe_reclaim();
  Operation op(*this);
  bool ok = false;
  switch (pattern_class(k)) {
    case PatternClass::kDirected: ok = lock_point(k); break;
    case PatternClass::kAnyTag: ok = lock_line(row(k.source), held_rows_, held_cols_); break;
    case PatternClass::kAnySource: ok = lock_line(col(k.tag), held_cols_, held_rows_); break;
    case PatternClass::kAnyBoth: ok = lock_matrix(); break;
  }
  if (ok) held_.fetch_add(1);
  return ok;
}

void LockMap2D::unlock(LockKey k) {
  Operation op(*this);
  held_.fetch_sub(1);
  // Entries exist already (created by the try_lock that acquired k), so these are plain finds.
  switch (pattern_class(k)) {
    case PatternClass::kDirected: {
      auto& p = point(k);
      assert(p.load() == 1);
      row(k.source).usage.fetch_sub(1);
      col(k.tag).usage.fetch_sub(1);
      matrix_usage_.fetch_sub(1);
      p.store(0);
      break;
    }
    case PatternClass::kAnyTag:
      assert(row(k.source).held.load() == 1);
      unlock_line(row(k.source), held_rows_);
      break;
    case PatternClass::kAnySource:
      assert(col(k.tag).held.load() == 1);
      unlock_line(col(k.tag), held_cols_);
      break;
    case PatternClass::kAnyBoth:
      assert(matrix_held_.load() == 1);
      matrix_held_.store(0);
      break;
  }
}

bool LockMap2D::note_pattern(LockKey k) {
  const auto bit = static_cast<std::uint8_t>(pattern_class(k));
  if (classes_.load() & bit) return false;  // common case: no write, no cache-line ping-pong
  const std::uint8_t old = classes_.fetch_or(bit);
  return std::popcount(old) < 2 && std::popcount(static_cast<std::uint8_t>(old | bit)) >= 2;
}

bool LockMap2D::polling() const { return std::popcount(classes_.load()) >= 2; }

int LockMap2D::scenario() const {
  const std::uint8_t c = classes_.load();
  const auto has = [c](PatternClass p) { return (c & static_cast<std::uint8_t>(p)) != 0; };
  const bool any_src = has(PatternClass::kAnySource) || has(PatternClass::kAnyBoth);
  const bool any_tag = has(PatternClass::kAnyTag) || has(PatternClass::kAnyBoth);
  const bool specific = has(PatternClass::kDirected);
  return (any_src ? 4 : 0) | (any_tag ? 2 : 0) | (specific ? 1 : 0);  // Table 1's row order
}

std::uint8_t LockMap2D::classes_seen() const { return classes_.load(); }

int LockMap2D::held_count() const { return held_.load(); }

}  // namespace tsmpi::locking
