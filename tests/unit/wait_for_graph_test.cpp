// The hang watchdog's wait-for graph between ranks (src/diagnostics/wait_for_graph.h).
#include "diagnostics/wait_for_graph.h"

#include <gtest/gtest.h>

#include "runtime/function_table.h"

using namespace tsmpi::diag;

namespace {

int id(const char* name) {
  int i = tsmpi::find_function(name);
  EXPECT_GE(i, 0) << name;
  return i;
}

BlockedCall collective(const char* fn, std::vector<int> members, int thread = 1) {
  BlockedCall c;
  c.thread = thread;
  c.fn = id(fn);
  c.kind = WaitKind::Collective;
  c.members = std::move(members);
  return c;
}

BlockedCall p2p(const char* fn, WaitKind kind, int peer, int thread = 1) {
  BlockedCall c;
  c.thread = thread;
  c.fn = id(fn);
  c.kind = kind;
  c.peer = peer;
  return c;
}

void add(std::map<int, RankSummary>& ranks, int rank, std::vector<BlockedCall> calls) {
  ranks[rank] = RankSummary{rank, std::move(calls)};
}

}  // namespace

// Fig. 3.10: three ranks, three communicators of two, each rank in the collective of the
// communicator its successor has not entered.
TEST(WaitForGraph, ThreeCollectivesOnThreeCommunicatorsMakeACycle) {
  std::map<int, RankSummary> ranks;
  add(ranks, 0, {collective("MPI_Alltoall", {0, 1})});
  add(ranks, 1, {collective("MPI_Allreduce", {1, 2})});
  add(ranks, 2, {collective("MPI_Bcast", {0, 2})});
  EXPECT_EQ(describe_wait_for(ranks, 3),
            std::vector<std::string>{"deadlock cycle: rank 0 in MPI_Alltoall on ranks {0,1} waits for rank 1 -> "
                                     "rank 1 in MPI_Allreduce on ranks {1,2} waits for rank 2 -> "
                                     "rank 2 in MPI_Bcast on ranks {0,2} waits for rank 0"});
}

TEST(WaitForGraph, MembersInTheSameCollectiveAreNotWaitedFor) {
  std::map<int, RankSummary> ranks;
  add(ranks, 0, {collective("MPI_Barrier", {0, 1, 2})});
  add(ranks, 1, {collective("MPI_Barrier", {0, 1, 2})});
  auto edges = wait_for_edges(ranks);
  ASSERT_EQ(edges.size(), 2u);  // both wait for rank 2 only
  for (const WaitEdge& e : edges) EXPECT_EQ(e.to, 2);
  EXPECT_TRUE(find_cycle(edges).empty());
}

TEST(WaitForGraph, SameMembersButAnotherCollectiveIsWaitedFor) {
  std::map<int, RankSummary> ranks;
  add(ranks, 0, {collective("MPI_Barrier", {0, 1})});
  add(ranks, 1, {collective("MPI_Allreduce", {0, 1})});
  auto lines = describe_wait_for(ranks, 2);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "deadlock cycle: rank 0 in MPI_Barrier on ranks {0,1} waits for rank 1 -> "
                      "rank 1 in MPI_Allreduce on ranks {0,1} waits for rank 0");
}

TEST(WaitForGraph, CollectiveEveryMemberIsInHasNoEdge) {
  std::map<int, RankSummary> ranks;
  add(ranks, 0, {collective("MPI_Barrier", {0, 1})});
  add(ranks, 1, {collective("MPI_Barrier", {0, 1})});
  auto lines = describe_wait_for(ranks, 2);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "  rank 0 in MPI_Barrier on ranks {0,1}: every member is blocked in it too");
}

TEST(WaitForGraph, ReceivesFromEachOtherMakeACycleNamingThreads) {
  std::map<int, RankSummary> ranks;
  add(ranks, 0, {p2p("MPI_Recv", WaitKind::Recv, tsmpi::diag::kPeerAny, 1), p2p("MPI_Recv", WaitKind::Recv, 1, 3)});
  add(ranks, 1, {p2p("MPI_Ssend", WaitKind::Send, 0)});
  auto lines = describe_wait_for(ranks, 2);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "deadlock cycle: rank 0 (thread 3) in MPI_Recv from rank 1 waits for rank 1 -> "
                      "rank 1 in MPI_Ssend to rank 0 waits for rank 0");
}

