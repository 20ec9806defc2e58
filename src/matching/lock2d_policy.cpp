// TSMPI_PROBE=lock2d: seed 001 §2.1. Every probe and receive on a communicator first takes the
// entry of its (source, tag) pattern in the communicator's sparse 2-D lock map
// (locking/lock_map_2d.h), which excludes every overlapping pattern. A probe that finds its
// message keeps the entry until the thread's receive of that message has been posted
// (Listing 1.1), so no other thread can receive it in between; the receive is posted for the
// probed message's exact envelope and waited for after the entry is released.
//
// Waiting (Table 1): while only one of the four pattern classes (s,t), (s,*), (*,t), (*,*) has
// been seen on the communicator, distinct keys never overlap and a blocked probe keeps its entry
// between attempts ("blocking"). Once a second class appears the map switches to polling for
// good (Listing 1.5): entries are taken for one Iprobe at a time, so a specific probe can never
// keep a wildcard one out while the message it waits for depends on that wildcard receive
// (Listings 1.3/1.4). A holder re-reads the mode on every attempt, so a switch takes effect
// within one backoff step (docs/probe-policies.md; models/lock2d.pml).
//
// A thread holds at most one entry per communicator. A thread that must wait for an entry while
// holding others gives those up after a while (their probed messages stay in the MPI): waiting
// while holding could otherwise close a cycle between threads.
#include <mutex>
#include <vector>

#include "locking/backoff.h"
#include "locking/lock_map_2d.h"
#include "matching/comm_table.h"
#include "matching/lock2d_policy.h"
#include "matching/match_stats.h"
#include "matching/per_thread_lists.h"
#include "matching/policies.h"
#include "matching/reservations.h"

