/* Coverage: neighborhood collectives — MPI_Neighbor_allgather, _allgatherv, _alltoall,
   _alltoallv, _alltoallw — in every form the MPI has: blocking, nonblocking (MPI_Ineighbor_*),
   persistent (MPI_Neighbor_*_init on MPICH 4.0, MPIX_Neighbor_*_init on Open MPI 4.1's pcollreq
   extension) and MPICH's large-count _c forms of all three, on five topologies: a periodic ring
   (MPI_Cart_create), a non-periodic 2x2 grid whose border neighbors are MPI_PROC_NULL, a graph
   (MPI_Graph_create), a weighted asymmetric distributed graph (MPI_Dist_graph_create_adjacent)
   and a distributed graph in which rank 0 receives from no one and rank 3 sends to no one
   (MPI_Dist_graph_create). The expected blocks follow from the neighbor lists each rank reads
   back from its topology and gathers from the others. Every receive buffer is printed and
   compared; blocks from MPI_PROC_NULL neighbors must stay untouched. */
// ranks: 4
#include "coll_forms.h"

#define MAXN 4   /* most neighbors of any rank in any topology here */

/* One wrapper per function: the call in form f. */
static int c_allgather(int f, const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt,
                       MPI_Comm comm) {
  MPI_Request r;
  switch (f) {
    case F_BLOCKING: return MPI_Neighbor_allgather(sb, sc, st, rb, rc, rt, comm);
    case F_NONBLOCKING: return done(MPI_Ineighbor_allgather(sb, sc, st, rb, rc, rt, comm, &r), &r, 0);
#ifdef HAVE_PERSISTENT
    case F_PERSISTENT:
      return done(PERSISTENT(Neighbor_allgather)(sb, sc, st, rb, rc, rt, comm, pinfo, &r), &r, 1);
#endif
#ifdef HAVE_LARGE
    case F_LARGE: return MPI_Neighbor_allgather_c(sb, sc, st, rb, rc, rt, comm);
    case F_LARGE_NONBLOCKING: return done(MPI_Ineighbor_allgather_c(sb, sc, st, rb, rc, rt, comm, &r), &r, 0);
    case F_LARGE_PERSISTENT:
      return done(MPI_Neighbor_allgather_init_c(sb, sc, st, rb, rc, rt, comm, pinfo, &r), &r, 1);
#endif
  }
  return -1;
}

static int c_allgatherv(int f, const void* sb, int sc, MPI_Datatype st, void* rb, const int* rcs, const int* dis,
                        MPI_Datatype rt, MPI_Comm comm, int indegree) {
  MPI_Request r;
#ifdef HAVE_LARGE
  MPI_Count rcl[MAXN];
  MPI_Aint disl[MAXN];
  for (int i = 0; i < indegree; ++i) rcl[i] = rcs[i], disl[i] = dis[i];
#endif
  (void)indegree;
  switch (f) {
    case F_BLOCKING: return MPI_Neighbor_allgatherv(sb, sc, st, rb, rcs, dis, rt, comm);
    case F_NONBLOCKING: return done(MPI_Ineighbor_allgatherv(sb, sc, st, rb, rcs, dis, rt, comm, &r), &r, 0);
#ifdef HAVE_PERSISTENT
    case F_PERSISTENT:
      return done(PERSISTENT(Neighbor_allgatherv)(sb, sc, st, rb, rcs, dis, rt, comm, pinfo, &r), &r, 1);
#endif
#ifdef HAVE_LARGE
    case F_LARGE: return MPI_Neighbor_allgatherv_c(sb, sc, st, rb, rcl, disl, rt, comm);
    case F_LARGE_NONBLOCKING:
      return done(MPI_Ineighbor_allgatherv_c(sb, sc, st, rb, rcl, disl, rt, comm, &r), &r, 0);
    case F_LARGE_PERSISTENT:
      return done(MPI_Neighbor_allgatherv_init_c(sb, sc, st, rb, rcl, disl, rt, comm, pinfo, &r), &r, 1);
#endif
  }
  return -1;
}