TEST(WaitForGraph, WithoutACycleEveryEdgeAndEdgelessCallIsListed) {
  std::map<int, RankSummary> ranks;
  add(ranks, 0, {p2p("MPI_Recv", WaitKind::Recv, 1, 2), collective("MPI_Barrier", {0, 1}, 3),
                 p2p("MPI_Wait", WaitKind::Other, kPeerNone, 4), p2p("MPI_Probe", WaitKind::Recv, kPeerAny, 5)});
  auto lines = describe_wait_for(ranks, 4);
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "no deadlock cycle among the blocked calls of ranks {0} (1 of 4 ranks reported); waits for:",
                       "  rank 0 (thread 2) in MPI_Recv from rank 1 waits for rank 1 (no blocked call reported)",
                       "  rank 0 (thread 3) in MPI_Barrier on ranks {0,1} waits for rank 1 (no blocked call reported)",
                       "  rank 0 (thread 4) in MPI_Wait waits for no rank tsmpi can name",
                       "  rank 0 (thread 5) in MPI_Probe from any rank waits for no rank tsmpi can name"}));
}

TEST(WaitForGraph, CycleStartsAtItsSmallestRankAndSkipsTheTail) {
  // 5 -> 3 -> 4 -> 3: the cycle is 3 -> 4 -> 3, rank 5 only leads into it.
  std::map<int, RankSummary> ranks;
  add(ranks, 5, {p2p("MPI_Send", WaitKind::Send, 3)});
  add(ranks, 4, {p2p("MPI_Recv", WaitKind::Recv, 3)});
  add(ranks, 3, {p2p("MPI_Recv", WaitKind::Recv, 4)});
  auto cycle = find_cycle(wait_for_edges(ranks));
  ASSERT_EQ(cycle.size(), 2u);
  EXPECT_EQ(cycle[0].from, 3);
  EXPECT_EQ(cycle[0].to, 4);
  EXPECT_EQ(cycle[1].from, 4);
  EXPECT_EQ(cycle[1].to, 3);
}

TEST(WaitForGraph, SendToItselfIsACycleOfOne) {
  std::map<int, RankSummary> ranks;
  add(ranks, 0, {p2p("MPI_Ssend", WaitKind::Send, 0)});
  EXPECT_EQ(describe_wait_for(ranks, 1),
            std::vector<std::string>{"deadlock cycle: rank 0 in MPI_Ssend to rank 0 waits for rank 0"});
}

TEST(WaitForGraph, LargeCountVariantIsTheSameCollective) {
  if (tsmpi::find_function("MPI_Allreduce_c") < 0) GTEST_SKIP() << "this MPI has no MPI_Allreduce_c";
  std::map<int, RankSummary> ranks;
  add(ranks, 0, {collective("MPI_Allreduce", {0, 1})});
  add(ranks, 1, {collective("MPI_Allreduce_c", {0, 1})});
  EXPECT_TRUE(wait_for_edges(ranks).empty());
}

TEST(WaitForGraph, NothingLeftToDraw) {
  EXPECT_EQ(describe_wait_for({}, 4),
            std::vector<std::string>{"no wait-for graph: every blocked call reported has ended"});
}

TEST(WaitForGraph, SummaryRoundTripsThroughInts) {
  RankSummary s{7, {collective("MPI_Bcast", {0, 7, 9}, 2), p2p("MPI_Recv", WaitKind::Recv, kPeerAny, 4)}};
  std::vector<int> v = encode_summary(s);
  RankSummary back;
  ASSERT_TRUE(decode_summary(v.data(), static_cast<int>(v.size()), back));
  EXPECT_EQ(back.rank, 7);
  ASSERT_EQ(back.calls.size(), 2u);
  EXPECT_EQ(back.calls[0].members, (std::vector<int>{0, 7, 9}));
  EXPECT_EQ(back.calls[0].kind, WaitKind::Collective);
  EXPECT_EQ(back.calls[0].thread, 2);
  EXPECT_EQ(back.calls[1].peer, kPeerAny);
  EXPECT_EQ(back.calls[1].fn, s.calls[1].fn);
}

TEST(WaitForGraph, MalformedSummariesAreRejected) {
  RankSummary s{1, {collective("MPI_Bcast", {0, 1})}};
  std::vector<int> v = encode_summary(s);
  RankSummary back;
  EXPECT_FALSE(decode_summary(v.data(), static_cast<int>(v.size()) - 1, back));  // truncated
  std::vector<int> longer = v;
  longer.push_back(0);
  EXPECT_FALSE(decode_summary(longer.data(), static_cast<int>(longer.size()), back));  // trailing data
  v[0] ^= 1;
  EXPECT_FALSE(decode_summary(v.data(), static_cast<int>(v.size()), back));  // not a summary
  EXPECT_FALSE(decode_summary(v.data(), 0, back));
}

TEST(WaitForGraph, RankSetsAreSortedWithRuns) {
  EXPECT_EQ(rank_set({}), "{}");
  EXPECT_EQ(rank_set({3}), "{3}");
  EXPECT_EQ(rank_set({1, 0}), "{0,1}");
  EXPECT_EQ(rank_set({7, 4, 5, 6, 0, 1, 9}), "{0,1,4-7,9}");
  EXPECT_EQ(rank_set({2, 2, 3}), "{2,3}");
}

