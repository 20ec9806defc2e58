/* Coverage: non-rooted data-movement collectives on an intracommunicator — MPI_Barrier,
   MPI_Allgather, MPI_Allgatherv, MPI_Alltoall, MPI_Alltoallv, MPI_Alltoallw — in every form the
   MPI has: blocking, nonblocking (I*), persistent (MPI_X_init on MPICH 4.0, MPIX_X_init on Open
   MPI 4.1's pcollreq extension) and MPICH's large-count _c forms of all three. Each form runs the
   same cases: MPI_IN_PLACE with the then ignored send arguments passed as NULL / 0 /
   MPI_DATATYPE_NULL, derived datatypes, unequal counts with gaps, a communicator whose rank order
   differs from MPI_COMM_WORLD's; then the same functions on an intercommunicator. Every receive
   buffer is printed and compared. */
// ranks: 4
#include "coll_forms.h"

/* One wrapper per function: the call in form f (MPI_Barrier has no large-count form). */
static int c_barrier(int f, MPI_Comm comm) {
  MPI_Request r;
  switch (f) {
    case F_BLOCKING: return MPI_Barrier(comm);
    case F_NONBLOCKING: return done(MPI_Ibarrier(comm, &r), &r, 0);
#ifdef HAVE_PERSISTENT
    case F_PERSISTENT: return done(PERSISTENT(Barrier)(comm, pinfo, &r), &r, 1);
#endif
  }
  return -1;
}

static int c_allgather(int f, const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt,
                       MPI_Comm comm) {
  MPI_Request r;
  switch (f) {
    case F_BLOCKING: return MPI_Allgather(sb, sc, st, rb, rc, rt, comm);
    case F_NONBLOCKING: return done(MPI_Iallgather(sb, sc, st, rb, rc, rt, comm, &r), &r, 0);
#ifdef HAVE_PERSISTENT
    case F_PERSISTENT: return done(PERSISTENT(Allgather)(sb, sc, st, rb, rc, rt, comm, pinfo, &r), &r, 1);
#endif
#ifdef HAVE_LARGE
    case F_LARGE: return MPI_Allgather_c(sb, sc, st, rb, rc, rt, comm);
    case F_LARGE_NONBLOCKING: return done(MPI_Iallgather_c(sb, sc, st, rb, rc, rt, comm, &r), &r, 0);
    case F_LARGE_PERSISTENT: return done(MPI_Allgather_init_c(sb, sc, st, rb, rc, rt, comm, pinfo, &r), &r, 1);
#endif
  }
  return -1;
}

static int c_allgatherv(int f, const void* sb, int sc, MPI_Datatype st, void* rb, const int* rcs, const int* dis,
                        MPI_Datatype rt, MPI_Comm comm) {
  MPI_Request r;
#ifdef HAVE_LARGE
  int n;
  MPI_Comm_size(comm, &n);
  MPI_Count rcs_c[16];
  MPI_Aint dis_c[16];
  const MPI_Count* rcl = counts_c(rcs, n, rcs_c);
  const MPI_Aint* disl = displs_c(dis, n, dis_c);
#endif
  switch (f) {
    case F_BLOCKING: return MPI_Allgatherv(sb, sc, st, rb, rcs, dis, rt, comm);
    case F_NONBLOCKING: return done(MPI_Iallgatherv(sb, sc, st, rb, rcs, dis, rt, comm, &r), &r, 0);
#ifdef HAVE_PERSISTENT
    case F_PERSISTENT: return done(PERSISTENT(Allgatherv)(sb, sc, st, rb, rcs, dis, rt, comm, pinfo, &r), &r, 1);
#endif
#ifdef HAVE_LARGE
    case F_LARGE: return MPI_Allgatherv_c(sb, sc, st, rb, rcl, disl, rt, comm);
    case F_LARGE_NONBLOCKING: return done(MPI_Iallgatherv_c(sb, sc, st, rb, rcl, disl, rt, comm, &r), &r, 0);
    case F_LARGE_PERSISTENT:
      return done(MPI_Allgatherv_init_c(sb, sc, st, rb, rcl, disl, rt, comm, pinfo, &r), &r, 1);
#endif
  }
  return -1;
}

