#include "locking/lock_map_2d.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

using tsmpi::locking::kAny;
using tsmpi::locking::LockKey;
using tsmpi::locking::LockMap2D;
using tsmpi::locking::overlaps;
using tsmpi::locking::pattern_class;
using tsmpi::locking::PatternClass;

namespace {

std::string str(LockKey k) {
  auto one = [](int v) { return v == kAny ? std::string("*") : std::to_string(v); };
  return "(" + one(k.source) + "," + one(k.tag) + ")";
}

// Two points, two rows, two columns and the matrix: every pair of classes, sharing a line or not.
const std::vector<LockKey> kRepresentatives = {
    {0, 0}, {0, 1}, {1, 0}, {1, 1}, {0, kAny}, {1, kAny}, {kAny, 0}, {kAny, 1}, {kAny, kAny},
};

}  // namespace

TEST(LockMap2D, PatternClassOfEachShape) {
  EXPECT_EQ(pattern_class({3, 4}), PatternClass::kDirected);
  EXPECT_EQ(pattern_class({3, kAny}), PatternClass::kAnyTag);
  EXPECT_EQ(pattern_class({kAny, 4}), PatternClass::kAnySource);
  EXPECT_EQ(pattern_class({kAny, kAny}), PatternClass::kAnyBoth);
  EXPECT_EQ(pattern_class({-2, 0}), PatternClass::kDirected);  // only kAny is a wildcard
}

TEST(LockMap2D, OverlapsByHand) {
  EXPECT_TRUE(overlaps({0, 0}, {0, 0}));
  EXPECT_FALSE(overlaps({0, 0}, {0, 1}));
  EXPECT_FALSE(overlaps({0, 0}, {1, 0}));
  EXPECT_FALSE(overlaps({0, 0}, {1, 1}));
  EXPECT_TRUE(overlaps({0, 0}, {0, kAny}));
  EXPECT_FALSE(overlaps({0, 0}, {1, kAny}));
  EXPECT_TRUE(overlaps({0, 0}, {kAny, 0}));
  EXPECT_FALSE(overlaps({0, 0}, {kAny, 1}));
  EXPECT_TRUE(overlaps({0, 0}, {kAny, kAny}));
  EXPECT_TRUE(overlaps({0, kAny}, {0, kAny}));
  EXPECT_FALSE(overlaps({0, kAny}, {1, kAny}));
  EXPECT_TRUE(overlaps({0, kAny}, {kAny, 7}));  // a row and a column always cross
  EXPECT_TRUE(overlaps({0, kAny}, {kAny, kAny}));
  EXPECT_TRUE(overlaps({kAny, 0}, {kAny, 0}));
  EXPECT_FALSE(overlaps({kAny, 0}, {kAny, 1}));
  EXPECT_TRUE(overlaps({kAny, 0}, {kAny, kAny}));
  EXPECT_TRUE(overlaps({kAny, kAny}, {kAny, kAny}));
  for (auto a : kRepresentatives)
    for (auto b : kRepresentatives) EXPECT_EQ(overlaps(a, b), overlaps(b, a)) << str(a) << str(b);
}

// Every ordered pair of representatives: holding a, b succeeds iff it does not overlap a; after
// releasing, both can be taken again.
TEST(LockMap2D, EveryPairOfKeyClasses) {
  for (auto a : kRepresentatives) {
    for (auto b : kRepresentatives) {
      SCOPED_TRACE(str(a) + " then " + str(b));
      LockMap2D m;
      ASSERT_TRUE(m.try_lock(a));
      EXPECT_EQ(m.held_count(), 1);
      const bool got_b = m.try_lock(b);
      EXPECT_EQ(got_b, !overlaps(a, b));
      if (got_b) {
        EXPECT_EQ(m.held_count(), 2);
        EXPECT_FALSE(m.try_lock(a));  // held keys stay exclusive
        EXPECT_FALSE(m.try_lock(b));
        m.unlock(b);
      }
      m.unlock(a);
      EXPECT_EQ(m.held_count(), 0);
      ASSERT_TRUE(m.try_lock(b));  // unlock restored everything
      m.unlock(b);
      ASSERT_TRUE(m.try_lock(a));
      m.unlock(a);
    }
  }
}

