// Completing a blocking operation in serialize mode without holding the lock while blocked
// (MPI-3.1 §12.4.1; seed 000 Fig. 2): the operation's test is run under the lock by one waiting
// thread for all waiting threads, and released between passes (src/locking/wait_room.h).
#pragma once
#include <mpi.h>

#include <type_traits>

#include "locking/serialize_lock.h"
#include "locking/wait_room.h"

namespace tsmpi::serial {

// Calls test(&flag) under the lock until it sets flag or fails; returns its result.
template <class Test>
int poll_until_done(Test&& test) {
  using T = std::remove_reference_t<Test>;
  Waiter w;
  w.test = [](void* context, int* flag) { return (*static_cast<T*>(context))(flag); };
  w.context = const_cast<void*>(static_cast<const void*>(&test));
  return wait_in_room(w);
}

inline int wait_request(MPI_Request* request, MPI_Status* status) {
  return poll_until_done([&](int* flag) { return PMPI_Test(request, flag, status); });
}

// A blocking call as its nonblocking start(&request) and a first test(&flag) in one hold of the
// lock (an eager send, or a receive whose message has arrived, completes there: one lock round
// trip instead of two), then the test in locked steps until done. before() runs in that hold
// first.
template <class Start, class Test, class Before>
int start_then_poll(MPI_Request* request, Start&& start, Test&& test, Before&& before) {
  int rc, done = 0;
  {
    Guard g;
    before();
    rc = start(request);
    if (rc == MPI_SUCCESS) rc = test(&done);
  }
  return rc == MPI_SUCCESS && !done ? poll_until_done(test) : rc;
}

}  // namespace tsmpi::serial