static int c_alltoall(int f, const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt,
                      MPI_Comm comm) {
  MPI_Request r;
  switch (f) {
    case F_BLOCKING: return MPI_Neighbor_alltoall(sb, sc, st, rb, rc, rt, comm);
    case F_NONBLOCKING: return done(MPI_Ineighbor_alltoall(sb, sc, st, rb, rc, rt, comm, &r), &r, 0);
#ifdef HAVE_PERSISTENT
    case F_PERSISTENT:
      return done(PERSISTENT(Neighbor_alltoall)(sb, sc, st, rb, rc, rt, comm, pinfo, &r), &r, 1);
#endif
#ifdef HAVE_LARGE
    case F_LARGE: return MPI_Neighbor_alltoall_c(sb, sc, st, rb, rc, rt, comm);
    case F_LARGE_NONBLOCKING: return done(MPI_Ineighbor_alltoall_c(sb, sc, st, rb, rc, rt, comm, &r), &r, 0);
    case F_LARGE_PERSISTENT:
      return done(MPI_Neighbor_alltoall_init_c(sb, sc, st, rb, rc, rt, comm, pinfo, &r), &r, 1);
#endif
  }
  return -1;
}

static int c_alltoallv(int f, const void* sb, const int* scs, const int* sds, MPI_Datatype st, void* rb,
                       const int* rcs, const int* rds, MPI_Datatype rt, MPI_Comm comm, int indegree, int outdegree) {
  MPI_Request r;
#ifdef HAVE_LARGE
  MPI_Count scl[MAXN], rcl[MAXN];
  MPI_Aint sdl[MAXN], rdl[MAXN];
  for (int i = 0; i < outdegree; ++i) scl[i] = scs[i], sdl[i] = sds[i];
  for (int i = 0; i < indegree; ++i) rcl[i] = rcs[i], rdl[i] = rds[i];
#endif
  (void)indegree, (void)outdegree;
  switch (f) {
    case F_BLOCKING: return MPI_Neighbor_alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm);
    case F_NONBLOCKING: return done(MPI_Ineighbor_alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, &r), &r, 0);
#ifdef HAVE_PERSISTENT
    case F_PERSISTENT:
      return done(PERSISTENT(Neighbor_alltoallv)(sb, scs, sds, st, rb, rcs, rds, rt, comm, pinfo, &r), &r, 1);
#endif
#ifdef HAVE_LARGE
    case F_LARGE: return MPI_Neighbor_alltoallv_c(sb, scl, sdl, st, rb, rcl, rdl, rt, comm);
    case F_LARGE_NONBLOCKING:
      return done(MPI_Ineighbor_alltoallv_c(sb, scl, sdl, st, rb, rcl, rdl, rt, comm, &r), &r, 0);
    case F_LARGE_PERSISTENT:
      return done(MPI_Neighbor_alltoallv_init_c(sb, scl, sdl, st, rb, rcl, rdl, rt, comm, pinfo, &r), &r, 1);
#endif
  }
  return -1;
}

static int c_alltoallw(int f, const void* sb, const int* scs, const MPI_Aint* sds, const MPI_Datatype* sts,
                       void* rb, const int* rcs, const MPI_Aint* rds, const MPI_Datatype* rts, MPI_Comm comm,
                       int indegree, int outdegree) {
  MPI_Request r;
#ifdef HAVE_LARGE
  MPI_Count scl[MAXN], rcl[MAXN];
  for (int i = 0; i < outdegree; ++i) scl[i] = scs[i];
  for (int i = 0; i < indegree; ++i) rcl[i] = rcs[i];
#endif
  (void)indegree, (void)outdegree;
  switch (f) {
    case F_BLOCKING: return MPI_Neighbor_alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm);
    case F_NONBLOCKING:
      return done(MPI_Ineighbor_alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm, &r), &r, 0);
#ifdef HAVE_PERSISTENT
    case F_PERSISTENT:
      return done(PERSISTENT(Neighbor_alltoallw)(sb, scs, sds, sts, rb, rcs, rds, rts, comm, pinfo, &r), &r, 1);
#endif
#ifdef HAVE_LARGE
    case F_LARGE: return MPI_Neighbor_alltoallw_c(sb, scl, sds, sts, rb, rcl, rds, rts, comm);
    case F_LARGE_NONBLOCKING:
      return done(MPI_Ineighbor_alltoallw_c(sb, scl, sds, sts, rb, rcl, rds, rts, comm, &r), &r, 0);
    case F_LARGE_PERSISTENT:
      return done(MPI_Neighbor_alltoallw_init_c(sb, scl, sds, sts, rb, rcl, rds, rts, comm, pinfo, &r), &r, 1);
