/* rk_graph: graph and distributed graph topologies, and the neighbourhood collectives on them,
   on thread-rank communicators.
   usage: rk_graph ROUNDS SPEC         (SPEC as in rk_layout)

   In an OpenMP region (entered ROUNDS times), from the threadcomm of N thread-ranks:
     - MPI_Graph_create of the ring (rank i's neighbours i - 1 and i + 1, so a multigraph for
       N <= 2): MPI_Topo_test, MPI_Graphdims_get, MPI_Graph_get, MPI_Graph_neighbors_count and
       MPI_Graph_neighbors of every rank, MPI_Graph_map; MPI_Neighbor_allgather (blocking and
       nonblocking) and, for N >= 3, MPI_Neighbor_alltoall (block j goes to neighbour j and
       arrives in the block of that neighbour's list that names the sender); a dup keeps the
       graph; a graph of N - 1 nodes gives the last rank MPI_COMM_NULL;
     - MPI_Dist_graph_create_adjacent of the directed ring (from i - 1, to i + 1, weighted):
       MPI_Dist_graph_neighbors_count and _neighbors with the weights, MPI_Neighbor_alltoallv and
       MPI_Ineighbor_alltoall; the star (every rank but 0 sends to 0, MPI_UNWEIGHTED, degrees of 0)
       with MPI_Neighbor_allgatherv at rank 0; a dup keeps each rank's adjacency;
     - MPI_Dist_graph_create where rank 0 names every edge of the directed ring twice (a
       multigraph) with weights: each rank's sources, destinations and weights, and
       MPI_Neighbor_alltoall (the k-th block to i + 1 arrives as the k-th block from i - 1);
   and the errors: MPI_ERR_ARG for a graph of more nodes than ranks, MPI_ERR_TOPOLOGY for the
   graph queries on a distributed graph, the distributed-graph queries on a graph, and a
   neighbourhood collective on the threadcomm. Every received block is checked. */
#include <omp.h>
#include <string.h>

#include "ranks_util.h"

/* GCC 12 takes Open MPI's MPI_UNWEIGHTED for a zero-size array */
#pragma GCC diagnostic ignored "-Wstringop-overread"

enum { kSentinel = -77 };

static MPI_Comm tc;
static int N, T, offset;
static __thread const char* what = "";

static int V(int rank, int j, int round) { return rank * 1000 + j * 10 + round; }
static int left_of(int r) { return (r - 1 + N) % N; }
static int right_of(int r) { return (r + 1) % N; }

