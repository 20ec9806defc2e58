/* Coverage: process topologies. Dims_create; a periodic 2x2 Cartesian grid and its queries
   (Cartdim_get, Cart_get, Cart_rank, Cart_coords, Cart_shift, Cart_sub, Cart_map), a graph
   (Graph_create and queries, Graph_map), distributed graphs (Dist_graph_create_adjacent with
   weights, Dist_graph_create) and their queries, Topo_test. Neighbours are checked by exchanging
   world ranks with them. */
// ranks: 4
#include "coverage.h"

static const char* topo_name(int t) {
  switch (t) {
    case MPI_CART: return "CART";
    case MPI_GRAPH: return "GRAPH";
    case MPI_DIST_GRAPH: return "DIST_GRAPH";
    case MPI_UNDEFINED: return "UNDEFINED";
  }
  return "?";
}

static int wrank;

static void list(char* text, size_t cap, const int* v, int n) {
  int k = 0;
  text[0] = 0;
  for (int i = 0; i < n; ++i) k += snprintf(text + k, cap - k, i ? " %d" : "%d", v[i]);
}

/* Sends my world rank to each destination and receives from each source (tags distinguish
   repeated neighbours); returns the received world ranks in source order. */
static void exchange(MPI_Comm comm, int nsrc, const int* src, int ndst, const int* dst, int* got) {
  MPI_Request reqs[32];
  int k = 0;
  for (int i = 0; i < nsrc; ++i) {
    got[i] = -1;
    if (src[i] == MPI_PROC_NULL) continue;
    int tag = 0; /* i-th occurrence of src[i] among the sources */
    for (int j = 0; j < i; ++j) tag += src[j] == src[i];
    MPI_Irecv(&got[i], 1, MPI_INT, src[i], tag, comm, &reqs[k++]);
  }
  for (int i = 0; i < ndst; ++i) {
    if (dst[i] == MPI_PROC_NULL) continue;
    int tag = 0;
    for (int j = 0; j < i; ++j) tag += dst[j] == dst[i];
    MPI_Isend(&wrank, 1, MPI_INT, dst[i], tag, comm, &reqs[k++]);
  }
  int rc = MPI_Waitall(k, reqs, MPI_STATUSES_IGNORE);
  CHECK(rc == MPI_SUCCESS);
}