TEST(LockMap2D, ManyPointsBlockTheirLinesUntilAllAreReleased) {
  LockMap2D m;
  for (int s = 0; s < 3; ++s)
    for (int t = 0; t < 3; ++t) ASSERT_TRUE(m.try_lock({s, t}));
  EXPECT_EQ(m.held_count(), 9);
  EXPECT_TRUE(m.try_lock({5, kAny}));  // untouched row and column are free
  EXPECT_FALSE(m.try_lock({kAny, 5}));  // ... but a column crosses the held row
  m.unlock({5, kAny});
  EXPECT_TRUE(m.try_lock({kAny, 5}));
  m.unlock({kAny, 5});
  // Release row 1 point by point: the row stays blocked until its last point goes.
  for (int t = 0; t < 3; ++t) {
    EXPECT_FALSE(m.try_lock({1, kAny}));
    m.unlock({1, t});
  }
  EXPECT_FALSE(m.try_lock({kAny, kAny}));
  ASSERT_TRUE(m.try_lock({1, kAny}));
  EXPECT_FALSE(m.try_lock({kAny, 1}));  // rows and columns exclude each other
  m.unlock({1, kAny});
  for (int s : {0, 2})
    for (int t = 0; t < 3; ++t) m.unlock({s, t});
  EXPECT_EQ(m.held_count(), 0);
  EXPECT_TRUE(m.try_lock({kAny, kAny}));
  for (auto k : kRepresentatives) {
    if (!(k == LockKey{kAny, kAny})) {
      EXPECT_FALSE(m.try_lock(k)) << str(k);
    }
  }
  m.unlock({kAny, kAny});
}

TEST(LockMap2D, SeveralRowsOrSeveralColumnsCoexist) {
  LockMap2D m;
  for (int s = 0; s < 10; ++s) ASSERT_TRUE(m.try_lock({s, kAny}));
  EXPECT_FALSE(m.try_lock({kAny, 42}));
  EXPECT_TRUE(m.try_lock({10, 42}));
  m.unlock({10, 42});
  for (int s = 0; s < 10; ++s) m.unlock({s, kAny});
  for (int t = 0; t < 10; ++t) ASSERT_TRUE(m.try_lock({kAny, t}));
  EXPECT_FALSE(m.try_lock({42, kAny}));
  EXPECT_FALSE(m.try_lock({42, 3}));
  for (int t = 0; t < 10; ++t) m.unlock({kAny, t});
  EXPECT_TRUE(m.try_lock({42, kAny}));
  m.unlock({42, kAny});
}

TEST(LockMap2D, ExtremeValuesAreOrdinaryKeys) {
  LockMap2D m;
  const int big = INT32_MAX, neg = -2;  // e.g. MPI_TAG_UB-ish, MPI_PROC_NULL-ish
  ASSERT_TRUE(m.try_lock({big, big}));
  ASSERT_TRUE(m.try_lock({neg, big}));
  ASSERT_TRUE(m.try_lock({big, neg}));
  EXPECT_FALSE(m.try_lock({big, kAny}));
  EXPECT_TRUE(m.try_lock({0, kAny}));
  m.unlock({0, kAny});
  m.unlock({big, big});
  m.unlock({neg, big});
  m.unlock({big, neg});
  EXPECT_EQ(m.held_count(), 0);
}

// Many points on one tag (one source each, the master/worker shape). std::hash is the identity
// and TBB takes buckets from the low bits, so without LockMap2D's mixing hash these would all
// share one bucket: 50000 such keys took ~290 s instead of ~30 ms. The bound is loose on purpose
// (shared, loaded machines); a regression is quadratic and far beyond it.
TEST(LockMap2D, ManyDistinctKeysStayCheap) {
  LockMap2D m;
  const int n = 20000;
  const auto start = std::chrono::steady_clock::now();
  for (int s = 0; s < n; ++s) ASSERT_TRUE(m.try_lock({s, 7}));
  EXPECT_FALSE(m.try_lock({kAny, 7}));
  EXPECT_FALSE(m.try_lock({n / 2, kAny}));
  EXPECT_TRUE(m.try_lock({kAny, 8}));  // points on tag 7 leave column 8 free
  m.unlock({kAny, 8});
  for (int s = 0; s < n; ++s) m.unlock({s, 7});
  EXPECT_TRUE(m.try_lock({kAny, 7}));
  m.unlock({kAny, 7});
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  EXPECT_LT(ms.count(), 5000);
}