// ---- Thread-ranks (threads as MPI ranks, src/ranks/) ----------------------------------------

namespace {

// Thread-rank `rank` of a threadcomm of 2 processes x 2 threads: process rank / 2, thread rank % 2.
ThreadRankId tr(int rank) { return {rank / 2, rank, rank % 2}; }

std::vector<ThreadRankId> all_thread_ranks(int n) {
  std::vector<ThreadRankId> v;
  for (int r = 0; r < n; ++r) v.push_back(tr(r));
  return v;
}

BlockedCall tr_p2p(const char* fn, WaitKind kind, int as, int peer, int thread) {
  BlockedCall c;
  c.thread = thread;
  c.fn = id(fn);
  c.kind = kind;
  c.as = tr(as);
  c.peer = peer >= 0 ? tr(peer).world : peer;
  if (peer >= 0) c.peer_rank = tr(peer);
  c.thread_members = all_thread_ranks(4);
  return c;
}

BlockedCall tr_collective(const char* fn, int as, std::vector<ThreadRankId> members, int thread) {
  BlockedCall c;
  c.thread = thread;
  c.fn = id(fn);
  c.kind = WaitKind::Collective;
  c.as = tr(as);
  c.thread_members = std::move(members);
  return c;
}

}  // namespace

TEST(WaitForGraph, ThreadRankNamesItsThreadcommRankProcessAndThread) {
  EXPECT_EQ(thread_rank_text({1, 5, 2}), "threadcomm rank 5 = process 1 thread 2");
}

// tsmpirun -asp: MPI processes of address spaces are named by world rank, address space, index,
// and keep that naming through a summary's encoding.
TEST(WaitForGraph, AddressSpaceProcessesAreNamedByRankAddressSpaceAndIndex) {
  EXPECT_EQ(thread_rank_text({1, 5, 2, 1}), "rank 5 (address space 1, index 2)");
  RankSummary s;
  s.rank = 1;
  BlockedCall c;
  c.fn = 0;
  c.kind = WaitKind::Recv;
  c.peer = 0;
  c.as = {1, 3, 1, 1};
  c.peer_rank = {0, 0, 0, 1};
  s.calls.push_back(c);
  std::vector<int> v = encode_summary(s);
  RankSummary back;
  ASSERT_TRUE(decode_summary(v.data(), static_cast<int>(v.size()), back));
  ASSERT_EQ(back.calls.size(), 1u);
  EXPECT_EQ(back.calls[0].as, c.as);
  EXPECT_EQ(thread_rank_text(back.calls[0].peer_rank), "rank 0 (address space 0, index 0)");
}

// tests/ranks/rk_hang.c: thread-ranks 0 and 3 (processes 0 and 1) receive from each other,
// 1 and 2 wait in a barrier of all four that 0 and 3 never enter.
TEST(WaitForGraph, ThreadRanksReceivingFromEachOtherMakeACycle) {
  std::map<int, RankSummary> ranks;
  add(ranks, 0, {tr_p2p("MPI_Recv", WaitKind::Recv, 0, 3, 1), tr_collective("MPI_Barrier", 1, all_thread_ranks(4), 2)});
  add(ranks, 1, {tr_collective("MPI_Barrier", 2, all_thread_ranks(4), 1), tr_p2p("MPI_Recv", WaitKind::Recv, 3, 0, 2)});
  EXPECT_EQ(describe_wait_for(ranks, 2),
            std::vector<std::string>{"deadlock cycle: threadcomm rank 0 = process 0 thread 0 in MPI_Recv waits for "
                                     "threadcomm rank 3 = process 1 thread 1 -> threadcomm rank 3 = process 1 thread 1 "
                                     "in MPI_Recv waits for threadcomm rank 0 = process 0 thread 0"});
  // The barrier's thread-ranks wait for the two that are not in it, not for each other.
  std::vector<std::pair<int, int>> barrier_edges;
  for (const WaitEdge& e : wait_for_edges(ranks))
    if (e.call->kind == WaitKind::Collective) barrier_edges.emplace_back(e.from_rank.rank, e.to_rank.rank);
  EXPECT_EQ(barrier_edges, (std::vector<std::pair<int, int>>{{1, 0}, {1, 3}, {2, 0}, {2, 3}}));
}

