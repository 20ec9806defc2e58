// Graph and distributed graph topologies on thread-rank communicators (topology.h, MPI-4.0
// §8.5.3-8.5.5). `reorder` is ignored, as the standard allows: rank i of the new communicator is
// rank i of the old one. MPI_Dist_graph_create learns each rank's edges, which any rank may have
// named, from an allgather of every rank's edge list over the old communicator; both ends of an
// edge list it in the same place among the edges between them (rank order of the rank that named
// it, then that rank's order), so the k-th message of a neighbourhood collective from a to b is
// the k-th block b expects from a, multigraphs included.
#include <algorithm>
#include <memory>
#include <vector>

#include "ranks/api.h"
#include "ranks/caller.h"
#include "ranks/comm.h"
#include "ranks/comm_ops.h"
#include "ranks/errors.h"
#include "ranks/topology.h"

namespace tsmpi::ranks {

namespace {

bool unweighted(const int* weights) { return weights == MPI_UNWEIGHTED; }

// The caller and its communicator's graph, or its own part of a distributed graph
// (MPI_ERR_TOPOLOGY without one).
using OnGraph = OnTopology<GraphTopology>;
using OnDistGraph = OnTopology<DistGraphAdjacency>;
OnGraph on_graph(MPI_Comm comm, const char* call) {
  return on_topology<GraphTopology>(comm, call, [](const Caller& k) { return graph_of(k.c); });
}
OnDistGraph on_dist_graph(MPI_Comm comm, const char* call) {
  return on_topology<DistGraphAdjacency>(comm, call, [](const Caller& k) {
    return dist_graph_of(k.c, k.c->local_index[static_cast<std::size_t>(k.m->rank)]);
  });
}

// MPI_Graph_create's and _map's arguments: nnodes within the communicator, index non-decreasing
// from 0, edges naming nodes of the graph.
bool valid_graph(int nnodes, const int index[], const int edges[], int size) {
  if (nnodes < 0 || nnodes > size) return false;
  int last = 0;
  for (int i = 0; i < nnodes; ++i) {
    if (index[i] < last) return false;
    last = index[i];
  }
  for (int e = 0; e < last; ++e)
    if (edges[e] < 0 || edges[e] >= nnodes) return false;
  return true;
}

bool valid_ranks(int n, const int ranks[], int size) {
  for (int i = 0; i < n; ++i)
    if (ranks[i] < 0 || ranks[i] >= size) return false;
  return true;
}

// The new communicator (a split keeping every rank's place) with the adjacency attached.
int make_dist_graph(Caller& k, std::shared_ptr<DistGraphAdjacency> a, MPI_Comm* newcomm, const char* call) {
  int rc = split(k, 0, k.m->rank, false, newcomm, call);
  if (rc == MPI_SUCCESS) attach_dist_graph(*newcomm, k.m->rank, std::move(a));
  return rc;
}

}  // namespace

namespace api {

int graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int, MPI_Comm* newcomm) {
  const char* call = "MPI_Graph_create";
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  if (!valid_graph(nnodes, index, edges, k.c->size())) return k.fail(MPI_ERR_ARG, call);
  auto t = std::make_shared<GraphTopology>();
  t->index.assign(index, index + nnodes);
  t->edges.assign(edges, edges + (nnodes > 0 ? index[nnodes - 1] : 0));
  // Ranks beyond the graph get MPI_COMM_NULL (MPI-4.0 §8.5.3).
  int rc = split(k, k.m->rank < nnodes ? 0 : MPI_UNDEFINED, k.m->rank, false, newcomm, call);
  if (rc == MPI_SUCCESS) attach_graph(*newcomm, std::move(t));
  return rc;
}

int graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
  OnGraph o = on_graph(comm, "MPI_Graphdims_get");
  if (!o) return o.k.rc;
  *nnodes = o.t->nnodes();
  *nedges = static_cast<int>(o.t->edges.size());
  return MPI_SUCCESS;
}

int graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]) {
  OnGraph o = on_graph(comm, "MPI_Graph_get");
  if (!o) return o.k.rc;
  std::copy_n(o.t->index.begin(), std::min(maxindex, o.t->nnodes()), index);
  std::copy_n(o.t->edges.begin(), std::min<std::size_t>(static_cast<std::size_t>(std::max(maxedges, 0)), o.t->edges.size()), edges);
  return MPI_SUCCESS;
}

int graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
  const char* call = "MPI_Graph_neighbors_count";
  OnGraph o = on_graph(comm, call);
  if (!o) return o.k.rc;
  if (rank < 0 || rank >= o.t->nnodes()) return o.k.fail(MPI_ERR_RANK, call);
  *nneighbors = o.t->count(rank);
  return MPI_SUCCESS;
}

int graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
  const char* call = "MPI_Graph_neighbors";
  OnGraph o = on_graph(comm, call);
  if (!o) return o.k.rc;
  if (rank < 0 || rank >= o.t->nnodes()) return o.k.fail(MPI_ERR_RANK, call);
  std::copy_n(o.t->edges.begin() + o.t->first(rank), std::min(maxneighbors, o.t->count(rank)), neighbors);
  return MPI_SUCCESS;
}

int graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int* newrank) {
  const char* call = "MPI_Graph_map";
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  if (!valid_graph(nnodes, index, edges, k.c->size())) return k.fail(MPI_ERR_ARG, call);
  *newrank = k.m->rank < nnodes ? k.m->rank : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

int dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[], const int sourceweights[],
                               int outdegree, const int destinations[], const int destweights[], int,
                               MPI_Comm* newcomm) {
  const char* call = "MPI_Dist_graph_create_adjacent";
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  const int size = k.c->size();
  if (indegree < 0 || outdegree < 0) return k.fail(MPI_ERR_ARG, call);
  if (!valid_ranks(indegree, sources, size) || !valid_ranks(outdegree, destinations, size))
    return k.fail(MPI_ERR_RANK, call);
  auto a = std::make_shared<DistGraphAdjacency>();
  a->sources.assign(sources, sources + indegree);
  a->destinations.assign(destinations, destinations + outdegree);
  a->weighted = !unweighted(sourceweights);
  // MPI_WEIGHTS_EMPTY (a degree of 0) is weighted with no weights.
  if (a->weighted && indegree > 0) a->source_weights.assign(sourceweights, sourceweights + indegree);
  if (!unweighted(destweights) && outdegree > 0) a->destination_weights.assign(destweights, destweights + outdegree);
  return make_dist_graph(k, std::move(a), newcomm, call);
}

int dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[], const int destinations[],
                      const int weights[], int, MPI_Comm* newcomm) {
  const char* call = "MPI_Dist_graph_create";
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  const int size = k.c->size();
  // This rank's edges as (source, destination, weight); the arguments checked first, but every
  // rank takes part in the exchange, so a bad argument here fails after it.
  int rc = n < 0 ? MPI_ERR_ARG : MPI_SUCCESS;
  std::vector<int> mine;
  for (int i = 0, e = 0; rc == MPI_SUCCESS && i < n; ++i) {
    if (degrees[i] < 0) rc = MPI_ERR_ARG;
    else if (sources[i] < 0 || sources[i] >= size) rc = MPI_ERR_RANK;
    for (int j = 0; rc == MPI_SUCCESS && j < degrees[i]; ++j, ++e) {
      if (destinations[e] < 0 || destinations[e] >= size) rc = MPI_ERR_RANK;
      mine.insert(mine.end(), {sources[i], destinations[e], unweighted(weights) ? 1 : weights[e]});
    }
  }
  if (rc != MPI_SUCCESS) mine.clear();
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  int erc = api::allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm, nullptr);
  long long total = 0;
  for (int r = 0; r < size; ++r) {
    displs[static_cast<std::size_t>(r)] = static_cast<int>(total);
    total += counts[static_cast<std::size_t>(r)];
  }
  std::vector<int> all(static_cast<std::size_t>(total) + 1);
  if (erc == MPI_SUCCESS)
    erc = api::allgatherv(mine.data(), count, MPI_INT, all.data(), counts.data(), displs.data(), MPI_INT, comm, nullptr);
  if (rc == MPI_SUCCESS) rc = erc;
  if (rc != MPI_SUCCESS) {
    // The others go on to the split: take part in it, outside the new communicator.
    if (erc == MPI_SUCCESS) split(k, MPI_UNDEFINED, k.m->rank, false, newcomm, call);
    return k.fail(rc, call);
  }
  auto a = std::make_shared<DistGraphAdjacency>();
  a->weighted = !unweighted(weights);
  const int me = k.m->rank;
  for (long long e = 0; e + 2 < total; e += 3) {
    const int s = all[static_cast<std::size_t>(e)], d = all[static_cast<std::size_t>(e) + 1],
              w = all[static_cast<std::size_t>(e) + 2];
    if (d == me) a->sources.push_back(s), a->source_weights.push_back(w);
    if (s == me) a->destinations.push_back(d), a->destination_weights.push_back(w);
  }
  if (!a->weighted) a->source_weights.clear(), a->destination_weights.clear();
  return make_dist_graph(k, std::move(a), newcomm, call);
}

int dist_graph_neighbors_count(MPI_Comm comm, int* indegree, int* outdegree, int* weighted) {
  OnDistGraph o = on_dist_graph(comm, "MPI_Dist_graph_neighbors_count");
  if (!o) return o.k.rc;
  *indegree = static_cast<int>(o.t->sources.size());
  *outdegree = static_cast<int>(o.t->destinations.size());
  *weighted = o.t->weighted ? 1 : 0;
  return MPI_SUCCESS;
}

int dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree,
                         int destinations[], int destweights[]) {
  OnDistGraph o = on_dist_graph(comm, "MPI_Dist_graph_neighbors");
  if (!o) return o.k.rc;
  const DistGraphAdjacency& a = *o.t;
  const auto in = static_cast<std::size_t>(std::clamp<long long>(maxindegree, 0, static_cast<long long>(a.sources.size())));
  const auto out =
      static_cast<std::size_t>(std::clamp<long long>(maxoutdegree, 0, static_cast<long long>(a.destinations.size())));
  std::copy_n(a.sources.begin(), in, sources);
  std::copy_n(a.destinations.begin(), out, destinations);
  if (a.weighted && !unweighted(sourceweights)) std::copy_n(a.source_weights.begin(), std::min(in, a.source_weights.size()), sourceweights);
  if (a.weighted && !unweighted(destweights))
    std::copy_n(a.destination_weights.begin(), std::min(out, a.destination_weights.size()), destweights);
  return MPI_SUCCESS;
}

}  // namespace api
}  // namespace tsmpi::ranks
