#include "checks/thread_rank_collectives.h"

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "checks/happens_before/history.h"
#include "checks/happens_before/unordered_report.h"
#include "checks/mark.h"
#include "diagnostics/report.h"

namespace tsmpi::checks {
namespace {

struct SequenceEntry {
  int fn = -1, root = -1, first_rank = -1;
  Mark first;
  int arrived = 0, left = 0, expected = 0;
  std::map<int, Mark> inside;  // thread-rank -> its mark, while in the call
};

struct Left {
  std::uint32_t made = 0;
  std::string call;
  Mark mark;
};

struct Blocked {
  int fn = -1;
  std::uint32_t seq = 0;
  Mark mark;
};

struct Log {
  std::map<std::uint32_t, SequenceEntry> by_seq;
  std::map<int, Blocked> blocking;  // rank -> the blocking collective one of its threads is in
  std::map<int, Left> left;  // members gone from the communicator, until all are
  std::map<int, hb::History> ordered;  // rank -> its threads' latest collectives (happens-before)
};

std::mutex g_mu;
std::map<const void*, Log> g_logs;

RankNoun (*g_noun)(const void* comm) = nullptr;
RankNoun noun(const void* comm) { return g_noun ? g_noun(comm) : RankNoun{"thread-rank", "thread-ranks"}; }
// "thread-rank 3", or for MPI processes of an address space "MPI process 3".
std::string who(const void* comm, int rank) { return std::string(noun(comm).singular) + " " + std::to_string(rank); }

std::string describe(int fn, int root) {
  std::string s = fn_name(fn);
  if (root >= 0) s += " (root " + std::to_string(root) + ")";
  return s;
}

}  // namespace

void thread_rank_collective_begin(const void* comm, std::uint32_t seq, int fn, int root, int rank, int local_members,
                                  bool blocking) {
  Mark me = mark_call(fn);
  SequenceEntry e_copy;
  bool mismatch = false;
  bool concurrent = false;
  Blocked other;
  std::vector<std::pair<int, Left>> gone;  // members that left before this collective
  std::vector<hb::Event> unordered;  // other threads' collectives as this rank, not ordered before this one
  hb::Event mine;
  {
    std::lock_guard g(g_mu);
    Log& log = g_logs[comm];
    if (hb::g_on) {  // Listing 3.3 by the program's ordering, not by overlap in time
      hb::History& h = log.ordered[rank];
      mine = h.record(fn);
      h.unordered([&](const hb::Event& e) { unordered.push_back(e); });
    }
    for (auto& [r, l] : log.left)
      if (l.made <= seq) gone.emplace_back(r, l);
    SequenceEntry& e = log.by_seq[seq];
    if (e.arrived == 0) {
      e.fn = fn;
      e.root = root;
      e.first_rank = rank;
      e.first = me;
    } else if (e.fn != fn || e.root != root) {
      mismatch = true;
      e_copy = e;
    }
    ++e.arrived;
    e.expected = local_members;
    e.inside[rank] = me;
    if (blocking) {
      auto [it, fresh] = log.blocking.try_emplace(rank, Blocked{fn, seq, me});
      if (!fresh && !hb::g_on) {
        concurrent = true;
        other = it->second;
      }
    }
  }
  if (concurrent)
    diag::report_error("two threads of " + who(comm, rank) + " in blocking collectives on one communicator "
                           "at once: " + fn_name(fn) + " (its collective #" + std::to_string(seq + 1) + ") while " +
                           fn_name(other.fn) + " (#" + std::to_string(other.seq + 1) +
                           ") has not returned (seed 004 Listing 3.3; MPI-4.0 §11.6.2: the threads of one MPI "
                           "process must order their collectives on a communicator)",
                       {involved(other.mark, who(comm, rank) + ", one thread in"),
                        involved(me, who(comm, rank) + ", another thread in")});
  for (const hb::Event& e : unordered)
    hb::report_unordered("a communicator as " + who(comm, rank),
                         "the threads of one MPI process must order their collectives on a communicator (seed 004 "
                         "Listing 3.3; MPI-4.0 §11.6.2)",
                         e, mine);
  for (auto& [r, l] : gone)
    diag::report_error(who(comm, rank) + " calls " + describe(fn, root) + " as its collective #" +
                           std::to_string(seq + 1) + " on a communicator that " + who(comm, r) +
                           " left with " + l.call + " after " + std::to_string(l.made) +
                           " collective(s): it never calls this one (seed 004 Listing 3.4: every member must call "
                           "every collective)",
                       {involved(me, who(comm, rank) + " waits in"),
                        involved(l.mark, who(comm, r) + " left with " + l.call)});
  if (mismatch)
    diag::report_error(std::string(noun(comm).plural) + " of one communicator in different collectives: " + who(comm, rank) + " calls " + describe(fn, root) + " as its collective #" +
                           std::to_string(seq + 1) + " on the communicator, " +
                           who(comm, e_copy.first_rank) + " called " + describe(e_copy.fn, e_copy.root) +
                           " (every member must call the same collectives in the same order)",
                       {involved(e_copy.first, who(comm, e_copy.first_rank) + " in"),
                        involved(me, who(comm, rank) + " in")});
}

void thread_rank_collective_end(const void* comm, std::uint32_t seq, int rank, bool blocking) {
  std::lock_guard g(g_mu);
  auto lit = g_logs.find(comm);
  if (lit == g_logs.end()) return;
  if (blocking) {
    auto b = lit->second.blocking.find(rank);
    if (b != lit->second.blocking.end() && b->second.seq == seq) lit->second.blocking.erase(b);
  }
  auto it = lit->second.by_seq.find(seq);
  if (it == lit->second.by_seq.end()) return;
  it->second.inside.erase(rank);
  // Forgotten once every local member has been through it.
  if (++it->second.left == it->second.expected) lit->second.by_seq.erase(it);
}

void set_rank_noun(RankNoun (*noun_of)(const void* comm)) { g_noun = noun_of; }

void thread_rank_comm_gone(const void* comm) {
  std::lock_guard g(g_mu);
  g_logs.erase(comm);
}

void thread_rank_leaves(const void* comm, std::uint32_t made, int rank, const char* call, int local_members) {
  std::vector<std::pair<SequenceEntry, std::uint32_t>> missed;
  Mark me = mark_here(kLeaving, 2);
  {
    std::lock_guard g(g_mu);
    Log& log = g_logs[comm];
    for (auto& [seq, e] : log.by_seq)
      if (seq >= made && !e.inside.empty()) missed.emplace_back(e, seq);
    log.left[rank] = Left{made, call, me};
    if (static_cast<int>(log.left.size()) >= local_members) g_logs.erase(comm);  // all gone
  }
  if (missed.empty()) return;
  for (auto& [e, seq] : missed) {
    const auto& [other_rank, other] = *e.inside.begin();
    diag::report_error(who(comm, rank) + " leaves with " + call + " after " +
                           std::to_string(made) + " collective(s) on a communicator while " +
                           who(comm, other_rank) + " waits in its collective #" + std::to_string(seq + 1) + ", " +
                           describe(e.fn, e.root) + ", which " + who(comm, rank) +
                           " never calls (seed 004 Listing 3.4: every member must call every collective)",
                       {involved(other, who(comm, other_rank) + " waits in"),
                        involved(me, who(comm, rank) + " leaves with " + call)});
  }
}

}  // namespace tsmpi::checks
