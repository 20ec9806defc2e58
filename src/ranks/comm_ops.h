// Making communicators from a thread-rank communicator (comm_ops.cpp, comm_create.cpp).
#pragma once
#include <mpi.h>

#include <cstddef>

#include "ranks/caller.h"

namespace tsmpi::ranks {

// MPI_Comm_split over k.c (dup: also the attributes); MPI_COMM_NULL for MPI_UNDEFINED.
int split(Caller& k, int color, int key, bool dup, MPI_Comm* newcomm, const char* call);
// The caller's rank has just joined nc, made from k.c: it inherits k.c's error handler at this
// rank (and, for a duplicate, the attributes). Returns nc's handle.
MPI_Comm adopt(Caller& k, Comm* nc, bool dup);
// Allgather of fixed-size records over c's members (collectives.cpp).
int allgather_bytes(Comm* c, Member* m, const void* mine, std::size_t bytes, void* all);

}  // namespace tsmpi::ranks
