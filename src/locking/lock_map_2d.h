// Sparse 2-D (source, tag) lock map of one communicator (seed 001 §2.1, Listing 1.2): point locks
// (s,t), row locks (s,*), column locks (*,t) and one matrix lock (*,*), with usage counts so that a
// wildcard lock excludes every point it covers. Non-blocking: callers either keep a key between
// their Iprobe attempts ("blocking") or release it after each (Listing 1.5, "polling"), see
// polling().
#pragma once
#include <atomic>
#include <cstdint>
#include <cstddef>

#include "runtime/concurrent_maps.h"

#include "runtime/source_tag_key.h"

namespace tsmpi::locking {

inline constexpr int kAny = INT32_MIN;  // wildcard source or tag (callers translate MPI_ANY_*)

struct LockKey {
  int source;
  int tag;
  friend bool operator==(LockKey, LockKey) = default;
};

// One bit per key shape, so that a set of seen shapes fits in a byte.
enum class PatternClass : std::uint8_t {
  kDirected = 1,   // (s,t)
  kAnyTag = 2,     // (s,*)
  kAnySource = 4,  // (*,t)
  kAnyBoth = 8,    // (*,*)
};

PatternClass pattern_class(LockKey k);

// True iff some (source, tag) channel is covered by both keys.
bool overlaps(LockKey a, LockKey b);

class LockMap2D {
 public:
  LockMap2D() = default;
  LockMap2D(const LockMap2D&) = delete;
  LockMap2D& operator=(const LockMap2D&) = delete;

  // Acquires k iff no overlapping key is held (by anyone, including the caller). Never waits.
  // Two concurrent overlapping attempts may both fail; they never both succeed.
  bool try_lock(LockKey k);
  // k was acquired by try_lock and not yet released.
  void unlock(LockKey k);

  // Table 1, per communicator: records the class of a pattern used on this map. Returns true if
  // this call switched the map from blocking to polling.
  bool note_pattern(LockKey k);
  // Polling is required once two or more of the four classes have been seen: only then can
  // distinct keys overlap, and a holder waiting in MPI could deadlock as in Listings 1.3/1.4.
  // Monotone: once true, stays true.
  bool polling() const;
  // Table 1 scenario 1..7 from (any_src used, any_tag used, specific used); 0 if nothing seen.
  // (*,*) counts as both any_src and any_tag. Note that scenario 6 also covers "only (*,*)",
  // which needs no polling (a single lock); polling() follows the class count, not the number.
  int scenario() const;
  std::uint8_t classes_seen() const;

  // Keys currently held; exact when no call is in flight.
  int held_count() const;
  // Entries the map keeps (points, rows, columns). Unused ones are reclaimed once there are
  // more than twice as many as after the last reclaim (and at least kReclaimFloor), so memory
  // follows the keys in use, not every key ever used (10^6 distinct tags).
  std::size_t entry_count() const;
  static constexpr std::size_t kReclaimFloor = 4096;

 private:
  // Row (s,*) or column (*,t).
  struct Line {
    std::atomic<int> held{0};   // 0/1: the line lock itself
    std::atomic<int> usage{0};  // held (or being acquired) points in this line
  };
  // Hashes mixed: TBB picks buckets from the low bits (runtime/source_tag_key.h).
  using LineMap = ConcurrentUnorderedMap<int, Line, MixedHash>;
  using PointMap = ConcurrentUnorderedMap<std::uint64_t, std::atomic<int>, MixedHash>;

  // The map's entry for `key`, made on first use.
  template <class Map, class Key>
  static typename Map::mapped_type& entry(Map& m, Key key);
  Line& row(int s) { return entry(rows_, s); }
  Line& col(int t) { return entry(cols_, t); }
  std::atomic<int>& point(LockKey k) { return entry(points_, source_tag_key(k.source, k.tag)); }

  bool lock_point(LockKey k);
  // A row (s,*) or a column (*,t): `crossing` counts the held locks of the other direction,
  // which always overlap it.
  bool lock_line(Line& line, std::atomic<int>& held_here, const std::atomic<int>& crossing);
  void unlock_line(Line& line, std::atomic<int>& held_here);
  bool lock_matrix();

  // Every operation counts itself in active_; entries are created on first use and erased only
  // by reclaim(), which waits until no operation is in flight and keeps new ones out meanwhile
  // (TBB's erase is not concurrency-safe). References into the maps stay valid for the
  // duration of an operation, and held keys' entries are never unused.
  class Operation;
  void reclaim();
  void maybe_reclaim();
  std::atomic<int> active_{0};
  std::atomic<bool> reclaiming_{false};
  std::atomic<std::size_t> reclaim_at_{kReclaimFloor};
  PointMap points_;
  LineMap rows_;
  LineMap cols_;
  std::atomic<int> matrix_held_{0};   // 0/1
  std::atomic<int> matrix_usage_{0};  // held (or being acquired) non-matrix keys
  std::atomic<int> held_rows_{0};     // row locks held (or being acquired)
  std::atomic<int> held_cols_{0};     // column locks held (or being acquired)
  std::atomic<int> held_{0};          // diagnostics only
  std::atomic<std::uint8_t> classes_{0};
};

}  // namespace tsmpi::locking