static int c_alltoall(int f, const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt,
                      MPI_Comm comm) {
  MPI_Request r;
  switch (f) {
    case F_BLOCKING: return MPI_Alltoall(sb, sc, st, rb, rc, rt, comm);
    case F_NONBLOCKING: return done(MPI_Ialltoall(sb, sc, st, rb, rc, rt, comm, &r), &r, 0);
#ifdef HAVE_PERSISTENT
    case F_PERSISTENT: return done(PERSISTENT(Alltoall)(sb, sc, st, rb, rc, rt, comm, pinfo, &r), &r, 1);
#endif
#ifdef HAVE_LARGE
    case F_LARGE: return MPI_Alltoall_c(sb, sc, st, rb, rc, rt, comm);
    case F_LARGE_NONBLOCKING: return done(MPI_Ialltoall_c(sb, sc, st, rb, rc, rt, comm, &r), &r, 0);
    case F_LARGE_PERSISTENT: return done(MPI_Alltoall_init_c(sb, sc, st, rb, rc, rt, comm, pinfo, &r), &r, 1);
#endif
  }
  return -1;
}

static int c_alltoallv(int f, const void* sb, const int* scs, const int* sds, MPI_Datatype st, void* rb,
                       const int* rcs, const int* rds, MPI_Datatype rt, MPI_Comm comm) {
  MPI_Request r;
#ifdef HAVE_LARGE
  int n;
  MPI_Comm_size(comm, &n);
  MPI_Count scs_c[16], rcs_c[16];
  MPI_Aint sds_c[16], rds_c[16];
  const MPI_Count *scl = counts_c(scs, n, scs_c), *rcl = counts_c(rcs, n, rcs_c);
  const MPI_Aint *sdl = displs_c(sds, n, sds_c), *rdl = displs_c(rds, n, rds_c);
#endif
  switch (f) {
    case F_BLOCKING: return MPI_Alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm);
    case F_NONBLOCKING: return done(MPI_Ialltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, &r), &r, 0);
#ifdef HAVE_PERSISTENT
    case F_PERSISTENT:
      return done(PERSISTENT(Alltoallv)(sb, scs, sds, st, rb, rcs, rds, rt, comm, pinfo, &r), &r, 1);
#endif
#ifdef HAVE_LARGE
    case F_LARGE: return MPI_Alltoallv_c(sb, scl, sdl, st, rb, rcl, rdl, rt, comm);
    case F_LARGE_NONBLOCKING: return done(MPI_Ialltoallv_c(sb, scl, sdl, st, rb, rcl, rdl, rt, comm, &r), &r, 0);
    case F_LARGE_PERSISTENT:
      return done(MPI_Alltoallv_init_c(sb, scl, sdl, st, rb, rcl, rdl, rt, comm, pinfo, &r), &r, 1);
#endif
  }
  return -1;
}

/* Displacements in bytes. */
static int c_alltoallw(int f, const void* sb, const int* scs, const int* sds, const MPI_Datatype* sts, void* rb,
                       const int* rcs, const int* rds, const MPI_Datatype* rts, MPI_Comm comm) {
  MPI_Request r;
#ifdef HAVE_LARGE
  int n;
  MPI_Comm_size(comm, &n);
  MPI_Count scs_c[16], rcs_c[16];
  MPI_Aint sds_c[16], rds_c[16];
  const MPI_Count *scl = counts_c(scs, n, scs_c), *rcl = counts_c(rcs, n, rcs_c);
  const MPI_Aint *sdl = displs_c(sds, n, sds_c), *rdl = displs_c(rds, n, rds_c);
#endif
  switch (f) {
    case F_BLOCKING: return MPI_Alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm);
    case F_NONBLOCKING: return done(MPI_Ialltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm, &r), &r, 0);
