// Making communicators from a thread-rank communicator (comm_ops.cpp, comm_create.cpp).
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ranks/caller.h"

namespace tsmpi::ranks {

// What each member of a split (or dup) brings to the exchange.
struct SplitRecord {
  int color, key;
  std::uint32_t next_ctx;
  int family_rank;
};
// A communicator a split makes: its context and its members (family ranks, in rank order).
struct NewComm {
  std::uint64_t ctx = 0;
  std::vector<int> members;
};
// The communicator of the ranks of `all` (records by parent rank) whose color is `color`, and
// the parent ranks of its members in new-rank order (`ranks`, if given).
NewComm new_comm(const std::vector<SplitRecord>& all, int color, std::vector<int>* ranks = nullptr);

// MPI_Comm_split over k.c (dup: also the attributes); MPI_COMM_NULL for MPI_UNDEFINED.
int split(Caller& k, int color, int key, bool dup, MPI_Comm* newcomm, const char* call);
// k.m's rank has just joined nc, made from k.c, as rank my_rank: it inherits k.c's error handler
// at this rank and keeps `attributes` (a duplicate's copy, or MPI_COMM_NULL). Returns nc's handle.
MPI_Comm adopt(Caller& k, Comm* nc, int my_rank, MPI_Comm attributes);
// The tag of a communicator constructor's exchange: takes m's next collective number
// (collectives.cpp; blocking and nonblocking constructors never match each other), and with
// `team` a team round as well (*round).
int comm_op_tag(Member* m, bool nonblocking, bool team = false, std::uint32_t* round = nullptr);

// Whether c spans processes with an MPI communicator of its processes (coll_comm): then the
// communicators MPI_Comm_dup, _idup, _split, _split_type and _create make from it may get their
// own (comm_processes.cpp).
bool has_processes_comm(const Comm* c);
// After a duplication's or split's exchange, in team round `round` of c's local members (taken
// with the exchange's tag): the leader makes the new communicators' MPI communicators from c's
// and their Comms with them, before any local member joins. `rc`: the caller's exchange;
// returns the first error.
int make_processes_comms(Comm* c, int me, int tag, std::uint32_t round, const std::vector<SplitRecord>& all, bool dup,
                         int rc);
// Allgather of fixed-size records over c's members, as rank me (collectives.cpp).
int allgather_bytes(Comm* c, int me, int tag, const void* mine, std::size_t bytes, void* all);

}  // namespace tsmpi::ranks
