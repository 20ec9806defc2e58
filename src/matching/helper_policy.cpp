// TSMPI_PROBE=helper: matching outside the MPI (seed 001 §2.2). Messages are taken out of the
// MPI with MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG) in the MPI's order and matched inside tsmpi
// against posted receives and probes by a per-communicator MatchQueue (per-(source, tag)
// expected and unexpected lists, matching/match_queue.h). A helper thread, started on the first
// receive that has to wait, does this while any receive waits and sleeps on a futex otherwise;
// threads that probe or receive also pull for themselves, first and while they wait.
//
// Unlike the paper, nothing is copied through a bounce buffer: what is matched is the
// MPI_Message of the matched probe, and the receiving thread (or, for a nonblocking receive, the
// thread that matched it) receives it with MPI_Mrecv / MPI_Imrecv straight into the
// application's buffer. Status fields and MPI_Get_count are therefore the MPI's own, for any
// datatype. Nonblocking receives return a generalized request completed when the data is in.
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "locking/backoff.h"
#include "matching/comm_table.h"
#include "matching/helper_policy.h"
#include "matching/match_queue.h"
#include "matching/match_stats.h"
#include "matching/matched_receive.h"
#include "matching/policies.h"
#include "matching/reservations.h"
#include "runtime/os.h"