#ifdef HAVE_PERSISTENT
    case F_PERSISTENT:
      return done(PERSISTENT(Alltoallw)(sb, scs, sds, sts, rb, rcs, rds, rts, comm, pinfo, &r), &r, 1);
#endif
#ifdef HAVE_LARGE
    case F_LARGE: return MPI_Alltoallw_c(sb, scl, sdl, sts, rb, rcl, rdl, rts, comm);
    case F_LARGE_NONBLOCKING:
      return done(MPI_Ialltoallw_c(sb, scl, sdl, sts, rb, rcl, rdl, rts, comm, &r), &r, 0);
    case F_LARGE_PERSISTENT:
      return done(MPI_Alltoallw_init_c(sb, scl, sdl, sts, rb, rcl, rdl, rts, comm, pinfo, &r), &r, 1);
#endif
  }
  return -1;
}

static MPI_Datatype pair_t; /* contiguous 2 ints */

/* Count of ints rank s sends rank d in the alltoallv cases (sym: symmetric, for MPI_IN_PLACE). */
static int cnt_v(int s, int d, int sym) { return sym ? (s + d) % 3 + 1 : (s + 2 * d) % 3 + 1; }

static void run_form(int f, int rank, MPI_Comm comm, MPI_Comm reversed) {
  const int base = 1000 * (f + 1);
  int rc, buf[64], exp[64], sbuf[64];

  if (f < F_LARGE) SAY("%s barrier: rc %d", form_name[f], c_barrier(f, comm));

  /* Allgather: plain, in place, and receiving pairs as one derived type each. */
  sbuf[0] = base + 10 * rank, sbuf[1] = base + 10 * rank + 1;
  for (int i = 0; i < 8; ++i) exp[i] = base + 10 * (i / 2) + i % 2;
  fill(buf, 8, -1);
  rc = c_allgather(f, sbuf, 2, MPI_INT, buf, 2, MPI_INT, comm);
  verify(label(f, "allgather"), rc, buf, exp, 8);
  fill(buf, 8, -1);
  buf[2 * rank] = sbuf[0], buf[2 * rank + 1] = sbuf[1];
  rc = c_allgather(f, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, 2, MPI_INT, comm);
  verify(label(f, "allgather in place"), rc, buf, exp, 8);
  fill(buf, 8, -1);
  rc = c_allgather(f, sbuf, 2, MPI_INT, buf, 1, pair_t, comm);
  verify(label(f, "allgather pair type"), rc, buf, exp, 8);
  /* On a communicator whose ranks are world's in reverse order. */
  sbuf[0] = base + rank;
  fill(buf, 4, -1);
  rc = c_allgather(f, sbuf, 1, MPI_INT, buf, 1, MPI_INT, reversed);
  for (int i = 0; i < 4; ++i) exp[i] = base + 3 - i;
  verify(label(f, "allgather reversed communicator"), rc, buf, exp, 4);

  /* Allgatherv: rank r contributes r+1 ints at displacement displs[r] (gaps stay -1). */
  {
    const int counts[4] = {1, 2, 3, 4}, displs[4] = {0, 2, 5, 9};
    fill(exp, 13, -1);
    for (int r = 0; r < 4; ++r)
      for (int i = 0; i <= r; ++i) exp[displs[r] + i] = base + 10 * r + i;
    for (int i = 0; i <= rank; ++i) sbuf[i] = base + 10 * rank + i;
    fill(buf, 13, -1);
    rc = c_allgatherv(f, sbuf, rank + 1, MPI_INT, buf, counts, displs, MPI_INT, comm);
    verify(label(f, "allgatherv"), rc, buf, exp, 13);
    fill(buf, 13, -1);
    memcpy(buf + displs[rank], sbuf, (rank + 1) * sizeof(int));
    rc = c_allgatherv(f, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, counts, displs, MPI_INT, comm);
    verify(label(f, "allgatherv in place"), rc, buf, exp, 13);
  }

  /* Alltoall: rank r sends {base+100r+10d, +1} to d. */
  for (int d = 0; d < 4; ++d) sbuf[2 * d] = base + 100 * rank + 10 * d, sbuf[2 * d + 1] = sbuf[2 * d] + 1;
  for (int s = 0; s < 4; ++s) exp[2 * s] = base + 100 * s + 10 * rank, exp[2 * s + 1] = exp[2 * s] + 1;
  fill(buf, 8, -1);
  rc = c_alltoall(f, sbuf, 2, MPI_INT, buf, 2, MPI_INT, comm);
  verify(label(f, "alltoall"), rc, buf, exp, 8);
  fill(buf, 8, -1);
  rc = c_alltoall(f, sbuf, 1, pair_t, buf, 2, MPI_INT, comm);
  verify(label(f, "alltoall pair type"), rc, buf, exp, 8);
  memcpy(buf, sbuf, 8 * sizeof(int));
  rc = c_alltoall(f, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, 2, MPI_INT, comm);
  verify(label(f, "alltoall in place"), rc, buf, exp, 8);

  /* Alltoallv: cnt_v(s, d) ints from s to d, one int of gap after each block on both sides. */
  for (int sym = 0; sym < 2; ++sym) {
    int scounts[4], sdispls[4], rcounts[4], rdispls[4], so = 0, ro = 0;
    for (int p = 0; p < 4; ++p) {
      scounts[p] = cnt_v(rank, p, sym), sdispls[p] = so, so += scounts[p] + 1;
      rcounts[p] = cnt_v(p, rank, sym), rdispls[p] = ro, ro += rcounts[p] + 1;
    }
    fill(sbuf, so, -2);
    fill(exp, ro, -1);
    for (int p = 0; p < 4; ++p) {
      for (int i = 0; i < scounts[p]; ++i) sbuf[sdispls[p] + i] = base + 100 * rank + 10 * p + i;
      for (int i = 0; i < rcounts[p]; ++i) exp[rdispls[p] + i] = base + 100 * p + 10 * rank + i;
    }
    if (!sym) {
      fill(buf, ro, -1);
      rc = c_alltoallv(f, sbuf, scounts, sdispls, MPI_INT, buf, rcounts, rdispls, MPI_INT, comm);
      verify(label(f, "alltoallv"), rc, buf, exp, ro);
    } else { /* in place: the send side is the receive buffer's contents (symmetric counts) */
      fill(buf, ro, -1);
      for (int p = 0; p < 4; ++p) memcpy(buf + rdispls[p], sbuf + sdispls[p], scounts[p] * sizeof(int));
      rc = c_alltoallv(f, MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, buf, rcounts, rdispls, MPI_INT, comm);
      verify(label(f, "alltoallv in place"), rc, buf, exp, ro);
    }
  }

  /* Alltoallv with zero counts: only even ranks exchange (one int each way). */
  {
    int counts[4], displs[4];
    for (int p = 0; p < 4; ++p) {
      counts[p] = (rank % 2 || p % 2) ? 0 : 1, displs[p] = p;
      sbuf[p] = base + 100 * rank + p;
      exp[p] = counts[p] ? base + 100 * p + rank : -1;
    }
    fill(buf, 4, -1);
    rc = c_alltoallv(f, sbuf, counts, displs, MPI_INT, buf, counts, displs, MPI_INT, comm);
    verify(label(f, "alltoallv zero counts"), rc, buf, exp, 4);
  }

  /* Alltoallw: 2 ints to each rank, sent as 2 MPI_INT to even ranks and 1 pair_t to odd ones,
     received as 1 pair_t from even ranks and 2 MPI_INT from odd ones; send blocks in reverse
     rank order; byte displacements. */
  {
    int scounts[4], sdispls[4], rcounts[4], rdispls[4];
    MPI_Datatype stypes[4], rtypes[4];
    for (int p = 0; p < 4; ++p) {
      scounts[p] = p % 2 ? 1 : 2, stypes[p] = p % 2 ? pair_t : MPI_INT;
      sdispls[p] = (3 - p) * 2 * (int)sizeof(int);
      rcounts[p] = p % 2 ? 2 : 1, rtypes[p] = p % 2 ? MPI_INT : pair_t;
      rdispls[p] = p * 2 * (int)sizeof(int);
      sbuf[2 * (3 - p)] = base + 100 * rank + 10 * p, sbuf[2 * (3 - p) + 1] = sbuf[2 * (3 - p)] + 1;
      exp[2 * p] = base + 100 * p + 10 * rank, exp[2 * p + 1] = exp[2 * p] + 1;
    }
    fill(buf, 8, -1);
    rc = c_alltoallw(f, sbuf, scounts, sdispls, stypes, buf, rcounts, rdispls, rtypes, comm);
    verify(label(f, "alltoallw"), rc, buf, exp, 8);
    /* in place: send arguments ignored (NULL). 2 MPI_INT from each rank: MPICH 4.0.2's
       nonblocking in-place alltoallw fails with "Message truncated" when the receive types
       differ between ranks (its blocking one does not). */
    for (int p = 0; p < 4; ++p) {
      buf[2 * p] = base + 100 * rank + 10 * p, buf[2 * p + 1] = buf[2 * p] + 1;
      rcounts[p] = 2, rtypes[p] = MPI_INT;
    }
    rc = c_alltoallw(f, MPI_IN_PLACE, NULL, NULL, NULL, buf, rcounts, rdispls, rtypes, comm);
    verify(label(f, "alltoallw in place"), rc, buf, exp, 8);
  }
}

