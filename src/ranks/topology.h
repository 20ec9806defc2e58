// Cartesian topologies on thread-rank communicators (MPI-4.0 §8.5): MPI_Cart_create and _sub
// make the communicator by a split of the parent (so it is hierarchical where the split's is)
// and attach the grid; the queries read it; MPI_Comm_dup and _idup copy it. The neighbourhood
// collectives (collectives_neighbor.cpp) exchange with a rank's 2 * ndims neighbours.
// Graph and distributed graph topologies are refused (the table's threadcomm column).
#pragma once
#include <mpi.h>

#include <vector>

namespace tsmpi::ranks {

struct Comm;

struct CartTopology {
  std::vector<int> dims, periods;
  int ndims() const { return static_cast<int>(dims.size()); }
  // Row-major coordinates of a rank, and back (coordinates already in range).
  std::vector<int> coords_of(int rank) const;
  int rank_of(const std::vector<int>& coords) const;
  // MPI_Cart_shift's pair: the rank disp steps back along `direction` and the one disp steps on
  // (MPI_PROC_NULL past a non-periodic edge).
  void shift(int rank, int direction, int disp, int* source, int* dest) const;
  // The neighbours in the order of the neighbourhood collectives: per dimension, the source
  // and the destination of a shift by 1.
  std::vector<int> neighbours(int rank) const;
};

// The communicator's grid, or nullptr.
const CartTopology* cart_of(const Comm* c);
// MPI_Comm_dup and _idup: the duplicate `to` gets from's grid.
void copy_topology(const Comm* from, MPI_Comm to);

}  // namespace tsmpi::ranks
