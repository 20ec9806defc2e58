#include "locking/wait_room.h"

#include <mpi.h>
#include <sched.h>

#include <mutex>

#include "locking/collective_sequence.h"
#include "locking/serialize_lock.h"
#include "runtime/os.h"

namespace tsmpi::serial {
namespace {

enum : std::uint32_t { kWaiting, kPoll, kFinished, kLeft };

struct Room {
  std::mutex mutex;  // guards the list and the poller; taken after serialize mode's lock
  // Registered waiters, newest first. Changed under `mutex`; the poller reads it without, to
  // tell whether it is alone.
  std::atomic<Waiter*> first{nullptr};
  Waiter* poller = nullptr;  // the waiter whose thread polls for all
};
Room& room() {
  static Room* r = new Room;  // never destroyed: waits may run during exit
  return *r;
}

void unlink(Room& r, Waiter* w) {
  if (r.first.load(std::memory_order_relaxed) == w) {
    r.first.store(w->next, std::memory_order_relaxed);
    return;
  }
  for (Waiter* p = r.first.load(std::memory_order_relaxed); p; p = p->next)
    if (p->next == w) {
      p->next = w->next;
      return;
    }
}

// Tells a sleeping waiter something (kFinished or kPoll). Its owner may return as soon as it
// reads kFinished, so for that one the last touch is a second store it waits for.
void tell(Waiter* w, std::uint32_t what) {
  w->state.store(what, std::memory_order_release);
  w->state.notify_one();
  if (what == kFinished) w->state.store(kLeft, std::memory_order_release);
}

// Runs w's test once, under the lock; its result goes to w.rc (read by the owner only once told
// kFinished). Returns whether it finished or failed.
bool test_once(Waiter& w) {
  int flag = 0;
  w.rc = w.test(w.context, &flag);
  return w.rc != MPI_SUCCESS || flag;
}

// One pass of the poller: every registered test once, under the lock. Returns whether any
// finished; finished ones are unlinked, `me` without being told.
bool poll_once(Room& r, Waiter* me) {
  bool any = false;
  Guard g;
  if (sequences_active()) progress_sequences();
  std::lock_guard<std::mutex> l(r.mutex);
  for (Waiter* w = r.first.load(std::memory_order_relaxed); w;) {
    Waiter* next = w->next;
    if (test_once(*w)) {
      any = true;
      unlink(r, w);
      if (w == me) me->state.store(kLeft, std::memory_order_relaxed);
      else tell(w, kFinished);
    }
    w = next;
  }
  return any;
}

// The poller alone (no other waiter, no thread waiting for the lock): its own test, again and
// again under one hold of the lock, as the MPI's own blocking call would spin in its progress
// engine; until it finishes, or another thread wants the lock or registers a wait. Returns
// whether it finished. (A pass through poll_once per test took the lock and the room's mutex
// each time, and yielded the core after 64 passes: serialize mode's ping-pong at 0 B was 1.45x
// the MPI's own at MPI_THREAD_SINGLE.)
bool poll_alone(Room& r, Waiter* me) {
  Guard g;
  while (r.first.load(std::memory_order_acquire) == me && me->next == nullptr && lock_waiters() == 0) {
    if (sequences_active()) progress_sequences();  // as every pass does (collective_sequence.h)
    if (test_once(*me)) {
      std::lock_guard<std::mutex> l(r.mutex);
      unlink(r, me);
      me->state.store(kLeft, std::memory_order_relaxed);
      return true;
    }
    __builtin_ia32_pause();
  }
  return false;
}

// Polls until `me` finishes, then hands polling to the newest waiter left, if any.
void poll(Room& r, Waiter* me) {
  // Spinning alone is what the MPI does; after this long without anything finishing the poller
  // shares the core (other processes on an oversubscribed machine may need it to send).
  constexpr std::int64_t kSpinNs = 50'000;
  std::int64_t idle_since = 0;
  while (me->state.load(std::memory_order_relaxed) != kLeft) {
    if (r.first.load(std::memory_order_acquire) == me && me->next == nullptr && lock_waiters() == 0) {
      if (poll_alone(r, me)) break;
    }
    if (poll_once(r, me)) idle_since = 0;
    else if (idle_since == 0) idle_since = monotonic_ns();
    if (me->state.load(std::memory_order_relaxed) == kLeft) break;
    // Keep the progress engine turning as a blocking call would; let threads waiting for the
    // lock in, and share the cores when nothing happens (no sleeps: a sleeping poller starves
    // the transfers of other processes that need this one's progress).
    if (lock_waiters() > 0 || (idle_since != 0 && monotonic_ns() - idle_since > kSpinNs)) sched_yield();
    else __builtin_ia32_pause();
  }
  std::lock_guard<std::mutex> l(r.mutex);
  r.poller = r.first.load(std::memory_order_relaxed);
  if (r.poller) tell(r.poller, kPoll);
}

// The thread's own test once before it joins the room, if the lock is free: what it waits for
// has often happened already (a message behind others in the queue, a request another thread's
// progress completed), and joining the room behind a poller costs a futex sleep and wake per
// wait. Returns whether the test finished (or failed).
bool test_before_joining(Waiter& w) {
  if (!mpi_lock().try_lock()) return false;
  std::lock_guard<std::mutex> g(mpi_lock(), std::adopt_lock);
  if (sequences_active()) progress_sequences();
  return test_once(w);
}

}  // namespace

int wait_in_room(Waiter& w) {
  Room& r = room();
  if (r.first.load(std::memory_order_relaxed) != nullptr && test_before_joining(w)) return w.rc;
  bool polling;
  {
    std::lock_guard<std::mutex> l(r.mutex);
    w.next = r.first.load(std::memory_order_relaxed);
    r.first.store(&w, std::memory_order_release);
    polling = r.poller == nullptr;
    if (polling) r.poller = &w;
  }
  while (true) {
    if (polling) {
      poll(r, &w);
      return w.rc;
    }
    std::uint32_t s = w.state.load(std::memory_order_acquire);
    if (s == kPoll) {
      polling = true;
      w.state.store(kWaiting, std::memory_order_relaxed);
      continue;
    }
    if (s == kFinished || s == kLeft) break;
    w.state.wait(s, std::memory_order_acquire);
  }
  while (w.state.load(std::memory_order_acquire) != kLeft) __builtin_ia32_pause();  // the poller's last touch
  return w.rc;
}

}  // namespace tsmpi::serial