int main(int argc, char** argv) {
  wrank = cov_init(&argc, &argv, "comm_topology");
  int rc, topo = -1;
  char t1[128], t2[128];

  /* MPI_Dims_create */
  int d2[2] = {0, 0}, d3[3] = {0, 0, 0}, d3fixed[3] = {0, 3, 0}, d1[1] = {0};
  MPI_Dims_create(4, 2, d2);
  MPI_Dims_create(12, 3, d3);
  MPI_Dims_create(12, 3, d3fixed);
  rc = MPI_Dims_create(7, 1, d1);
  SAY("dims_create 4/2: %d %d; 12/3: %d %d %d; 12/3 fixed 3: %d %d %d; 7/1: %d rc %d", d2[0],
      d2[1], d3[0], d3[1], d3[2], d3fixed[0], d3fixed[1], d3fixed[2], d1[0], rc);

  MPI_Topo_test(MPI_COMM_WORLD, &topo);
  SAY("world topology %s", topo_name(topo));

  /* A periodic 2x2 grid without reordering, and a non-periodic 1-D line reordering allowed. */
  int dims[2] = {2, 2}, periods[2] = {1, 0};
  MPI_Comm cart;
  rc = MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  CHECK(rc == MPI_SUCCESS);
  MPI_Topo_test(cart, &topo);
  int ndims = -1, crank = -1;
  MPI_Cartdim_get(cart, &ndims);
  MPI_Comm_rank(cart, &crank);
  SAY("cart topology %s ndims %d rank %d", topo_name(topo), ndims, crank);
  int gdims[2], gperiods[2], coords[2];
  MPI_Cart_get(cart, 2, gdims, gperiods, coords);
  SAY("cart_get dims %d %d periods %d %d coords %d %d", gdims[0], gdims[1], gperiods[0],
      gperiods[1], coords[0], coords[1]);
  int back = -1;
  MPI_Cart_rank(cart, coords, &back);
  int wrapped[2] = {coords[0] + 2, coords[1]}, wrapped_rank = -1; /* periodic dimension wraps */
  MPI_Cart_rank(cart, wrapped, &wrapped_rank);
  SAY("cart_rank of my coords %d, of coords+(2,0) %d", back, wrapped_rank);
  int c3[2] = {-1, -1};
  MPI_Cart_coords(cart, 3, 2, c3);
  SAY("cart_coords of 3: %d %d", c3[0], c3[1]);
  int src0, dst0, src1, dst1;
  MPI_Cart_shift(cart, 0, 1, &src0, &dst0);
  MPI_Cart_shift(cart, 1, 1, &src1, &dst1);
  SAY("cart_shift dim0 %d -> me -> %d, dim1 %s -> me -> %s", src0, dst0,
      src1 == MPI_PROC_NULL ? "PROC_NULL" : (src1 == 0 ? "0" : src1 == 2 ? "2" : "other"),
      dst1 == MPI_PROC_NULL ? "PROC_NULL" : (dst1 == 1 ? "1" : dst1 == 3 ? "3" : "other"));
  int got[4];
  int srcs[2] = {src0, src1}, dsts[2] = {dst0, dst1};
  exchange(cart, 2, srcs, 2, dsts, got);
  SAY("cart shift exchange got %d %d", got[0], got[1]);

  /* Cart_sub keeping dimension 1: rows of the grid. */
  int keep[2] = {0, 1};
  MPI_Comm row;
  rc = MPI_Cart_sub(cart, keep, &row);
  CHECK(rc == MPI_SUCCESS);
  int rsize = -1, rrank = -1, rdims[1], rper[1], rcoords[1];
  MPI_Comm_size(row, &rsize);
  MPI_Comm_rank(row, &rrank);
  MPI_Topo_test(row, &topo);
  MPI_Cart_get(row, 1, rdims, rper, rcoords);
  int rowsum = 0;
  MPI_Allreduce(&wrank, &rowsum, 1, MPI_INT, MPI_SUM, row);
  SAY("cart_sub row size %d rank %d %s dims %d periods %d coords %d world-rank sum %d", rsize, rrank,
      topo_name(topo), rdims[0], rper[0], rcoords[0], rowsum);
  MPI_Comm_free(&row);

  /* Cart_map: the rank this process would have in a 3-process line (MPICH gives rank 3
     MPI_UNDEFINED as MPI says; Open MPI 4.1 gives it 3). */
  int line[1] = {3}, lper[1] = {0}, mapped = -2;
  MPI_Cart_map(MPI_COMM_WORLD, 1, line, lper, &mapped);
  SAY("cart_map 3-line: %s", mapped == MPI_UNDEFINED ? "UNDEFINED" : (snprintf(t1, sizeof t1, "%d", mapped), t1));

  /* A line of 3 with reorder allowed: rank 3 gets MPI_COMM_NULL. */
  MPI_Comm lcomm;
  rc = MPI_Cart_create(MPI_COMM_WORLD, 1, line, lper, 1, &lcomm);
  CHECK(rc == MPI_SUCCESS);
  if (lcomm == MPI_COMM_NULL) {
    SAY("3-line: MPI_COMM_NULL");
  } else {
    int lsize, ls, ld, lsum = 0;
    MPI_Comm_size(lcomm, &lsize);
    MPI_Cart_shift(lcomm, 0, 1, &ls, &ld);
    int lr;
    MPI_Comm_rank(lcomm, &lr);
    int one = 1;
    MPI_Allreduce(&one, &lsum, 1, MPI_INT, MPI_SUM, lcomm);
    SAY("3-line: size %d, ends have PROC_NULL neighbours %d, count %d", lsize,
        (lr == 0) == (ls == MPI_PROC_NULL) && (lr == lsize - 1) == (ld == MPI_PROC_NULL), lsum);
    MPI_Comm_free(&lcomm);
  }

  /* Graph: 0-1, 0-2, 1-3, 2-3 (a square) plus 0-3, no reordering. */
  int index[4] = {3, 5, 7, 10};
  int edges[10] = {1, 2, 3, 0, 3, 0, 3, 0, 1, 2};
  MPI_Comm graph;
  rc = MPI_Graph_create(MPI_COMM_WORLD, 4, index, edges, 0, &graph);
  CHECK(rc == MPI_SUCCESS);
  MPI_Topo_test(graph, &topo);
  int nnodes = -1, nedges = -1;
  MPI_Graphdims_get(graph, &nnodes, &nedges);
  int gi[4], ge[10];
  MPI_Graph_get(graph, 4, 10, gi, ge);
  list(t1, sizeof t1, gi, 4);
  list(t2, sizeof t2, ge, 10);
  SAY("graph %s nnodes %d nedges %d index [%s] edges [%s]", topo_name(topo), nnodes, nedges, t1, t2);
  int nn = -1, nbrs[4];
  MPI_Graph_neighbors_count(graph, wrank, &nn);
  MPI_Graph_neighbors(graph, wrank, 4, nbrs);
  list(t1, sizeof t1, nbrs, nn);
  exchange(graph, nn, nbrs, nn, nbrs, got);
  list(t2, sizeof t2, got, nn);
  SAY("graph neighbours of me: %d [%s], exchange got [%s]", nn, t1, t2);
  int n3 = -1, nb3[4];
  MPI_Graph_neighbors_count(graph, 3, &n3);
  MPI_Graph_neighbors(graph, 3, 4, nb3);
  list(t1, sizeof t1, nb3, n3);
  SAY("graph neighbours of 3: %d [%s]", n3, t1);
  /* Graph_map onto the first 2 nodes (0-1): ranks 2 and 3 get UNDEFINED (Open MPI 4.1: their
     own ranks). */
  int mi[2] = {1, 2}, me[2] = {1, 0};
  MPI_Graph_map(MPI_COMM_WORLD, 2, mi, me, &mapped);
  SAY("graph_map 2 nodes: %s", mapped == MPI_UNDEFINED ? "UNDEFINED" : (snprintf(t1, sizeof t1, "%d", mapped), t1));
  MPI_Comm_free(&graph);

  /* Distributed graph, adjacent form: a directed ring r -> r+1, with weights, plus a self loop
     on rank 0. */
  int size = 4;
  int ins[2], outs[2], inw[2], outw[2], nin = 1, nout = 1;
  ins[0] = (wrank + size - 1) % size, inw[0] = 10 * ins[0] + wrank;
  outs[0] = (wrank + 1) % size, outw[0] = 10 * wrank + outs[0];
  if (wrank == 0) ins[1] = outs[1] = 0, inw[1] = outw[1] = 99, nin = nout = 2;
  MPI_Comm dg;
  rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, ins, inw, nout, outs, outw,
                                      MPI_INFO_NULL, 0, &dg);
  CHECK(rc == MPI_SUCCESS);
  MPI_Topo_test(dg, &topo);
  int indeg = -1, outdeg = -1, weighted = -1;
  MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted);
  int qs[4], qsw[4], qd[4], qdw[4];
  MPI_Dist_graph_neighbors(dg, indeg, qs, qsw, outdeg, qd, qdw);
  list(t1, sizeof t1, qs, indeg);
  list(t2, sizeof t2, qsw, indeg);
  SAY("dist_graph_adjacent %s in %d out %d weighted %d sources [%s] weights [%s]", topo_name(topo),
      indeg, outdeg, weighted, t1, t2);
  list(t1, sizeof t1, qd, outdeg);
  list(t2, sizeof t2, qdw, outdeg);
  SAY("dist_graph_adjacent destinations [%s] weights [%s]", t1, t2);
  exchange(dg, indeg, qs, outdeg, qd, got);
  list(t1, sizeof t1, got, indeg);
  SAY("dist_graph_adjacent exchange got [%s]", t1);
  MPI_Comm_free(&dg);

  /* Unweighted adjacent graph with no edges at all on rank 3. */
