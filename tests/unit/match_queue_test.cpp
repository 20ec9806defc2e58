// The helper policy's matching engine (src/matching/match_queue.h): MPI matching semantics case by
// case, random operation sequences checked step by step against a sequential model, and a
// multi-threaded stress test (exactly-once delivery, pattern conformance, non-overtaking).
#include "matching/match_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <new>
#include <random>
#include <thread>
#include <tuple>
#include <vector>

// Counts every global operator new in this test binary, so that a test can check that the
// queue's steady state does not allocate. (Replaces the global operator new/delete; nothing else
// in tsmpi's unit tests does.) Not inlined, so that GCC's -Wmismatched-new-delete does not see
// the malloc/free underneath.
namespace {
std::atomic<std::uint64_t> g_allocations{0};
}
__attribute__((noinline)) void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
__attribute__((noinline)) void operator delete(void* p) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

using tsmpi::matching::Envelope;
using tsmpi::matching::kAny;
using tsmpi::matching::matches;
using tsmpi::matching::MatchQueue;
using tsmpi::matching::Pattern;

using Q = MatchQueue<int>;
using W = Q::Waiter;

constexpr int A = kAny;

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr int kQueueScale = 5;  // sanitizers are 5-20x slower; keep the suite short
#else
constexpr int kQueueScale = 1;
#endif

// Takes with `p`; returns the payload, or -1 if nothing matched. Checks the envelope matches.
int take(Q& q, Pattern p, Envelope* env = nullptr) {
  Envelope e{-7, -7};
  int v = -7;
  if (!q.take(p, &e, &v)) return -1;
  EXPECT_TRUE(matches(p, e));
  if (env != nullptr) *env = e;
  return v;
}

std::vector<int> unexpected_payloads(const Q& q) {
  std::vector<int> v;
  q.for_each_unexpected([&](const Envelope&, const int& p) { v.push_back(p); });
  return v;
}

std::vector<const W*> posted_waiters(const Q& q) {
  std::vector<const W*> v;
  q.for_each_posted([&](const W& w) { v.push_back(&w); });
  return v;
}

// ---- Semantics, case by case ----------------------------------------------------------------

TEST(MatchQueue, MatchesHandlesEveryWildcardCombination) {
  EXPECT_TRUE(matches({1, 2}, {1, 2}));
  EXPECT_FALSE(matches({1, 2}, {1, 3}));
  EXPECT_FALSE(matches({1, 2}, {0, 2}));
  EXPECT_TRUE(matches({1, A}, {1, 9}));
  EXPECT_FALSE(matches({1, A}, {2, 9}));
  EXPECT_TRUE(matches({A, 2}, {7, 2}));
  EXPECT_FALSE(matches({A, 2}, {7, 3}));
  EXPECT_TRUE(matches({A, A}, {5, 6}));
  EXPECT_TRUE(matches({0, 0}, {0, 0}));  // 0 is a real source/tag, not a wildcard
  EXPECT_FALSE(matches({0, 0}, {0, 1}));
}

// Arrival order (1,1)=10, (0,1)=20, (1,0)=30, (0,0)=40, (0,0)=50: every pattern shape must skip
// the earlier messages it does not match and take the earliest one it does.
TEST(MatchQueue, TakeWithEachWildcardCombination) {
  struct Case {
    Pattern p;
    std::vector<int> expect;  // successive takes
  };
  const Case cases[] = {
      {{0, 0}, {40, 50, -1}},           {{0, A}, {20, 40, 50, -1}},
      {{A, 0}, {30, 40, 50, -1}},       {{A, A}, {10, 20, 30, 40, 50, -1}},
      {{2, A}, {-1}},                   {{A, 2}, {-1}},
      {{1, 1}, {10, -1}},
  };
  for (const Case& c : cases) {
    Q q;
    EXPECT_EQ(q.arrive({1, 1}, 10), nullptr);
    EXPECT_EQ(q.arrive({0, 1}, 20), nullptr);
    EXPECT_EQ(q.arrive({1, 0}, 30), nullptr);
    EXPECT_EQ(q.arrive({0, 0}, 40), nullptr);
    EXPECT_EQ(q.arrive({0, 0}, 50), nullptr);
    for (int want : c.expect) EXPECT_EQ(take(q, c.p), want) << c.p.source << "," << c.p.tag;
    EXPECT_TRUE(q.check_invariants());
  }
}

TEST(MatchQueue, TakeReportsTheActualEnvelope) {
  Q q;
  q.arrive({3, 7}, 1);
  Envelope e{};
  EXPECT_EQ(take(q, {A, A}, &e), 1);
  EXPECT_EQ(e, (Envelope{3, 7}));
  q.arrive({3, 7}, 2);
  EXPECT_TRUE(q.take({3, A}, nullptr, nullptr));  // out-parameters are optional
  EXPECT_EQ(q.unexpected_count(), 0u);
}