TEST(WaitForGraph, ThreadRanksOfOneProcessAreSeparateNodes) {
  // Thread-ranks 0 and 1 of process 0 wait for each other: a cycle within one process.
  std::map<int, RankSummary> ranks;
  add(ranks, 0, {tr_p2p("MPI_Recv", WaitKind::Recv, 0, 1, 1), tr_p2p("MPI_Ssend", WaitKind::Send, 1, 0, 2)});
  EXPECT_EQ(describe_wait_for(ranks, 1),
            std::vector<std::string>{"deadlock cycle: threadcomm rank 0 = process 0 thread 0 in MPI_Recv waits for "
                                     "threadcomm rank 1 = process 0 thread 1 -> threadcomm rank 1 = process 0 thread 1 "
                                     "in MPI_Ssend waits for threadcomm rank 0 = process 0 thread 0"});
}

TEST(WaitForGraph, ThreadRankCollectiveEveryMemberIsInHasNoEdge) {
  std::map<int, RankSummary> ranks;
  std::vector<ThreadRankId> pair = {tr(1), tr(2)};  // a communicator split from the threadcomm
  add(ranks, 0, {tr_collective("MPI_Allreduce", 1, pair, 2)});
  add(ranks, 1, {tr_collective("MPI_Allreduce", 2, pair, 1)});
  EXPECT_TRUE(wait_for_edges(ranks).empty());
  auto lines = describe_wait_for(ranks, 2);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "  threadcomm rank 1 = process 0 thread 1 in MPI_Allreduce on threadcomm ranks {1,2}: "
                      "every member is blocked in it too");
}

TEST(WaitForGraph, ThreadRanksAndRanksWithoutACycleAreListed) {
  std::map<int, RankSummary> ranks;
  // Process 0: a thread outside any threadcomm receives from rank 1 (a process); thread-rank 0
  // receives from thread-rank 2, which is not blocked; thread-rank 1 receives from any source.
  add(ranks, 0, {p2p("MPI_Recv", WaitKind::Recv, 1, 3), tr_p2p("MPI_Recv", WaitKind::Recv, 0, 2, 1),
                 tr_p2p("MPI_Recv", WaitKind::Recv, 1, kPeerAny, 2)});
  // Process 1: only thread-rank 3 is blocked, in a barrier of all four.
  add(ranks, 1, {tr_collective("MPI_Barrier", 3, all_thread_ranks(4), 1)});
  EXPECT_EQ(describe_wait_for(ranks, 2),
            (std::vector<std::string>{
                "no deadlock cycle among the blocked calls of ranks {0,1} (2 of 2 ranks reported); waits for:",
                "  rank 0 (thread 3) in MPI_Recv from rank 1 waits for rank 1 (only calls of its thread-ranks reported)",
                "  threadcomm rank 0 = process 0 thread 0 in MPI_Recv waits for threadcomm rank 2 = process 1 thread 0 "
                "(no blocked call reported)",
                "  threadcomm rank 3 = process 1 thread 1 in MPI_Barrier on threadcomm ranks {0-3} waits for threadcomm "
                "rank 0 = process 0 thread 0",
                "  threadcomm rank 3 = process 1 thread 1 in MPI_Barrier on threadcomm ranks {0-3} waits for threadcomm "
                "rank 1 = process 0 thread 1",
                "  threadcomm rank 3 = process 1 thread 1 in MPI_Barrier on threadcomm ranks {0-3} waits for threadcomm "
                "rank 2 = process 1 thread 0 (no blocked call reported)",
                "  threadcomm rank 1 = process 0 thread 1 in MPI_Recv from any rank waits for no rank tsmpi can name"}));
}

TEST(WaitForGraph, ThreadRankSummaryRoundTripsThroughInts) {
  RankSummary s{1, {tr_p2p("MPI_Recv", WaitKind::Recv, 3, 0, 2), collective("MPI_Bcast", {0, 1}, 1),
                    tr_collective("MPI_Barrier", 2, all_thread_ranks(4), 3)}};
  std::vector<int> v = encode_summary(s);
  RankSummary back;
  ASSERT_TRUE(decode_summary(v.data(), static_cast<int>(v.size()), back));
  ASSERT_EQ(back.calls.size(), 3u);
  EXPECT_EQ(back.calls[0].as, tr(3));
  EXPECT_EQ(back.calls[0].peer, 0);
  EXPECT_EQ(back.calls[0].peer_rank, tr(0));
  EXPECT_EQ(back.calls[0].thread_members, all_thread_ranks(4));
  EXPECT_FALSE(back.calls[1].on_thread_ranks());
  EXPECT_EQ(back.calls[1].members, (std::vector<int>{0, 1}));
  EXPECT_EQ(back.calls[2].as, tr(2));
  EXPECT_EQ(back.calls[2].kind, WaitKind::Collective);
  EXPECT_EQ(back.calls[2].thread_members, all_thread_ranks(4));
  EXPECT_EQ(encode_summary(back), v);
  EXPECT_FALSE(decode_summary(v.data(), static_cast<int>(v.size()) - 1, back));  // a thread member cut short
}