#endif
  }
  return -1;
}

static MPI_Datatype pair_t; /* contiguous 2 ints */

/* A topology's neighbor lists, read back from the communicator, and every rank's destinations. */
struct topo {
  const char* name;
  int even; /* every rank has as many sources as destinations */
  MPI_Comm comm;
  int rank, indegree, outdegree;
  int sources[MAXN], dests[MAXN];
  int all_outdegree[4], all_dests[4][MAXN];
};

static void read_topology(struct topo* t) {
  int kind = MPI_UNDEFINED, rc;
  MPI_Comm_rank(t->comm, &t->rank);
  rc = MPI_Topo_test(t->comm, &kind);
  CHECK(rc == MPI_SUCCESS);
  if (kind == MPI_CART) {
    int ndims = 0;
    MPI_Cartdim_get(t->comm, &ndims);
    for (int d = 0; d < ndims; ++d) {
      int lo, hi;
      MPI_Cart_shift(t->comm, d, 1, &lo, &hi);
      t->sources[2 * d] = t->dests[2 * d] = lo;
      t->sources[2 * d + 1] = t->dests[2 * d + 1] = hi;
    }
    t->indegree = t->outdegree = 2 * ndims;
  } else if (kind == MPI_GRAPH) {
    MPI_Graph_neighbors_count(t->comm, t->rank, &t->indegree);
    MPI_Graph_neighbors(t->comm, t->rank, MAXN, t->sources);
    t->outdegree = t->indegree;
    memcpy(t->dests, t->sources, sizeof t->dests);
  } else if (kind == MPI_DIST_GRAPH) {
    int weighted;
    MPI_Dist_graph_neighbors_count(t->comm, &t->indegree, &t->outdegree, &weighted);
    int sw[MAXN], dw[MAXN];
    /* exact degrees: MPICH 4.0.2 crashes when a degree is 0 and the maximum given is larger */
    MPI_Dist_graph_neighbors(t->comm, t->indegree, t->sources, sw, t->outdegree, t->dests, dw);
  }
  int mine[1 + MAXN] = {t->outdegree};
  memcpy(mine + 1, t->dests, sizeof t->dests);
  int all[4][1 + MAXN];
  rc = MPI_Allgather(mine, 1 + MAXN, MPI_INT, all, 1 + MAXN, MPI_INT, t->comm);
  CHECK(rc == MPI_SUCCESS);
  for (int r = 0; r < 4; ++r) {
    t->all_outdegree[r] = all[r][0];
    memcpy(t->all_dests[r], all[r] + 1, sizeof t->all_dests[r]);
  }
  SAY("%s: in %s out %s", t->name, ints(t->sources, t->indegree), ints(t->dests, t->outdegree));
}

/* The position of t->rank among source s's destinations. */
static int slot_at(const struct topo* t, int s) {
  for (int k = 0; k < t->all_outdegree[s]; ++k)
    if (t->all_dests[s][k] == t->rank) return k;
  return -1;
}

static const char* tlabel(int f, const struct topo* t, const char* what) {
  char* s = text[text_next++ % 8];
  snprintf(s, sizeof text[0], "%s %s %s", form_name[f], t->name, what);
  return s;
}

