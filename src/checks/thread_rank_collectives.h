// Collectives of thread-ranks (seed 004 §3.5.2): every member of a communicator must call the
// same collectives in the same order. Checked among the members in this process: the k-th
// collective of each member on a communicator must be the same call with the same root
// (Listing 3.5: two thread-ranks in different collectives), and a member that leaves the
// threadcomm region, or frees the communicator, while another member is inside a collective
// it never called reports that collective (Listing 3.4: only some ranks call it). Where several
// threads act as one rank (an MPI process of an address space), two of them in blocking
// collectives on one communicator at once is reported too (Listing 3.3).
#pragma once
#include <cstdint>

namespace tsmpi::checks {

// Thread-rank `rank` starts its collective number `seq` on communicator `comm` (`fn`: fn::Id,
// root or -1), which has `local_members` members in this process.
void thread_rank_collective_begin(const void* comm, std::uint32_t seq, int fn, int root, int rank, int local_members,
                                  bool blocking);
void thread_rank_collective_end(const void* comm, std::uint32_t seq, int rank, bool blocking);
// Thread-rank `rank` leaves comm (MPIX_Threadcomm_finish, MPI_Comm_free) after `made` collectives
// on it (`call`: the call it leaves with).
void thread_rank_leaves(const void* comm, std::uint32_t made, int rank, const char* call, int local_members);
// What the reports call a rank of comm ("thread-rank"; "MPI process" in address spaces): the
// thread-rank engine says, per communicator.
struct RankNoun {
  const char* singular;
  const char* plural;
};
void set_rank_noun(RankNoun (*noun_of)(const void* comm));
// comm is gone (its last local member freed it): its log too.
void thread_rank_comm_gone(const void* comm);

}  // namespace tsmpi::checks