TEST(MatchQueue, PostedWaiterOfEachWildcardCombination) {
  for (Pattern p : {Pattern{2, 3}, Pattern{2, A}, Pattern{A, 3}, Pattern{A, A}}) {
    Q q;
    W w(p);
    EXPECT_FALSE(q.take_or_post(&w));
    EXPECT_EQ(q.posted_count(), 1u);
    for (Envelope e : {Envelope{1, 4}, Envelope{1, 3}, Envelope{2, 4}}) {
      if (matches(p, e)) continue;
      EXPECT_EQ(q.arrive(e, 1), nullptr);  // does not match it: queued as unexpected
    }
    EXPECT_TRUE(q.check_invariants());
    EXPECT_EQ(q.arrive({2, 3}, 99), &w);
    EXPECT_EQ(w.envelope, (Envelope{2, 3}));
    EXPECT_EQ(w.payload, 99);
    EXPECT_EQ(q.posted_count(), 0u);
    EXPECT_TRUE(q.check_invariants());
  }
}

TEST(MatchQueue, EarliestPostedWaiterWins) {
  Q q;
  W w1({A, A}), w2({0, 0}), w3({0, A}), w4({A, 0}), w5({0, 0});
  for (W* w : {&w1, &w2, &w3, &w4, &w5}) EXPECT_FALSE(q.take_or_post(w));
  EXPECT_EQ(posted_waiters(q), (std::vector<const W*>{&w1, &w2, &w3, &w4, &w5}));
  EXPECT_EQ(q.arrive({0, 0}, 1), &w1);
  EXPECT_EQ(q.arrive({0, 0}, 2), &w2);
  EXPECT_EQ(q.arrive({0, 0}, 3), &w3);
  EXPECT_EQ(q.arrive({0, 0}, 4), &w4);
  EXPECT_EQ(q.arrive({0, 0}, 5), &w5);
  EXPECT_EQ(q.arrive({0, 0}, 6), nullptr);
  EXPECT_EQ(w1.payload, 1);
  EXPECT_EQ(w5.payload, 5);

  Q r;  // exact first, then the wildcards
  W x1({4, 4}), x2({A, 4}), x3({4, A}), x4({A, A});
  for (W* w : {&x1, &x2, &x3, &x4}) EXPECT_FALSE(r.take_or_post(w));
  EXPECT_EQ(r.arrive({4, 4}, 1), &x1);
  EXPECT_EQ(r.arrive({4, 4}, 2), &x2);
  EXPECT_EQ(r.arrive({4, 4}, 3), &x3);
  EXPECT_EQ(r.arrive({4, 4}, 4), &x4);
}

TEST(MatchQueue, EarlierWaitersThatDoNotMatchAreSkipped) {
  Q q;
  W w1({1, A}), w2({A, 1}), w3({0, 1}), w4({0, 0}), w5({A, A});
  for (W* w : {&w1, &w2, &w3, &w4, &w5}) EXPECT_FALSE(q.take_or_post(w));
  EXPECT_EQ(q.arrive({0, 0}, 1), &w4);
  EXPECT_EQ(q.arrive({0, 0}, 2), &w5);
  EXPECT_EQ(q.arrive({0, 0}, 3), nullptr);
  EXPECT_EQ(q.arrive({2, 1}, 4), &w2);
  EXPECT_EQ(q.arrive({0, 1}, 5), &w3);
  EXPECT_EQ(q.arrive({1, 1}, 6), &w1);
  EXPECT_EQ(q.posted_count(), 0u);
  EXPECT_EQ(q.unexpected_count(), 1u);
}

TEST(MatchQueue, EarliestUnexpectedMessageWins) {
  Q q;
  q.arrive({0, 5}, 1);
  q.arrive({1, 5}, 2);
  q.arrive({0, 5}, 3);
  q.arrive({1, 6}, 4);
  EXPECT_EQ(take(q, {A, 5}), 1);
  EXPECT_EQ(take(q, {0, 5}), 3);
  EXPECT_EQ(take(q, {1, A}), 2);
  EXPECT_EQ(take(q, {A, A}), 4);
  EXPECT_EQ(take(q, {A, A}), -1);
}

TEST(MatchQueue, TakeOrPostTakesAnUnexpectedMessageFirst) {
  Q q;
  q.arrive({0, 1}, 7);
  q.arrive({0, 2}, 8);
  q.arrive({0, 2}, 9);
  W w({A, 2});
  EXPECT_TRUE(q.take_or_post(&w));
  EXPECT_EQ(w.payload, 8);
  EXPECT_EQ(w.envelope, (Envelope{0, 2}));
  EXPECT_EQ(q.posted_count(), 0u);
  EXPECT_FALSE(q.cancel(&w));  // it was never posted
  EXPECT_EQ(unexpected_payloads(q), (std::vector<int>{7, 9}));
}