static void run_form(int f, const struct topo* t) {
  const int base = 1000 * (f + 1), me = t->rank, in = t->indegree, out = t->outdegree;
  int rc, buf[64], exp[64], sbuf[64];

  /* allgather: 2 ints from each source. */
  sbuf[0] = base + 100 * me, sbuf[1] = sbuf[0] + 1;
  for (int i = 0; i < in; ++i) {
    int s = t->sources[i];
    exp[2 * i] = s == MPI_PROC_NULL ? -1 : base + 100 * s;
    exp[2 * i + 1] = s == MPI_PROC_NULL ? -1 : base + 100 * s + 1;
  }
  fill(buf, 2 * MAXN, -1);
  rc = c_allgather(f, sbuf, 2, MPI_INT, buf, 2, MPI_INT, t->comm);
  verify(tlabel(f, t, "allgather"), rc, buf, exp, 2 * in);
  fill(buf, 2 * MAXN, -1);
  rc = c_allgather(f, sbuf, 1, pair_t, buf, 2, MPI_INT, t->comm);
  verify(tlabel(f, t, "allgather pair type"), rc, buf, exp, 2 * in);

  /* allgatherv: rank s sends s%2+1 ints; one int of gap after each block. */
  {
    int counts[MAXN], displs[MAXN], o = 0;
    for (int j = 0; j <= me % 2; ++j) sbuf[j] = base + 100 * me + j;
    for (int i = 0; i < in; ++i) {
      int s = t->sources[i];
      counts[i] = s == MPI_PROC_NULL ? 1 : s % 2 + 1, displs[i] = o;
      for (int j = 0; j < counts[i]; ++j) exp[o + j] = s == MPI_PROC_NULL ? -1 : base + 100 * s + j;
      exp[o + counts[i]] = -1;
      o += counts[i] + 1;
    }
    fill(buf, 64, -1);
    rc = c_allgatherv(f, sbuf, me % 2 + 1, MPI_INT, buf, counts, displs, MPI_INT, t->comm, in);
    verify(tlabel(f, t, "allgatherv"), rc, buf, exp, o);
  }

  /* alltoall: rank s sends base+100s+10k+j to its k-th destination. */
  for (int k = 0; k < out; ++k) sbuf[2 * k] = base + 100 * me + 10 * k, sbuf[2 * k + 1] = sbuf[2 * k] + 1;
  for (int i = 0; i < in; ++i) {
    int s = t->sources[i];
    exp[2 * i] = s == MPI_PROC_NULL ? -1 : base + 100 * s + 10 * slot_at(t, s);
    exp[2 * i + 1] = s == MPI_PROC_NULL ? -1 : exp[2 * i] + 1;
  }
  fill(buf, 2 * MAXN, -1);
  rc = c_alltoall(f, sbuf, 2, MPI_INT, buf, 2, MPI_INT, t->comm);
  verify(tlabel(f, t, "alltoall"), rc, buf, exp, 2 * in);
  fill(buf, 2 * MAXN, -1);
  rc = c_alltoall(f, sbuf, 2, MPI_INT, buf, 1, pair_t, t->comm);
  verify(tlabel(f, t, "alltoall pair type"), rc, buf, exp, 2 * in);

  /* alltoallv: (s+k)%2+1 ints from s to its k-th destination, gaps after blocks on both sides. */
  {
    int scounts[MAXN], sdispls[MAXN], rcounts[MAXN], rdispls[MAXN], so = 0, ro = 0;
    for (int k = 0; k < out; ++k) {
      scounts[k] = (me + k) % 2 + 1, sdispls[k] = so;
      for (int j = 0; j < scounts[k]; ++j) sbuf[so + j] = base + 100 * me + 10 * k + j;
      sbuf[so + scounts[k]] = -2;
      so += scounts[k] + 1;
    }
    for (int i = 0; i < in; ++i) {
      int s = t->sources[i], k = s == MPI_PROC_NULL ? 0 : slot_at(t, s);
      rcounts[i] = s == MPI_PROC_NULL ? 2 : (s + k) % 2 + 1, rdispls[i] = ro;
      for (int j = 0; j < rcounts[i]; ++j) exp[ro + j] = s == MPI_PROC_NULL ? -1 : base + 100 * s + 10 * k + j;
      exp[ro + rcounts[i]] = -1;
      ro += rcounts[i] + 1;
    }
    fill(buf, 64, -1);
    rc = c_alltoallv(f, sbuf, scounts, sdispls, MPI_INT, buf, rcounts, rdispls, MPI_INT, t->comm, in, out);
    verify(tlabel(f, t, "alltoallv"), rc, buf, exp, ro);
  }

  /* alltoallw: 2 ints to each destination, as 1 pair_t to odd slots and 2 MPI_INT to even ones,
     received as 2 MPI_INT from odd slots and 1 pair_t from even ones; send blocks in reverse
     order; byte displacements. */
  {
    int scounts[MAXN], rcounts[MAXN];
    MPI_Aint sdispls[MAXN], rdispls[MAXN];
    MPI_Datatype stypes[MAXN], rtypes[MAXN];
    for (int k = 0; k < out; ++k) {
      scounts[k] = k % 2 ? 1 : 2, stypes[k] = k % 2 ? pair_t : MPI_INT;
      sdispls[k] = (MPI_Aint)(out - 1 - k) * 2 * sizeof(int);
      sbuf[2 * (out - 1 - k)] = base + 100 * me + 10 * k, sbuf[2 * (out - 1 - k) + 1] = sbuf[2 * (out - 1 - k)] + 1;
    }
    for (int i = 0; i < in; ++i) {
      int s = t->sources[i];
      rcounts[i] = i % 2 ? 2 : 1, rtypes[i] = i % 2 ? MPI_INT : pair_t;
      rdispls[i] = (MPI_Aint)i * 2 * sizeof(int);
      exp[2 * i] = s == MPI_PROC_NULL ? -1 : base + 100 * s + 10 * slot_at(t, s);
      exp[2 * i + 1] = s == MPI_PROC_NULL ? -1 : exp[2 * i] + 1;
    }
    fill(buf, 2 * MAXN, -1);
#ifdef MPICH
    /* MPICH 4.0.2's int-count MPI_(I)Neighbor_alltoallw(_init) moves no data between ranks whose
       in- and out-degrees differ (its _c forms do): left out there. */
    if (f < F_LARGE && !t->even) return;
#endif
    rc = c_alltoallw(f, sbuf, scounts, sdispls, stypes, buf, rcounts, rdispls, rtypes, t->comm, in, out);
    verify(tlabel(f, t, "alltoallw"), rc, buf, exp, 2 * in);
  }
}

