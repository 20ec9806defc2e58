#include "checks/happens_before/clock.h"

#include <oneapi/tbb/spin_mutex.h>

#include <algorithm>
#include <atomic>
#include <memory>

#include "runtime/concurrent_maps.h"
#include "runtime/config.h"
#include "runtime/thread_state.h"

namespace tsmpi::hb {

bool g_on = false;

namespace {

std::atomic<bool> g_observed{false};
std::atomic<int> g_next_slot{0};

struct ThreadClock {
  int slot = -1;
  Clock clock;
  bool busy = false;  // inside the engine: its own locks are not the program's
  std::uint32_t ended_at = 0;  // the last epoch its thread published (to whoever joins it)
};

void join(Clock& to, const Clock& from) {
  if (to.size() < from.size()) to.resize(from.size(), 0);
  for (std::size_t i = 0; i < from.size(); ++i) to[i] = std::max(to[i], from[i]);
}

// A thread's clock is a heap object its thread points to, never a thread_local with a destructor:
// after C++ thread_local destructors, a thread still unlocks mutexes (pthread key destructors of
// the MPI, libc), which reach the engine. An ended thread's clock goes to a pool and its slot is
// taken over by a later thread, continuing its epochs: a program that starts and ends threads
// all its life keeps as many slots as it has threads at once, not as it ever had.
TSMPI_TLS ThreadClock* tl_clock = nullptr;
TSMPI_TLS bool tl_ended = false;
tbb::spin_mutex g_pool_lock;
std::vector<ThreadClock*>& g_pool = *new std::vector<ThreadClock*>;

struct ThreadEnd {
  bool armed = false;
  ~ThreadEnd() {
    ThreadClock* t = tl_clock;
    if (t && !tl_ended) t->ended_at = t->clock[t->slot];  // not ended through thread_ends: unknown to others
    tl_ended = true;
    if (!t) return;
    tl_clock = nullptr;
    tbb::spin_mutex::scoped_lock g(g_pool_lock);
    g_pool.push_back(t);
  }
};
thread_local ThreadEnd tl_end;

// The calling thread's clock, with what it inherits from its creator (null: nothing known). A
// pooled slot is taken over only by a thread that starts after the slot's last thread ended
// (its creator knew that end): else the two would look ordered while they ran at once.
[[gnu::noinline]] ThreadClock& adopt(const Clock* inherited) {
  ThreadClock* t = nullptr;
  if (inherited) {
    tbb::spin_mutex::scoped_lock g(g_pool_lock);
    for (std::size_t i = 0; i < g_pool.size(); ++i) {
      ThreadClock* c = g_pool[i];
      if (static_cast<std::size_t>(c->slot) < inherited->size() && (*inherited)[c->slot] >= c->ended_at) {
        t = c;
        g_pool[i] = g_pool.back();
        g_pool.pop_back();
        break;
      }
    }
  }
  if (t) {
    const std::uint32_t next = t->clock[t->slot] + 1;  // after everything the slot's last thread did
    std::fill(t->clock.begin(), t->clock.end(), 0);
    t->clock[t->slot] = next;
  } else {
    t = new ThreadClock;
    t->slot = g_next_slot.fetch_add(1, std::memory_order_relaxed);
    t->clock.assign(static_cast<std::size_t>(t->slot) + 1, 0);
    t->clock[t->slot] = 1;
  }
  if (inherited) join(t->clock, *inherited);
  t->busy = false;
  tl_clock = t;
  if (!tl_ended) tl_end.armed = true;  // registers the destructor that returns the clock
  return *t;
}

ThreadClock& me() {
  ThreadClock* t = tl_clock;
  return t ? *t : adopt(nullptr);
}


class Busy {
 public:
  explicit Busy(ThreadClock& t) : t_(t) { t_.busy = true; }
  ~Busy() { t_.busy = false; }
  Busy(const Busy&) = delete;
  Busy& operator=(const Busy&) = delete;

