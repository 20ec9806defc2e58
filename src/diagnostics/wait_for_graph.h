// The hang watchdog's cross-rank view (docs/hang-watchdog.md): each rank whose watchdog fires
// sends world rank 0 a summary of its blocked calls (and a new one when they change); rank 0
// builds the wait-for graph from the latest summaries and names a cycle. Its nodes are ranks
// (world ranks: a process waits if any of its threads does) and thread-ranks (a thread that is
// a rank of a threadcomm, src/ranks/, blocked in a call on a thread-rank communicator). No MPI
// calls here (unit-tested in tests/unit).
#pragma once
#include <map>
#include <string>
#include <vector>

namespace tsmpi::diag {

// What a blocked call waits for, as far as the graph is concerned.
enum class WaitKind : int {
  Other = 0,       // waits for something tsmpi cannot name (a request, a lock, ...)
  Collective = 1,  // blocking collective: every member of its communicator, window or file
  Send = 2,        // blocking send: its destination
  Recv = 3,        // blocking receive or probe: its source
};

// BlockedCall::peer when the call has no single world rank to wait for.
inline constexpr int kPeerNone = -1;     // no source/dest argument
inline constexpr int kPeerAny = -2;      // MPI_ANY_SOURCE
inline constexpr int kPeerNull = -3;     // MPI_PROC_NULL
inline constexpr int kPeerUnknown = -4;  // not translatable to a world rank

// A thread-rank as the graph names it: "threadcomm rank 5 = process 1 thread 2".
struct ThreadRankId {
  int world = -1;   // MPI_COMM_WORLD rank of its process
  int rank = -1;    // its rank in the threadcomm (the communicator MPIX_Threadcomm_init made)
  int thread = -1;  // its thread index in its process (0 .. num_threads-1)
  int address_space = 0;  // 1: an MPI process of an address space (tsmpirun -asp): rank is its MPI_COMM_WORLD rank
  bool valid() const { return rank >= 0; }
  auto operator<=>(const ThreadRankId&) const = default;
};

// "threadcomm rank 5 = process 1 thread 2"; in address spaces "rank 5 (address space 1, index 2)".
std::string thread_rank_text(const ThreadRankId& t);

struct BlockedCall {
  int thread = 0;  // ThreadInfo::index on its rank
  int fn = -1;     // fn::Id (every rank loads the same libtsmpi, so ids agree)
  WaitKind kind = WaitKind::Other;
  int peer = kPeerNone;      // world rank of the source or dest (of its process for a thread-rank), or a kPeer* value
  std::vector<int> members;  // world ranks of the object's members, empty if unknown (or a thread-rank call)
  // A call on a thread-rank communicator: the thread-rank that makes it (`as.valid()`), the
  // thread-rank its source or dest names (valid when `peer` >= 0) and the communicator's members.
  ThreadRankId as;
  ThreadRankId peer_rank;
  std::vector<ThreadRankId> thread_members;  // in the communicator's rank order; empty if unknown
  bool on_thread_ranks() const { return as.valid(); }
};

struct RankSummary {
  int rank = -1;  // world rank
  std::vector<BlockedCall> calls;
};

// The message a rank sends: plain ints, so it travels as MPI_INT between any two ranks.
std::vector<int> encode_summary(const RankSummary& s);
// False (and `out` unspecified) if the ints are not a summary this version wrote.
bool decode_summary(const int* data, int count, RankSummary& out);

// A node of the graph: a rank (`thread_rank` invalid) or a thread-rank of that rank's process.
struct WaitNode {
  int rank = -1;  // world rank (of the thread-rank's process)
  ThreadRankId thread_rank;
  auto operator<=>(const WaitNode&) const = default;
};

struct WaitEdge {
  int from = -1;  // world rank of the waiting node (of its process, for a thread-rank)
  int to = -1;    // world rank of the node waited for
  const BlockedCall* call = nullptr;  // the call of `from` that waits; points into the summaries
  ThreadRankId from_rank;  // the waiting thread-rank, when the call is on a thread-rank communicator
  ThreadRankId to_rank;    // the thread-rank waited for, likewise
  WaitNode from_node() const { return {from, from_rank}; }
  WaitNode to_node() const { return {to, to_rank}; }
};

// A rank blocked in a collective waits for every member not blocked in the same collective
// (same function, same members); a blocked send waits for its destination, a blocked receive
// or probe for its source. Calls waiting for anything else give no edge. A call on a
// thread-rank communicator is the edge of its thread-rank, to thread-ranks: the members not in
// the same collective (a thread-rank is in it when its own call is), its source or dest.
std::vector<WaitEdge> wait_for_edges(const std::map<int, RankSummary>& ranks);

// One cycle of the graph, starting at its smallest node (world rank, then a rank before its
// thread-ranks, thread-ranks by threadcomm rank); empty if the graph has none.
std::vector<WaitEdge> find_cycle(const std::vector<WaitEdge>& edges);

// The lines rank 0 prints (without the "tsmpi: rank R: " prefix): the cycle in one line, or,
// without one, every edge and every blocked call that gave none. `ranks` holds the ranks with
// blocked calls (a rank whose calls have all ended is left out).
std::vector<std::string> describe_wait_for(const std::map<int, RankSummary>& ranks, int world_size);

// "{0,1,4-7}": world ranks in increasing order, runs of three or more as ranges.
std::string rank_set(std::vector<int> ranks);

}  // namespace tsmpi::diag
