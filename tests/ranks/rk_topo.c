/* rk_topo: Cartesian topologies and the neighbourhood collectives on thread-rank communicators.
   usage: rk_topo ROUNDS SPEC         (SPEC as in rk_layout)

   In an OpenMP region (entered ROUNDS times), on grids made by MPI_Cart_create from the
   threadcomm of N thread-ranks: 2-d (MPI_Dims_create, periodic in dimension 0 only), a periodic
   ring of N (N = 1 or 2: one rank is the source and the destination of a shift), 3-d N x 1 x 1
   (periodic dimensions of 1: every rank its own neighbour), and a grid of N - 1 (the last rank
   gets MPI_COMM_NULL). On each:
     - MPI_Topo_test, MPI_Cartdim_get, MPI_Cart_get, MPI_Cart_rank (also of coordinates outside
       a periodic dimension), MPI_Cart_coords of every rank, MPI_Cart_shift by 1 and by 2 in every
       dimension, all against coordinates the program computes itself (row-major);
     - MPI_Neighbor_allgather, Ineighbor_allgather, _allgatherv (blocks in reverse order), _alltoall, _alltoallv
       (received in reverse order), _alltoallw (MPI_INT blocks at byte displacements), each in
       blocking, nonblocking and persistent form: block j of the receive buffer comes from
       neighbour j (per dimension the source, then the destination of a shift by 1), and in the
       alltoalls it is what that neighbour sent the other way (a rank's block for its destination
       arrives in the destination's source block); blocks of MPI_PROC_NULL neighbours are left as
       they were;
     - MPI_Comm_dup keeps the grid; MPI_Cart_sub of the 2-d grid (dimension 1 kept): its grid,
       its rank, and an Allreduce over it;
   and the errors: MPI_ERR_DIMS for a grid larger than the communicator, MPI_ERR_TOPOLOGY for the
   queries and a neighbourhood collective on the threadcomm (no grid), MPI_ERR_RANK for
   MPI_Cart_coords of a rank out of range. */
#include <omp.h>
#include <string.h>

#include "ranks_util.h"

#include "../common/persistent_collectives.h"

enum { kMaxDims = 3, kMaxNeighbours = 2 * kMaxDims, kSentinel = -77 };

static MPI_Comm tc;
static int N, T, offset;
/* The grid being tested, in every failed check's message (EXPECT_EQ). */
static __thread const char* what = "";

struct grid {
  int ndims, dims[kMaxDims], periods[kMaxDims];
};

static void coords_of(const struct grid* g, int rank, int* c) {
  for (int d = g->ndims - 1; d >= 0; --d) {
    c[d] = rank % g->dims[d];
    rank /= g->dims[d];
  }
}
static int rank_of(const struct grid* g, const int* c) {
  int r = 0;
  for (int d = 0; d < g->ndims; ++d) r = r * g->dims[d] + c[d];
  return r;
}
/* The rank `by` steps along dimension d from rank, or MPI_PROC_NULL. */
static int moved(const struct grid* g, int rank, int d, int by) {
  int c[kMaxDims];
  coords_of(g, rank, c);
  int x = c[d] + by;
  if (x < 0 || x >= g->dims[d]) {
    if (!g->periods[d]) return MPI_PROC_NULL;
    x = ((x % g->dims[d]) + g->dims[d]) % g->dims[d];
  }
  c[d] = x;
  return rank_of(g, c);
}
static int neighbours(const struct grid* g, int rank, int* n) {
  for (int d = 0; d < g->ndims; ++d) {
    n[2 * d] = moved(g, rank, d, -1);
    n[2 * d + 1] = moved(g, rank, d, 1);
  }
  return 2 * g->ndims;
}
/* What rank sends in its block j, and what a rank expects in block j from neighbour n (which
   sent it its block for the opposite direction). */
static int sent(int round, int rank, int j) { return round * 100000 + rank * 100 + j; }
static int expected(int round, int n, int j) { return sent(round, n, j ^ 1); }