// Ever-new tags (a tag per message) must not make the map grow for ever: unused entries are
// reclaimed, and keys held across the reclaims keep excluding what they overlap.
TEST(LockMap2D, UnusedEntriesAreReclaimedHeldOnesKept) {
  LockMap2D m;
  ASSERT_TRUE(m.try_lock({5, 77}));
  ASSERT_TRUE(m.try_lock({kAny, 99}));
  for (int t = 100; t < 100100; ++t) {
    ASSERT_TRUE(m.try_lock({1, t}));
    m.unlock({1, t});
  }
  EXPECT_LT(m.entry_count(), 3 * LockMap2D::kReclaimFloor);
  EXPECT_FALSE(m.try_lock({5, kAny}));
  EXPECT_FALSE(m.try_lock({kAny, 77}));
  EXPECT_FALSE(m.try_lock({3, 99}));
  EXPECT_FALSE(m.try_lock({kAny, kAny}));
  m.unlock({5, 77});
  m.unlock({kAny, 99});
  EXPECT_TRUE(m.try_lock({kAny, kAny}));
  m.unlock({kAny, kAny});
  EXPECT_EQ(m.held_count(), 0);
}

// Reclaims while other threads lock and unlock: points on ever-new tags of source 0 against the
// row (0,*) and the matrix (*,*), which overlap every one of them.
TEST(LockMap2DStress, ReclaimsUnderConcurrentUse) {
  LockMap2D m;
  std::atomic<int> points{0}, wide{0};
  std::atomic<long> clashes{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int p = 0; p < 3; ++p)
    threads.emplace_back([&, p] {
      for (int i = 0; i < 40000; ++i) {
        LockKey k{0, p * 1000000 + i};
        if (!m.try_lock(k)) continue;
        points.fetch_add(1);
        if (wide.load()) clashes.fetch_add(1);
        points.fetch_sub(1);
        m.unlock(k);
      }
    });
  for (LockKey w : {LockKey{0, kAny}, LockKey{kAny, kAny}})
    threads.emplace_back([&, w] {
      while (!stop.load()) {
        if (!m.try_lock(w)) continue;
        wide.fetch_add(1);
        if (points.load()) clashes.fetch_add(1);
        wide.fetch_sub(1);
        m.unlock(w);
      }
    });
  for (int p = 0; p < 3; ++p) threads[static_cast<std::size_t>(p)].join();
  stop.store(true);
  for (std::size_t i = 3; i < threads.size(); ++i) threads[i].join();
  EXPECT_EQ(clashes.load(), 0);
  EXPECT_EQ(m.held_count(), 0);
  EXPECT_LT(m.entry_count(), 3 * LockMap2D::kReclaimFloor);
}

// ---- Table 1 ----------------------------------------------------------------------------------

namespace {

LockKey example(PatternClass c) {
  switch (c) {
    case PatternClass::kDirected: return {1, 2};
    case PatternClass::kAnyTag: return {1, kAny};
    case PatternClass::kAnySource: return {kAny, 2};
    case PatternClass::kAnyBoth: return {kAny, kAny};
  }
  return {0, 0};
}

}  // namespace

TEST(LockMap2D, NothingSeen) {
  LockMap2D m;
  EXPECT_EQ(m.scenario(), 0);
  EXPECT_FALSE(m.polling());
  EXPECT_EQ(m.classes_seen(), 0);
}