static void graph(int r, int round) {
  what = "ring graph";
  if (r == offset) rk_set_stage("MPI_Graph_create");
  int* index = malloc(sizeof(int) * N);
  int* edges = malloc(sizeof(int) * 2 * N);
  for (int i = 0; i < N; ++i) {
    index[i] = 2 * (i + 1);
    edges[2 * i] = left_of(i), edges[2 * i + 1] = right_of(i);
  }
  MPI_Comm g = MPI_COMM_NULL;
  MPI_OK(MPI_Graph_create(tc, N, index, edges, 1, &g));
  int me = -1, status = -1, nnodes = -1, nedges = -1, newrank = -1;
  MPI_Comm_rank(g, &me);
  EXPECT_EQ(me, r, "rank in the graph (reorder is ignored)");
  MPI_OK(MPI_Topo_test(g, &status));
  EXPECT_EQ(status, MPI_GRAPH, "MPI_Topo_test");
  MPI_OK(MPI_Graphdims_get(g, &nnodes, &nedges));
  EXPECT_EQ(nnodes, N, "MPI_Graphdims_get nodes");
  EXPECT_EQ(nedges, 2 * N, "MPI_Graphdims_get edges");
  int* gi = malloc(sizeof(int) * N);
  int* ge = malloc(sizeof(int) * 2 * N);
  MPI_OK(MPI_Graph_get(g, N, 2 * N, gi, ge));
  for (int i = 0; i < N; ++i) EXPECT_EQ(gi[i], index[i], "MPI_Graph_get index[%d]", i);
  for (int e = 0; e < 2 * N; ++e) EXPECT_EQ(ge[e], edges[e], "MPI_Graph_get edges[%d]", e);
  for (int i = 0; i < N; ++i) {
    int count = -1, nb[2] = {kSentinel, kSentinel};
    MPI_OK(MPI_Graph_neighbors_count(g, i, &count));
    EXPECT_EQ(count, 2, "MPI_Graph_neighbors_count of %d", i);
    MPI_OK(MPI_Graph_neighbors(g, i, 2, nb));
    EXPECT_EQ(nb[0], left_of(i), "MPI_Graph_neighbors of %d, first", i);
    EXPECT_EQ(nb[1], right_of(i), "MPI_Graph_neighbors of %d, second", i);
  }
  MPI_OK(MPI_Graph_map(tc, N, index, edges, &newrank));
  EXPECT_EQ(newrank, r, "MPI_Graph_map");
  for (int pass = 0; pass < 2; ++pass) {
    MPI_Comm on = g;
    if (pass == 1) MPI_OK(MPI_Comm_dup(g, &on));
    int mine = V(r, 0, round), got[2] = {kSentinel, kSentinel};
    MPI_Request q = MPI_REQUEST_NULL;
    if (pass == 0) {
      MPI_OK(MPI_Neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, on));
    } else {
      MPI_OK(MPI_Ineighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, on, &q));
      MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    }
    EXPECT_EQ(got[0], V(left_of(r), 0, round), "Neighbor_allgather (pass %d) from the left", pass);
    EXPECT_EQ(got[1], V(right_of(r), 0, round), "Neighbor_allgather (pass %d) from the right", pass);
    if (N >= 3) {
      int out[2] = {V(r, 0, round), V(r, 1, round)}, in[2] = {kSentinel, kSentinel};
      MPI_OK(MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, on));
      /* The left neighbour's block 1 went to its right (this rank), the right one's block 0. */
      EXPECT_EQ(in[0], V(left_of(r), 1, round), "Neighbor_alltoall (pass %d) from the left", pass);
      EXPECT_EQ(in[1], V(right_of(r), 0, round), "Neighbor_alltoall (pass %d) from the right", pass);
    }
    if (pass == 1) {
      MPI_OK(MPI_Topo_test(on, &status));
      EXPECT_EQ(status, MPI_GRAPH, "MPI_Topo_test on the dup");
      MPI_OK(MPI_Comm_free(&on));
    }
  }
  /* Distributed-graph queries on a graph: MPI_ERR_TOPOLOGY. */
  int in = -1, out = -1, weighted = -1;
  EXPECT_EQ(rk_error_class(MPI_Dist_graph_neighbors_count(g, &in, &out, &weighted)), MPI_ERR_TOPOLOGY,
            "MPI_Dist_graph_neighbors_count on a graph");
  MPI_OK(MPI_Comm_free(&g));
  if (N > 1) {
    /* The ring of N - 1 nodes: the last rank is outside. */
    MPI_Comm fewer = MPI_COMM_NULL;
    const int m = N - 1;
    for (int i = 0; i < m; ++i) {
      index[i] = 2 * (i + 1);
      edges[2 * i] = (i - 1 + m) % m, edges[2 * i + 1] = (i + 1) % m;
    }
    MPI_OK(MPI_Graph_create(tc, N - 1, index, edges, 0, &fewer));
    EXPECT_EQ(fewer == MPI_COMM_NULL, r == N - 1, "graph of N - 1 nodes: MPI_COMM_NULL at rank %d", r);
    MPI_OK(MPI_Graph_map(tc, N - 1, index, edges, &newrank));
    EXPECT_EQ(newrank, r == N - 1 ? MPI_UNDEFINED : r, "MPI_Graph_map of N - 1 nodes");
    if (fewer != MPI_COMM_NULL) MPI_OK(MPI_Comm_free(&fewer));
  }
  free(gi);
  free(ge);
  free(index);
  free(edges);
}

