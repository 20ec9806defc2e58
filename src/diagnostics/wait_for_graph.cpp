#include "diagnostics/wait_for_graph.h"

#include <algorithm>
#include <functional>
#include <set>
#include <string_view>

#include "runtime/function_table.h"

namespace tsmpi::diag {
namespace {

constexpr int kMagic = 0x7d0902;  // "watchdog summary, version 2"
constexpr int kHeader = 3;        // magic, rank, number of calls
constexpr int kPerCall = 5;       // thread, fn, kind, peer, number of members

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
  return b.kind == WaitKind::Collective && base_name(a.fn) == base_name(b.fn) && a.members == b.members;
}

// Whether `rank` has a thread blocked in the collective `c` (so `c` does not wait for it).
bool joined(const std::map<int, RankSummary>& ranks, int rank, const BlockedCall& c) {
  auto it = ranks.find(rank);
  if (it == ranks.end()) return false;
  for (const BlockedCall& other : it->second.calls)
    if (same_collective(c, other)) return true;
  return false;
}

void add_call_edges(const std::map<int, RankSummary>& ranks, int from, const BlockedCall& c,
                    std::vector<WaitEdge>& edges) {
  switch (c.kind) {
    case WaitKind::Collective:
      for (int m : c.members)
        if (m != from && !joined(ranks, m, c)) edges.push_back({from, m, &c});
      break;
    case WaitKind::Send:
    case WaitKind::Recv:
      if (c.peer >= 0) edges.push_back({from, c.peer, &c});
      break;
    case WaitKind::Other: break;
  }
}

// "rank 1 (thread 2) in MPI_Recv from rank 0": the thread only when its rank has several.
std::string call_text(const std::map<int, RankSummary>& ranks, int rank, const BlockedCall& c) {
  std::string s = "rank " + std::to_string(rank);
  auto it = ranks.find(rank);
  if (it != ranks.end() && it->second.calls.size() > 1) s += " (thread " + std::to_string(c.thread) + ")";
  s += std::string(" in ") + function_name(c.fn);
  const std::string peer = c.peer >= 0 ? "rank " + std::to_string(c.peer)
                           : c.peer == kPeerAny ? std::string("any rank")
                           : c.peer == kPeerNull ? std::string("MPI_PROC_NULL")
                                                 : std::string("an unknown rank");
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

std::string edge_text(const std::map<int, RankSummary>& ranks, const WaitEdge& e) {
  return call_text(ranks, e.from, *e.call) + " waits for rank " + std::to_string(e.to);
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
    std::string line = "  " + edge_text(ranks, e);
    if (!ranks.count(e.to)) line += " (no blocked call reported)";
    lines.push_back(line);
  }
  for (const auto& [rank, s] : ranks)
    for (const BlockedCall& c : s.calls) {
      if (with_edge.count(&c)) continue;
      const bool all_in = c.kind == WaitKind::Collective && !c.members.empty();
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
    v.insert(v.end(), c.members.begin(), c.members.end());
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
    at += kPerCall;
    if (n < 0 || count - at < n) return false;
    c.members.assign(data + at, data + at + n);
    at += n;
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
  std::map<int, std::vector<const WaitEdge*>> out;
  for (const WaitEdge& e : edges) out[e.from].push_back(&e);
  // Depth-first search from each rank in increasing order; `path` holds the edges taken from
  // the root, `state` is 1 for ranks on the path and 2 for ranks fully explored.
  std::map<int, int> state;
  std::vector<const WaitEdge*> path;
  std::vector<WaitEdge> cycle;
  std::function<bool(int)> visit = [&](int rank) {
    state[rank] = 1;
    for (const WaitEdge* e : out[rank]) {
      if (state[e->to] == 1) {  // back edge: the cycle is the path from e->to, closed by e
        auto first = std::find_if(path.begin(), path.end(), [&](const WaitEdge* p) { return p->from == e->to; });
        for (auto it = first; it != path.end(); ++it) cycle.push_back(**it);
        cycle.push_back(*e);
        return true;
      }
      if (state[e->to] == 0) {
        path.push_back(e);
        if (visit(e->to)) return true;
        path.pop_back();
      }
    }
    state[rank] = 2;
    return false;
  };
  for (const auto& [rank, es] : out)
    if (state[rank] == 0 && visit(rank)) break;
  if (cycle.empty()) return cycle;
  auto smallest = std::min_element(cycle.begin(), cycle.end(),
                                   [](const WaitEdge& a, const WaitEdge& b) { return a.from < b.from; });
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