// The seven rows of Table 1, each built from the classes that produce it.
TEST(LockMap2D, Table1Scenarios) {
  using P = PatternClass;
  struct Row {
    std::vector<P> classes;
    int scenario;
    bool polling;
  };
  const std::vector<Row> rows = {
      {{P::kDirected}, 1, false},                        // simple 2d, blocking
      {{P::kAnyTag}, 2, false},                          // simple 1d, blocking
      {{P::kAnyTag, P::kDirected}, 3, true},             // 2d, polling
      {{P::kAnySource}, 4, false},                       // simple 1d, blocking
      {{P::kAnySource, P::kDirected}, 5, true},          // 2d, polling
      {{P::kAnySource, P::kAnyTag}, 6, true},            // 2d, polling
      {{P::kAnyBoth}, 6, false},                         // (*,*) only: one lock, no overlaps
      {{P::kAnyBoth, P::kAnyTag}, 6, true},              //
      {{P::kAnyBoth, P::kAnySource, P::kAnyTag}, 6, true},
      {{P::kDirected, P::kAnyBoth}, 7, true},            // 2d, polling
      {{P::kDirected, P::kAnyTag, P::kAnySource}, 7, true},
      {{P::kDirected, P::kAnyTag, P::kAnySource, P::kAnyBoth}, 7, true},
  };
  for (const auto& r : rows) {
    // Every order of the classes, each noted twice: the switch is reported exactly once, on the
    // second distinct class; polling never goes back.
    auto order = r.classes;
    std::sort(order.begin(), order.end());
    do {
      LockMap2D m;
      int switches = 0, distinct = 0;
      std::uint8_t bits = 0;
      for (auto c : order) {
        for (int rep = 0; rep < 2; ++rep) {
          const bool was_polling = m.polling();
          const bool sw = m.note_pattern(example(c));
          if (rep == 0) ++distinct;
          switches += sw;
          EXPECT_EQ(sw, !was_polling && m.polling());
          EXPECT_EQ(m.polling(), distinct >= 2);
          if (was_polling) {
            EXPECT_TRUE(m.polling());
          }
        }
        bits |= static_cast<std::uint8_t>(c);
      }
      EXPECT_EQ(m.scenario(), r.scenario);
      EXPECT_EQ(m.polling(), r.polling);
      EXPECT_EQ(switches, r.polling ? 1 : 0);
      EXPECT_EQ(m.classes_seen(), bits);
    } while (std::next_permutation(order.begin(), order.end()));
  }
}

TEST(LockMap2D, NotingPatternsDoesNotLock) {
  LockMap2D m;
  for (auto k : kRepresentatives) m.note_pattern(k);
  EXPECT_EQ(m.held_count(), 0);
  EXPECT_TRUE(m.try_lock({kAny, kAny}));
  m.unlock({kAny, kAny});
}

