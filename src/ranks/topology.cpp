// Cartesian topologies on thread-rank communicators, and what every topology shares (topology.h).
#include "ranks/topology.h"

#include <mutex>

#include "ranks/api.h"
#include "ranks/caller.h"
#include "ranks/comm.h"
#include "ranks/comm_ops.h"
#include "ranks/errors.h"

namespace tsmpi::ranks {

std::vector<int> CartTopology::coords_of(int rank) const {
  std::vector<int> c(dims.size());
  for (int d = ndims() - 1; d >= 0; --d) {
    c[static_cast<std::size_t>(d)] = rank % dims[static_cast<std::size_t>(d)];
    rank /= dims[static_cast<std::size_t>(d)];
  }
  return c;
}

int CartTopology::rank_of(const std::vector<int>& coords) const {
  int r = 0;
  for (std::size_t d = 0; d < dims.size(); ++d) r = r * dims[d] + coords[d];
  return r;
}

void CartTopology::shift(int rank, int direction, int disp, int* source, int* dest) const {
  const auto d = static_cast<std::size_t>(direction);
  const std::vector<int> here = coords_of(rank);
  auto moved = [&](int by) {
    std::vector<int> c = here;
    long long x = static_cast<long long>(c[d]) + by;
    if (x < 0 || x >= dims[d]) {
      if (!periods[d]) return MPI_PROC_NULL;
      x = ((x % dims[d]) + dims[d]) % dims[d];
    }
    c[d] = static_cast<int>(x);
    return rank_of(c);
  };
  *source = moved(-disp);
  *dest = moved(disp);
}

std::vector<int> CartTopology::neighbours(int rank) const {
  std::vector<int> n;
  for (int d = 0; d < ndims(); ++d) {
    int source, dest;
    shift(rank, d, 1, &source, &dest);
    n.push_back(source);
    n.push_back(dest);
  }
  return n;
}

const CartTopology* cart_of(const Comm* c) { return c->cart.get(); }
const GraphTopology* graph_of(const Comm* c) { return c->graph.get(); }
const DistGraphAdjacency* dist_graph_of(const Comm* c, int li) {
  // Each member reads its own slot, which it set itself before it had the handle.
  return li >= 0 && static_cast<std::size_t>(li) < c->dist_graph.size() ? c->dist_graph[static_cast<std::size_t>(li)].get()
                                                                       : nullptr;
}

namespace {

// The communicator a constructor just made, or nullptr (MPI_COMM_NULL: not a member).
Comm* made(MPI_Comm newcomm) { return newcomm == MPI_COMM_NULL ? nullptr : comm_of(newcomm); }

// Sets the communicator's grid or graph unless another local member did first.
template <class T>
void attach_first(MPI_Comm newcomm, std::shared_ptr<const T> Comm::*slot, std::shared_ptr<const T> t) {
  Comm* c = made(newcomm);
  if (!c) return;
  std::lock_guard g(c->mu);
  if (!(c->*slot)) c->*slot = std::move(t);
}

}  // namespace

void attach_cart(MPI_Comm newcomm, std::shared_ptr<const CartTopology> t) { attach_first(newcomm, &Comm::cart, std::move(t)); }
void attach_graph(MPI_Comm newcomm, std::shared_ptr<const GraphTopology> t) { attach_first(newcomm, &Comm::graph, std::move(t)); }

void attach_dist_graph(MPI_Comm newcomm, int rank, std::shared_ptr<const DistGraphAdjacency> a) {
  Comm* c = made(newcomm);
  if (!c) return;
  std::lock_guard g(c->mu);
  if (c->dist_graph.empty()) c->dist_graph.resize(c->local_members.size());
  c->dist_graph[static_cast<std::size_t>(c->local_index[static_cast<std::size_t>(rank)])] = std::move(a);
}

int topology_kind(const Comm* c, int rank) {
  if (cart_of(c)) return MPI_CART;
  if (graph_of(c)) return MPI_GRAPH;
  if (dist_graph_of(c, c->local_index[static_cast<std::size_t>(rank)])) return MPI_DIST_GRAPH;
  return MPI_UNDEFINED;
}

Neighbours neighbours_of(const Comm* c, int rank) {
  Neighbours n;
  if (const CartTopology* t = cart_of(c)) {
    n.kind = MPI_CART;
    n.sources = t->neighbours(rank);
    n.destinations = n.sources;
  } else if (const GraphTopology* g = graph_of(c)) {
    n.kind = MPI_GRAPH;
    const auto first = g->edges.begin() + g->first(rank);
    n.sources.assign(first, first + g->count(rank));
    n.destinations = n.sources;
  } else if (const DistGraphAdjacency* a = dist_graph_of(c, c->local_index[static_cast<std::size_t>(rank)])) {
    n.kind = MPI_DIST_GRAPH;
    n.sources = a->sources;
    n.destinations = a->destinations;
  }
  return n;
}

namespace {

// The caller and its communicator's grid (MPI_ERR_TOPOLOGY without one).
using OnGrid = OnTopology<CartTopology>;
OnGrid on_grid(MPI_Comm comm, const char* call) {
  return on_topology<CartTopology>(comm, call, [](const Caller& k) { return cart_of(k.c); });
}

// A grid's size, or -1 for dimensions MPI_Cart_create and _map refuse (MPI_ERR_DIMS): negative
// ndims, a dimension not positive, more ranks than the communicator has.
long long grid_size(int ndims, const int dims[], int available) {
  if (ndims < 0) return -1;
  long long n = 1;
  for (int d = 0; d < ndims; ++d) {
    if (dims[d] <= 0) return -1;
    n *= dims[d];
    if (n > available) return -1;
  }
  return n;
}

}  // namespace

void copy_topology(const Comm* from, int me, MPI_Comm to) {
  if (from->cart) attach_cart(to, from->cart);
  if (from->graph) attach_graph(to, from->graph);
  const int li = from->local_index[static_cast<std::size_t>(me)];
  if (dist_graph_of(from, li))
    attach_dist_graph(to, me, from->dist_graph[static_cast<std::size_t>(li)]);
}

namespace api {

int cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int, MPI_Comm* newcomm) {
  const char* call = "MPI_Cart_create";
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  const long long n = grid_size(ndims, dims, k.c->size());
  if (n < 0) return k.fail(MPI_ERR_DIMS, call);
  // reorder may be ignored (MPI-4.0 §8.5.1): rank i of the grid is rank i of comm.
  auto t = std::make_shared<CartTopology>();
  t->dims.assign(dims, dims + ndims);
  for (int d = 0; d < ndims; ++d) t->periods.push_back(periods[d] ? 1 : 0);
  int rc = split(k, k.m->rank < n ? 0 : MPI_UNDEFINED, k.m->rank, false, newcomm, call);
  if (rc == MPI_SUCCESS) attach_cart(*newcomm, std::move(t));
  return rc;
}

int cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  const char* call = "MPI_Cart_sub";
  OnGrid g = on_grid(comm, call);
  if (!g) return g.k.rc;
  Caller& k = g.k;
  const CartTopology* t = g.t;
  // Ranks that agree on the dropped coordinates form one grid of the kept dimensions.
  const std::vector<int> c = t->coords_of(k.m->rank);
  auto sub = std::make_shared<CartTopology>();
  int color = 0, key = 0;
  for (int d = 0; d < t->ndims(); ++d) {
    const auto i = static_cast<std::size_t>(d);
    if (remain_dims[d]) {
      sub->dims.push_back(t->dims[i]);
      sub->periods.push_back(t->periods[i]);
      key = key * t->dims[i] + c[i];
    } else {
      color = color * t->dims[i] + c[i];
    }
  }
  int rc = split(k, color, key, false, newcomm, call);
  if (rc == MPI_SUCCESS) attach_cart(*newcomm, std::move(sub));
  return rc;
}