#ifdef HAVE_PERSISTENT
/* Persistent neighbor collectives started several times with new data between the starts. */
static void persistent_restarts(const struct topo* t) {
  int s[2], ag[2 * MAXN], a2a_s[MAXN], a2a_r[MAXN], exp[2 * MAXN], rc;
  MPI_Request req[2];
  rc = PERSISTENT(Neighbor_allgather)(s, 2, MPI_INT, ag, 2, MPI_INT, t->comm, pinfo, &req[0]);
  CHECK(rc == MPI_SUCCESS);
  rc = PERSISTENT(Neighbor_alltoall)(a2a_s, 1, MPI_INT, a2a_r, 1, MPI_INT, t->comm, pinfo, &req[1]);
  CHECK(rc == MPI_SUCCESS);
  for (int round = 0; round < 3; ++round) {
    s[0] = 100 * round + t->rank, s[1] = round;
    for (int k = 0; k < t->outdegree; ++k) a2a_s[k] = 1000 * round + 10 * t->rank + k;
    fill(ag, 2 * MAXN, -1), fill(a2a_r, MAXN, -1);
    for (int i = 0; i < 2 && rc == MPI_SUCCESS; ++i) rc = MPI_Start(&req[i]);
    for (int i = 0; i < 2 && rc == MPI_SUCCESS; ++i) rc = MPI_Wait(&req[i], MPI_STATUS_IGNORE);
    char what[64];
    snprintf(what, sizeof what, "persistent %s round %d allgather", t->name, round);
    for (int i = 0; i < t->indegree; ++i) exp[2 * i] = 100 * round + t->sources[i], exp[2 * i + 1] = round;
    verify(what, rc, ag, exp, 2 * t->indegree);
    snprintf(what, sizeof what, "persistent %s round %d alltoall", t->name, round);
    for (int i = 0; i < t->indegree; ++i) exp[i] = 1000 * round + 10 * t->sources[i] + slot_at(t, t->sources[i]);
    verify(what, rc, a2a_r, exp, t->indegree);
  }
  for (int i = 0; i < 2; ++i) {
    rc = MPI_Request_free(&req[i]);
    CHECK(rc == MPI_SUCCESS && req[i] == MPI_REQUEST_NULL);
  }
}
#endif

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "coll_neighbor"), size, rc;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) {
    SAY("needs 4 ranks, has %d", size);
    ++cov_failures;
    return cov_finish();
  }
  MPI_Type_contiguous(2, MPI_INT, &pair_t);
  MPI_Type_commit(&pair_t);
  MPI_Info_create(&pinfo);
  MPI_Info_set(pinfo, "tsmpi_coverage", "ignored");

  struct topo topos[5] = {{"ring", 1}, {"grid", 1}, {"graph", 1}, {"distgraph-adjacent", 1}, {"distgraph", 0}};
  {
    int dims[1] = {4}, periods[1] = {1};
    rc = MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &topos[0].comm);
    CHECK(rc == MPI_SUCCESS);
  }
  {
    int dims[2] = {2, 2}, periods[2] = {0, 0};
    rc = MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &topos[1].comm);
    CHECK(rc == MPI_SUCCESS);
  }
  {
    const int index[4] = {3, 5, 7, 8}, edges[8] = {1, 2, 3, 0, 2, 0, 1, 0};
    rc = MPI_Graph_create(MPI_COMM_WORLD, 4, index, edges, 0, &topos[2].comm);
    CHECK(rc == MPI_SUCCESS);
  }
  {
    int sources[2] = {(rank + 3) % 4, (rank + 2) % 4}, sweights[2] = {1, 2};
    int dests[2] = {(rank + 1) % 4, (rank + 2) % 4}, dweights[2] = {1, 2};
    rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, sources, sweights, 2, dests, dweights, MPI_INFO_NULL, 0,
                                        &topos[3].comm);
    CHECK(rc == MPI_SUCCESS);
  }
  {
    /* rank 0 names every edge: 0->1, 0->2, 1->2, 1->3, 2->3 */
    const int src[3] = {0, 1, 2}, degrees[3] = {2, 2, 1}, dst[5] = {1, 2, 2, 3, 3}, weights[5] = {1, 1, 1, 1, 1};
    rc = MPI_Dist_graph_create(MPI_COMM_WORLD, rank == 0 ? 3 : 0, src, degrees, dst, weights, MPI_INFO_NULL, 0,
                               &topos[4].comm);
    CHECK(rc == MPI_SUCCESS);
  }
  for (int i = 0; i < 5; ++i) read_topology(&topos[i]);

  for (int f = 0; f < F_COUNT; ++f) {
    if (!form_available(f)) continue;
    SAY("form %s", form_name[f]);
    for (int i = 0; i < 5; ++i) run_form(f, &topos[i]);
  }
