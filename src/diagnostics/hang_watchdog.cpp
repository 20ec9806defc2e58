// The hang watchdog (docs/hang-watchdog.md). One thread per rank wakes every min(1 s, N/4),
// looks at the call each registered thread is inside, and the first time one has been inside
// one call for more than N seconds prints the rank's report: every thread's call with its
// arguments and, for threads inside MPI, a backtrace taken in that thread by a signal handler.
// It then sends world rank 0 a summary of its blocked calls (and a new one when they change)
// over a private duplicate of MPI_COMM_WORLD; rank 0's watchdog gathers the summaries and
// names a wait-for cycle (wait_for_graph.h). The watchdog thread only makes nonblocking MPI calls, each under
// serialize mode's lock when that mode is on. Calls on thread-rank communicators (src/ranks/)
// are described from the engine's own view of them (ranks/introspect.h): their handles are no
// MPI objects, and the MPI is never asked about them.
#include "diagnostics/hang_watchdog.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "diagnostics/remote_stack.h"
#include "diagnostics/report.h"
#include "diagnostics/threads.h"
#include "diagnostics/wait_for_graph.h"
#include "locking/collective_sequence.h"
#include "locking/serialize_lock.h"
#include "ranks/introspect.h"
#include "runtime/function_table.h"

namespace tsmpi::diag {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint64_t kNsPerSecond = 1000000000ull;
constexpr int kSummaryTag = 7;  // the only tag on the private communicator
// How long the watchdog waits for serialize mode's lock before leaving the MPI alone.
constexpr auto kLockWait = std::chrono::milliseconds(200);
// Calls younger than this are shown by their handle only: their object may already be freed
// by the time the watchdog would ask the MPI for its members.
constexpr std::uint64_t kSettledNs = kNsPerSecond;

// ---- State -------------------------------------------------------------------------------

struct PendingReceive {
  MPI_Request request = MPI_REQUEST_NULL;
  std::vector<int> buf;  // alive as long as the Watchdog: a request given up may still fill it
  int count = 0;
  int source = -1;
};

struct Watchdog {
  std::mutex m;
  std::condition_variable wake;
  bool stop = false;  // guarded by m
  std::thread thread;
  unsigned timeout_s = 0;
  std::chrono::milliseconds period{1000};
  int rank = 0, size = 1;
  bool fired = false;  // this rank's report is printed (once)
  std::uint64_t fired_ns = 0;
  bool signal_ok = false;

  // Gathering (only the watchdog thread touches these until it is joined).
  MPI_Comm comm = MPI_COMM_NULL;  // private duplicate of MPI_COMM_WORLD
  std::vector<int> outgoing;      // the summary being sent; alive until the send completes
  MPI_Request send = MPI_REQUEST_NULL;
  std::vector<std::pair<int, std::uint64_t>> shared_calls;  // (thread, since) of the last summary
  PendingReceive incoming;              // rank 0: the summary being received
  std::map<int, RankSummary> gathered;  // rank 0: summaries by world rank
  std::uint64_t first_summary_ns = 0;
  bool analyzed = false;
};

// Never destroyed: in a program that exits without MPI_Finalize, nothing the watchdog thread
// reads may go away before halt_at_exit has stopped it.
Watchdog& wd() {
  static Watchdog* w = new Watchdog;
  return *w;
}

std::uint64_t timeout_ns() { return static_cast<std::uint64_t>(wd().timeout_s) * kNsPerSecond; }

// Serialize mode: every MPI call of the watchdog thread under its lock (its calls never block).
// Taken with a bounded wait, because a program thread may hold it across a blocking call
// (serialize mode's blocking-locked calls: MPI_Win_lock, individual file I/O, ...) and the
// watchdog must still report: without it, the watchdog leaves the MPI alone this time.
class MpiLock {
 public:
  MpiLock() {
    if (!serial::enabled()) return;
    held_ = serial::try_lock_for(std::chrono::duration_cast<std::chrono::nanoseconds>(kLockWait).count());
    ok_ = held_;
  }
  ~MpiLock() {
    if (held_) serial::mpi_lock().unlock();
  }
  MpiLock(const MpiLock&) = delete;
  MpiLock& operator=(const MpiLock&) = delete;
  explicit operator bool() const { return ok_; }