enum { kBlocking, kNonblocking, kPersistent };

static void neighbour_collectives(MPI_Comm cart, const struct grid* g, int me, int round, int form) {
  int n[kMaxNeighbours];
  const int k = neighbours(g, me, n);
  int sb[kMaxNeighbours], rb[kMaxNeighbours], one = sent(round, me, 0);
  int counts[kMaxNeighbours], displs[kMaxNeighbours], natural[kMaxNeighbours];
  MPI_Aint bytes_s[kMaxNeighbours], bytes_r[kMaxNeighbours];
  MPI_Datatype types[kMaxNeighbours];
  for (int j = 0; j < k; ++j) {
    sb[j] = sent(round, me, j);
    counts[j] = 1;
    displs[j] = k - 1 - j;
    natural[j] = j;
    bytes_s[j] = (MPI_Aint)(j * sizeof(int));
    bytes_r[j] = (MPI_Aint)((k - 1 - j) * sizeof(int));
    types[j] = MPI_INT;
  }
  static const char* const forms[3] = {"blocking", "nonblocking", "persistent"};
  for (int op = 0; op < 5; ++op) {
    for (int j = 0; j < kMaxNeighbours; ++j) rb[j] = kSentinel;
    MPI_Request q = MPI_REQUEST_NULL;
    MPI_Request* qp = form == kBlocking ? NULL : &q;
    int rc = MPI_SUCCESS;
    switch (op * 3 + form) {
/* Without persistent collectives (HAVE_PCOLL 0) the persistent form is a zero-count stand-in. */
#if HAVE_PCOLL
#define PERSISTENT_OR_NOTHING(x) x
#else
#define PERSISTENT_OR_NOTHING(x) MPI_Neighbor_allgather(sb, 0, MPI_INT, rb, 0, MPI_INT, cart)
#endif
#define CASES(base, B, IB, ...)                                                  \
  case base + 0: rc = MPI_##B(__VA_ARGS__); break;                                \
  case base + 1: rc = MPI_##IB(__VA_ARGS__, qp); break;                           \
  case base + 2: rc = PERSISTENT_OR_NOTHING(MPI_##B##_init(__VA_ARGS__, MPI_INFO_NULL, qp)); break;
      CASES(0, Neighbor_allgather, Ineighbor_allgather, &one, 1, MPI_INT, rb, 1, MPI_INT, cart)
      CASES(3, Neighbor_allgatherv, Ineighbor_allgatherv, &one, 1, MPI_INT, rb, counts, displs, MPI_INT, cart)
      CASES(6, Neighbor_alltoall, Ineighbor_alltoall, sb, 1, MPI_INT, rb, 1, MPI_INT, cart)
      CASES(9, Neighbor_alltoallv, Ineighbor_alltoallv, sb, counts, natural, MPI_INT, rb, counts, displs, MPI_INT, cart)
      CASES(12, Neighbor_alltoallw, Ineighbor_alltoallw, sb, counts, bytes_s, types, rb, counts, bytes_r, types, cart)
    }
    static const char* const names[5] = {"allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw"};
    CHECK(rc == MPI_SUCCESS, "Neighbor_%s (%s) returned %d", names[op], forms[form], rc);
    if (rc != MPI_SUCCESS) continue;
    if (form == kPersistent && HAVE_PCOLL) {
      MPI_OK(MPI_Start(&q));
      MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
      MPI_OK(MPI_Request_free(&q));
    } else if (form != kBlocking) {
      MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    }
    if (form == kPersistent && !HAVE_PCOLL) continue;  /* ran a zero-count stand-in */
    for (int j = 0; j < k; ++j) {
      /* allgatherv, alltoallv, alltoallw: block j lies at position k - 1 - j */
      const int at = op == 0 || op == 2 ? j : k - 1 - j;
      const int want = n[j] == MPI_PROC_NULL ? kSentinel
                       : op < 2             ? sent(round, n[j], 0)
                                            : expected(round, n[j], j);
      EXPECT_EQ(rb[at], want, "Neighbor_%s (%s) block %d from neighbour %d", names[op], forms[form], j, n[j]);
    }
  }
}

static void queries(MPI_Comm cart, const struct grid* g, int me) {
  int status = -1, nd = -1, dims[kMaxDims], periods[kMaxDims], coords[kMaxDims], c[kMaxDims];
  MPI_OK(MPI_Topo_test(cart, &status));
  EXPECT_EQ(status, MPI_CART, "MPI_Topo_test");
  MPI_OK(MPI_Cartdim_get(cart, &nd));
  EXPECT_EQ(nd, g->ndims, "MPI_Cartdim_get");
  MPI_OK(MPI_Cart_get(cart, kMaxDims, dims, periods, coords));
  coords_of(g, me, c);
  for (int d = 0; d < g->ndims; ++d) {
    EXPECT_EQ(dims[d], g->dims[d], "MPI_Cart_get dims[%d]", d);
    EXPECT_EQ(!!periods[d], g->periods[d], "MPI_Cart_get periods[%d]", d);
    EXPECT_EQ(coords[d], c[d], "MPI_Cart_get coords[%d]", d);
  }
  int r = -1;
  MPI_OK(MPI_Cart_rank(cart, c, &r));
  EXPECT_EQ(r, me, "MPI_Cart_rank of my coordinates");
  for (int d = 0; d < g->ndims; ++d) {
    if (!g->periods[d]) continue;
    int w[kMaxDims];
    memcpy(w, c, sizeof w);
    w[d] += 3 * g->dims[d];
    MPI_OK(MPI_Cart_rank(cart, w, &r));
    EXPECT_EQ(r, me, "MPI_Cart_rank, coordinate %d wrapped", d);
  }
  int size;
  MPI_Comm_size(cart, &size);
  for (int other = 0; other < size; ++other) {
    int o[kMaxDims], want[kMaxDims];
    MPI_OK(MPI_Cart_coords(cart, other, kMaxDims, o));
    coords_of(g, other, want);
    for (int d = 0; d < g->ndims; ++d) EXPECT_EQ(o[d], want[d], "MPI_Cart_coords(%d)[%d]", other, d);
  }
  for (int d = 0; d < g->ndims; ++d)
    for (int disp = 1; disp <= 2; ++disp) {
      int src = -5, dst = -5;
      MPI_OK(MPI_Cart_shift(cart, d, disp, &src, &dst));
      EXPECT_EQ(src, moved(g, me, d, -disp), "MPI_Cart_shift(%d, %d) source", d, disp);
      EXPECT_EQ(dst, moved(g, me, d, disp), "MPI_Cart_shift(%d, %d) destination", d, disp);
    }
  int scratch[kMaxDims];
  EXPECT_EQ(rk_error_class(MPI_Cart_coords(cart, size, kMaxDims, scratch)), MPI_ERR_RANK, "MPI_Cart_coords of rank %d",
            size);
}

/* Makes the grid from the threadcomm at thread-rank r, runs everything on it, frees it. */
static void on_grid(const struct grid* g, int r, int round, const char* name) {
  what = name;
  int size = 1;
  for (int d = 0; d < g->ndims; ++d) size *= g->dims[d];
  if (r == offset) rk_set_stage(what);
  MPI_Comm cart = MPI_COMM_NULL;
  MPI_OK(MPI_Cart_create(tc, g->ndims, g->dims, g->periods, 1, &cart));
  if (r >= size) {
    CHECK(cart == MPI_COMM_NULL, "%s: rank %d beyond the grid of %d got a communicator", what, r, size);
    return;
  }
  CHECK(cart != MPI_COMM_NULL, "%s: no communicator", what);
  if (cart == MPI_COMM_NULL) return;
  int me = -1;
  MPI_Comm_rank(cart, &me);
  EXPECT_EQ(me, r, "%s: rank in the grid (reorder is ignored)", what);
  queries(cart, g, me);
  for (int form = 0; form < 3; ++form) neighbour_collectives(cart, g, me, round, form);
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_OK(MPI_Comm_dup(cart, &dup));
  queries(dup, g, me);
  neighbour_collectives(dup, g, me, round + 1, kBlocking);
  MPI_OK(MPI_Comm_free(&dup));
  if (g->ndims == 2) {
    const int keep[2] = {0, 1};
    MPI_Comm row = MPI_COMM_NULL;
    MPI_OK(MPI_Cart_sub(cart, keep, &row));
    int c[kMaxDims], rr = -1, nd = -1, sum = -1;
    coords_of(g, me, c);
    MPI_Comm_rank(row, &rr);
    EXPECT_EQ(rr, c[1], "MPI_Cart_sub: rank in the row");
    MPI_OK(MPI_Cartdim_get(row, &nd));
    EXPECT_EQ(nd, 1, "MPI_Cart_sub: dimensions");
    const struct grid rowg = {1, {g->dims[1]}, {g->periods[1]}};
    queries(row, &rowg, rr);
    MPI_OK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, row));
    const int first = c[0] * g->dims[1], n = g->dims[1];
    EXPECT_EQ(sum, n * first + n * (n - 1) / 2, "MPI_Cart_sub: Allreduce over the row");
    MPI_OK(MPI_Comm_free(&row));
  }
  MPI_OK(MPI_Comm_free(&cart));
}