static void adjacent(int r, int round) {
  what = "directed ring";
  if (r == offset) rk_set_stage("MPI_Dist_graph_create_adjacent");
  int src = left_of(r), dst = right_of(r), sw = 100 + r, dw = 200 + r;
  MPI_Comm d = MPI_COMM_NULL;
  MPI_OK(MPI_Dist_graph_create_adjacent(tc, 1, &src, &sw, 1, &dst, &dw, MPI_INFO_NULL, 1, &d));
  for (int pass = 0; pass < 2; ++pass) {
    MPI_Comm on = d;
    if (pass == 1) MPI_OK(MPI_Comm_dup(d, &on));
    int status = -1, in = -1, out = -1, weighted = -1, s = kSentinel, t = kSentinel, a = kSentinel, b = kSentinel;
    MPI_OK(MPI_Topo_test(on, &status));
    EXPECT_EQ(status, MPI_DIST_GRAPH, "MPI_Topo_test (pass %d)", pass);
    MPI_OK(MPI_Dist_graph_neighbors_count(on, &in, &out, &weighted));
    EXPECT_EQ(in, 1, "indegree");
    EXPECT_EQ(out, 1, "outdegree");
    EXPECT_EQ(weighted, 1, "weighted");
    MPI_OK(MPI_Dist_graph_neighbors(on, 1, &s, &a, 1, &t, &b));
    EXPECT_EQ(s, left_of(r), "source");
    EXPECT_EQ(a, 100 + r, "source weight");
    EXPECT_EQ(t, right_of(r), "destination");
    EXPECT_EQ(b, 200 + r, "destination weight");
    int mine = V(r, 3, round), got = kSentinel, one = 1, zero = 0;
    MPI_OK(MPI_Neighbor_alltoallv(&mine, &one, &zero, MPI_INT, &got, &one, &zero, MPI_INT, on));
    EXPECT_EQ(got, V(left_of(r), 3, round), "Neighbor_alltoallv (pass %d) from the source", pass);
    MPI_Request q = MPI_REQUEST_NULL;
    got = kSentinel;
    MPI_OK(MPI_Ineighbor_alltoall(&mine, 1, MPI_INT, &got, 1, MPI_INT, on, &q));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    EXPECT_EQ(got, V(left_of(r), 3, round), "Ineighbor_alltoall (pass %d) from the source", pass);
    int nb = -1;
    EXPECT_EQ(rk_error_class(MPI_Graph_neighbors_count(on, r, &nb)), MPI_ERR_TOPOLOGY,
              "MPI_Graph_neighbors_count on a distributed graph");
    if (pass == 1) MPI_OK(MPI_Comm_free(&on));
  }
  MPI_OK(MPI_Comm_free(&d));

  /* The star: every rank but 0 sends to 0; unweighted; zero degrees elsewhere. */
  what = "star";
  int* sources = malloc(sizeof(int) * N);
  for (int i = 1; i < N; ++i) sources[i - 1] = i;
  const int zero_to = 0;
  MPI_Comm star = MPI_COMM_NULL;
  if (r == 0) {
    MPI_OK(MPI_Dist_graph_create_adjacent(tc, N - 1, sources, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &star));
  } else {
    MPI_OK(MPI_Dist_graph_create_adjacent(tc, 0, NULL, MPI_UNWEIGHTED, 1, &zero_to, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &star));
  }
  int in = -1, out = -1, weighted = -1;
  MPI_OK(MPI_Dist_graph_neighbors_count(star, &in, &out, &weighted));
  EXPECT_EQ(in, r == 0 ? N - 1 : 0, "indegree");
  EXPECT_EQ(out, r == 0 ? 0 : 1, "outdegree");
  EXPECT_EQ(weighted, 0, "weighted");
  int mine = V(r, 4, round);
  int* got = malloc(sizeof(int) * (N + 1));
  int* counts = malloc(sizeof(int) * N);
  int* displs = malloc(sizeof(int) * N);
  for (int i = 0; i < N; ++i) counts[i] = 1, displs[i] = N - 2 - i, got[i] = kSentinel;  /* blocks in reverse order */
  MPI_OK(MPI_Neighbor_allgatherv(&mine, 1, MPI_INT, got, counts, displs, MPI_INT, star));
  if (r == 0)
    for (int j = 0; j < N - 1; ++j) EXPECT_EQ(got[N - 2 - j], V(j + 1, 4, round), "Neighbor_allgatherv block %d", j);
  MPI_OK(MPI_Comm_free(&star));
  free(sources);
  free(got);
  free(counts);
  free(displs);
}

