// Serialize mode's waiting threads (src/locking/progress.h): a thread that must wait for the MPI
// to finish something (a request, a message to probe) registers its test here and sleeps; one
// waiting thread at a time, the poller, runs every registered test under serialize mode's lock,
// pass after pass, and wakes the owners of those that finished. When its own test finishes it
// hands polling to another waiter.
//
// Why: a waiter that tested only its own request and slept between tests (backoff) left the
// MPI's progress engine idle while it slept, so rendezvous transfers and passive-target RMA that
// need this process's progress crawled (an MPI_Win_flush from another rank waited up to a
// sleep for each put); and many waiting threads each polling under one lock spent the cores
// handing the lock around. Now a process with waiters always has exactly one thread in the
// progress engine, as a blocking call in a thread-safe MPI would, and the others sleep.
#pragma once
#include <atomic>
#include <cstdint>

namespace tsmpi::serial {

struct Waiter {
  int (*test)(void* context, int* flag);  // run under the lock; sets flag when finished
  void* context;
  int rc = 0;
  // Futex word: kWaiting, kPoll (the waiter is asked to take over polling), kFinished (rc is
  // set), kLeft (the poller will not touch the waiter again: it may return).
  std::atomic<std::uint32_t> state{0};
  Waiter* next = nullptr;
};

// Runs w.test under the lock until it finishes or fails (by this thread or the poller); returns
// its result.
int wait_in_room(Waiter& w);

}  // namespace tsmpi::serial