int cartdim_get(MPI_Comm comm, int* ndims) {
  OnGrid g = on_grid(comm, "MPI_Cartdim_get");
  if (!g) return g.k.rc;
  *ndims = g.t->ndims();
  return MPI_SUCCESS;
}

int cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
  const char* call = "MPI_Cart_get";
  OnGrid g = on_grid(comm, call);
  if (!g) return g.k.rc;
  Caller& k = g.k;
  const CartTopology* t = g.t;
  const std::vector<int> c = t->coords_of(k.m->rank);
  for (int d = 0; d < maxdims && d < t->ndims(); ++d) {
    const auto i = static_cast<std::size_t>(d);
    dims[d] = t->dims[i], periods[d] = t->periods[i], coords[d] = c[i];
  }
  return MPI_SUCCESS;
}

int cart_rank(MPI_Comm comm, const int coords[], int* rank) {
  const char* call = "MPI_Cart_rank";
  OnGrid g = on_grid(comm, call);
  if (!g) return g.k.rc;
  Caller& k = g.k;
  const CartTopology* t = g.t;
  std::vector<int> c(coords, coords + t->ndims());
  for (std::size_t d = 0; d < c.size(); ++d) {
    const int n = t->dims[d];
    if (c[d] < 0 || c[d] >= n) {
      if (!t->periods[d]) return k.fail(MPI_ERR_ARG, call);  // out of a non-periodic range
      c[d] = ((c[d] % n) + n) % n;
    }
  }
  *rank = t->rank_of(c);
  return MPI_SUCCESS;
}

int cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
  const char* call = "MPI_Cart_coords";
  OnGrid g = on_grid(comm, call);
  if (!g) return g.k.rc;
  Caller& k = g.k;
  const CartTopology* t = g.t;
  if (rank < 0 || rank >= k.c->size()) return k.fail(MPI_ERR_RANK, call);
  if (maxdims < t->ndims()) return k.fail(MPI_ERR_DIMS, call);
  const std::vector<int> c = t->coords_of(rank);
  for (std::size_t d = 0; d < c.size(); ++d) coords[d] = c[d];
  return MPI_SUCCESS;
}

int cart_shift(MPI_Comm comm, int direction, int disp, int* source, int* dest) {
  const char* call = "MPI_Cart_shift";
  OnGrid g = on_grid(comm, call);
  if (!g) return g.k.rc;
  Caller& k = g.k;
  const CartTopology* t = g.t;
  if (direction < 0 || direction >= t->ndims()) return k.fail(MPI_ERR_DIMS, call);
  t->shift(k.m->rank, direction, disp, source, dest);
  return MPI_SUCCESS;
}

int cart_map(MPI_Comm comm, int ndims, const int dims[], const int[], int* newrank) {
  const char* call = "MPI_Cart_map";
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  const long long n = grid_size(ndims, dims, k.c->size());
  if (n < 0) return k.fail(MPI_ERR_DIMS, call);
  *newrank = k.m->rank < n ? k.m->rank : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

int topo_test(MPI_Comm comm, int* status) {
  Comm* c = comm_for_process(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, "MPI_Topo_test");
  if (cart_of(c)) {
    *status = MPI_CART;
  } else if (graph_of(c)) {
    *status = MPI_GRAPH;
  } else {
    std::lock_guard g(c->mu);  // any thread may ask, not only a member that set its adjacency
    *status = c->dist_graph.empty() ? MPI_UNDEFINED : MPI_DIST_GRAPH;
  }
  return MPI_SUCCESS;
}

}  // namespace api
}  // namespace tsmpi::ranks