static void general(int r, int round) {
  what = "Dist_graph_create, ring twice";
  if (r == offset) rk_set_stage("MPI_Dist_graph_create");
  /* Rank 0 names every edge i -> i + 1 twice, weights 10 i and 10 i + 1; the others none. */
  int n = r == 0 ? N : 0;
  int* sources = malloc(sizeof(int) * N);
  int* degrees = malloc(sizeof(int) * N);
  int* dests = malloc(sizeof(int) * 2 * N);
  int* weights = malloc(sizeof(int) * 2 * N);
  for (int i = 0; i < N; ++i) {
    sources[i] = i, degrees[i] = 2;
    dests[2 * i] = dests[2 * i + 1] = right_of(i);
    weights[2 * i] = 10 * i, weights[2 * i + 1] = 10 * i + 1;
  }
  MPI_Comm d = MPI_COMM_NULL;
  MPI_OK(MPI_Dist_graph_create(tc, n, sources, degrees, dests, weights, MPI_INFO_NULL, 0, &d));
  int in = -1, out = -1, weighted = -1;
  MPI_OK(MPI_Dist_graph_neighbors_count(d, &in, &out, &weighted));
  EXPECT_EQ(in, 2, "indegree");
  EXPECT_EQ(out, 2, "outdegree");
  EXPECT_EQ(weighted, 1, "weighted");
  int s[2], sw[2], t[2], tw[2];
  MPI_OK(MPI_Dist_graph_neighbors(d, 2, s, sw, 2, t, tw));
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(s[k], left_of(r), "source %d", k);
    EXPECT_EQ(sw[k], 10 * left_of(r) + k, "source weight %d", k);
    EXPECT_EQ(t[k], right_of(r), "destination %d", k);
    EXPECT_EQ(tw[k], 10 * r + k, "destination weight %d", k);
  }
  int outb[2] = {V(r, 5, round), V(r, 6, round)}, inb[2] = {kSentinel, kSentinel};
  MPI_OK(MPI_Neighbor_alltoall(outb, 1, MPI_INT, inb, 1, MPI_INT, d));
  EXPECT_EQ(inb[0], V(left_of(r), 5, round), "Neighbor_alltoall, first edge");
  EXPECT_EQ(inb[1], V(left_of(r), 6, round), "Neighbor_alltoall, second edge");
  MPI_OK(MPI_Comm_free(&d));
  free(sources);
  free(degrees);
  free(dests);
  free(weights);
}

static void errors(int r) {
  what = "errors";
  if (r == offset) rk_set_stage("errors");
  int* index = malloc(sizeof(int) * (N + 1));
  int* edges = malloc(sizeof(int) * (N + 1));
  for (int i = 0; i <= N; ++i) index[i] = i + 1, edges[i] = 0;
  MPI_Comm bad = MPI_COMM_NULL;
  EXPECT_EQ(rk_error_class(MPI_Graph_create(tc, N + 1, index, edges, 0, &bad)), MPI_ERR_ARG,
            "MPI_Graph_create of %d nodes on %d ranks", N + 1, N);
  int nn = -1, ne = -1, x[2];
  EXPECT_EQ(rk_error_class(MPI_Graphdims_get(tc, &nn, &ne)), MPI_ERR_TOPOLOGY, "MPI_Graphdims_get without a graph");
  EXPECT_EQ(rk_error_class(MPI_Neighbor_allgather(&r, 1, MPI_INT, x, 1, MPI_INT, tc)), MPI_ERR_TOPOLOGY,
            "MPI_Neighbor_allgather without a topology");
  free(index);
  free(edges);
}

int main(int argc, char** argv) {
  rk_init(&argc, &argv, "rk_graph");
  if (argc < 3) {
    rk_say("usage: rk_graph ROUNDS SPEC\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int rounds = atoi(argv[1]);
  T = rk_threads_of(argv[2], rk_wrank);
  rk_layout(MPI_COMM_WORLD, T, &offset, &N);
  rk_set_stage("MPIX_Threadcomm_init");
  MPI_OK(MPIX_Threadcomm_init(MPI_COMM_WORLD, T, &tc));
  for (int round = 0; round < rounds; ++round) {
#pragma omp parallel num_threads(T)
    {
      if (omp_get_num_threads() != T) MPI_Abort(MPI_COMM_WORLD, 5);
      MPI_OK(MPIX_Threadcomm_start(tc));
      int r = -1;
      MPI_Comm_rank(tc, &r);
      rk_my = r;
      graph(r, round);
      adjacent(r, round);
      general(r, round);
      errors(r);
      MPI_OK(MPI_Barrier(tc));
      MPI_OK(MPIX_Threadcomm_finish(tc));
      rk_my = -1;
    }
  }
  rk_set_stage("MPIX_Threadcomm_free");
  MPI_OK(MPIX_Threadcomm_free(&tc));
  rk_say("rk_graph: rank %d: %d threads of %d thread-ranks, %d rounds\n", rk_wrank, T, N, rounds);
  return rk_finish();
}