TEST(LockMap2D, ConcurrentNotesSwitchExactlyOnce) {
  for (int round = 0; round < 200; ++round) {
    LockMap2D m;
    std::atomic<int> switches{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> ts;
    for (int i = 0; i < 4; ++i)
      ts.emplace_back([&, i] {
        while (!go.load()) std::this_thread::yield();
        switches += m.note_pattern(kRepresentatives[i * 2]);  // (0,0) (1,0) (0,*) (*,0)
      });
    go = true;
    for (auto& t : ts) t.join();
    ASSERT_EQ(switches.load(), 1);
    ASSERT_TRUE(m.polling());
    ASSERT_EQ(m.scenario(), 7);
  }
}

// ---- randomized, single-threaded, against a sequential model ----------------------------------

namespace {

struct Domain {
  std::vector<int> sources, tags;
  LockKey draw(std::mt19937& rng) const {
    std::uniform_int_distribution<std::size_t> s(0, sources.size() - 1), t(0, tags.size() - 1);
    return {sources[s(rng)], tags[t(rng)]};
  }
};

// Sources/tags 0..3 plus a few far-apart values, and the wildcard (one in five draws each).
const Domain kModelDomain{{0, 1, 2, 3, 1 << 20, kAny}, {0, 1, 2, 3, 32767, kAny}};

}  // namespace

TEST(LockMap2D, RandomSequencesMatchTheModel) {
  for (std::uint32_t seed : {1u, 2u, 3u, 42u, 1234u, 99991u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    LockMap2D m;
    std::vector<LockKey> held;  // the model
    int successes = 0;
    for (int op = 0; op < 5000; ++op) {
      // Unlock less often than lock, so the held set fills up and failures are frequent.
      if (!held.empty() && rng() % 3 == 0) {
        std::size_t i = rng() % held.size();
        m.unlock(held[i]);
        held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        const LockKey k = kModelDomain.draw(rng);
        const bool expect = std::none_of(held.begin(), held.end(),
                                         [&](LockKey h) { return overlaps(h, k); });
        ASSERT_EQ(m.try_lock(k), expect) << "op " << op << " key " << str(k);
        if (expect) {
          held.push_back(k);
          ++successes;
        }
      }
      ASSERT_EQ(m.held_count(), static_cast<int>(held.size()));
    }
    EXPECT_GT(successes, 500);
    for (auto k : held) m.unlock(k);
    EXPECT_EQ(m.held_count(), 0);
    EXPECT_TRUE(m.try_lock({kAny, kAny}));
    m.unlock({kAny, kAny});
  }
}

// ---- randomized, concurrent --------------------------------------------------------------------

namespace {

// Independent referee: the multiset of keys currently held according to the threads.
class Checker {
 public:
  // Registers k; returns false if an overlapping key was already registered.
  bool enter(LockKey k) {
    std::lock_guard g(mu_);
    const bool clash =
        std::any_of(held_.begin(), held_.end(), [&](LockKey h) { return overlaps(h, k); });
    held_.push_back(k);
    return !clash;
  }
  void leave(LockKey k) {
    std::lock_guard g(mu_);
    auto it = std::find(held_.begin(), held_.end(), k);
    if (it != held_.end()) held_.erase(it);
  }

 private:
  std::mutex mu_;
  std::vector<LockKey> held_;
};

// A second, lock-free referee for small domains: occupancy per cell (s,t), s,t < n. Unlike the
// mutex above it does not serialize the threads between try_lock and unlock. Each cell also has
// plain (non-atomic) data that holders increment; a lost update shows in the totals. (The
// referees' own synchronization hides missing ordering in the map from -fsanitize=thread; the
// hammer test below checks that.)
class Cells {
 public:
  explicit Cells(int n) : n_(n), c_(static_cast<std::size_t>(n * n)), data_(c_.size(), 0) {}
  // Returns the number of cells of k that were already occupied.
  int enter(LockKey k) {
    int clashes = 0;
    for_cells(k, [&](std::size_t i) {
      clashes += c_[i].fetch_add(1) != 0;
      ++data_[i];
      writes_.fetch_add(1, std::memory_order_relaxed);
    });
    return clashes;
  }
  void leave(LockKey k) {
    for_cells(k, [&](std::size_t i) { c_[i].fetch_sub(1); });
  }
  // Only when no thread is running.
  bool totals_match() const {
    long sum = 0;
    for (long d : data_) sum += d;
    return sum == writes_.load();
  }

 private:
  template <class F>
  void for_cells(LockKey k, F f) {
    for (int s = 0; s < n_; ++s)
      for (int t = 0; t < n_; ++t)
        if ((k.source == kAny || k.source == s) && (k.tag == kAny || k.tag == t))
          f(static_cast<std::size_t>(s * n_ + t));
  }
  int n_;
  std::vector<std::atomic<int>> c_;
  std::vector<long> data_;  // guarded by the lock map itself
  std::atomic<long> writes_{0};
};

int class_index(LockKey k) {
  return std::countr_zero(static_cast<unsigned>(pattern_class(k)));
}

struct StressResult {
  std::vector<long> successes_per_thread;
  long per_class[4] = {0, 0, 0, 0};
  long clashes = 0;
  bool totals_match = false;
};

// Each thread: try_lock a random key; on success register it with both referees, hold it for a
// little while (sometimes taking a second key meanwhile), unregister, unlock.
StressResult stress(LockMap2D& m, int threads, int ops, int n, std::uint32_t seed) {
  Checker checker;
  Cells cells(n);
  StressResult r;
  r.successes_per_thread.assign(static_cast<std::size_t>(threads), 0);
  std::atomic<long> per_class[4] = {0, 0, 0, 0};
  std::atomic<long> clashes{0};
  std::atomic<int> ready{0};
  std::vector<std::thread> ts;
  for (int id = 0; id < threads; ++id) {
    ts.emplace_back([&, id] {
      std::mt19937 rng(seed * 7919u + static_cast<std::uint32_t>(id));
      // Wildcards in one of five draws per coordinate: all four classes come up often.
      auto draw = [&]() -> LockKey {
        auto one = [&] { return rng() % 5 == 0 ? kAny : static_cast<int>(rng() % n); };
        int s = one();
        return {s, one()};
      };
      auto take = [&](LockKey k) {
        if (!checker.enter(k)) clashes.fetch_add(1);
        clashes.fetch_add(cells.enter(k));
        per_class[class_index(k)].fetch_add(1);
      };
      auto give = [&](LockKey k) {
        cells.leave(k);
        checker.leave(k);
        m.unlock(k);
      };
      ready.fetch_add(1);
      while (ready.load() < threads) std::this_thread::yield();
      long mine = 0;
      for (int op = 0; op < ops; ++op) {
        const LockKey k = draw();
        if (!m.try_lock(k)) {
          if (op % 16 == 0) std::this_thread::yield();
          continue;
        }
        ++mine;
        take(k);
        for (unsigned spin = rng() % 64; spin > 0; --spin) std::atomic_signal_fence(std::memory_order_seq_cst);
        if (rng() % 4 == 0) {  // nested: the caller's own key must block overlapping ones too
          const LockKey k2 = draw();
          if (m.try_lock(k2)) {
            if (overlaps(k, k2)) clashes.fetch_add(1);
            take(k2);
            if (rng() % 8 == 0) std::this_thread::yield();
            give(k2);
          }
        }
        if (rng() % 32 == 0) std::this_thread::yield();  // get preempted while holding
        give(k);
      }
      r.successes_per_thread[static_cast<std::size_t>(id)] = mine;
    });
  }
  for (auto& t : ts) t.join();
  for (int c = 0; c < 4; ++c) r.per_class[c] = per_class[c].load();
  r.clashes = clashes.load();
  r.totals_match = cells.totals_match();
  return r;
}

void expect_all_free(LockMap2D& m, int n) {
  EXPECT_EQ(m.held_count(), 0);
  std::vector<int> vals;
  for (int v = 0; v < n; ++v) vals.push_back(v);
  vals.push_back(kAny);
  for (int s : vals)
    for (int t : vals) {
      ASSERT_TRUE(m.try_lock({s, t})) << str({s, t});
      m.unlock({s, t});
    }
  // And all points at once, then nothing else.
  for (int s = 0; s < n; ++s)
    for (int t = 0; t < n; ++t) ASSERT_TRUE(m.try_lock({s, t}));
  EXPECT_FALSE(m.try_lock({0, kAny}));
  EXPECT_FALSE(m.try_lock({kAny, 0}));
  EXPECT_FALSE(m.try_lock({kAny, kAny}));
  for (int s = 0; s < n; ++s)
    for (int t = 0; t < n; ++t) m.unlock({s, t});
  EXPECT_EQ(m.held_count(), 0);
}

}  // namespace

TEST(LockMap2DStress, SmallDomainEightThreads) {
  LockMap2D m;
  const int threads = 8, ops = 20000, n = 4;
  const auto r = stress(m, threads, ops, n, 17);
  EXPECT_EQ(r.clashes, 0);
  EXPECT_TRUE(r.totals_match);
  for (int i = 0; i < threads; ++i)
    EXPECT_GT(r.successes_per_thread[static_cast<std::size_t>(i)], ops / 100) << "thread " << i;
  for (int c = 0; c < 4; ++c) EXPECT_GT(r.per_class[c], 0) << "class bit " << c;
  long total = 0;
  for (long s : r.successes_per_thread) total += s;
  RecordProperty("successes", std::to_string(total));
  RecordProperty("per_class", std::to_string(r.per_class[0]) + "/" + std::to_string(r.per_class[1]) +
                                  "/" + std::to_string(r.per_class[2]) + "/" +
                                  std::to_string(r.per_class[3]));
  expect_all_free(m, n);
}

// Two sources, two tags: nearly every pair overlaps, so the Dekker checks are hit hardest.
TEST(LockMap2DStress, TinyDomainHighContention) {
  LockMap2D m;
  const auto r = stress(m, 8, 10000, 2, 5);
  EXPECT_EQ(r.clashes, 0);
  EXPECT_TRUE(r.totals_match);
  for (long s : r.successes_per_thread) EXPECT_GT(s, 0);
  for (int c = 0; c < 4; ++c) EXPECT_GT(r.per_class[c], 0) << "class bit " << c;
  expect_all_free(m, 2);
}

// Wider domain on a fresh map: entries are created concurrently while others use them.
TEST(LockMap2DStress, EntriesCreatedConcurrently) {
  LockMap2D m;
  const auto r = stress(m, 8, 5000, 24, 99);
  EXPECT_EQ(r.clashes, 0);
  EXPECT_TRUE(r.totals_match);
  for (long s : r.successes_per_thread) EXPECT_GT(s, 0);
  expect_all_free(m, 24);
}

// Retrying (polling) callers always get through: every thread acquires its quota.
TEST(LockMap2DStress, RetryingCallersAllFinish) {
  LockMap2D m;
  const int threads = 6, quota = 2000;
  const LockKey keys[] = {{0, 0}, {0, kAny}, {kAny, 0}, {kAny, kAny}, {1, 0}, {0, 1}};
  std::atomic<int> inside{0};
  std::atomic<long> clashes{0};
  std::vector<std::thread> ts;
  for (int i = 0; i < threads; ++i)
    ts.emplace_back([&, i] {
      const LockKey k = keys[i];
      for (int done = 0; done < quota; ++done) {
        for (unsigned tries = 0; !m.try_lock(k); ++tries)
          if (tries % 8 == 7) std::this_thread::yield();
        // keys[0..3] pairwise overlap, so at most one of them may be inside at a time
        if (i < 4 && inside.fetch_add(1) != 0) clashes.fetch_add(1);
        if (i < 4) inside.fetch_sub(1);
        m.unlock(k);
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(clashes.load(), 0);
  expect_all_free(m, 2);
}

// Pure acquisition races, no holding: keys that pairwise overlap, so the threads spend most of
// their time inside try_lock's announce-then-check windows. More threads than cores, so that
// some get preempted inside a window (that is how a check-before-announce bug shows on x86).
// The referee uses relaxed atomics only, and the holders write one plain variable: under
// -fsanitize=thread this checks that the map alone orders one holder's writes before the next
// holder's (unlock releases, try_lock acquires).
TEST(LockMap2DStress, PairwiseOverlappingKeysHammer) {
  const LockKey keys[] = {{0, 0}, {0, kAny}, {kAny, 0}, {kAny, kAny}};
  const std::vector<std::vector<int>> variants = {{0, 1, 2, 3}, {0, 1}, {0, 2}, {0, 3},
                                                  {1, 2},       {1, 3}, {2, 3}};
  const int per_key = 4;
  constexpr auto relaxed = std::memory_order_relaxed;
  for (const auto& v : variants) {
    LockMap2D m;
    std::atomic<int> inside{0}, ready{0};
    std::atomic<long> clashes{0}, wins{0};
    long data = 0;  // guarded by the lock map only
    std::vector<std::thread> ts;
    const int n = static_cast<int>(v.size()) * per_key;
    for (int i = 0; i < n; ++i)
      ts.emplace_back([&, k = keys[v[static_cast<std::size_t>(i) % v.size()]]] {
        ready.fetch_add(1);
        while (ready.load() < n) std::this_thread::yield();
        for (int it = 0; it < 200000 / per_key; ++it) {
          if (!m.try_lock(k)) continue;
          if (inside.fetch_add(1, relaxed) != 0) clashes.fetch_add(1, relaxed);
          ++data;
          // Hold a moment, so that a thread preempted in its window wakes up to a held key.
          for (int spin = it % 32; spin > 0; --spin) std::atomic_signal_fence(std::memory_order_seq_cst);
          inside.fetch_sub(1, relaxed);
          wins.fetch_add(1, relaxed);
          m.unlock(k);
        }
      });
    for (auto& t : ts) t.join();
    std::string names;
    for (int i : v) names += str(keys[i]);
    EXPECT_EQ(clashes.load(), 0) << "keys " << names;
    EXPECT_EQ(data, wins.load()) << "keys " << names;
    EXPECT_GT(wins.load(), 0);
    EXPECT_EQ(m.held_count(), 0);
  }
}