/* The same functions on an intercommunicator between A = world {0,1} and B = world {2,3}: each
   group receives the other group's data. (MPI_IN_PLACE is not defined there.) */
static void run_inter(int f, MPI_Comm inter, int color, int lr) {
  const int base = 1000 * (f + 1), other = 1 - color;
  int rc, buf[16], exp[16], sbuf[16];

  if (f < F_LARGE) SAY("%s intercomm barrier: rc %d", form_name[f], c_barrier(f, inter));

  /* Allgather: 2 ints from each rank of the other group. */
  sbuf[0] = base + 100 * color + 10 * lr, sbuf[1] = sbuf[0] + 1;
  for (int j = 0; j < 2; ++j) exp[2 * j] = base + 100 * other + 10 * j, exp[2 * j + 1] = exp[2 * j] + 1;
  fill(buf, 4, -1);
  rc = c_allgather(f, sbuf, 2, MPI_INT, buf, 2, MPI_INT, inter);
  verify(label(f, "intercomm allgather"), rc, buf, exp, 4);

  /* Allgatherv: rank j of each group sends j+1 ints, received at displacement 2j. */
  {
    const int counts[2] = {1, 2}, displs[2] = {0, 2};
    for (int i = 0; i <= lr; ++i) sbuf[i] = base + 100 * color + 10 * lr + i;
    exp[0] = base + 100 * other, exp[1] = -1, exp[2] = base + 100 * other + 10, exp[3] = exp[2] + 1;
    fill(buf, 4, -1);
    rc = c_allgatherv(f, sbuf, lr + 1, MPI_INT, buf, counts, displs, MPI_INT, inter);
    verify(label(f, "intercomm allgatherv"), rc, buf, exp, 4);
  }

  /* Alltoall: base+100*color+10*lr+j to the other group's rank j. */
  for (int j = 0; j < 2; ++j) sbuf[j] = base + 100 * color + 10 * lr + j, exp[j] = base + 100 * other + 10 * j + lr;
  fill(buf, 2, -1);
  rc = c_alltoall(f, sbuf, 1, MPI_INT, buf, 1, MPI_INT, inter);
  verify(label(f, "intercomm alltoall"), rc, buf, exp, 2);

  /* Alltoallv: (lr+j)%2+1 ints between local rank lr and remote rank j, gap after each block. */
  {
    int scounts[2], sdispls[2], rcounts[2], rdispls[2], so = 0;
    for (int j = 0; j < 2; ++j) {
      scounts[j] = rcounts[j] = (lr + j) % 2 + 1, sdispls[j] = rdispls[j] = so;
      for (int i = 0; i < scounts[j]; ++i) {
        sbuf[so + i] = base + 100 * color + 10 * lr + j + i;
        exp[so + i] = base + 100 * other + 10 * j + lr + i;
      }
      sbuf[so + scounts[j]] = -2, exp[so + scounts[j]] = -1;
      so += scounts[j] + 1;
    }
    fill(buf, so, -1);
    rc = c_alltoallv(f, sbuf, scounts, sdispls, MPI_INT, buf, rcounts, rdispls, MPI_INT, inter);
    verify(label(f, "intercomm alltoallv"), rc, buf, exp, so);
  }

  /* Alltoallw: 2 ints each way, sent as 1 pair_t and received as 2 MPI_INT, blocks reversed. */
  {
    int scounts[2] = {1, 1}, sdispls[2] = {8, 0}, rcounts[2] = {2, 2}, rdispls[2] = {0, 8};
    MPI_Datatype stypes[2] = {pair_t, pair_t}, rtypes[2] = {MPI_INT, MPI_INT};
    for (int j = 0; j < 2; ++j) {
      sbuf[2 * (1 - j)] = base + 100 * color + 10 * lr + j, sbuf[2 * (1 - j) + 1] = sbuf[2 * (1 - j)] + 5;
      exp[2 * j] = base + 100 * other + 10 * j + lr, exp[2 * j + 1] = exp[2 * j] + 5;
    }
    fill(buf, 4, -1);
    rc = c_alltoallw(f, sbuf, scounts, sdispls, stypes, buf, rcounts, rdispls, rtypes, inter);
    verify(label(f, "intercomm alltoallw"), rc, buf, exp, 4);
  }
}