#pragma GCC diagnostic push /* GCC 12 takes Open MPI's MPI_UNWEIGHTED for a zero-size array */
#pragma GCC diagnostic ignored "-Wstringop-overread"
  rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, wrank == 3 ? 0 : 1, ins, MPI_UNWEIGHTED,
                                      wrank == 2 ? 0 : 1, outs, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg);
#pragma GCC diagnostic pop
  CHECK(rc == MPI_SUCCESS);
  MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted);
  SAY("dist_graph_adjacent unweighted in %d out %d weighted %d", indeg, outdeg, weighted);
  MPI_Comm_free(&dg);

  /* Distributed graph, general form: rank 0 names every edge (a star into 0 from the others,
     and 0 -> 1), the others none. No reordering, so ranks equal world ranks. */
  int n = 0, sources[4], degrees[4], dests[8], weights[8];
  if (wrank == 0) {
    n = 4;
    int k = 0;
    for (int r = 1; r < 4; ++r) sources[r - 1] = r, degrees[r - 1] = 1, dests[k] = 0, weights[k++] = r;
    sources[3] = 0, degrees[3] = 1, dests[k] = 1, weights[k++] = 7;
  }
  MPI_Info info;
  MPI_Info_create(&info);
  rc = MPI_Dist_graph_create(MPI_COMM_WORLD, n, sources, degrees, dests, weights, info, 0, &dg);
  CHECK(rc == MPI_SUCCESS);
  MPI_Info_free(&info);
  MPI_Topo_test(dg, &topo);
  MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted);
  MPI_Dist_graph_neighbors(dg, indeg, qs, qsw, outdeg, qd, qdw);
  /* The order of a rank's neighbours is not fixed by MPI for this form: sort them. */
  for (int i = 0; i < indeg; ++i)
    for (int j = i + 1; j < indeg; ++j)
      if (qs[j] < qs[i]) {
        int t = qs[i]; qs[i] = qs[j]; qs[j] = t;
        t = qsw[i]; qsw[i] = qsw[j]; qsw[j] = t;
      }
  list(t1, sizeof t1, qs, indeg);
  list(t2, sizeof t2, qsw, indeg);
  SAY("dist_graph %s in %d out %d weighted %d sources [%s] weights [%s]", topo_name(topo), indeg,
      outdeg, weighted, t1, t2);
  list(t1, sizeof t1, qd, outdeg);
  list(t2, sizeof t2, qdw, outdeg);
  SAY("dist_graph destinations [%s] weights [%s]", t1, t2);
  exchange(dg, indeg, qs, outdeg, qd, got);
  list(t1, sizeof t1, got, indeg);
  SAY("dist_graph exchange got [%s]", t1);
  MPI_Comm_free(&dg);

  /* A duplicate keeps the topology. */
  MPI_Comm cdup;
  MPI_Comm_dup(cart, &cdup);
  MPI_Topo_test(cdup, &topo);
  MPI_Cart_coords(cdup, crank, 2, coords);
  SAY("dup of cart %s coords %d %d", topo_name(topo), coords[0], coords[1]);
  MPI_Comm_free(&cdup);
  MPI_Comm_free(&cart);
  return cov_finish();
}