// One sender (source 0) with mixed tags: receives by any tag see its order; receives by one tag
// see that tag's sub-sequence in order; the rest stays in order.
TEST(MatchQueue, NonOvertakingPerSourceWithMixedTags) {
  const int tags[] = {3, 1, 3, 2, 1, 3, 2, 2, 1, 3};
  Q q;
  for (int i = 0; i < 10; ++i) q.arrive({0, tags[i]}, i);
  q.arrive({1, 3}, 100);  // another sender in between
  EXPECT_EQ(take(q, {0, 3}), 0);
  EXPECT_EQ(take(q, {0, 3}), 2);
  EXPECT_EQ(take(q, {A, 3}), 5);
  EXPECT_EQ(take(q, {0, A}), 1);
  EXPECT_EQ(take(q, {0, 2}), 3);
  EXPECT_EQ(take(q, {0, A}), 4);
  std::vector<int> rest;
  for (int v; (v = take(q, {0, A})) != -1;) rest.push_back(v);
  EXPECT_EQ(rest, (std::vector<int>{6, 7, 8, 9}));
  EXPECT_EQ(take(q, {A, A}), 100);

  // The same through posted receives: waiters by source, then by tag, posted before arrival.
  Q r;
  W a({0, A}), b({0, A}), c({0, 2}), d({0, A});
  for (W* w : {&a, &b, &c, &d}) r.take_or_post(w);
  for (int i = 0; i < 6; ++i) r.arrive({0, tags[i]}, i);
  // tag 3 -> a, tag 1 -> b, tag 3 -> d (c wants tag 2), tag 2 -> c, then none are left.
  EXPECT_EQ(a.payload, 0);
  EXPECT_EQ(b.payload, 1);
  EXPECT_EQ(d.payload, 2);
  EXPECT_EQ(c.payload, 3);
  EXPECT_EQ(unexpected_payloads(r), (std::vector<int>{4, 5}));
}

TEST(MatchQueue, CancelBeforeMatch) {
  Q q;
  W w({1, 1});
  EXPECT_FALSE(q.take_or_post(&w));
  EXPECT_TRUE(q.cancel(&w));
  EXPECT_EQ(q.posted_count(), 0u);
  EXPECT_FALSE(q.cancel(&w));  // second cancel: no longer posted
  EXPECT_EQ(q.arrive({1, 1}, 5), nullptr);  // not matched to the cancelled waiter
  EXPECT_EQ(q.unexpected_count(), 1u);
  EXPECT_EQ(q.keyed_list_count(), 3u);  // (1,1), (1,*), (*,1): the waiter's list is gone
  // A cancelled waiter can be posted again.
  EXPECT_TRUE(q.take_or_post(&w));
  EXPECT_EQ(w.payload, 5);
}

TEST(MatchQueue, CancelAfterMatch) {
  Q q;
  W w({A, 1});
  EXPECT_FALSE(q.take_or_post(&w));
  EXPECT_EQ(q.arrive({2, 1}, 5), &w);
  EXPECT_FALSE(q.cancel(&w));
  EXPECT_EQ(w.payload, 5);
  EXPECT_EQ(w.envelope, (Envelope{2, 1}));
  EXPECT_EQ(q.posted_count(), 0u);
}

TEST(MatchQueue, CancelHeadMiddleAndTail) {
  Q q;
  W w[6];
  for (W& x : w) {
    x.pattern = {0, 0};
    EXPECT_FALSE(q.take_or_post(&x));
  }
  EXPECT_TRUE(q.cancel(&w[0]));
  EXPECT_TRUE(q.cancel(&w[2]));
  EXPECT_TRUE(q.cancel(&w[5]));
  EXPECT_TRUE(q.check_invariants());
  EXPECT_EQ(posted_waiters(q), (std::vector<const W*>{&w[1], &w[3], &w[4]}));
  EXPECT_EQ(q.arrive({0, 0}, 1), &w[1]);
  EXPECT_EQ(q.arrive({0, 0}, 2), &w[3]);
  EXPECT_EQ(q.arrive({0, 0}, 3), &w[4]);
  EXPECT_EQ(q.arrive({0, 0}, 4), nullptr);
  EXPECT_TRUE(q.check_invariants());
}

TEST(MatchQueue, PeekDoesNotRemove) {
  Q q;
  Envelope e{};
  int v = 0;
  EXPECT_FALSE(q.peek({A, A}, &e, &v));
  q.arrive({1, 2}, 10);
  q.arrive({1, 3}, 11);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(q.peek({1, A}, &e, &v));
    EXPECT_EQ(v, 10);
    EXPECT_EQ(e, (Envelope{1, 2}));
  }
  EXPECT_TRUE(q.peek({A, 3}, &e, &v));
  EXPECT_EQ(v, 11);
  EXPECT_FALSE(q.peek({0, A}, &e, &v));
  EXPECT_TRUE(q.peek({A, A}, nullptr, nullptr));
  EXPECT_EQ(q.unexpected_count(), 2u);
  EXPECT_EQ(take(q, {1, A}), 10);  // the message peek saw
  EXPECT_EQ(take(q, {1, A}), 11);
}