namespace tsmpi::matching::helper_policy {
namespace {

struct Incoming {
  MPI_Message message = MPI_MESSAGE_NULL;
  MPI_Status status{};
  int error = MPI_SUCCESS;  // no message: the communicator failed (a revoked one: MPIX_ERR_REVOKED)
};
using Queue = MatchQueue<Incoming>;

struct CommState;
struct Operation;

// A posted receive or probe. `state`: 0 waiting, 1 matched, 2 the matcher is done with it (a
// blocked owner may then return and destroy it). A blocked owner that sleeps does so on `state`
// (a futex), with `sleeping` set so that the matcher knows to wake it.
struct Waiter : Queue::Waiter {
  std::atomic<std::uint32_t> state{0};
  std::atomic<bool> sleeping{false};
  CommState* comm_state = nullptr;
  Operation* operation = nullptr;  // set for nonblocking receives: matched → received → completed
  Buffer buffer;
};

// A nonblocking operation completed by tsmpi: the generalized request the application holds.
// Its parts (a receive, and for MPI_Isendrecv a send) each finish once; the waiter lives here so
// that a cancel can always look at it, matched or not.
struct Operation {
  MPI_Request grequest = MPI_REQUEST_NULL;
  std::atomic<int> parts_left{1};
  MPI_Status result{};  // of the receive
  MPI_Count bytes = 0;
  int error = MPI_SUCCESS;
  bool cancelled = false;
  std::vector<char> owned_send;  // packed copy of MPI_Isendrecv_replace, until the send is done
  Waiter waiter;
};
std::atomic<int> g_helper_passes{0};  // the helper thread is in a pass over its communicators

struct CommState {
  explicit CommState(MPI_Comm c) : comm(c) {}
  // Retired and unused: no receive posted, nothing matched left or being received, not in a
  // helper pass's list (defined with the helper thread below).
  bool idle() const;
  MPI_Comm comm;
  Queue queue;
  std::mutex pull_mutex;          // one puller at a time keeps the MPI's order in the queue
  std::atomic<int> waiting{0};    // posted waiters: the helper pulls while this is non-zero
  std::atomic<bool> listed{false};
  std::atomic<bool> retired{false};
  // The MPI's error when pulling from the communicator failed (ULFM: it was revoked): receives
  // and probes still waiting on it end with it instead of waiting for ever.
  std::atomic<int> failed{MPI_SUCCESS};
};

CommTable<CommState>& states() {
  static CommTable<CommState>* t = new CommTable<CommState>;
  return *t;
}

// ---- the helper thread's work lists ------------------------------------------------------------
struct InFlight {
  enum Kind { kReceive, kSend, kCancelled };
  MPI_Request request;  // an Imrecv into the application's buffer, an Isend of Isendrecv, or null
  Operation* operation;
  Kind kind;
};

struct Helper {
  std::mutex mutex;                   // guards comms and in_flight
  std::vector<CommState*> comms;      // communicators that have had waiting receives
  std::vector<InFlight> in_flight;
  std::atomic<int> waiting{0};        // all posted waiters of the process
  std::atomic<int> in_flight_count{0};
  std::atomic<std::uint32_t> wake{0};  // futex word the idle helper sleeps on
  std::atomic<bool> sleeping{false};
  std::atomic<bool> stop{false};
  std::once_flag started;
  std::thread thread;
};
Helper& helper() {
  static Helper* h = new Helper;
  return *h;
}

bool CommState::idle() const {
  return waiting.load() == 0 && queue.unexpected_count() == 0 && queue.posted_count() == 0 &&
         g_helper_passes.load() == 0 && helper().in_flight_count.load() == 0;
}

void wake_helper() {
  Helper& h = helper();
  if (h.sleeping.load(std::memory_order_seq_cst)) {
    h.wake.fetch_add(1, std::memory_order_seq_cst);
    h.wake.notify_one();
  }
}

void helper_main();
void ensure_helper() {
  std::call_once(helper().started, [] { helper().thread = std::thread(helper_main); });
}

void list_comm(CommState& c) {
  if (c.listed.exchange(true)) return;
  std::lock_guard<std::mutex> g(helper().mutex);
  helper().comms.push_back(&c);
}

Pattern pattern_of(int source, int tag) {
  return {source == MPI_ANY_SOURCE ? kAny : source, tag == MPI_ANY_TAG ? kAny : tag};
}

// ---- completing nonblocking operations --------------------------------------------------------
void part_done(Operation* op) {
  if (op->parts_left.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // Last touch: MPI may call free_fn (which deletes op) inside MPI_Grequest_complete.
  MPI_Request g = op->grequest;
  mpi::locked([&] { return PMPI_Grequest_complete(g); });
}

void receive_done(Operation* op, int rc, const MPI_Status& status) {
  op->result = status;
  op->error = rc != MPI_SUCCESS ? rc : MPI_SUCCESS;
  PMPI_Get_elements_x(&op->result, MPI_BYTE, &op->bytes);
  part_done(op);
}

void add_in_flight(const InFlight& f) {
  Helper& h = helper();
  {
    std::lock_guard<std::mutex> g(h.mutex);
    h.in_flight.push_back(f);
  }
  h.in_flight_count.fetch_add(1, std::memory_order_seq_cst);
  ensure_helper();
  wake_helper();
}

// Receives a matched message for a nonblocking receive into the application's buffer.
void receive_for(Operation* op, const Buffer& b, Incoming& in) {
  MPI_Request r = MPI_REQUEST_NULL;
  int rc = mpi::imrecv(b, &in.message, &r);
  if (rc != MPI_SUCCESS) {
    receive_done(op, rc, in.status);
    return;
  }
  int done = 0;
  MPI_Status st{};
  rc = mpi::test(&r, &done, &st);
  if (rc != MPI_SUCCESS || done) receive_done(op, rc, st);
  else add_in_flight({r, op, InFlight::kReceive});
}

// A waiter of `c` is no longer posted (matched, cancelled, failed): the counts post() raised.
void unposted(CommState& c) {
  c.waiting.fetch_sub(1, std::memory_order_relaxed);
  helper().waiting.fetch_sub(1, std::memory_order_relaxed);
}

// arrive() matched `w`: hand the message over.
void deliver(Waiter* w) {
  count(g_match_stats.to_waiters);
  unposted(*w->comm_state);
  if (Operation* op = w->operation) {
    receive_for(op, w->buffer, w->payload);
    return;
  }
  w->state.store(1, std::memory_order_seq_cst);
  if (w->sleeping.load(std::memory_order_seq_cst)) futex_wake(w->state, 1);
  w->state.store(2, std::memory_order_release);
}

enum class IfBusy { kSkip, kWait };

// Takes up to `max` messages out of the MPI into `c`'s queue, in the MPI's order. Returns how
// many; -1 when another thread is pulling for this communicator right now and `busy` says skip.
void fail_waiters(CommState& c, int rc);

int pull(CommState& c, int max, IfBusy busy = IfBusy::kSkip) {
  std::unique_lock<std::mutex> lock(c.pull_mutex, std::defer_lock);
  if (busy == IfBusy::kWait) lock.lock();
  else if (!lock.try_lock()) return -1;
  if (c.retired.load(std::memory_order_acquire) || c.failed.load(std::memory_order_acquire) != MPI_SUCCESS) return 0;
  int n = 0;
  for (; n < max; ++n) {
    int flag = 0;
    Incoming in;
    const int rc = mpi::improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, c.comm, &flag, &in.message, &in.status);
    if (rc != MPI_SUCCESS) {
      lock.unlock();
      fail_waiters(c, rc);
      break;
    }
    if (!flag) break;
    count(g_match_stats.pulled);
    Envelope e{in.status.MPI_SOURCE, in.status.MPI_TAG};
    if (Queue::Waiter* w = c.queue.arrive(e, std::move(in))) deliver(static_cast<Waiter*>(w));
  }
  return n;
}

// Pulling from `c` failed with `rc`: every receive posted on it ends with that error. Blocked
// ones see `failed` at their next poll (their sleeps are bounded) and remove themselves
// (match_blocking); nonblocking ones are completed here.
void fail_waiters(CommState& c, int rc) {
  c.failed.store(rc, std::memory_order_release);
  std::vector<Waiter*> posted;
  c.queue.for_each_posted([&](const Queue::Waiter& w) {
    auto* mine = static_cast<Waiter*>(const_cast<Queue::Waiter*>(&w));
    if (mine->operation != nullptr) posted.push_back(mine);  // its Operation lives until completed
  });
  for (Waiter* w : posted) {
    if (!c.queue.cancel(w)) continue;  // matched meanwhile
    unposted(c);
    MPI_Status st{};
    st.MPI_ERROR = rc;
    receive_done(w->operation, rc, st);
  }
}

constexpr int kPullBatch = 32;

// Posts `w` (already counted as waiting) or matches it at once. true = matched now.
bool post(CommState& c, Waiter* w) {
  c.waiting.fetch_add(1, std::memory_order_relaxed);
  helper().waiting.fetch_add(1, std::memory_order_seq_cst);
  if (c.queue.take_or_post(w)) {
    unposted(c);
    return true;
  }
  list_comm(c);
  ensure_helper();
  wake_helper();
  return false;
}

// Sleeps at most `ns` or until deliver() matches `w`.
void sleep_until_matched(Waiter& w, long ns) {
  w.sleeping.store(true, std::memory_order_seq_cst);
  if (w.state.load(std::memory_order_seq_cst) == 0) futex_wait(w.state, 0, ns);
  w.sleeping.store(false, std::memory_order_relaxed);
}

// The message for `pattern` on `comm`: an unexpected one, one pulled now, or the next to arrive
// (the calling thread pulls and sleeps until it, another thread or the helper matches it).
Incoming match_blocking(MPI_Comm comm, Pattern pattern) {
  CommState& c = states().of(comm);
  Envelope e;
  Incoming in;
  if (c.queue.take(pattern, &e, &in)) return in;
  pull(c, kPullBatch);
  Waiter w;
  w.pattern = pattern;
  w.comm_state = &c;
  if (post(c, &w)) return std::move(w.payload);
  // The waiter pulls for itself too, not only the helper thread: with more busy threads than
  // cores (threads in blocking sends and receives spin in the MPI) the helper thread was often
  // not running when a message came, and a round trip of 4 KiB or more on Open MPI took 2-4 ms
  // instead of 15-40 us. Its sleeps are on `state`, so a match by another thread ends them.
  Backoff backoff;
  while (w.state.load(std::memory_order_acquire) == 0) {
    if (const int e = c.failed.load(std::memory_order_acquire); e != MPI_SUCCESS && c.queue.cancel(&w)) {
      unposted(c);
      Incoming failed;
      failed.error = e;
      return failed;
    }
    if (pull(c, kPullBatch) > 0) {
      backoff = Backoff();
      continue;
    }
    backoff.pause([&w](long ns) { sleep_until_matched(w, ns); });
  }
  backoff = Backoff();
  while (w.state.load(std::memory_order_acquire) != 2) backoff.pause();  // the matcher's last touch
  return std::move(w.payload);
}

// An unexpected message for `pattern`, pulling from the MPI once if there is none yet.
bool match_now(MPI_Comm comm, Pattern pattern, Incoming* in) {
  CommState& c = states().of(comm);
  Envelope e;
  if (c.queue.take(pattern, &e, in)) return true;
  // A pull under way is waited for (asleep), not skipped: pollers that return at once and poll
  // again keep the cores from the puller, and with hundreds of them it hardly ever runs.
  pull(c, kPullBatch, IfBusy::kWait);
  return c.queue.take(pattern, &e, in);
}

// ---- generalized-request callbacks (run inside MPI calls: PMPI only, no tsmpi locks) ----------
int query_op(void* extra, MPI_Status* status) {
  auto* op = static_cast<Operation*>(extra);
  status->MPI_SOURCE = op->result.MPI_SOURCE;
  status->MPI_TAG = op->result.MPI_TAG;
  status->MPI_ERROR = op->error;
  PMPI_Status_set_elements_x(status, MPI_BYTE, op->bytes);
  PMPI_Status_set_cancelled(status, op->cancelled);
  return op->error;
}
int free_op(void* extra) {
  delete static_cast<Operation*>(extra);
  return MPI_SUCCESS;
}

// A receive that is still posted can be cancelled; one already matched completes normally.
int cancel_op(void* extra, int complete) {
  auto* op = static_cast<Operation*>(extra);
  if (complete) return MPI_SUCCESS;
  CommState* c = op->waiter.comm_state;
  if (!c->queue.cancel(&op->waiter)) return MPI_SUCCESS;
  unposted(*c);
  op->cancelled = true;
  op->bytes = 0;
  // Completed by the helper thread: MPICH 4.0 asserts when MPI_Grequest_complete is called
  // inside the MPI_Cancel that runs this callback.
  add_in_flight({MPI_REQUEST_NULL, op, InFlight::kCancelled});
  return MPI_SUCCESS;
}

// Starts a nonblocking receive into `b` completed through a generalized request (returned in
// *request). `parts` is 2 when a send belongs to the same request.
int start_receive(const Buffer& b, int source, int tag, MPI_Comm comm, MPI_Request* request, int parts,
                  std::vector<char> owned_send, Operation** made) {
  auto* op = new Operation;
  op->parts_left.store(parts, std::memory_order_relaxed);
  op->owned_send = std::move(owned_send);
  op->result.MPI_SOURCE = source;
  op->result.MPI_TAG = tag;
  int rc = mpi::locked([&] { return PMPI_Grequest_start(query_op, free_op, cancel_op, op, &op->grequest); });
  if (rc != MPI_SUCCESS) {
    delete op;
    return rc;
  }
  *request = op->grequest;
  if (made) *made = op;
  CommState& c = states().of(comm);
  Waiter& w = op->waiter;
  w.pattern = pattern_of(source, tag);
  w.comm_state = &c;
  w.operation = op;
  w.buffer = b;
  // A message this thread reserved by an earlier probe comes first.
  if (auto r = take_reserved(comm, source, tag)) {
    count(g_match_stats.taken);
    Incoming in{r->message, r->status};
    receive_for(op, b, in);
    return MPI_SUCCESS;
  }
  if (post(c, &w)) receive_for(op, b, w.payload);
  return MPI_SUCCESS;
}

// ---- the helper thread ----------------------------------------------------------------------
// Tests the in-flight requests once; true if any completed.
bool progress_in_flight(Helper& h) {
  if (h.in_flight_count.load(std::memory_order_acquire) == 0) return false;
  std::vector<InFlight> mine;
  {
    std::lock_guard<std::mutex> g(h.mutex);
    mine.swap(h.in_flight);
  }
  bool any = false;
  std::vector<InFlight> still;
  for (InFlight& f : mine) {
    int done = 0;
    MPI_Status st{};
    int rc = mpi::test(&f.request, &done, &st);
    if (rc != MPI_SUCCESS || done) {
      any = true;
      h.in_flight_count.fetch_sub(1, std::memory_order_relaxed);
      if (f.kind == InFlight::kReceive) receive_done(f.operation, rc, st);
      else part_done(f.operation);
    } else {
      still.push_back(f);
    }
  }
  if (!still.empty()) {
    std::lock_guard<std::mutex> g(h.mutex);
    h.in_flight.insert(h.in_flight.end(), still.begin(), still.end());
  }
  return any;
}

// Pulls for every communicator with waiting receives; true if anything arrived.
bool pull_waiting(Helper& h) {
  // While the pass runs, no retired state is freed (CommState::idle): the copy below may hold
  // one retired after it was taken. Counted before the copy, seq_cst, so a retirement either
  // sees the pass or removed its state from h.comms before the copy.
  g_helper_passes.fetch_add(1, std::memory_order_seq_cst);
  std::vector<CommState*> comms;
  {
    std::lock_guard<std::mutex> g(h.mutex);
    comms = h.comms;
  }
  bool any = false;
  for (CommState* c : comms)
    if (c->waiting.load(std::memory_order_acquire) > 0 && pull(*c, kPullBatch) > 0) any = true;
  g_helper_passes.fetch_sub(1, std::memory_order_seq_cst);
  return any;
}

void helper_main() {
  Helper& h = helper();
  Backoff backoff;
  while (!h.stop.load(std::memory_order_acquire)) {
    bool worked = pull_waiting(h);
    worked = progress_in_flight(h) || worked;
    if (worked) {
      backoff = Backoff();
      continue;
    }
    if (h.waiting.load(std::memory_order_seq_cst) > 0 || h.in_flight_count.load(std::memory_order_seq_cst) > 0) {
      backoff.pause();
      continue;
    }
    // Idle: sleep until a receive is posted. `sleeping` is set before the re-check, and posters
    // count themselves before they look at it, so a wake-up cannot be missed.
    std::uint32_t seen = h.wake.load(std::memory_order_seq_cst);
    h.sleeping.store(true, std::memory_order_seq_cst);
    if (h.waiting.load(std::memory_order_seq_cst) == 0 && h.in_flight_count.load(std::memory_order_seq_cst) == 0 &&
        !h.stop.load(std::memory_order_seq_cst)) {
      count(g_match_stats.helper_sleeps);
      h.wake.wait(seen, std::memory_order_seq_cst);
    }
    h.sleeping.store(false, std::memory_order_seq_cst);
    backoff = Backoff();
  }
  // MPI_Finalize is next: complete what is in flight.
  while (h.in_flight_count.load(std::memory_order_acquire) > 0) {
    if (!progress_in_flight(h)) backoff.pause();
  }
}

}  // namespace

// ---- the policy operations ------------------------------------------------------------------
int probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (probe_reserved(comm, source, tag, status)) return MPI_SUCCESS;
  Incoming in = match_blocking(comm, pattern_of(source, tag));
  if (in.error != MPI_SUCCESS) return in.error;
  reserve_probed(Reserved{comm, in.message, in.status}, status);
  return MPI_SUCCESS;
}

int iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  if ((*flag = probe_reserved(comm, source, tag, status))) return MPI_SUCCESS;
  Incoming in;
  if ((*flag = match_now(comm, pattern_of(source, tag), &in))) reserve_probed(Reserved{comm, in.message, in.status}, status);
  return MPI_SUCCESS;
}

// The application's matched probe gets the MPI_Message tsmpi matched: it is the MPI's own.
int mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  if (hand_over_reserved(comm, source, tag, message, status)) return MPI_SUCCESS;
  Incoming in = match_blocking(comm, pattern_of(source, tag));
  if (in.error != MPI_SUCCESS) return in.error;
  *message = in.message;
  copy_status(status, in.status);
  return MPI_SUCCESS;
}

int improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  if ((*flag = hand_over_reserved(comm, source, tag, message, status))) return MPI_SUCCESS;
  Incoming in;
  if ((*flag = match_now(comm, pattern_of(source, tag), &in))) {
    *message = in.message;
    copy_status(status, in.status);
  }
  return MPI_SUCCESS;
}

namespace {
int receive_blocking(const Buffer& b, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (auto r = take_reserved(comm, source, tag)) {
    count(g_match_stats.taken);
    return receive_matched(b, &r->message, r->status, comm, status);
  }
  Incoming in = match_blocking(comm, pattern_of(source, tag));
  if (in.error != MPI_SUCCESS) return in.error;
  return receive_matched(b, &in.message, in.status, comm, status);
}
}  // namespace

