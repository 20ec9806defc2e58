// RMA synchronization in serialize mode that would otherwise wait, holding tsmpi's lock, for
// something another process's application must do: MPI_Win_start for the targets' MPI_Win_post,
// MPI_Win_lock and MPI_Win_lock_all for another process's MPI_Win_unlock. If that process can
// only get there after this process's other threads have done something, holding the lock
// deadlocks a correct program (tests/mpi/rma_dependency.c). Those waits are made here, in
// locked steps, before the MPI's call; the MPI's call then waits at most for the MPI's own
// progress. The calls left blocking-locked (flushes, unlock, complete) wait only for that.
//
// - MPI_Win_post tells each origin of its group that it has posted: a zero-byte message on the
//   window's shadow communicator. MPI_Win_start first receives one from each target.
// - Passive-target locks go through tsmpi's lock words first (object_registry.h: one 64-bit word
//   per process on a private window): a reader-writer lock taken with MPI_Compare_and_swap /
//   MPI_Fetch_and_op + MPI_Win_flush, each attempt one locked step. Once tsmpi's word is held,
//   nothing but releases under way contends for the MPI's own lock.
// MPI_MODE_NOCHECK means the program guarantees there is nothing to wait for: passed through.
#include <atomic>
#include <cstdint>
#include <vector>

#include "locking/serialize.h"
#include "runtime/mpi_version.h"

namespace tsmpi::serial {
namespace {

constexpr int kPostedTag = 0x7453;    // MPI_Win_post's notice on the shadow communicator
constexpr int kProgressTag = 0x7454;  // never sent: probed to turn the progress engine

// A lock word: readers in bits 0-19, writers waiting in bits 20-39, a writer holding it from
// bit 40. Writers go first: a reader backs off while a writer holds or waits, so a stream of
// readers cannot starve a writer.
constexpr std::int64_t kReader = 1, kWriterWaiting = std::int64_t{1} << 20, kWriter = std::int64_t{1} << 40;
constexpr std::int64_t kReaders = kWriterWaiting - 1;

WindowSync* sync_of(MPI_Win win) {
  Guard g;
  WindowSync* w = window_sync(win);
  return w && w->locks != MPI_WIN_NULL ? w : nullptr;
}

// The window-group ranks of the members of `group`; false if the MPI refuses the group.
bool window_ranks(MPI_Group group, MPI_Win win, std::vector<int>* ranks) {
  MPI_Group wg = MPI_GROUP_NULL;
  int n = 0;
  if (group == MPI_GROUP_NULL) return false;  // erroneous: the MPI's own call reports it
  if (PMPI_Group_size(group, &n) != MPI_SUCCESS || PMPI_Win_get_group(win, &wg) != MPI_SUCCESS) return false;
  std::vector<int> in(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) in[i] = i;
  ranks->assign(static_cast<std::size_t>(n), MPI_UNDEFINED);
  int rc = PMPI_Group_translate_ranks(group, n, in.data(), wg, ranks->data());
  PMPI_Group_free(&wg);
  if (rc != MPI_SUCCESS) return false;
  for (int r : *ranks)
    if (r == MPI_UNDEFINED) return false;
  return true;
}

// This process's own word is changed with the processor's atomics on Open MPI 4.1, whose
// osc/rdma segfaults in an atomic to the calling process itself (4.1.4, btl vader's emulated
// atomics have no endpoint to self; runtime/mpi_version.h). Under the lock that is atomic with
// the other processes' MPI atomics: the MPI applies emulated ones only inside a call, which
// needs the lock, and hardware ones are atomic with the processor's.
bool local(const WindowSync* w, int target) {
#if TSMPI_RMA_ATOMICS_TO_SELF_BROKEN
  return target == w->me;
#else
  (void)w, (void)target;
  return false;
#endif
}

std::int64_t add(WindowSync* w, int target, std::int64_t delta) {
  if (local(w, target)) return std::atomic_ref<std::int64_t>(*w->word).fetch_add(delta);
  std::int64_t before = 0;
  PMPI_Fetch_and_op(&delta, &before, MPI_INT64_T, target, 0, MPI_SUM, w->locks);
  PMPI_Win_flush(target, w->locks);
  return before;
}

// Replaces `expected` by `desired`; returns the value found.
std::int64_t swap_if(WindowSync* w, int target, std::int64_t expected, std::int64_t desired) {
  if (local(w, target)) {
    std::atomic_ref<std::int64_t>(*w->word).compare_exchange_strong(expected, desired);
    return expected;
  }
  std::int64_t before = 0;
  PMPI_Compare_and_swap(&desired, &expected, &before, MPI_INT64_T, target, 0, w->locks);
  PMPI_Win_flush(target, w->locks);
  return before;
}

// One waiter for one word (or for every word, for MPI_Win_lock_all). Each attempt is one locked
// step of the wait room; after a failed one the next attempts are spaced out more and more (up
// to 64 passes of the room), so waiters do not flood the holder's process with atomics.
struct WordWaiter {
  WindowSync* w;
  int type, target;       // target < 0: shared on every word, all or none
  bool waiting = false;   // a writer counted in the word's waiting bits
  std::int64_t seen = 0;  // the word's value found by the last attempt
  unsigned skip = 0, gap = 0;