static void errors(int r) {
  what = "errors";
  if (r == offset) rk_set_stage("errors");
  int dims[1] = {N + 1}, periods[1] = {0}, nd, x[2];
  MPI_Comm bad = MPI_COMM_NULL;
  EXPECT_EQ(rk_error_class(MPI_Cart_create(tc, 1, dims, periods, 0, &bad)), MPI_ERR_DIMS, "MPI_Cart_create, %d > %d", N + 1, N);
  EXPECT_EQ(rk_error_class(MPI_Cartdim_get(tc, &nd)), MPI_ERR_TOPOLOGY, "MPI_Cartdim_get without a grid");
  EXPECT_EQ(rk_error_class(MPI_Neighbor_allgather(&r, 1, MPI_INT, x, 1, MPI_INT, tc)), MPI_ERR_TOPOLOGY,
            "MPI_Neighbor_allgather without a grid");
  int status = -1;
  MPI_OK(MPI_Topo_test(tc, &status));
  EXPECT_EQ(status, MPI_UNDEFINED, "MPI_Topo_test without a grid");
}

int main(int argc, char** argv) {
  rk_init(&argc, &argv, "rk_topo");
  if (argc < 3) {
    rk_say("usage: rk_topo ROUNDS SPEC\n");
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
      struct grid g2 = {2, {0, 0}, {1, 0}};
      MPI_Dims_create(N, 2, g2.dims);
      on_grid(&g2, r, 2 * round, "2-d grid");
      const struct grid ring = {1, {N}, {1}};
      on_grid(&ring, r, 2 * round, "ring");
      const struct grid thin = {3, {N, 1, 1}, {0, 1, 1}};
      on_grid(&thin, r, 2 * round, "N x 1 x 1");
      if (N > 1) {
        const struct grid fewer = {1, {N - 1}, {0}};
        on_grid(&fewer, r, 2 * round, "grid of N - 1");
      }
      errors(r);
      MPI_OK(MPI_Barrier(tc));
      MPI_OK(MPIX_Threadcomm_finish(tc));
      rk_my = -1;
    }
  }
  rk_set_stage("MPIX_Threadcomm_free");
  MPI_OK(MPIX_Threadcomm_free(&tc));
  rk_say("rk_topo: rank %d: %d threads of %d thread-ranks, %d rounds\n", rk_wrank, T, N, rounds);
  return rk_finish();
}