/* Several nonblocking collectives in flight at once, completed by one MPI_Waitall. */
static void nonblocking_in_flight(int rank, MPI_Comm comm) {
  int ag[4], s = 10 + rank, a2a_s[4], a2a_r[4], v_r[4], exp[4], ones[4] = {1, 1, 1, 1}, dis[4] = {0, 1, 2, 3}, rc;
  for (int d = 0; d < 4; ++d) a2a_s[d] = 100 * rank + d;
  fill(ag, 4, -1), fill(a2a_r, 4, -1), fill(v_r, 4, -1);
  MPI_Request req[4];
  rc = MPI_Iallgather(&s, 1, MPI_INT, ag, 1, MPI_INT, comm, &req[0]);
  CHECK(rc == MPI_SUCCESS);
  rc = MPI_Ibarrier(comm, &req[1]);
  CHECK(rc == MPI_SUCCESS);
  rc = MPI_Ialltoall(a2a_s, 1, MPI_INT, a2a_r, 1, MPI_INT, comm, &req[2]);
  CHECK(rc == MPI_SUCCESS);
  rc = MPI_Ialltoallv(a2a_s, ones, dis, MPI_INT, v_r, ones, dis, MPI_INT, comm, &req[3]);
  CHECK(rc == MPI_SUCCESS);
  rc = MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
  for (int i = 0; i < 4; ++i) exp[i] = 10 + i;
  verify("in flight iallgather", rc, ag, exp, 4);
  for (int i = 0; i < 4; ++i) exp[i] = 100 * i + rank;
  verify("in flight ialltoall", rc, a2a_r, exp, 4);
  verify("in flight ialltoallv", rc, v_r, exp, 4);
  SAY("in flight requests null after waitall %d", req[0] == MPI_REQUEST_NULL && req[1] == MPI_REQUEST_NULL &&
                                                      req[2] == MPI_REQUEST_NULL && req[3] == MPI_REQUEST_NULL);
}