int recv(const Buffer& b, int source, int tag, MPI_Comm comm, MPI_Status* status, const OriginalCall&) {
  return receive_blocking(b, source, tag, comm, status);
}

int irecv(const Buffer& b, int source, int tag, MPI_Comm comm, MPI_Request* request, const OriginalCall&) {
  return start_receive(b, source, tag, comm, request, 1, {}, nullptr);
}

bool takes_receive(MPI_Comm, int, int) { return true; }

int sendrecv(const Buffer& send, int dest, int sendtag, const Buffer& recv, int source, int recvtag, MPI_Comm comm,
             MPI_Status* status) {
  MPI_Request sreq = MPI_REQUEST_NULL;
  int rc = mpi::isend(send, dest, sendtag, comm, &sreq);
  if (rc != MPI_SUCCESS) return rc;
  rc = receive_blocking(recv, source, recvtag, comm, status);
  int rc_send = mpi::wait(&sreq, MPI_STATUS_IGNORE);
  return rc != MPI_SUCCESS ? rc : rc_send;
}

int isendrecv(const Buffer& send, int dest, int sendtag, const Buffer& recv, int source, int recvtag, MPI_Comm comm,
              MPI_Request* request, std::vector<char> owned_send, const OriginalCall&) {
  MPI_Request sreq = MPI_REQUEST_NULL;
  int rc = mpi::isend(send, dest, sendtag, comm, &sreq);
  if (rc != MPI_SUCCESS) return rc;
  Operation* op = nullptr;
  rc = start_receive(recv, source, recvtag, comm, request, 2, std::move(owned_send), &op);
  if (rc != MPI_SUCCESS) {
    mpi::wait(&sreq, MPI_STATUS_IGNORE);
    return rc;
  }
  add_in_flight({sreq, op, InFlight::kSend});
  return MPI_SUCCESS;
}