namespace tsmpi::matching::lock2d_policy {
namespace {

using locking::kAny;
using locking::LockKey;
using locking::LockMap2D;

struct LockedComm {
  explicit LockedComm(MPI_Comm) {}
  bool idle() const { return map.held_count() == 0; }  // no entry held across the free
  LockMap2D map;
};
CommTable<LockedComm>& maps() {
  static CommTable<LockedComm>* t = new CommTable<LockedComm>;
  return *t;
}

// An entry a probe found its message under; kept until the thread receives that message.
struct Held {
  MPI_Comm comm;
  LockMap2D* map;
  LockKey key;
  MPI_Status status;
  bool released = false;
};

// A thread that ends holding an entry gives it up: no thread can receive "its" message any more,
// and the entry would keep every overlapping pattern out for good. The message stays in the
// MPI; MPI_Finalize still reports the probe.
void release_at_thread_end(Held& h) {
  h.map->unlock(h.key);
  h.released = true;
}
using HeldLists = PerThreadLists<Held, release_at_thread_end>;

LockKey key_of(int source, int tag) {
  return {source == MPI_ANY_SOURCE ? kAny : source, tag == MPI_ANY_TAG ? kAny : tag};
}

void keep(const Held& h) {
  HeldLists::List& t = HeldLists::mine();
  t.items.push_back(h);
  ++tl_thread.reserved;
}

// Removes and returns the calling thread's entry on `comm`, if any.
std::optional<Held> take_held(MPI_Comm comm) {
  if (!thread_has_reservations()) return std::nullopt;
  HeldLists::List& t = HeldLists::mine();
  for (auto it = t.items.begin(); it != t.items.end(); ++it) {
    if (it->comm != comm) continue;
    Held h = *it;
    t.items.erase(it);
    --tl_thread.reserved;
    return h;
  }
  return std::nullopt;
}

std::optional<Held> find_held(MPI_Comm comm) {
  if (!thread_has_reservations()) return std::nullopt;
  HeldLists::List& t = HeldLists::mine();
  for (const Held& h : t.items)
    if (h.comm == comm) return h;
  return std::nullopt;
}

// Gives up held entries (their messages stay in the MPI for whoever receives them next).
void release_all_held() {
  HeldLists::List& t = HeldLists::mine();
  for (Held& h : t.items) h.map->unlock(h.key);
  tl_thread.reserved -= static_cast<int>(t.items.size());
  t.items.clear();
}
void release_held(MPI_Comm comm) {
  if (auto h = take_held(comm)) h->map->unlock(h->key);
}

void note(LockMap2D& map, LockKey k) {
  if (map.note_pattern(k)) count(g_match_stats.polling_switches);
}

// Backoff rounds after which a waiting thread gives up the entries it holds elsewhere.
constexpr int kRoundsBeforeReleasing = 64;

// Takes `k`, waiting (with backoff) while an overlapping entry is held.
void acquire(LockMap2D& map, LockKey k) {
  Backoff backoff;
  for (int round = 0; !map.try_lock(k); ++round) {
    count(g_match_stats.lock_retries);
    if (round == kRoundsBeforeReleasing && thread_has_reservations()) release_all_held();
    backoff.pause();
  }
}

// Nonblocking calls try a few times only: another thread's probe→receive pair is short. They
// yield between attempts: with more threads than cores the holder is likely off the cores,
// preempted by threads polling in a tight loop, and pauses would keep it there (16 polling
// threads, 2 senders on 2 cores: 199 messages/s with pauses, ~85 000/s with yields).
constexpr int kNonblockingAttempts = 8;
bool try_acquire(LockMap2D& map, LockKey k) {
  for (int i = 0; i < kNonblockingAttempts; ++i) {
    if (map.try_lock(k)) return true;
    count(g_match_stats.lock_retries);
    sched_yield();
  }
  return false;
}

// A probe that finds a message keeps the entry. `wait` distinguishes Probe from Iprobe.
int probe_and_hold(int source, int tag, MPI_Comm comm, bool wait, int* flag, MPI_Status* status) {
  if (auto h = find_held(comm)) {
    if (envelope_matches(h->status, source, tag)) {  // repeated probe: the same message
      count(g_match_stats.reprobes);
      *flag = 1;
      copy_status(status, h->status);
      return MPI_SUCCESS;
    }
    release_held(comm);
  }
  LockMap2D& map = maps().of(comm).map;
  LockKey k = key_of(source, tag);
  note(map, k);
  Backoff backoff;
  while (true) {
    if (wait) acquire(map, k);
    else if (!try_acquire(map, k)) {
      *flag = 0;
      return MPI_SUCCESS;
    }
    while (true) {
      MPI_Status found{};
      int rc = mpi::iprobe(source, tag, comm, flag, &found);
      if (rc != MPI_SUCCESS) {
        map.unlock(k);
        return rc;
      }
      if (*flag) {
        keep(Held{comm, &map, k, found});
        count(g_match_stats.reserved);
        copy_status(status, found);
        return MPI_SUCCESS;
      }
      if (!wait) {
        map.unlock(k);
        return MPI_SUCCESS;
      }
      if (map.polling()) break;  // give the entry up between attempts
      backoff.pause();           // blocking: keep it while waiting
    }
    map.unlock(k);
    backoff.pause();
  }
}

// Starts the receive of a held entry's message: the exact envelope, under the entry, so it can
// only match the probed message (the first in the MPI's queue for that key).
template <class Post>
int post_held(const Held& h, Post&& post) {
  int rc = post(h.status.MPI_SOURCE, h.status.MPI_TAG);
  h.map->unlock(h.key);
  count(g_match_stats.taken);
  return rc;
}

// Starts a receive for (source, tag) under its own entry; the wait happens outside (Listing 1.1).
template <class Post>
int post_locked(int source, int tag, MPI_Comm comm, Post&& post) {
  LockMap2D& map = maps().of(comm).map;
  LockKey k = key_of(source, tag);
  note(map, k);
  acquire(map, k);
  int rc = post(source, tag);
  map.unlock(k);
  return rc;
}

// The receive `post` starts: the held message if it matches, else under the pattern's entry.
template <class Post>
int post_receive(int source, int tag, MPI_Comm comm, Post&& post) {
  if (auto h = find_held(comm)) {
    if (envelope_matches(h->status, source, tag)) {
      take_held(comm);
      return post_held(*h, post);
    }
    release_held(comm);  // receiving something else: the probe is abandoned
  }
  return post_locked(source, tag, comm, post);
}

}  // namespace

int probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  int flag = 0;
  return probe_and_hold(source, tag, comm, true, &flag, status);
}

int iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  return probe_and_hold(source, tag, comm, false, flag, status);
}

int mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  Backoff backoff;
  while (true) {
    int flag = 0;
    int rc = improbe(source, tag, comm, &flag, message, status);
    if (rc != MPI_SUCCESS || flag) return rc;
    backoff.pause();  // polling: never wait inside the MPI while holding an entry
  }
}

int improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  *flag = 0;
  auto improbe_for = [&](int s, int t) { return mpi::improbe(s, t, comm, flag, message, status); };
  if (auto h = find_held(comm)) {
    if (envelope_matches(h->status, source, tag)) {
      take_held(comm);
      return post_held(*h, improbe_for);
    }
    release_held(comm);
  }
  LockMap2D& map = maps().of(comm).map;
  LockKey k = key_of(source, tag);
  note(map, k);
  if (!try_acquire(map, k)) return MPI_SUCCESS;
  int rc = improbe_for(source, tag);
  map.unlock(k);
  return rc;
}

// A probed message up to this size is received under its entry in one blocking call: it has
// arrived, so the receive waits for no other thread, and one call is cheaper than Irecv + Wait.
// Larger ones are waited for after the entry is released (Listing 1.1).
constexpr int kReceiveUnderEntryBytes = 16 * 1024;

int recv(const Buffer& b, int source, int tag, MPI_Comm comm, MPI_Status* status, const OriginalCall&) {
  if (auto h = find_held(comm); h && envelope_matches(h->status, source, tag)) {
    int bytes = 0;
    PMPI_Get_count(&h->status, MPI_BYTE, &bytes);
    if (bytes >= 0 && bytes <= kReceiveUnderEntryBytes) {
      take_held(comm);
      return post_held(*h, [&](int s, int t) { return mpi::recv(b, s, t, comm, status); });
    }
  }
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = post_receive(source, tag, comm, [&](int s, int t) { return mpi::irecv(b, s, t, comm, &request); });
  return rc == MPI_SUCCESS ? mpi::wait(&request, status) : rc;
}

int irecv(const Buffer& b, int source, int tag, MPI_Comm comm, MPI_Request* request, const OriginalCall&) {
  return post_receive(source, tag, comm, [&](int s, int t) { return mpi::irecv(b, s, t, comm, request); });
}

bool takes_receive(MPI_Comm, int, int) { return true; }

int sendrecv(const Buffer& send, int dest, int sendtag, const Buffer& recv, int source, int recvtag, MPI_Comm comm,
             MPI_Status* status) {
  MPI_Request rreq = MPI_REQUEST_NULL;
  int rc = post_receive(source, recvtag, comm, [&](int s, int t) { return mpi::irecv(recv, s, t, comm, &rreq); });
  if (rc != MPI_SUCCESS) return rc;
  return mpi::send_and_complete(send, dest, sendtag, comm, &rreq, status);
}

// MPI_Isendrecv posts its receive for the caller's pattern, so it runs under that pattern's entry
// (a held probe on the communicator is given up first).
int isendrecv(const Buffer&, int, int, const Buffer&, int source, int recvtag, MPI_Comm comm, MPI_Request*,
              std::vector<char>, const OriginalCall& original) {
  release_held(comm);
  return post_locked(source, recvtag, comm, [&](int, int) { return original(); });
}

// A persistent receive started for a held message runs on a substitute receive of the exact
// envelope (its own pattern might match an earlier message of another source).
int start(MPI_Request* request, const PersistentRecv& p, const OriginalCall& original) {
  if (auto h = find_held(p.comm); h && envelope_matches(h->status, p.source, p.tag)) {
    take_held(p.comm);
    MPI_Request substitute = MPI_REQUEST_NULL;
    int rc = post_held(*h, [&](int s, int t) { return mpi::irecv(p.buffer, s, t, p.comm, &substitute); });
    if (rc == MPI_SUCCESS) set_substitute(*request, substitute);
    return rc;
  }
  release_held(p.comm);
  return post_locked(p.source, p.tag, p.comm, [&](int, int) { return original(); });
}

std::size_t finish_held(std::FILE* out, const char* rank_label, bool report) {
  std::vector<Held> left = HeldLists::take_all();
  tl_thread.reserved = 0;
  for (Held& h : left) {
    if (report && h.released)
      report_unreceived(out, rank_label, h.comm, h.status,
                        "probed message not received by its thread, which ended (the message was left to others)");
    else if (report)
      report_unreceived(out, rank_label, h.comm, h.status);
    if (!h.released) h.map->unlock(h.key);
  }
  count(g_match_stats.unreceived, left.size());
  return left.size();
}

void retire(std::uintptr_t comm_bits) { maps().retire(comm_bits); }

}  // namespace tsmpi::matching::lock2d_policy