 private:
  bool held_ = false;
  bool ok_ = true;
};

// ---- What each thread is doing -------------------------------------------------------------

struct Seen {
  int index = 0;
  pid_t tid = 0;
  int fn = -1;  // -1: not in an MPI call
  std::uint64_t since_ns = 0;
  HandleRef object;
  int peer = kNoPeer;
  int thread_rank = -1;  // its rank in `object` when that is a thread-rank communicator
  StackResult stack_result = StackResult::None;
  Backtrace stack;
  std::uint64_t elapsed(std::uint64_t now) const { return now > since_ns ? now - since_ns : 0; }
};

// The thread's call as one consistent record: `fn` is published last by the thread, so the
// fields read between two equal reads of (fn, since) belong to that call. (Two short calls of
// one function starting at the same clock reading could mix; a call that lasts, the only kind
// the watchdog reports on, cannot.)
Seen read_thread(const ThreadInfo& t) {
  Seen s;
  s.index = t.index;
  s.tid = t.tid;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const int fn = t.call.fn.load(std::memory_order_acquire);
    if (fn < 0) return s;
    const std::uint64_t since = t.call.since_ns.load(std::memory_order_relaxed);
    const HandleRef object = t.call.object;
    const int peer = t.call.peer;
    const int thread_rank = t.call.thread_rank;
    std::atomic_thread_fence(std::memory_order_acquire);
    if (t.call.fn.load(std::memory_order_relaxed) == fn && t.call.since_ns.load(std::memory_order_relaxed) == since) {
      s.fn = fn;
      s.since_ns = since;
      s.object = object;
      s.peer = peer;
      s.thread_rank = thread_rank;
      return s;
    }
  }
  return s;  // racing through short calls: not blocked
}

// The longest call in progress now, without backtraces (the check of every period).
Seen longest_call() {
  Seen longest;
  for_each_thread([&](ThreadInfo& t) {
    Seen s = read_thread(t);
    if (s.fn >= 0 && (longest.fn < 0 || s.since_ns < longest.since_ns)) longest = s;
  });
  return longest;
}

// Every registered thread, with the stack of each one inside MPI.
std::vector<Seen> snapshot_threads() {
  std::vector<Seen> all;
  for_each_thread([&](ThreadInfo& t) {
    Seen s = read_thread(t);
    if (s.fn >= 0) s.stack_result = take_stack(t, s.stack, wd().signal_ok);
    all.push_back(s);
  });
  std::sort(all.begin(), all.end(), [](const Seen& a, const Seen& b) { return a.index < b.index; });
  return all;
}

// ---- The objects calls work on -------------------------------------------------------------

struct Members {
  bool known = false;
  bool busy = false;  // serialize mode's lock was not free: ask again later
  bool inter = false;
  std::vector<int> local;   // world ranks, in the object's rank order
  std::vector<int> remote;  // an intercommunicator's remote group
};

// World ranks of a group's members in group order (MPI_UNDEFINED outside MPI_COMM_WORLD); frees g.
std::vector<int> world_ranks_of(MPI_Group g) {
  int n = 0;
  PMPI_Group_size(g, &n);
  std::vector<int> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n), MPI_UNDEFINED);
  std::iota(in.begin(), in.end(), 0);
  MPI_Group world;
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  PMPI_Group_translate_ranks(g, n, in.data(), world, out.data());
  PMPI_Group_free(&world);
  PMPI_Group_free(&g);
  return out;
}