int start(MPI_Request* request, const PersistentRecv& p, const OriginalCall&) {
  MPI_Request substitute = MPI_REQUEST_NULL;
  int rc = start_receive(p.buffer, p.source, p.tag, p.comm, &substitute, 1, {}, nullptr);
  if (rc == MPI_SUCCESS) set_substitute(*request, substitute);
  return rc;
}

void stop() {
  Helper& h = helper();
  if (h.thread.joinable()) {
    h.stop.store(true, std::memory_order_seq_cst);
    h.wake.fetch_add(1, std::memory_order_seq_cst);
    h.wake.notify_one();
    h.thread.join();
  }
  // Messages taken out of the MPI that nobody asked for would have stayed unexpected in the MPI;
  // they are received into scratch memory, so their senders (a rendezvous send waits) and the
  // MPI can finish.
  states().for_each_quiescent([](CommState& c) {
    c.queue.drain_unexpected([](const Envelope&, Incoming&& in) {
      MPI_Count bytes = 0;
      PMPI_Get_elements_x(&in.status, MPI_BYTE, &bytes);
      std::vector<char> scratch(bytes > 0 ? bytes : 1);
      mpi::mrecv(scratch.data(), static_cast<int>(bytes), MPI_BYTE, &in.message, MPI_STATUS_IGNORE);
    });
  });
}

void retire(std::uintptr_t comm_bits) {
  // The helper may still hold the state's pointer; it stays allocated, marked retired.
  std::lock_guard<std::mutex> g(helper().mutex);
  auto& comms = helper().comms;
  for (auto it = comms.begin(); it != comms.end(); ++it) {
    if (handle_bits((*it)->comm) == comm_bits) {
      (*it)->retired.store(true, std::memory_order_release);
      comms.erase(it);
      break;
    }
  }
  states().retire(comm_bits);
}

}  // namespace tsmpi::matching::helper_policy
