#include "locking/wait_room.h"

#include <mpi.h>
#include <sched.h>

#include <mutex>

#include "locking/creation_in_flight.h"
#include "locking/serialize_lock.h"

namespace tsmpi::serial {
namespace {

enum : std::uint32_t { kWaiting, kPoll, kFinished, kLeft };

struct Room {
  std::mutex mutex;          // guards the list and the poller; taken after serialize mode's lock
  Waiter* first = nullptr;   // registered waiters, newest first
  Waiter* poller = nullptr;  // the waiter whose thread polls for all
};
Room& room() {
  static Room* r = new Room;  // never destroyed: waits may run during exit
  return *r;
}

void unlink(Room& r, Waiter* w) {
  for (Waiter** p = &r.first; *p; p = &(*p)->next)
    if (*p == w) {
      *p = w->next;
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

// One pass of the poller: every registered test once, under the lock. Returns whether any
// finished; finished ones are unlinked, `me` without being told.
bool poll_once(Room& r, Waiter* me) {
  bool any = false;
  Guard g;
  if (creations_in_flight()) progress_creations();
  std::lock_guard<std::mutex> l(r.mutex);
  for (Waiter* w = r.first; w;) {
    Waiter* next = w->next;
    int flag = 0;
    int rc = w->test(w->context, &flag);
    if (rc != MPI_SUCCESS || flag) {
      any = true;
      w->rc = rc;
      unlink(r, w);
      if (w == me) me->state.store(kLeft, std::memory_order_relaxed);
      else tell(w, kFinished);
    }
    w = next;
  }
  return any;
}

// Polls until `me` finishes, then hands polling to the newest waiter left, if any.
void poll(Room& r, Waiter* me) {
  unsigned idle = 0;
  while (me->state.load(std::memory_order_relaxed) != kLeft) {
    if (poll_once(r, me)) idle = 0;
    else ++idle;
    if (me->state.load(std::memory_order_relaxed) == kLeft) break;
    // Keep the progress engine turning as a blocking call would; let threads waiting for the
    // lock in, and share the cores when nothing happens (no sleeps: a sleeping poller starves
    // the transfers of other processes that need this one's progress).
    if (lock_waiters() > 0 || idle > 64) sched_yield();
    else __builtin_ia32_pause();
  }
  std::lock_guard<std::mutex> l(r.mutex);
  r.poller = r.first;
  if (r.poller) tell(r.poller, kPoll);
}

}  // namespace

int wait_in_room(Waiter& w) {
  Room& r = room();
  bool polling;
  {
    std::lock_guard<std::mutex> l(r.mutex);
    w.next = r.first;
    r.first = &w;
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