Members comm_members(MPI_Comm c) {
  Members m;
  MPI_Group g;
  if (c == MPI_COMM_NULL || PMPI_Comm_group(c, &g) != MPI_SUCCESS) return m;
  m.local = world_ranks_of(g);
  int inter = 0;
  PMPI_Comm_test_inter(c, &inter);
  if (inter && PMPI_Comm_remote_group(c, &g) == MPI_SUCCESS) {
    m.inter = true;
    m.remote = world_ranks_of(g);
  }
  m.known = true;
  return m;
}

// Local MPI calls only (group queries): safe under serialize mode's lock.
Members members_of(const HandleRef& o) {
  Members m;
  MpiLock lock;
  m.busy = !lock;
  if (m.busy) return m;
  MPI_Group g;
  switch (o.kind) {
    case Kind::Comm: return comm_members(handle_from_bits<MPI_Comm>(o.bits));
    case Kind::Win: {
      MPI_Win w = handle_from_bits<MPI_Win>(o.bits);
      if (w == MPI_WIN_NULL || PMPI_Win_get_group(w, &g) != MPI_SUCCESS) return m;
      break;
    }
    case Kind::File: {
      MPI_File f = handle_from_bits<MPI_File>(o.bits);
      if (f == MPI_FILE_NULL || PMPI_File_get_group(f, &g) != MPI_SUCCESS) return m;
      break;
    }
    default: return m;
  }
  m.local = world_ranks_of(g);
  m.known = true;
  return m;
}

