// What checking mode remembers of MPI calls for happens-before: per object, each thread's latest
// event on it. A thread's events on one object between two of its releases share an epoch and
// are equivalent, so an event is stored (with its stack) only when the epoch changed.
#pragma once
#include <vector>

#include "checks/happens_before/clock.h"
#include "checks/mark.h"

namespace tsmpi::hb {

struct Event {
  Epoch at;
  checks::Mark mark;  // the thread, the call, its stack at the call
  const void* site = nullptr;  // the program's frame that made the call (reports are per pair of sites)
};

// The calling thread at MPI function `fn` now, with its stack.
Event event_here(int fn);

class History {
 public:
  // Calls f(event) for each other thread's event that does not happen before the calling
  // thread's present.
  template <class F>
  void unordered(F&& f) const {
    const Epoch me = now();
    for (const Event& e : events_)
      if (e.at.slot != me.slot && !ordered_before_now(e.at)) f(e);
  }
  // The calling thread's event at `fn` now (its stack taken only for a new epoch); returns it.
  const Event& record(int fn) {
    const Epoch me = now();
    for (Event& e : events_)
      if (e.at.slot == me.slot) {
        if (e.at.value != me.value || e.mark.fn != fn) e = event_here(fn);
        return e;
      }
    events_.push_back(event_here(fn));
    return events_.back();
  }
  bool empty() const { return events_.empty(); }

 private:
  std::vector<Event> events_;
};

}  // namespace tsmpi::hb