#ifdef HAVE_PERSISTENT
  persistent_restarts(&topos[3]);
#endif
  /* Several nonblocking neighbor collectives in flight on two topologies at once. */
  {
    int s = 10 + rank, ring[2], dg[MAXN], a2a_s[2] = {100 * rank, 100 * rank + 1}, a2a_r[2], exp[MAXN];
    MPI_Request req[3];
    fill(ring, 2, -1), fill(dg, MAXN, -1), fill(a2a_r, 2, -1);
    rc = MPI_Ineighbor_allgather(&s, 1, MPI_INT, ring, 1, MPI_INT, topos[0].comm, &req[0]);
    CHECK(rc == MPI_SUCCESS);
    rc = MPI_Ineighbor_allgather(&s, 1, MPI_INT, dg, 1, MPI_INT, topos[3].comm, &req[1]);
    CHECK(rc == MPI_SUCCESS);
    rc = MPI_Ineighbor_alltoall(a2a_s, 1, MPI_INT, a2a_r, 1, MPI_INT, topos[0].comm, &req[2]);
    CHECK(rc == MPI_SUCCESS);
    rc = MPI_Waitall(3, req, MPI_STATUSES_IGNORE);
    exp[0] = 10 + (rank + 3) % 4, exp[1] = 10 + (rank + 1) % 4;
    verify("in flight ring ineighbor_allgather", rc, ring, exp, 2);
    exp[0] = 10 + (rank + 3) % 4, exp[1] = 10 + (rank + 2) % 4;
    verify("in flight distgraph-adjacent ineighbor_allgather", rc, dg, exp, 2);
    exp[0] = 100 * ((rank + 3) % 4) + 1, exp[1] = 100 * ((rank + 1) % 4);
    verify("in flight ring ineighbor_alltoall", rc, a2a_r, exp, 2);
  }
  for (int i = 0; i < 5; ++i) MPI_Comm_free(&topos[i].comm);
  MPI_Info_free(&pinfo);
  MPI_Type_free(&pair_t);
  return cov_finish();
}