std::vector<int> all_members(const Members& m) {
  std::vector<int> all = m.local;
  all.insert(all.end(), m.remote.begin(), m.remote.end());
  all.erase(std::remove(all.begin(), all.end(), MPI_UNDEFINED), all.end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

// The world rank of a source/dest argument (a rank in the communicator, or in the remote
// group of an intercommunicator), or a kPeer* value.
int peer_world_rank(int peer, const Members& m) {
  if (peer == kNoPeer) return kPeerNone;
  if (peer == MPI_ANY_SOURCE) return kPeerAny;
  if (peer == MPI_PROC_NULL) return kPeerNull;
  const std::vector<int>& ranks = m.inter ? m.remote : m.local;
  if (!m.known || peer < 0 || peer >= static_cast<int>(ranks.size()) || ranks[peer] == MPI_UNDEFINED)
    return kPeerUnknown;
  return ranks[peer];
}

std::string object_text(const HandleRef& o, const Members& m) {
  const char* what = o.kind == Kind::Comm ? "comm" : o.kind == Kind::Win ? "win" : o.kind == Kind::File ? "file" : nullptr;
  if (!what) return "";
  if (o.kind == Kind::Comm && o.bits == handle_bits(MPI_COMM_WORLD)) return "MPI_COMM_WORLD";
  if (o.kind == Kind::Comm && o.bits == handle_bits(MPI_COMM_SELF)) return "MPI_COMM_SELF";
  if (!m.known) return std::string(what) + " " + hex(o.bits);
  if (m.inter) return "intercomm of local ranks " + rank_set(m.local) + " and remote ranks " + rank_set(m.remote);
  return std::string(what) + " of " + std::to_string(m.local.size()) + " ranks " + rank_set(m.local);
}

// "source 3", "dest any": world ranks, or the raw argument when it cannot be translated.
std::string peer_text(int fn, int peer, const Members& m) {
  if (peer == kNoPeer) return "";
  const Family f = kFunctions[fn].family;
  const char* role = (f == Family::kSend || f == Family::kBsend || f == Family::kSendrecv) ? "dest"
                     : (f == Family::kRecv || f == Family::kProbe || f == Family::kMprobe) ? "source"
                                                                                             : "rank";
  const int w = peer_world_rank(peer, m);
  std::string s = std::string(role) + " ";
  if (w >= 0) return s + std::to_string(w);
  if (w == kPeerAny) return s + "any";
  if (w == kPeerNull) return s + "MPI_PROC_NULL";
  return s + std::to_string(peer) + " (rank in the communicator)";
}

// ---- Thread-rank communicators -------------------------------------------------------------

// A call on a communicator of thread-ranks: its handle is the engine's, not the MPI's, so the
// MPI must never see it (on Open MPI it points into an inaccessible region, on MPICH it is an
// invalid handle). The engine describes it instead, without MPI calls.
struct ThreadRankComm {
  bool is = false;     // the call is on a thread-rank communicator
  bool known = false;  // `view` holds its members
  ranks::CommView view;
};

// Like members_of, the engine is asked only about calls that have lasted (`settled`): the
// communicator of a call that has just ended may be freed already. A call that has not is known
// to be on a thread-rank communicator by the caller's rank recorded with it.
ThreadRankComm thread_rank_comm(const Seen& s, bool settled) {
  ThreadRankComm t;
  if (s.object.kind != Kind::Comm) return t;
  if (settled) t.known = ranks::view_comm(s.object.bits, &t.view);
  t.is = t.known || s.thread_rank >= 0;
  return t;
}

bool in_view(const ranks::CommView& v, int rank) { return rank >= 0 && rank < static_cast<int>(v.process.size()); }

// "threadcomm of 6 thread-ranks", "thread-rank comm of 3 thread-ranks (threadcomm ranks {0,2,4})".
std::string thread_rank_object_text(const HandleRef& o, const ThreadRankComm& t) {
  if (!t.known) return "thread-rank comm " + hex(o.bits);
  if (t.view.address_space) {
    const std::string n = std::to_string(t.view.process.size()) + " MPI processes";
    if (t.view.root) return "MPI_COMM_WORLD of " + n;
    return "comm of " + n + " (ranks " + rank_set(t.view.family_rank) + ")";
  }
  const std::string n = std::to_string(t.view.process.size()) + " thread-ranks";
  if (t.view.root) return "threadcomm of " + n;
  return "thread-rank comm of " + n + " (threadcomm ranks " + rank_set(t.view.family_rank) + ")";
}

// "source threadcomm rank 4 = process 1 thread 1", "dest any".
std::string thread_rank_peer_text(int fn, int peer, const ThreadRankComm& t) {
  if (peer == kNoPeer) return "";
  const Family f = kFunctions[fn].family;
  const char* role = (f == Family::kSend || f == Family::kBsend || f == Family::kSendrecv) ? "dest"
                     : (f == Family::kRecv || f == Family::kProbe || f == Family::kMprobe) ? "source"
                                                                                             : "rank";
  std::string s = std::string(role) + " ";
  if (peer == MPI_ANY_SOURCE) return s + "any";
  if (peer == MPI_PROC_NULL) return s + "MPI_PROC_NULL";
  if (t.known && in_view(t.view, peer)) return s + ranks::rank_name(t.view, peer);
  return s + std::to_string(peer) + " (rank in the communicator)";
}

// The graph's name of rank `r` of the communicator: by its threadcomm rank, whichever
// communicator of the threadcomm the call is on.
ThreadRankId thread_rank_id(const ranks::CommView& v, int r) {
  const auto i = static_cast<std::size_t>(r);
  return {v.world[i], v.family_rank[i], v.thread[i], v.address_space ? 1 : 0};
}

// A blocked call on a thread-rank communicator as the graph sees it: made by the caller's
// thread-rank, waiting for thread-ranks. Without the engine's view (or if the calling thread is
// no rank of it, or the processes are not all in MPI_COMM_WORLD), a call that waits for no
// node tsmpi can name.
void fill_thread_rank_call(const Seen& s, const ThreadRankComm& t, BlockedCall& c) {
  c.peer = s.peer == kNoPeer ? kPeerNone : s.peer == MPI_ANY_SOURCE ? kPeerAny : s.peer == MPI_PROC_NULL ? kPeerNull : kPeerUnknown;
  if (!t.known || !in_view(t.view, s.thread_rank)) return;
  const ThreadRankId as = thread_rank_id(t.view, s.thread_rank);
  if (as.world < 0) return;
  c.as = as;
  if (in_view(t.view, s.peer)) {
    const ThreadRankId p = thread_rank_id(t.view, s.peer);
    if (p.world >= 0) {
      c.peer = p.world;
      c.peer_rank = p;
    }
  }
  for (int r = 0; r < static_cast<int>(t.view.process.size()); ++r) c.thread_members.push_back(thread_rank_id(t.view, r));
}

WaitKind wait_kind(int fn) {
  const FunctionInfo& f = kFunctions[fn];
  if (!f.blocking) return WaitKind::Other;
  if (f.category == Category::Collective || builds_communicator(f)) return WaitKind::Collective;
  switch (f.family) {
    case Family::kSend:
    case Family::kBsend:
    case Family::kSendrecv: return WaitKind::Send;
    case Family::kRecv:
    case Family::kProbe:
    case Family::kMprobe: return WaitKind::Recv;
    default: return WaitKind::Other;
  }
}

// "in MPI_Recv(comm of 3 ranks {0-2}, source 1) for 12 s", "in MPI_Recv(threadcomm of 6
// thread-ranks, source threadcomm rank 4 = process 1 thread 1) for 12 s as threadcomm rank 2 =
// process 0 thread 2", or "not in an MPI call".
std::string call_text(const Seen& s, std::uint64_t now) {
  if (s.fn < 0) return "not in an MPI call";
  const bool settled = s.elapsed(now) >= kSettledNs;
  const ThreadRankComm t = thread_rank_comm(s, settled);
  std::string args, peer, as;
  if (t.is) {
    args = thread_rank_object_text(s.object, t);
    peer = thread_rank_peer_text(s.fn, s.peer, t);
    if (t.known && in_view(t.view, s.thread_rank)) as = " as " + ranks::rank_name(t.view, s.thread_rank);
  } else {
    const Members m = settled ? members_of(s.object) : Members{};
    args = object_text(s.object, m);
    peer = peer_text(s.fn, s.peer, m);
  }
  if (!peer.empty()) args += (args.empty() ? "" : ", ") + peer;
  std::string text = std::string("in ") + kFunctions[s.fn].name + "(" + args + ") for " +
                     std::to_string(s.elapsed(now) / kNsPerSecond) + " s" + as;
  if (s.stack_result == StackResult::NoAnswer) text += " (no backtrace: thread did not answer)";
  if (s.stack_result == StackResult::Unavailable) text += " (no backtrace: the program handles SIGRTMIN+7 itself)";
  return text;
}

// ---- Gathering at world rank 0 -------------------------------------------------------------

void add_summary(RankSummary s) {
  Watchdog& w = wd();
  if (w.analyzed) return;  // too late for the graph already printed
  if (w.first_summary_ns == 0) w.first_summary_ns = now_ns();
  if (s.calls.empty()) {
    w.gathered.erase(s.rank);  // its blocked calls have ended
    return;
  }
  w.gathered[s.rank] = std::move(s);
}

// Prints the graph N seconds after the first summary: ranks whose calls block later than the
// first rank's, and threads that block after their rank's report, are in by then.
void analyze_when_due() {
  Watchdog& w = wd();
  if (w.analyzed || w.first_summary_ns == 0 || now_ns() - w.first_summary_ns < timeout_ns()) return;
  w.analyzed = true;
  const std::vector<std::string> lines = describe_wait_for(w.gathered, w.size);
  const std::string head = "tsmpi: rank " + rank_label_text() + ": ";
  std::string text = lines.front();
  for (std::size_t i = 1; i < lines.size(); ++i) text += "\n" + head + lines[i];
  print_report(text, {});
}

// Starts receiving a summary that has arrived, if any (nonblocking: serialize mode's lock is
// never held waiting).
bool start_receive() {
  Watchdog& w = wd();
  PendingReceive& in = w.incoming;
  MpiLock lock;
  if (!lock) return false;
  int flag = 0;
  MPI_Status st;
  if (PMPI_Iprobe(MPI_ANY_SOURCE, kSummaryTag, w.comm, &flag, &st) != MPI_SUCCESS || !flag) return false;
  PMPI_Get_count(&st, MPI_INT, &in.count);
  in.buf.assign(static_cast<std::size_t>(std::max(in.count, 1)), 0);
  in.source = st.MPI_SOURCE;
  if (PMPI_Irecv(in.buf.data(), in.count, MPI_INT, in.source, kSummaryTag, w.comm, &in.request) != MPI_SUCCESS) {
    in.request = MPI_REQUEST_NULL;
    return false;
  }
  return true;
}

// True once the receive in progress is complete (its summary kept if it is one); a long
// summary may take a few periods.
bool finish_receive() {
  PendingReceive& in = wd().incoming;
  int done = 0;
  {
    MpiLock lock;
    if (!lock) return false;
    if (PMPI_Test(&in.request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      in.request = MPI_REQUEST_NULL;
      return true;
    }
  }
  if (!done) return false;
  RankSummary s;
  if (decode_summary(in.buf.data(), in.count, s) && s.rank == in.source) add_summary(std::move(s));
  return true;
}

void receive_summaries() {
  for (;;) {
    if (wd().incoming.request == MPI_REQUEST_NULL && !start_receive()) return;
    if (!finish_receive()) return;
  }
}

// Whether the ranks' summaries can meet at rank 0 (see open_private_comm).
bool gathering() { return wd().size == 1 || wd().comm != MPI_COMM_NULL; }

void gather() {
  Watchdog& w = wd();
  if (w.rank != 0 || !gathering()) return;
  if (w.comm != MPI_COMM_NULL) receive_summaries();
  analyze_when_due();
}

// Whether the previous summary has left (its buffer may be reused).
bool send_done() {
  Watchdog& w = wd();
  if (w.send == MPI_REQUEST_NULL) return true;
  int done = 0;
  MpiLock lock;
  if (lock && PMPI_Test(&w.send, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) w.send = MPI_REQUEST_NULL;
  return w.send == MPI_REQUEST_NULL;
}

// Rank 0 keeps its own summary; the others send theirs. False while the previous summary is
// still being sent (tried again next period).
bool share_summary(const RankSummary& s) {
  Watchdog& w = wd();
  if (!gathering()) return true;
  if (w.rank == 0) {
    add_summary(s);
    return true;
  }
  if (!send_done()) return false;
  MpiLock lock;
  if (!lock) return false;
  w.outgoing = encode_summary(s);
  if (PMPI_Isend(w.outgoing.data(), static_cast<int>(w.outgoing.size()), MPI_INT, 0, kSummaryTag, w.comm,
                 &w.send) != MPI_SUCCESS)
    w.send = MPI_REQUEST_NULL;
  return true;
}

// ---- The report ----------------------------------------------------------------------------

bool blocked(const Seen& s, std::uint64_t now) { return s.fn >= 0 && s.elapsed(now) >= timeout_ns(); }

// Which calls a summary holds: a new summary is due when this changes.
std::vector<std::pair<int, std::uint64_t>> blocked_key(const std::vector<Seen>& seen, std::uint64_t now) {
  std::vector<std::pair<int, std::uint64_t>> key;
  for (const Seen& s : seen)
    if (blocked(s, now)) key.emplace_back(s.index, s.since_ns);
  return key;
}

// The calls blocked for N seconds or more, as the wait-for graph sees them; nothing if the
// members of their objects cannot be asked for now.
std::optional<RankSummary> summarize(const std::vector<Seen>& seen, std::uint64_t now) {
  RankSummary r;
  r.rank = wd().rank;
  for (const Seen& s : seen) {
    if (!blocked(s, now)) continue;
    BlockedCall c;
    c.thread = s.index;
    c.fn = s.fn;
    c.kind = wait_kind(s.fn);
    const ThreadRankComm t = thread_rank_comm(s, true);  // blocked: N >= 1 s
    if (t.is) {
      fill_thread_rank_call(s, t, c);
    } else {
      const Members m = members_of(s.object);
      if (m.busy) return std::nullopt;
      c.peer = peer_world_rank(s.peer, m);
      c.members = all_members(m);
    }
    r.calls.push_back(std::move(c));
  }
  return r;
}

// Shares the rank's blocked calls if they differ from those shared last.
void share_blocked_calls(const std::vector<Seen>& seen, std::uint64_t now) {
  Watchdog& w = wd();
  auto key = blocked_key(seen, now);
  if (key == w.shared_calls) return;
  const std::optional<RankSummary> summary = summarize(seen, now);
  if (summary && share_summary(*summary)) w.shared_calls = std::move(key);
}

// After the report, threads that block later (or calls that end) still reach rank 0, which
// draws the graph N seconds after the first summary: so for 2 N seconds, a new summary
// whenever the blocked calls change.
void refresh_summary() {
  Watchdog& w = wd();
  const std::uint64_t now = now_ns();
  if (now - w.fired_ns > 2 * timeout_ns()) return;
  std::vector<Seen> seen;
  for_each_thread([&](ThreadInfo& t) { seen.push_back(read_thread(t)); });
  share_blocked_calls(seen, now);
}

const Seen* longest_of(const std::vector<Seen>& seen) {
  const Seen* longest = nullptr;
  for (const Seen& s : seen)
    if (s.fn >= 0 && (!longest || s.since_ns < longest->since_ns)) longest = &s;
  return longest;
}

// Serialize mode: what waits in the communicators' sequences (locking/collective_sequence.h),
// a line per communicator.
std::vector<std::string> serialize_notes() {
  std::vector<std::string> notes;
  if (!serial::enabled()) return notes;
  MpiLock lock;
  if (!lock) return notes;
  for (const serial::SequenceState& s : serial::describe_sequences()) {
    // Under the lock already taken (members_of would take it again); asked only of a
    // communicator its sequence keeps alive.
    const HandleRef comm{Kind::Comm, handle_bits(s.comm)};
    notes.push_back("serialize mode: " + object_text(comm, s.held ? comm_members(s.comm) : Members{}) + ": " + s.what);
  }
  return notes;
}

// Prints this rank's report and shares its blocked calls; false if the call that was over N
// seconds ended in the meantime (nothing printed, checked again next period).
bool report_hang() {
  std::vector<Seen> seen = snapshot_threads();
  const std::uint64_t now = now_ns();
  const Seen* culprit = longest_of(seen);
  if (!culprit || culprit->elapsed(now) <= timeout_ns()) return false;
  std::vector<std::string> calls;
  calls.reserve(seen.size());
  std::vector<Involved> involved;
  for (const Seen& s : seen) {
    calls.push_back(call_text(s, now));
    involved.push_back({s.index, s.tid, calls.back(), s.stack_result == StackResult::Taken ? &s.stack : nullptr});
  }
  print_report("hang: thread " + std::to_string(culprit->index) + " has been blocked in " +
                   kFunctions[culprit->fn].name + " for " + std::to_string(culprit->elapsed(now) / kNsPerSecond) +
                   " s (TSMPI_HANG_TIMEOUT=" + std::to_string(wd().timeout_s) + ")",
               involved, serialize_notes());
  wd().fired_ns = now;
  share_blocked_calls(seen, now);
  return true;
}

// ---- The thread ----------------------------------------------------------------------------

void tick() {
  Watchdog& w = wd();
  if (!w.fired) {
    const Seen longest = longest_call();
    if (longest.fn >= 0 && longest.elapsed(now_ns()) > timeout_ns()) w.fired = report_hang();
  } else {
    refresh_summary();
  }
  send_done();  // lets the MPI progress a summary still on its way
  gather();
}

void run() {
  Watchdog& w = wd();
  std::unique_lock<std::mutex> lk(w.m);
  while (!w.wake.wait_for(lk, w.period, [&] { return w.stop; })) {
    lk.unlock();
    tick();
    lk.lock();
  }
}

// Process-directed signals (SIGINT, SIGALRM, ...) must reach the program's threads, never
// this one: it starts with every signal blocked.
std::thread start_thread() {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  std::thread t(run);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return t;
}

void halt_thread() {
  Watchdog& w = wd();
  if (!w.thread.joinable()) return;
  {
    std::lock_guard<std::mutex> g(w.m);
    w.stop = true;
  }
  w.wake.notify_all();
  w.thread.join();
}

// A program that ends without MPI_Finalize: the thread must not outlive the objects it reads.
void halt_at_exit() { halt_thread(); }

// Collective (all ranks, inside MPI_Init). Only if the watchdog thread may call the MPI: at
// MPI_THREAD_MULTIPLE, or in serialize mode through its lock. Otherwise each rank prints only
// its own report. Here, and at MPI_Finalize, no other thread can be inside the MPI (or it must
// leave it for MPI_Finalize to proceed): a plain wait for serialize mode's lock.
void open_private_comm() {
  Watchdog& w = wd();
  int level = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&level);
  if (w.size == 1 || (level != MPI_THREAD_MULTIPLE && !serial::enabled())) return;
  serial::locked([&] {
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &w.comm) != MPI_SUCCESS) w.comm = MPI_COMM_NULL;
    // A failure on it must not end the job.
    if (w.comm != MPI_COMM_NULL) PMPI_Comm_set_errhandler(w.comm, MPI_ERRORS_RETURN);
  });
}

// Gives up a request: cancelled, then freed, so nothing waits for it. Its buffer is part of
// the Watchdog, which is never freed.
void abandon(MPI_Request& r) {
  if (r == MPI_REQUEST_NULL) return;
  int done = 0;
  if (PMPI_Test(&r, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done) return;
  PMPI_Cancel(&r);
  PMPI_Request_free(&r);
}

// In MPI_Finalize's thread, after the watchdog thread has ended: summaries that arrived are
// received, a send or receive still in progress is given up, the communicator is freed.
void close_private_comm() {
  Watchdog& w = wd();
  if (w.comm == MPI_COMM_NULL) return;
  if (w.rank == 0) receive_summaries();
  serial::locked([&] {
    abandon(w.incoming.request);
    abandon(w.send);
    PMPI_Comm_free(&w.comm);
  });
}

}  // namespace

void start_hang_watchdog(const Options& o) {
  Watchdog& w = wd();
  if (o.hang_timeout == 0 || w.thread.joinable()) return;
  w.timeout_s = o.hang_timeout;
  w.period = std::min(std::chrono::milliseconds(1000), std::chrono::milliseconds(250ull * o.hang_timeout));
  PMPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &w.size);
  g_track_calls = true;
  w.signal_ok = install_signal_handler();
  open_private_comm();
  static bool at_exit_registered = false;
  if (!at_exit_registered) {
    // The registry's statics are made first so that they are destroyed after halt_at_exit runs.
    for_each_thread([](ThreadInfo&) {});
    at_exit_registered = std::atexit(halt_at_exit) == 0;
  }
  w.thread = start_thread();
}

void stop_hang_watchdog() {
  Watchdog& w = wd();
  if (!w.thread.joinable()) return;
  halt_thread();
  close_private_comm();
}

}  // namespace tsmpi::diag
