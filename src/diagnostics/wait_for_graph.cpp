#include "diagnostics/wait_for_graph.h"

#include <algorithm>
#include <functional>
#include <set>
#include <string_view>

#include "runtime/function_table.h"

namespace tsmpi::diag {
namespace {

constexpr int kMagic = 0x7d0903;  // "watchdog summary, version 3"
constexpr int kHeader = 3;        // magic, rank, number of calls
// thread, fn, kind, peer, number of members, as (4), peer_rank (4), number of thread members;
// then the members, then the thread members (4 ints each).
constexpr int kPerThreadRank = 4;  // world, rank, thread, address_space
constexpr int kPerCall = 6 + 2 * kPerThreadRank;

void put(std::vector<int>& v, const ThreadRankId& t) { v.insert(v.end(), {t.world, t.rank, t.thread, t.address_space}); }
ThreadRankId get(const int* p) { return {p[0], p[1], p[2], p[3]}; }

const char* function_name(int fn) {
  return fn >= 0 && fn < fn::kCount ? kFunctions[fn].name : "an MPI call";
}

// MPI_Allreduce and MPI_Allreduce_c are the same collective to the ranks that call them.
std::string_view base_name(int fn) {
  std::string_view n = function_name(fn);
  if (n.size() > 2 && n.substr(n.size() - 2) == "_c") n.remove_suffix(2);
  return n;
}

bool same_collective(const BlockedCall& a, const BlockedCall& b) {
  if (b.kind != WaitKind::Collective || base_name(a.fn) != base_name(b.fn)) return false;
  if (a.on_thread_ranks() != b.on_thread_ranks()) return false;
  return a.on_thread_ranks() ? a.thread_members == b.thread_members : a.members == b.members;
}

// Whether `rank` has a thread blocked in the collective `c` (so `c` does not wait for it).
bool joined(const std::map<int, RankSummary>& ranks, int rank, const BlockedCall& c) {
  auto it = ranks.find(rank);
  if (it == ranks.end()) return false;
  for (const BlockedCall& other : it->second.calls)
    if (same_collective(c, other)) return true;
  return false;
}

// Whether the thread-rank `t` is blocked in the collective `c` of thread-ranks.
bool joined(const std::map<int, RankSummary>& ranks, const ThreadRankId& t, const BlockedCall& c) {
  auto it = ranks.find(t.world);
  if (it == ranks.end()) return false;
  for (const BlockedCall& other : it->second.calls)
    if (other.as == t && same_collective(c, other)) return true;
  return false;
}

// A call on a thread-rank communicator: edges between thread-ranks.
void add_thread_rank_edges(const std::map<int, RankSummary>& ranks, int from, const BlockedCall& c,
                           std::vector<WaitEdge>& edges) {
  switch (c.kind) {
    case WaitKind::Collective:
      for (const ThreadRankId& m : c.thread_members)
        if (m != c.as && m.world >= 0 && m.valid() && !joined(ranks, m, c)) edges.push_back({from, m.world, &c, c.as, m});
      break;
    case WaitKind::Send:
    case WaitKind::Recv:
      if (c.peer >= 0 && c.peer_rank.valid()) edges.push_back({from, c.peer, &c, c.as, c.peer_rank});
      break;
    case WaitKind::Other: break;
  }
}

void add_call_edges(const std::map<int, RankSummary>& ranks, int from, const BlockedCall& c,
                    std::vector<WaitEdge>& edges) {
  if (c.on_thread_ranks()) return add_thread_rank_edges(ranks, from, c, edges);
  switch (c.kind) {
    case WaitKind::Collective:
      for (int m : c.members)
        if (m != from && !joined(ranks, m, c)) edges.push_back({from, m, &c, {}, {}});
      break;
    case WaitKind::Send:
    case WaitKind::Recv:
      if (c.peer >= 0) edges.push_back({from, c.peer, &c, {}, {}});
      break;
    case WaitKind::Other: break;
  }
}

std::string peer_text(const BlockedCall& c) {
  return c.peer >= 0 ? "rank " + std::to_string(c.peer)
         : c.peer == kPeerAny ? std::string("any rank")
         : c.peer == kPeerNull ? std::string("MPI_PROC_NULL")
                               : std::string("an unknown rank");
}

// "threadcomm rank 1 = process 0 thread 1 in MPI_Barrier on threadcomm ranks {0-3}"; a send or
// receive names its peer in the edge only ("... in MPI_Recv waits for threadcomm rank 3 = ...").
std::string thread_rank_call_text(const BlockedCall& c) {
  std::string s = thread_rank_text(c.as) + " in " + function_name(c.fn);
  switch (c.kind) {
    case WaitKind::Collective: {
      std::vector<int> members;
      for (const ThreadRankId& m : c.thread_members) members.push_back(m.rank);
      s += members.empty() ? std::string(" on unknown thread-ranks") : " on threadcomm ranks " + rank_set(members);
      break;
    }
    case WaitKind::Send:
      if (!(c.peer >= 0 && c.peer_rank.valid())) s += " to " + peer_text(c);
      break;
    case WaitKind::Recv:
      if (!(c.peer >= 0 && c.peer_rank.valid())) s += " from " + peer_text(c);
      break;
    case WaitKind::Other: break;
  }
  return s;
}

// "rank 1 (thread 2) in MPI_Recv from rank 0": the thread only when its rank has several.
std::string call_text(const std::map<int, RankSummary>& ranks, int rank, const BlockedCall& c) {
  if (c.on_thread_ranks()) return thread_rank_call_text(c);
  std::string s = "rank " + std::to_string(rank);
  auto it = ranks.find(rank);
  if (it != ranks.end() && it->second.calls.size() > 1) s += " (thread " + std::to_string(c.thread) + ")";
  s += std::string(" in ") + function_name(c.fn);
  const std::string peer = peer_text(c);
  switch (c.kind) {
    case WaitKind::Collective:
      s += c.members.empty() ? std::string(" on unknown ranks") : " on ranks " + rank_set(c.members);
      break;
    case WaitKind::Send: s += " to " + peer; break;
    case WaitKind::Recv: s += " from " + peer; break;
    case WaitKind::Other: break;
  }
  return s;
}

std::string node_text(const WaitNode& n) {
  return n.thread_rank.valid() ? thread_rank_text(n.thread_rank) : "rank " + std::to_string(n.rank);
}

std::string edge_text(const std::map<int, RankSummary>& ranks, const WaitEdge& e) {
  return call_text(ranks, e.from, *e.call) + " waits for " + node_text(e.to_node());
}

// What the acyclic listing adds to an edge whose node has no outgoing edge of its own to show:
// the rank sent no summary, or (for a rank) only calls of its thread-ranks, or (for a
// thread-rank) none of its process's blocked calls is one of that thread-rank's.
std::string unreported_text(const std::map<int, RankSummary>& ranks, const WaitNode& n) {
  auto it = ranks.find(n.rank);
  if (it == ranks.end()) return " (no blocked call reported)";
  const auto& calls = it->second.calls;
  if (n.thread_rank.valid()) {
    for (const BlockedCall& c : calls)
      if (c.as == n.thread_rank) return "";
    return " (no blocked call reported)";
  }
  for (const BlockedCall& c : calls)
    if (!c.on_thread_ranks()) return "";
  return " (only calls of its thread-ranks reported)";
}

std::vector<int> reported_ranks(const std::map<int, RankSummary>& ranks) {
  std::vector<int> r;
  for (const auto& [rank, s] : ranks) r.push_back(rank);
  return r;
}

// Lines for a graph without a cycle: each edge, and each blocked call that gave no edge.
std::vector<std::string> acyclic_lines(const std::map<int, RankSummary>& ranks, const std::vector<WaitEdge>& edges,
                                       int world_size) {
  std::vector<std::string> lines;
  lines.push_back("no deadlock cycle among the blocked calls of ranks " + rank_set(reported_ranks(ranks)) + " (" +
                  std::to_string(ranks.size()) + " of " + std::to_string(world_size) +
                  " ranks reported); waits for:");
  std::set<const BlockedCall*> with_edge;
  for (const WaitEdge& e : edges) {
    with_edge.insert(e.call);
    lines.push_back("  " + edge_text(ranks, e) + unreported_text(ranks, e.to_node()));
  }
  for (const auto& [rank, s] : ranks)
    for (const BlockedCall& c : s.calls) {
      if (with_edge.count(&c)) continue;
      const bool all_in =
          c.kind == WaitKind::Collective && !(c.on_thread_ranks() ? c.thread_members.empty() : c.members.empty());
      lines.push_back("  " + call_text(ranks, rank, c) +
                      (all_in ? ": every member is blocked in it too" : " waits for no rank tsmpi can name"));
    }
  return lines;
}

}  // namespace

std::vector<int> encode_summary(const RankSummary& s) {
  std::vector<int> v = {kMagic, s.rank, static_cast<int>(s.calls.size())};
  for (const BlockedCall& c : s.calls) {
    v.insert(v.end(), {c.thread, c.fn, static_cast<int>(c.kind), c.peer, static_cast<int>(c.members.size())});
    put(v, c.as);
    put(v, c.peer_rank);
    v.push_back(static_cast<int>(c.thread_members.size()));
    v.insert(v.end(), c.members.begin(), c.members.end());
    for (const ThreadRankId& m : c.thread_members) put(v, m);
  }
  return v;
}

bool decode_summary(const int* data, int count, RankSummary& out) {
  if (count < kHeader || data[0] != kMagic || data[2] < 0) return false;
  out.rank = data[1];
  out.calls.clear();
  int at = kHeader;
  for (int i = 0; i < data[2]; ++i) {
    if (count - at < kPerCall) return false;
    BlockedCall c;
    c.thread = data[at];
    c.fn = data[at + 1];
    if (data[at + 2] < 0 || data[at + 2] > static_cast<int>(WaitKind::Recv)) return false;
    c.kind = static_cast<WaitKind>(data[at + 2]);
    c.peer = data[at + 3];
    const int n = data[at + 4];
    c.as = get(data + at + 5);
    c.peer_rank = get(data + at + 5 + kPerThreadRank);
    const int nt = data[at + 5 + 2 * kPerThreadRank];
    at += kPerCall;
    if (n < 0 || nt < 0 || count - at < n) return false;
    c.members.assign(data + at, data + at + n);
    at += n;
    if ((count - at) / kPerThreadRank < nt) return false;
    for (int k = 0; k < nt; ++k, at += kPerThreadRank) c.thread_members.push_back(get(data + at));
    out.calls.push_back(std::move(c));
  }
  return at == count;
}

std::vector<WaitEdge> wait_for_edges(const std::map<int, RankSummary>& ranks) {
  std::vector<WaitEdge> edges;
  for (const auto& [rank, s] : ranks)
    for (const BlockedCall& c : s.calls) add_call_edges(ranks, rank, c, edges);
  return edges;
}

std::vector<WaitEdge> find_cycle(const std::vector<WaitEdge>& edges) {
  std::map<WaitNode, std::vector<const WaitEdge*>> out;
  for (const WaitEdge& e : edges) out[e.from_node()].push_back(&e);
  // Depth-first search from each node in increasing order; `path` holds the edges taken from
  // the root, `state` is 1 for nodes on the path and 2 for nodes fully explored.
  std::map<WaitNode, int> state;
  std::vector<const WaitEdge*> path;
  std::vector<WaitEdge> cycle;
  std::function<bool(const WaitNode&)> visit = [&](const WaitNode& node) {
    state[node] = 1;
    for (const WaitEdge* e : out[node]) {
      const WaitNode to = e->to_node();
      if (state[to] == 1) {  // back edge: the cycle is the path from `to`, closed by e
        auto first = std::find_if(path.begin(), path.end(), [&](const WaitEdge* p) { return p->from_node() == to; });
        for (auto it = first; it != path.end(); ++it) cycle.push_back(**it);
        cycle.push_back(*e);
        return true;
      }
      if (state[to] == 0) {
        path.push_back(e);
        if (visit(to)) return true;
        path.pop_back();
      }
    }
    state[node] = 2;
    return false;
  };
  for (const auto& [node, es] : out)
    if (state[node] == 0 && visit(node)) break;
  if (cycle.empty()) return cycle;
  auto smallest = std::min_element(cycle.begin(), cycle.end(), [](const WaitEdge& a, const WaitEdge& b) {
    return a.from_node() < b.from_node();
  });
  std::rotate(cycle.begin(), smallest, cycle.end());
  return cycle;
}

std::vector<std::string> describe_wait_for(const std::map<int, RankSummary>& ranks, int world_size) {
  if (ranks.empty()) return {"no wait-for graph: every blocked call reported has ended"};
  const std::vector<WaitEdge> edges = wait_for_edges(ranks);
  const std::vector<WaitEdge> cycle = find_cycle(edges);
  if (cycle.empty()) return acyclic_lines(ranks, edges, world_size);
  std::string line = "deadlock cycle: ";
  for (std::size_t i = 0; i < cycle.size(); ++i) line += (i ? " -> " : "") + edge_text(ranks, cycle[i]);
  return {line};
}

std::string thread_rank_text(const ThreadRankId& t) {
  if (t.address_space)
    return "rank " + std::to_string(t.rank) + " (address space " + std::to_string(t.world) + ", index " +
           std::to_string(t.thread) + ")";
  return "threadcomm rank " + std::to_string(t.rank) + " = process " + std::to_string(t.world) + " thread " +
         std::to_string(t.thread);
}

std::string rank_set(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string s = "{";
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (i) s += ",";
    s += std::to_string(ranks[i]);
    if (j >= i + 2) s += "-" + std::to_string(ranks[j]);
    else if (j == i + 1) s += "," + std::to_string(ranks[j]);
    i = j + 1;
  }
  return s + "}";
}

}  // namespace tsmpi::diag