  bool attempt() {
    if (skip > 0) {
      --skip;
      progress();
      return false;
    }
    bool got = target < 0 ? read_all() : type == MPI_LOCK_EXCLUSIVE ? write() : read(target);
    if (!got) skip = gap = gap ? std::min(gap * 2, 64u) : 1;
    if (local(w, target)) progress();
    return got;
  }
  // A step that made no MPI call still turns the progress engine, as a blocking call would:
  // the process that holds the word may need this one's progress to release it (an emulated
  // atomic on this process's word).
  void progress() {
    int flag = 0;
    PMPI_Iprobe(MPI_ANY_SOURCE, kProgressTag, w->shadow, &flag, MPI_STATUS_IGNORE);
  }
  bool read(int t) {
    if (add(w, t, kReader) < kWriterWaiting) return true;
    add(w, t, -kReader);  // a writer holds or waits: take the reading back
    return false;
  }
  // All or none, so a lock_all never holds some words while it waits for another.
  bool read_all() {
    const int n = static_cast<int>(w->held.size());
    int taken = 0;
    while (taken < n && read(taken)) ++taken;
    if (taken == n) return true;
    for (int t = 0; t < taken; ++t) add(w, t, -kReader);
    return false;
  }
  bool write() {
    // Free of readers and writers (the waiting marks are other writers' and maybe this one's):
    // take it, giving up this writer's mark. Otherwise wait, marked, with a fresh value.
    if ((seen & kReaders) == 0 && seen < kWriter) {
      const std::int64_t found = swap_if(w, target, seen, seen - (waiting ? kWriterWaiting : 0) + kWriter);
      if (found == seen) return true;
      seen = found;
      return false;
    }
    if (!waiting) {
      seen = add(w, target, kWriterWaiting) + kWriterWaiting;
      waiting = true;
    } else {
      seen = add(w, target, 0);
    }
    return false;
  }
};

void release_word(WindowSync* w, int type, int target) {
  add(w, target, type == MPI_LOCK_EXCLUSIVE ? -kWriter : -kReader);
}

// Takes `target`'s word (every word if target < 0) as `type` in locked steps.
int take_word(WindowSync* w, int type, int target) {
  WordWaiter waiter{w, type, target};
  return poll_until_done([&](int* got) {
    *got = waiter.attempt();
    return MPI_SUCCESS;
  });
}

bool valid_target(WindowSync* w, int rank) { return rank >= 0 && rank < static_cast<int>(w->held.size()); }

}  // namespace

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
  Guard g;
  int rc = PMPI_Win_post(group, assert, win);
  WindowSync* w = window_sync(win);
  std::vector<int> origins;
  if (rc != MPI_SUCCESS || (assert & MPI_MODE_NOCHECK) || !w || !window_ranks(group, win, &origins)) return rc;
  for (int origin : origins) {
    MPI_Request r = MPI_REQUEST_NULL;
    if (PMPI_Isend(nullptr, 0, MPI_BYTE, origin, kPostedTag, w->shadow, &r) == MPI_SUCCESS) PMPI_Request_free(&r);
  }
  return rc;
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
  WindowSync* w = (assert & MPI_MODE_NOCHECK) ? nullptr : sync_of(win);
  std::vector<int> targets;
  std::vector<MPI_Request> notices;
  if (w) {
    Guard g;
    if (window_ranks(group, win, &targets)) {
      notices.assign(targets.size(), MPI_REQUEST_NULL);
      for (std::size_t i = 0; i < targets.size(); ++i)
        PMPI_Irecv(nullptr, 0, MPI_BYTE, targets[i], kPostedTag, w->shadow, &notices[i]);
    }
  }
  if (!notices.empty()) {
    int rc = poll_until_done([&](int* all) {
      return PMPI_Testall(static_cast<int>(notices.size()), notices.data(), all, MPI_STATUSES_IGNORE);
    });
    if (rc != MPI_SUCCESS) return rc;
  }
  Guard g;
  return PMPI_Win_start(group, assert, win);
}

