#include <oneapi/tbb/spin_mutex.h>

#include <array>
#include <memory>
#include <vector>

#include "checks/happens_before/history.h"
#include "checks/happens_before/unordered_report.h"
#include "checks/unordered.h"
#include "diagnostics/report.h"
#include "matching/policies.h"
#include "runtime/concurrent_maps.h"

namespace tsmpi::checks::unordered {

bool g_probes = false;

namespace {

// A (source, tag) pair: a receive's or probe's pattern, or a probed message's envelope; a
// wildcard in an envelope means it is not known (the probe's status was MPI_STATUS_IGNORE).
struct Envelope {
  int source, tag;
};
bool overlaps(const Envelope& a, const Envelope& b) {
  return (a.source == MPI_ANY_SOURCE || b.source == MPI_ANY_SOURCE || a.source == b.source) &&
         (a.tag == MPI_ANY_TAG || b.tag == MPI_ANY_TAG || a.tag == b.tag);
}

struct Op {  // a probe or a receive
  Envelope pattern;
  hb::Event event;
  std::uint64_t seq = 0;  // its order among the communicator's probes and receives
  bool paired = false;    // a probe and the receive that took its message: compared as a pair
};

// One thread's probes and receives on one communicator.
struct ThreadOps {
  int slot = -1;
  bool pending = false;  // a probe whose message this thread has not received yet
  Envelope probed{};
  hb::Event probe;
  hb::Clock at_probe;  // the thread's clock at that probe
  std::uint64_t probe_seq = 0;
  struct Pair {
    Envelope message;
    hb::Event probe, receive;
  };
  std::array<Pair, 4> pairs{};  // its latest probe-and-receive pairs
  int npairs = 0, next_pair = 0;
  std::array<Op, 8> recent{};  // its latest probes and receives
  int nrecent = 0, next_recent = 0;
};

struct CommOps {
  tbb::spin_mutex lock;
  std::uint64_t next_seq = 0;
  std::vector<ThreadOps> threads;
  ThreadOps& of(int slot) {
    for (auto& t : threads)
      if (t.slot == slot) return t;
    threads.emplace_back();
    threads.back().slot = slot;
    return threads.back();
  }
};

ConcurrentHashMap<std::uintptr_t, std::unique_ptr<CommOps>>& g_comms =
    *new ConcurrentHashMap<std::uintptr_t, std::unique_ptr<CommOps>>;  // never destroyed

// The communicator's record, kept for the run (its operations may still be reported); the
// thread's last one is remembered, sparing the map's element lock on most calls.
CommOps& comm_ops(MPI_Comm comm) {
  struct Last {
    std::uintptr_t bits;
    CommOps* ops;
  };
  TSMPI_TLS Last last{};
  const std::uintptr_t bits = handle_bits(comm);
  if (last.ops && last.bits == bits) return *last.ops;
  std::remove_reference_t<decltype(g_comms)>::accessor a;
  if (g_comms.insert(a, bits)) a->second = std::make_unique<CommOps>();
  last = Last{bits, a->second.get()};
  return *last.ops;
}

const char* kWhy =
    "a probe and the receive that takes its message must be made by one thread with no probe or receive of "
    "another thread that may match it in between (MPI-4.0 §3.8.2)";

// Under a probe policy the probed message is the thread's (docs/probe-policies.md): the program
// runs correctly here and is told it would not elsewhere. Without one, it is an error.
hb::Severity severity() {
  return matching::g_policy != matching::Policy::kOff ? hb::Severity::kNonPortable : hb::Severity::kError;
}
std::string why() {
  return matching::g_policy != matching::Policy::kOff
             ? std::string(kWhy) + "; TSMPI_PROBE keeps this program correct, another MPI would not"
             : std::string(kWhy);
}

struct Finding {
  enum Kind { kUnordered, kTakesProbed } kind;
  hb::Event probe, receive;  // the other thread's pair (receive unset while pending)
  bool pending;
};

std::string pair_name(const Finding& f) {
  return std::string(fn_name(f.probe.mark.fn)) + "+" + (f.pending ? "(its receive)" : fn_name(f.receive.mark.fn));
}

// The calling thread's probe or receive `me` with `pattern` against the other threads'
// probe-and-receive pairs on the communicator: pending ones it may come between, completed
// ones it is not ordered after.
void against_pairs(CommOps& c, int my_slot, const Envelope& pattern, bool is_receive, std::vector<Finding>& out) {
  for (ThreadOps& t : c.threads) {
    if (t.slot == my_slot) continue;
    if (t.pending && overlaps(pattern, t.probed)) {
      const bool after_probe = hb::ordered_before_now(t.probe.at);
      out.push_back({after_probe && is_receive ? Finding::kTakesProbed : Finding::kUnordered, t.probe, {}, true});
    }
    for (int i = 0; i < t.npairs; ++i) {
      const auto& p = t.pairs[i];
      if (overlaps(pattern, p.message) && !hb::ordered_before_now(p.receive.at))
        out.push_back({Finding::kUnordered, p.probe, p.receive, false});
    }
  }
}

void report(const std::string& comm_name, const std::vector<Finding>& found, const hb::Event& me) {
  for (const Finding& f : found) {
    if (f.kind == Finding::kTakesProbed) {
      hb::report_pair("thread " + std::to_string(me.mark.thread_index) + "'s " + fn_name(me.mark.fn) +
                          " may take the message thread " + std::to_string(f.probe.mark.thread_index) + "'s " +
                          fn_name(f.probe.mark.fn) + " probed on " + comm_name + ": " + why(),
                      f.probe, "probed, in", me, "receives, in", severity());
    } else {
      hb::report_unordered(comm_name, why(), f.pending ? f.probe : f.receive, me, pair_name(f), {}, severity());
    }
  }
}

void remember(CommOps& c, ThreadOps& t, const Envelope& pattern, const hb::Event& e) {
  t.recent[t.next_recent] = Op{pattern, e, c.next_seq++};
  t.next_recent = (t.next_recent + 1) % static_cast<int>(t.recent.size());
  if (t.nrecent < static_cast<int>(t.recent.size())) ++t.nrecent;
}

// The calling thread's probe or receive `fn` now. Its stack is taken only when the thread's
// epoch or the call changed since its last one: events between two of its releases are the
// same event to the other threads (happens_before/history.h), and a backtrace per receive was
// most of checking mode's cost per message.
hb::Event op_here(int fn) {
  TSMPI_TLS hb::Event last;
  const hb::Epoch now = hb::now();
  if (last.mark.fn != fn || last.at.slot != now.slot || last.at.value != now.value) last = hb::event_here(fn);
  return last;
}

std::string name_of(MPI_Comm comm) { return "communicator " + diag::hex(handle_bits(comm)); }

}  // namespace

void probed(int fn, MPI_Comm comm, int source, int tag, const MPI_Status* status) {
  if (source == MPI_PROC_NULL) return;
  Envelope message{source, tag};
  if (status != MPI_STATUS_IGNORE) message = {status->MPI_SOURCE, status->MPI_TAG};
  const hb::Event me = op_here(fn);
  std::vector<Finding> found;
  CommOps& c = comm_ops(comm);
  {
    tbb::spin_mutex::scoped_lock g(c.lock);
    against_pairs(c, me.at.slot, Envelope{source, tag}, false, found);
    ThreadOps& t = c.of(me.at.slot);
    t.probe_seq = c.next_seq;
    remember(c, t, Envelope{source, tag}, me);
    t.pending = true;
    t.probed = message;
    t.probe = me;
    hb::clock_now_into(t.at_probe);
  }
  if (!found.empty()) report(name_of(comm), found, me);
}

void receiving(int fn, MPI_Comm comm, int source, int tag) {
  if (source == MPI_PROC_NULL) return;
  const Envelope pattern{source, tag};
  const hb::Event me = op_here(fn);
  std::vector<Finding> found;
  std::vector<hb::Event> between;  // other threads' operations not ordered before this thread's probe
  int pair_probe_fn = -1;          // the probe this receive pairs with (named only in reports)
  hb::Event as_pair = me;  // this receive as the end of the thread's probe-and-receive pair
  CommOps& c = comm_ops(comm);
  {
    tbb::spin_mutex::scoped_lock g(c.lock);
    ThreadOps& t = c.of(me.at.slot);
    const bool ends_pair = t.pending && overlaps(pattern, t.probed);  // it takes the probed message
    // Found against the same other pair at the probe already: one report for the pair.
    if (ends_pair) as_pair.site = t.probe.site;
    against_pairs(c, me.at.slot, pattern, true, found);
    remember(c, t, pattern, me);
    if (ends_pair) {
      pair_probe_fn = t.probe.mark.fn;
      // Other threads' operations before the probe that it is not ordered after; those since
      // the probe were compared with it when they were made.
      for (const ThreadOps& o : c.threads) {
        if (o.slot == t.slot) continue;
        for (int i = 0; i < o.nrecent; ++i)
          if (!o.recent[i].paired && o.recent[i].seq < t.probe_seq && overlaps(o.recent[i].pattern, t.probed) &&
              !hb::ordered_before(o.recent[i].event.at, t.at_probe))
            between.push_back(o.recent[i].event);
      }
      for (int i = 0; i < t.nrecent; ++i)  // this pair's probe and this receive
        if (t.recent[i].seq == t.probe_seq || t.recent[i].seq + 1 == c.next_seq) t.recent[i].paired = true;
      t.pairs[t.next_pair] = {t.probed, t.probe, me};
      t.next_pair = (t.next_pair + 1) % static_cast<int>(t.pairs.size());
      if (t.npairs < static_cast<int>(t.pairs.size())) ++t.npairs;
      t.pending = false;
    }
  }
  if (!found.empty()) report(name_of(comm), found, as_pair);
  if (between.empty()) return;
  const std::string pair = std::string(fn_name(pair_probe_fn)) + "+" + fn_name(fn);
  for (const hb::Event& e : between)
    hb::report_unordered(name_of(comm), why(), e, as_pair, {}, pair, severity());
}

}  // namespace tsmpi::checks::unordered