 private:
  ThreadClock& t_;
};

using KeyClocks = ConcurrentHashMap<std::uintptr_t, Clock>;
// Never destroyed (here and below): threads of the OpenMP runtime still end after exit()
// has run the library's destructors.
KeyClocks& g_keys = *new KeyClocks;

struct Barrier {
  tbb::spin_mutex lock;
  Clock arrived_clock;
  int arrived = 0;
  int count = 0;  // tsmpi_hb_barrier_init's
  unsigned long round = 0;
  Clock result[2];
};
using Barriers = ConcurrentHashMap<std::uintptr_t, std::unique_ptr<Barrier>>;
Barriers& g_barriers = *new Barriers;

Barrier& barrier_of(const void* key) {
  Barriers::accessor a;
  if (g_barriers.insert(a, reinterpret_cast<std::uintptr_t>(key))) a->second = std::make_unique<Barrier>();
  return *a->second;  // never erased while threads use it (forget() runs after the last round)
}

}  // namespace

bool observed() { return g_observed.load(std::memory_order_acquire); }

Epoch now() {
  ThreadClock& t = me();
  return {t.slot, t.clock[t.slot]};
}

bool ordered_before_now(const Epoch& e) { return ordered_before(e, me().clock); }

Clock clock_now() { return me().clock; }
void clock_now_into(Clock& c) { c = me().clock; }  // reuses c's storage

}  // namespace tsmpi::hb

using namespace tsmpi::hb;

extern "C" {

int tsmpi_hb_counts(void) {
  return !tl_ended && (!tl_clock || !tl_clock->busy) && tsmpi::tl_thread.depth == 0;
}

void tsmpi_hb_announce(void) { g_observed.store(true, std::memory_order_release); }

void tsmpi_hb_release(const void* key) {
  ThreadClock& t = me();
  Busy busy(t);
  {
    KeyClocks::accessor a;
    g_keys.insert(a, reinterpret_cast<std::uintptr_t>(key));
    join(a->second, t.clock);
  }
  ++t.clock[t.slot];
}

void tsmpi_hb_thread_begins(const void* key) {
  Clock inherited;
  {
    KeyClocks::const_accessor a;
    if (g_keys.find(a, reinterpret_cast<std::uintptr_t>(key))) inherited = a->second;
  }
  if (!tl_clock) adopt(&inherited);
  tsmpi_hb_acquire(key);
  tsmpi_hb_forget(key);
}

void tsmpi_hb_thread_ends(const void* key) {
  ThreadClock& t = me();
  t.ended_at = t.clock[t.slot];
  tsmpi_hb_release(key);
  tl_ended = true;  // what the thread does from here (library destructors) is not the program's
}

void tsmpi_hb_acquire(const void* key) {
  ThreadClock& t = me();
  Busy busy(t);
  KeyClocks::const_accessor a;
  if (g_keys.find(a, reinterpret_cast<std::uintptr_t>(key))) join(t.clock, a->second);
}

void tsmpi_hb_forget(const void* key) {
  ThreadClock& t = me();
  Busy busy(t);
  g_keys.erase(reinterpret_cast<std::uintptr_t>(key));
  g_barriers.erase(reinterpret_cast<std::uintptr_t>(key));
}

void tsmpi_hb_barrier_init(const void* key, int count) {
  ThreadClock& t = me();
  Busy busy(t);
  Barrier& b = barrier_of(key);
  tbb::spin_mutex::scoped_lock g(b.lock);
  b.count = count;
}

unsigned long tsmpi_hb_barrier_arrive(const void* key, int count) {
  ThreadClock& t = me();
  Busy busy(t);
  Barrier& b = barrier_of(key);
  unsigned long round;
  {
    tbb::spin_mutex::scoped_lock g(b.lock);
    if (count <= 0) count = b.count;
    round = b.round;
    join(b.arrived_clock, t.clock);
    if (++b.arrived >= count && count > 0) {  // the last one in: the round's result is complete
      b.result[round % 2] = b.arrived_clock;
      b.arrived_clock.clear();
      b.arrived = 0;
      ++b.round;
    }
  }
  ++t.clock[t.slot];
  return round;
}

void tsmpi_hb_barrier_leave(const void* key, unsigned long round) {
  ThreadClock& t = me();
  Busy busy(t);
  Barrier& b = barrier_of(key);
  tbb::spin_mutex::scoped_lock g(b.lock);
  join(t.clock, b.result[round % 2]);
}

// Annotations for a program's own synchronization (include/tsmpi.h).
TSMPI_EXPORT void tsmpi_happens_before(const void* key) {
  if (observed() && tsmpi_hb_counts()) tsmpi_hb_release(key);
}
TSMPI_EXPORT void tsmpi_happens_after(const void* key) {
  if (observed() && tsmpi_hb_counts()) tsmpi_hb_acquire(key);
}

}  // extern "C"