int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
  WindowSync* w = (assert & MPI_MODE_NOCHECK) ? nullptr : sync_of(win);
  const bool words = w && valid_target(w, rank) && (lock_type == MPI_LOCK_SHARED || lock_type == MPI_LOCK_EXCLUSIVE);
  if (words) {
    int rc = take_word(w, lock_type, rank);
    if (rc != MPI_SUCCESS) return rc;
  }
  Guard g;
  int rc = PMPI_Win_lock(lock_type, rank, assert, win);
  if (words) {
    if (rc == MPI_SUCCESS) w->held[rank] = lock_type;
    else release_word(w, lock_type, rank);
  }
  return rc;
}

int MPI_Win_unlock(int rank, MPI_Win win) {
  Guard g;
  int rc = PMPI_Win_unlock(rank, win);  // waits only for this epoch's operations to complete
  WindowSync* w = window_sync(win);
  if (rc == MPI_SUCCESS && w && w->locks != MPI_WIN_NULL && valid_target(w, rank) && w->held[rank]) {
    release_word(w, w->held[rank], rank);
    w->held[rank] = 0;
  }
  return rc;
}

// Shared on every process's word.
int MPI_Win_lock_all(int assert, MPI_Win win) {
  WindowSync* w = (assert & MPI_MODE_NOCHECK) ? nullptr : sync_of(win);
  if (w) {
    int rc = take_word(w, MPI_LOCK_SHARED, -1);
    if (rc != MPI_SUCCESS) return rc;
  }
  Guard g;
  int rc = PMPI_Win_lock_all(assert, win);
  if (w) {
    for (int t = 0; t < static_cast<int>(w->held.size()); ++t) {
      if (rc == MPI_SUCCESS) w->held[t] = MPI_LOCK_SHARED;
      else release_word(w, MPI_LOCK_SHARED, t);
    }
  }
  return rc;
}

int MPI_Win_unlock_all(MPI_Win win) {
  Guard g;
  int rc = PMPI_Win_unlock_all(win);
  WindowSync* w = window_sync(win);
  if (rc == MPI_SUCCESS && w && w->locks != MPI_WIN_NULL)
    for (int t = 0; t < static_cast<int>(w->held.size()); ++t)
      if (w->held[t]) {
        release_word(w, w->held[t], t);
        w->held[t] = 0;
      }
  return rc;
}

}  // namespace tsmpi::serial