#ifdef HAVE_PERSISTENT
/* Persistent collectives started several times with new data between the starts, one by one
   and by MPI_Startall. MPI_Allgather_init is left out here: MPICH 4.0.2's gathers only the
   caller's own block from its second start on (it is started once in run_form). */
static void persistent_restarts(int rank, MPI_Comm comm) {
  int a2a_s[4], a2a_r[4], agv_r[8], s[2], exp[8], rc = MPI_SUCCESS;
  const int counts[4] = {2, 2, 2, 2}, displs[4] = {0, 2, 4, 6};
  MPI_Request req[3];
  rc = PERSISTENT(Alltoall)(a2a_s, 1, MPI_INT, a2a_r, 1, MPI_INT, comm, pinfo, &req[0]);
  CHECK(rc == MPI_SUCCESS);
  rc = PERSISTENT(Allgatherv)(s, 2, MPI_INT, agv_r, counts, displs, MPI_INT, comm, pinfo, &req[1]);
  CHECK(rc == MPI_SUCCESS);
  rc = PERSISTENT(Barrier)(comm, pinfo, &req[2]);
  CHECK(rc == MPI_SUCCESS);
  for (int round = 0; round < 3; ++round) {
    for (int d = 0; d < 4; ++d) a2a_s[d] = 1000 * round + 10 * rank + d;
    s[0] = 100 * round + rank, s[1] = round;
    fill(a2a_r, 4, -1), fill(agv_r, 8, -1);
    if (round == 1) {
      rc = MPI_Startall(3, req);
    } else {
      for (int i = 0; i < 3 && rc == MPI_SUCCESS; ++i) rc = MPI_Start(&req[i]);
    }
    for (int i = 0; i < 3 && rc == MPI_SUCCESS; ++i) rc = MPI_Wait(&req[i], MPI_STATUS_IGNORE);
    char what[64];
    snprintf(what, sizeof what, "persistent round %d alltoall", round);
    for (int i = 0; i < 4; ++i) exp[i] = 1000 * round + 10 * i + rank;
    verify(what, rc, a2a_r, exp, 4);
    snprintf(what, sizeof what, "persistent round %d allgatherv", round);
    for (int i = 0; i < 4; ++i) exp[2 * i] = 100 * round + i, exp[2 * i + 1] = round;
    verify(what, rc, agv_r, exp, 8);
  }
  for (int i = 0; i < 3; ++i) {
    rc = MPI_Request_free(&req[i]);
    CHECK(rc == MPI_SUCCESS && req[i] == MPI_REQUEST_NULL);
  }
}
#endif

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "coll_all"), size;
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
  MPI_Comm reversed;
  MPI_Comm_split(MPI_COMM_WORLD, 0, 3 - rank, &reversed);
  /* The intercommunicator: A = world {0,1}, B = world {2,3}. */
  int color = rank / 2, lr;
  MPI_Comm local, inter;
  MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
  MPI_Comm_rank(local, &lr);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? 0 : 2, 78, &inter);
  for (int f = 0; f < F_COUNT; ++f) {
    if (!form_available(f)) continue;
    SAY("form %s", form_name[f]);
    run_form(f, rank, MPI_COMM_WORLD, reversed);
    run_inter(f, inter, color, lr);
  }
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
  nonblocking_in_flight(rank, MPI_COMM_WORLD);
#ifdef HAVE_PERSISTENT
  persistent_restarts(rank, MPI_COMM_WORLD);
#endif
  MPI_Comm_free(&reversed);
  MPI_Info_free(&pinfo);
  MPI_Type_free(&pair_t);
  return cov_finish();
}