TEST(MatchQueue, Counts) {
  Q q;
  EXPECT_EQ(q.unexpected_count(), 0u);
  EXPECT_EQ(q.posted_count(), 0u);
  q.arrive({0, 0}, 1);
  q.arrive({0, 1}, 2);
  EXPECT_EQ(q.unexpected_count(), 2u);
  W w1({1, A}), w2({A, 7});
  q.take_or_post(&w1);
  q.take_or_post(&w2);
  EXPECT_EQ(q.posted_count(), 2u);
  EXPECT_EQ(q.unexpected_count(), 2u);
  q.arrive({1, 0}, 3);
  EXPECT_EQ(q.posted_count(), 1u);
  take(q, {A, A});
  EXPECT_EQ(q.unexpected_count(), 1u);
  q.cancel(&w2);
  take(q, {A, A});
  EXPECT_EQ(q.unexpected_count(), 0u);
  EXPECT_EQ(q.posted_count(), 0u);
  EXPECT_EQ(q.keyed_list_count(), 0u);
}

TEST(MatchQueue, ForEachAndDrainVisitInArrivalOrder) {
  Q q;
  const Envelope es[] = {{2, 1}, {0, 0}, {2, 1}, {1, 9}};
  for (int i = 0; i < 4; ++i) q.arrive(es[i], i);
  std::vector<std::pair<Envelope, int>> seen;
  q.for_each_unexpected([&](const Envelope& e, const int& p) { seen.emplace_back(e, p); });
  ASSERT_EQ(seen.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(seen[i].first, es[i]);
    EXPECT_EQ(seen[i].second, i);
  }
  std::vector<int> drained;
  EXPECT_EQ(q.drain_unexpected([&](const Envelope&, int&& p) { drained.push_back(p); }), 4u);
  EXPECT_EQ(drained, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(q.unexpected_count(), 0u);
  EXPECT_EQ(q.keyed_list_count(), 0u);
  EXPECT_TRUE(q.check_invariants());
}

// ---- Payload handling -------------------------------------------------------------------------

TEST(MatchQueue, MoveOnlyPayload) {
  MatchQueue<std::unique_ptr<int>> q;
  q.arrive({0, 0}, std::make_unique<int>(1));
  q.arrive({0, 1}, std::make_unique<int>(2));
  std::unique_ptr<int> out;
  ASSERT_TRUE(q.take({0, 0}, nullptr, &out));
  EXPECT_EQ(*out, 1);
  MatchQueue<std::unique_ptr<int>>::Waiter w({A, 5});
  EXPECT_FALSE(q.take_or_post(&w));
  EXPECT_EQ(q.arrive({3, 5}, std::make_unique<int>(3)), &w);
  EXPECT_EQ(*w.payload, 3);
  int drained = 0;
  q.drain_unexpected([&](const Envelope&, std::unique_ptr<int>&& p) { drained = *p; });
  EXPECT_EQ(drained, 2);
}

struct Counted {
  static inline int copies = 0;
  int v = 0;
  Counted() = default;
  explicit Counted(int x) : v(x) {}
  Counted(const Counted& o) : v(o.v) { ++copies; }
  Counted& operator=(const Counted& o) {
    v = o.v;
    ++copies;
    return *this;
  }
  Counted(Counted&&) noexcept = default;
  Counted& operator=(Counted&&) noexcept = default;
};

TEST(MatchQueue, PayloadIsMovedNotCopied) {
  MatchQueue<Counted> q;
  Counted::copies = 0;
  for (int i = 0; i < 10; ++i) q.arrive({i % 2, 0}, Counted(i));
  Counted out;
  ASSERT_TRUE(q.take({1, A}, nullptr, &out));
  EXPECT_EQ(out.v, 1);
  MatchQueue<Counted>::Waiter w({0, 0}), x({5, 5});
  EXPECT_TRUE(q.take_or_post(&w));
  EXPECT_EQ(w.payload.v, 0);
  EXPECT_FALSE(q.take_or_post(&x));
  EXPECT_EQ(q.arrive({5, 5}, Counted(77)), &x);
  EXPECT_EQ(x.payload.v, 77);
  q.drain_unexpected(
      [](const Envelope&, Counted&& c) { [[maybe_unused]] Counted sink(std::move(c)); });
  EXPECT_EQ(Counted::copies, 0);
  q.arrive({0, 0}, Counted(1));
  EXPECT_TRUE(q.peek({A, A}, nullptr, &out));  // peek has to copy
  EXPECT_EQ(Counted::copies, 1);
}

// A spin lock in place of std::mutex (tsmpi may use tbb::spin_mutex): any BasicLockable works.
struct SpinLock {
  std::atomic<bool> held{false};
  void lock() {
    while (held.exchange(true, std::memory_order_acquire))
      while (held.load(std::memory_order_relaxed)) std::this_thread::yield();
  }
  void unlock() { held.store(false, std::memory_order_release); }
};

TEST(MatchQueue, WorksWithAnotherMutexType) {
  MatchQueue<int, SpinLock> q;
  MatchQueue<int, SpinLock>::Waiter w({A, A});
  EXPECT_FALSE(q.take_or_post(&w));
  EXPECT_EQ(q.arrive({1, 1}, 4), &w);
  EXPECT_EQ(q.arrive({1, 1}, 5), nullptr);
  int v = 0;
  EXPECT_TRUE(q.take({1, 1}, nullptr, &v));
  EXPECT_EQ(v, 5);
}

// ---- Memory over long runs --------------------------------------------------------------------

// Ever-new tags (a long run): the keyed lists are dropped as they empty, so what is held is
// bounded by what is outstanding, not by how many tags were ever seen.
TEST(MatchQueue, KeyedListsStaySparseWithEverNewTags) {
  Q q;
  const int n = 100000 / kQueueScale;
  for (int i = 0; i < n; ++i) {
    q.arrive({i % 7, i}, i);
    if (i >= 10) {
      ASSERT_EQ(take(q, {A, A}), i - 10);
    }
    W w({i % 5, 1000000 + i});  // a probe that never matches, cancelled again
    ASSERT_FALSE(q.take_or_post(&w));
    ASSERT_TRUE(q.cancel(&w));
  }
  EXPECT_EQ(q.unexpected_count(), 10u);
  // 10 messages: 10 (s,t) + at most 7 (s,*) + 10 (*,t) lists.
  EXPECT_LE(q.keyed_list_count(), 27u);
  EXPECT_TRUE(q.check_invariants());
  q.drain_unexpected([](const Envelope&, int&&) {});
  EXPECT_EQ(q.keyed_list_count(), 0u);
}

// After a warm-up that reaches the same peak, a long run of arrive/take/post/match/cancel with
// ever-new tags allocates nothing: message nodes and map nodes are recycled.
TEST(MatchQueue, SteadyStateDoesNotAllocate) {
  Q q;
  std::deque<W> ws(8);
  auto round = [&](int base, int n) {
    for (int i = base; i < base + n; ++i) {
      for (int k = 0; k < 8; ++k) q.arrive({k, i * 8 + k}, i);          // 8 unexpected, new tags
      for (int k = 0; k < 4; ++k) {                                       // 4 posted
        ws[k].pattern = {k + 8, A};
        q.take_or_post(&ws[k]);
      }
      ws[4].pattern = {A, i * 8 + 3};
      q.take_or_post(&ws[4]);                                            // matched at once
      for (int k = 0; k < 8; ++k) take(q, {k, A});                        // empty the rest
      for (int k = 0; k < 3; ++k) q.arrive({k + 8, i}, i);              // match 3 of the posted
      q.cancel(&ws[3]);                                                   // cancel the 4th
    }
  };
  round(0, 200);
  const std::uint64_t before = g_allocations.load();
  round(200, 20000 / kQueueScale);
  EXPECT_EQ(g_allocations.load() - before, 0u);
  EXPECT_EQ(q.unexpected_count(), 0u);
  EXPECT_EQ(q.posted_count(), 0u);
}

// ---- Random sequences against a sequential model ----------------------------------------------

// The obvious implementation of MPI matching: linear scans over plain vectors.
struct Model {
  struct Msg {
    Envelope e;
    int payload;
  };
  std::vector<Msg> unexpected;  // arrival order
  std::vector<int> posted;      // waiter ids, post order
  std::vector<Pattern> pattern;  // by waiter id

  int arrive(Envelope e, int payload) {  // matched waiter id or -1
    for (std::size_t i = 0; i < posted.size(); ++i) {
      if (matches(pattern[posted[i]], e)) {
        int id = posted[i];
        posted.erase(posted.begin() + static_cast<std::ptrdiff_t>(i));
        return id;
      }
    }
    unexpected.push_back({e, payload});
    return -1;
  }
  int find(Pattern p) const {
    for (std::size_t i = 0; i < unexpected.size(); ++i)
      if (matches(p, unexpected[i].e)) return static_cast<int>(i);
    return -1;
  }
  bool take(Pattern p, Msg* out) {
    int i = find(p);
    if (i < 0) return false;
    *out = unexpected[i];
    unexpected.erase(unexpected.begin() + i);
    return true;
  }
  bool take_or_post(int id, Msg* out) {
    if (take(pattern[id], out)) return true;
    posted.push_back(id);
    return false;
  }
  bool cancel(int id) {
    for (std::size_t i = 0; i < posted.size(); ++i) {
      if (posted[i] == id) {
        posted.erase(posted.begin() + static_cast<std::ptrdiff_t>(i));
        return true;
      }
    }
    return false;
  }
};

class MatchQueueModel : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(MatchQueueModel, RandomSequenceAgreesWithSequentialModel) {
  std::mt19937 rng(GetParam());
  auto uniform = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  Q q;
  Model m;
  std::deque<W> waiters;  // stable addresses; id = index
  constexpr int kMaxWaiters = 40;
  enum Op { kArrive, kTake, kPeek, kTakeOrPost, kCancel, kOps };
  std::vector<double> weights(kOps, 1.0);
  int wildcard_percent = 20;
  auto random_pattern = [&] {
    Pattern p{uniform(4), uniform(5)};
    if (uniform(100) < wildcard_percent) p.source = A;
    if (uniform(100) < wildcard_percent) p.tag = A;
    return p;
  };
  auto is_posted = [&](int id) {
    for (int x : m.posted)
      if (x == id) return true;
    return false;
  };
  int next_payload = 0;
  std::size_t max_unexpected = 0, max_posted = 0;
  int counts[8] = {};  // what happened, for the coverage check at the end
  enum { kMatchedByArrive, kQueued, kTaken, kTakeMissed, kPeeked, kMatchedAtPost, kPosted,
         kCancelled };
  int failed_cancels = 0;
  const int steps = 30000 / kQueueScale;
  for (int step = 0; step < steps; ++step) {
    SCOPED_TRACE(testing::Message() << "seed " << GetParam() << " step " << step);
    if (step % 300 == 0) {  // drift between phases that fill and phases that drain either side
      for (double& w : weights) w = 0.2 + uniform(100) / 10.0;
      wildcard_percent = std::vector<int>{0, 10, 25, 50}[uniform(4)];
    }
    std::discrete_distribution<int> pick(weights.begin(), weights.end());
    const int op = pick(rng);
    if (op == kArrive) {
      const Envelope e{uniform(4), uniform(5)};
      const int payload = next_payload++;
      const int want = m.arrive(e, payload);
      W* got = q.arrive(e, payload);
      ASSERT_EQ(got, want < 0 ? nullptr : &waiters[want]);
      if (got != nullptr) {
        ASSERT_EQ(got->envelope, e);
        ASSERT_EQ(got->payload, payload);
      }
      ++counts[got != nullptr ? kMatchedByArrive : kQueued];
    } else if (op == kTake || op == kPeek) {
      const Pattern p = random_pattern();
      Envelope e{-1, -1};
      int payload = -1;
      Model::Msg want{};
      bool want_found;
      bool found;
      if (op == kTake) {
        want_found = m.take(p, &want);
        found = q.take(p, &e, &payload);
      } else {
        const int i = m.find(p);
        want_found = i >= 0;
        if (want_found) want = m.unexpected[i];
        found = q.peek(p, &e, &payload);
      }
      ASSERT_EQ(found, want_found);
      if (found) {
        ASSERT_EQ(e, want.e);
        ASSERT_EQ(payload, want.payload);
      }
      ++counts[op == kPeek ? kPeeked : found ? kTaken : kTakeMissed];
    } else if (op == kTakeOrPost) {
      int id = uniform(static_cast<int>(waiters.size()) + 1);
      if (id == static_cast<int>(waiters.size()) || is_posted(id)) {
        if (waiters.size() >= kMaxWaiters) continue;
        id = static_cast<int>(waiters.size());
        waiters.emplace_back();
        m.pattern.push_back({});
      }
      W& w = waiters[id];
      w.pattern = m.pattern[id] = random_pattern();
      w.envelope = {-1, -1};
      w.payload = -1;
      Model::Msg want{};
      const bool want_now = m.take_or_post(id, &want);
      ASSERT_EQ(q.take_or_post(&w), want_now);
      if (want_now) {
        ASSERT_EQ(w.envelope, want.e);
        ASSERT_EQ(w.payload, want.payload);
      }
      ++counts[want_now ? kMatchedAtPost : kPosted];
    } else {  // kCancel: any waiter, posted or not
      if (waiters.empty()) continue;
      const int id = uniform(static_cast<int>(waiters.size()));
      const bool want = m.cancel(id);
      ASSERT_EQ(q.cancel(&waiters[id]), want);
      if (want) ++counts[kCancelled]; else ++failed_cancels;
    }
    ASSERT_EQ(q.unexpected_count(), m.unexpected.size());
    ASSERT_EQ(q.posted_count(), m.posted.size());
    ASSERT_TRUE(q.check_invariants());
    max_unexpected = std::max(max_unexpected, m.unexpected.size());
    max_posted = std::max(max_posted, m.posted.size());
    if (step % 50 == 0) {
      std::vector<int> want_unexpected;
      for (const auto& msg : m.unexpected) want_unexpected.push_back(msg.payload);
      ASSERT_EQ(unexpected_payloads(q), want_unexpected);
      std::vector<const W*> want_posted;
      for (int id : m.posted) want_posted.push_back(&waiters[id]);
      ASSERT_EQ(posted_waiters(q), want_posted);
    }
  }
  // The sequence exercised every outcome, with queues of some length on both sides.
  for (int c : counts) EXPECT_GT(c, 50);
  EXPECT_GT(failed_cancels, 50);
  EXPECT_GE(max_unexpected, 20u);
  EXPECT_GE(max_posted, 10u);
  // Empty both sides; everything returns to nothing.
  std::vector<int> drained;
  q.drain_unexpected([&](const Envelope&, int&& p) { drained.push_back(p); });
  std::vector<int> want_drained;
  for (const auto& msg : m.unexpected) want_drained.push_back(msg.payload);
  EXPECT_EQ(drained, want_drained);
  for (int id : m.posted) EXPECT_TRUE(q.cancel(&waiters[id]));
  EXPECT_EQ(q.unexpected_count(), 0u);
  EXPECT_EQ(q.posted_count(), 0u);
  EXPECT_EQ(q.keyed_list_count(), 0u);
  EXPECT_TRUE(q.check_invariants());
}

INSTANTIATE_TEST_SUITE_P(Seeds, MatchQueueModel,
                         ::testing::Values(1u, 2u, 3u, 1234u, 20240601u, 987654321u));

// ---- Concurrent stress ------------------------------------------------------------------------

struct Msg {
  int src = -1;
  int tag = -1;
  int seq = -1;  // -1: a shutdown sentinel, not one of the producers' messages
};

// `producers` threads, each a distinct sender (source = its index), arrive `per_producer`
// messages with increasing sequence numbers and random tags, yielding about every `yield_every`
// messages (slower producers: consumers more often find nothing and post). `consumers` threads
// take, peek and take_or_post (then wait on an atomic flag the producer sets, sometimes
// cancelling first) with random patterns; a checker thread calls check_invariants() meanwhile.
// At the end the main thread wakes blocked consumers with sentinel messages, drains the rest, and
// checks that every message was delivered exactly once, to a pattern it matches, and in
// per-sender order.
template <class Mutex>
void run_stress(int producers, int consumers, int per_producer, std::uint32_t seed,
                unsigned yield_every = 64) {
  using SQ = MatchQueue<Msg, Mutex>;
  struct CW : SQ::Waiter {
    std::atomic<int> done{0};
  };
  constexpr int kTags = 5;
  SQ q;
  // The waiters outlive every thread: a producer touches the flag (notify_one) after setting it.
  std::deque<CW> cws(static_cast<std::size_t>(consumers));
  auto wake = [](typename SQ::Waiter* w) {
    CW* cw = static_cast<CW*>(w);
    cw->done.store(1, std::memory_order_release);
    cw->done.notify_one();
  };
  struct Delivery {
    Pattern p;
    Envelope e;
    Msg m;
  };
  std::vector<std::vector<Delivery>> got(static_cast<std::size_t>(consumers) + 1);
  std::atomic<bool> producers_done{false}, finish{false};
  std::atomic<int> alive{consumers};
  std::atomic<long> taken{0}, matched_at_post{0}, matched_later{0}, cancelled{0},
      late_cancels{0}, bad_peeks{0}, bad_invariants{0}, invariant_checks{0};

  std::vector<std::thread> threads;
  for (int c = 0; c < consumers; ++c) {
    threads.emplace_back([&, c] {
      std::mt19937 rng(seed * 7919u + static_cast<unsigned>(c));
      auto uniform = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
      CW& w = cws[static_cast<std::size_t>(c)];
      auto& mine = got[static_cast<std::size_t>(c)];
      long n_taken = 0, n_now = 0, n_later = 0, n_cancelled = 0, n_late = 0, n_bad_peeks = 0;
      while (!finish.load(std::memory_order_acquire)) {
        const int s = uniform(producers + 1), t = uniform(kTags + 1);
        const Pattern p{s == producers ? A : s, t == kTags ? A : t};
        const int op = uniform(10);
        if (op < 3) {
          Envelope e{};
          Msg m;
          if (q.take(p, &e, &m)) {
            mine.push_back({p, e, m});
            ++n_taken;
          }
        } else if (op < 4) {
          Envelope e{};
          Msg m;
          if (q.peek(p, &e, &m) && (!matches(p, e) || e != Envelope{m.src, m.tag})) ++n_bad_peeks;
        } else {
          w.pattern = p;
          w.done.store(0, std::memory_order_relaxed);
          if (q.take_or_post(&w)) {
            mine.push_back({p, w.envelope, w.payload});
            ++n_now;
            continue;
          }
          if (uniform(3) == 0) {  // give up on it (after a moment, sometimes)
            for (int i = uniform(3); i > 0; --i) std::this_thread::yield();
            if (q.cancel(&w)) {
              ++n_cancelled;
              continue;
            }
            ++n_late;  // already matched: the producer's wake-up is on its way
          }
          w.done.wait(0, std::memory_order_acquire);
          mine.push_back({p, w.envelope, w.payload});
          ++n_later;
        }
      }
      taken += n_taken;
      matched_at_post += n_now;
      matched_later += n_later;
      cancelled += n_cancelled;
      late_cancels += n_late;
      bad_peeks += n_bad_peeks;
      alive.fetch_sub(1, std::memory_order_release);
    });
  }
  std::thread checker([&] {
    while (!producers_done.load(std::memory_order_acquire)) {
      if (!q.check_invariants()) ++bad_invariants;
      ++invariant_checks;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  std::vector<std::thread> senders;
  for (int src = 0; src < producers; ++src) {
    senders.emplace_back([&, src] {
      std::mt19937 rng(seed * 104729u + static_cast<unsigned>(src));
      for (int seq = 0; seq < per_producer; ++seq) {
        const int tag = static_cast<int>(rng() % kTags);
        if (auto* w = q.arrive({src, tag}, Msg{src, tag, seq})) wake(w);
        if (rng() % yield_every == 0) std::this_thread::yield();
      }
    });
  }
  for (auto& t : senders) t.join();
  producers_done.store(true, std::memory_order_release);
  checker.join();
  // Let the consumers take what is left (not all of it may match what they are waiting for).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  while (q.unexpected_count() != 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // Shutdown: consumers blocked on a pattern nobody sends any more get sentinels of every
  // (source, tag) until all have seen `finish`.
  finish.store(true, std::memory_order_release);
  while (alive.load(std::memory_order_acquire) > 0) {
    for (int s = 0; s < producers; ++s)
      for (int t = 0; t < kTags; ++t)
        if (auto* w = q.arrive({s, t}, Msg{s, t, -1})) wake(w);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (auto& t : threads) t.join();
  EXPECT_TRUE(q.check_invariants());
  EXPECT_EQ(q.posted_count(), 0u);
  auto& drained = got[static_cast<std::size_t>(consumers)];
  q.drain_unexpected([&](const Envelope& e, Msg&& m) { drained.push_back({{A, A}, e, m}); });
  EXPECT_EQ(q.unexpected_count(), 0u);
  EXPECT_EQ(q.keyed_list_count(), 0u);

  // Exactly once, to a matching pattern, with the envelope of the message.
  std::vector<std::vector<int>> times(static_cast<std::size_t>(producers),
                                      std::vector<int>(static_cast<std::size_t>(per_producer)));
  long wrong = 0, overtaken = 0;
  for (const auto& list : got) {
    // Per (consumer, source, tag) and per (consumer, pattern, source): sequence increases.
    std::map<std::tuple<int, int>, int> last_by_tag;
    std::map<std::tuple<int, int, int>, int> last_by_pattern;
    for (const Delivery& d : list) {
      if (!matches(d.p, d.e) || d.e != Envelope{d.m.src, d.m.tag}) ++wrong;
      if (d.m.seq < 0) continue;  // sentinel
      ++times[static_cast<std::size_t>(d.m.src)][static_cast<std::size_t>(d.m.seq)];
      auto [it, fresh] = last_by_tag.try_emplace({d.m.src, d.m.tag}, d.m.seq);
      if (!fresh) {
        if (d.m.seq <= it->second) ++overtaken;
        it->second = d.m.seq;
      }
      auto [jt, fresh2] = last_by_pattern.try_emplace({d.p.source, d.p.tag, d.m.src}, d.m.seq);
      if (!fresh2) {
        if (d.m.seq <= jt->second) ++overtaken;
        jt->second = d.m.seq;
      }
    }
  }
  long lost = 0, duplicated = 0;
  for (const auto& per_source : times)
    for (int n : per_source) {
      if (n == 0) ++lost;
      if (n > 1) ++duplicated;
    }
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(overtaken, 0);
  EXPECT_EQ(lost, 0);
  EXPECT_EQ(duplicated, 0);
  EXPECT_EQ(bad_peeks.load(), 0);
  EXPECT_EQ(bad_invariants.load(), 0) << "of " << invariant_checks.load() << " checks";
  // Every path was taken (these are near-certain with thousands of operations per thread).
  EXPECT_GT(taken.load(), 0);
  EXPECT_GT(matched_at_post.load(), 0);
  EXPECT_GT(matched_later.load(), 0);
  EXPECT_GT(cancelled.load(), 0);
  std::printf("[ stress   ] %d x %d msgs, %d consumers: take %ld, matched at post %ld, matched "
              "later %ld, cancelled %ld, cancel too late %ld, drained %zu, %ld invariant checks\n",
              producers, per_producer, consumers, taken.load(), matched_at_post.load(),
              matched_later.load(), cancelled.load(), late_cancels.load(), drained.size(),
              invariant_checks.load());
}

TEST(MatchQueueStress, ProducersAndConsumers) {
  run_stress<std::mutex>(4, 6, 25000 / kQueueScale, 1);
}

TEST(MatchQueueStress, ProducersAndConsumersWithSpinLock) {
  run_stress<SpinLock>(4, 6, 5000 / kQueueScale, 2);
}

TEST(MatchQueueStress, SlowProducersManyConsumers) {  // more posted waiters, more cancelling
  run_stress<std::mutex>(2, 8, 4000 / kQueueScale, 3, 1);
}

}  // namespace
