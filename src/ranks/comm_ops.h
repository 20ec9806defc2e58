// Making communicators from a thread-rank communicator (comm_ops.cpp, comm_create.cpp).
#pragma once
#include <mpi.h>

#include <cstddef>

#include "ranks/caller.h"

namespace tsmpi::ranks {

// MPI_Comm_split over k.c (dup: also the attributes); MPI_COMM_NULL for MPI_UNDEFINED.
int split(Caller& k, int color, int key, bool dup, MPI_Comm* newcomm, const char* call);
// k.m's rank has just joined nc, made from k.c, as rank my_rank: it inherits k.c's error handler
// at this rank and keeps `attributes` (a duplicate's copy, or MPI_COMM_NULL). Returns nc's handle.
MPI_Comm adopt(Caller& k, Comm* nc, int my_rank, MPI_Comm attributes);
// The tag of a communicator constructor's exchange: takes m's next collective number
// (collectives.cpp; blocking and nonblocking constructors never match each other).
int comm_op_tag(Member* m, bool nonblocking);
// Allgather of fixed-size records over c's members, as rank me (collectives.cpp).
int allgather_bytes(Comm* c, int me, int tag, const void* mine, std::size_t bytes, void* all);

}  // namespace tsmpi::ranks
