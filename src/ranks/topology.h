// Topologies on thread-rank communicators (MPI-4.0 §8.5): Cartesian grids (topology.cpp),
// graphs and distributed graphs (graph_topology.cpp). Each constructor makes the communicator by
// a split of the parent (so it is hierarchical where the split's is) and attaches the topology;
// the queries read it; MPI_Comm_dup and _idup copy it. The neighbourhood collectives
// (collectives_neighbor.cpp) exchange with a rank's neighbours (neighbours_of).
#pragma once
#include <mpi.h>

#include <memory>
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

// MPI_Graph_create's graph (the same at every rank): rank i's neighbours are
// edges[index[i-1] .. index[i]).
struct GraphTopology {
  std::vector<int> index, edges;
  int nnodes() const { return static_cast<int>(index.size()); }
  int first(int rank) const { return rank == 0 ? 0 : index[static_cast<std::size_t>(rank) - 1]; }
  int count(int rank) const { return index[static_cast<std::size_t>(rank)] - first(rank); }
};

// One rank's part of a distributed graph (MPI_Dist_graph_create(_adjacent)): its sources and
// destinations in the order of the neighbourhood collectives' blocks, with their weights.
struct DistGraphAdjacency {
  std::vector<int> sources, source_weights, destinations, destination_weights;
  bool weighted = false;
};

// A rank's neighbours on the communicator's topology, in block order: it receives block j from
// sources[j] and sends block j to destinations[j]. On a grid, per dimension the source and the
// destination of a shift by 1, both lists alike (MPI_PROC_NULL ones skipped by the exchange);
// on a graph its neighbours, both lists alike. Empty `kind` (MPI_UNDEFINED): no topology.
struct Neighbours {
  int kind = MPI_UNDEFINED;  // MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH
  std::vector<int> sources, destinations;
};
Neighbours neighbours_of(const Comm* c, int rank);
// Which topology rank (a member of this process) sees: neighbours_of's kind without the lists.
int topology_kind(const Comm* c, int rank);

// The communicator's grid, graph, or distributed-graph part of local member li; nullptr if none.
const CartTopology* cart_of(const Comm* c);
const GraphTopology* graph_of(const Comm* c);
const DistGraphAdjacency* dist_graph_of(const Comm* c, int li);
// MPI_Comm_dup and _idup, called by each local member (rank `me` of `from`): the duplicate `to`
// gets from's topology.
void copy_topology(const Comm* from, int me, MPI_Comm to);
// Attach a topology to a communicator a split made (every local member calls these): the grid
// and the graph by the first, the distributed graph's adjacency of each rank by that rank.
void attach_cart(MPI_Comm newcomm, std::shared_ptr<const CartTopology> t);
void attach_graph(MPI_Comm newcomm, std::shared_ptr<const GraphTopology> t);
void attach_dist_graph(MPI_Comm newcomm, int rank, std::shared_ptr<const DistGraphAdjacency> a);

}  // namespace tsmpi::ranks
