/* Coverage: rooted collectives — MPI_Bcast, MPI_Gather, MPI_Gatherv,
   MPI_Scatter, MPI_Scatterv, MPI_Reduce — in every form the MPI has: blocking, nonblocking (I*),
   persistent (MPI_X_init on MPICH 4.0, MPIX_X_init on Open MPI 4.1's pcollreq extension), and
   MPICH's large-count _c forms of all three. Each form runs the same cases: roots other than 0,
   MPI_IN_PLACE at the root, derived datatypes, a non-commutative user operation, and on the first
   call of each function the arguments the standard ignores at non-roots passed as NULL / 0 /
   MPI_DATATYPE_NULL there; then the same functions on an intercommunicator (MPI_ROOT,
   MPI_PROC_NULL). Every receive buffer is printed and compared with its expected value. */
// ranks: 4
#include "coll_forms.h"

/* One wrapper per function: the call in form f. */
static int c_bcast(int f, void* buf, int n, MPI_Datatype t, int root, MPI_Comm comm) {
  MPI_Request r;
  switch (f) {
    case F_BLOCKING: return MPI_Bcast(buf, n, t, root, comm);
    case F_NONBLOCKING: return done(MPI_Ibcast(buf, n, t, root, comm, &r), &r, 0);
#ifdef HAVE_PERSISTENT
    case F_PERSISTENT: return done(PERSISTENT(Bcast)(buf, n, t, root, comm, pinfo, &r), &r, 1);
#endif
#ifdef HAVE_LARGE
    case F_LARGE: return MPI_Bcast_c(buf, n, t, root, comm);
    case F_LARGE_NONBLOCKING: return done(MPI_Ibcast_c(buf, n, t, root, comm, &r), &r, 0);
    case F_LARGE_PERSISTENT: return done(MPI_Bcast_init_c(buf, n, t, root, comm, pinfo, &r), &r, 1);
#endif
  }
  return -1;
}

static int c_gather(int f, const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, int root,
                    MPI_Comm comm) {
  MPI_Request r;
  switch (f) {
    case F_BLOCKING: return MPI_Gather(sb, sc, st, rb, rc, rt, root, comm);
    case F_NONBLOCKING: return done(MPI_Igather(sb, sc, st, rb, rc, rt, root, comm, &r), &r, 0);
#ifdef HAVE_PERSISTENT
    case F_PERSISTENT: return done(PERSISTENT(Gather)(sb, sc, st, rb, rc, rt, root, comm, pinfo, &r), &r, 1);
#endif
#ifdef HAVE_LARGE
    case F_LARGE: return MPI_Gather_c(sb, sc, st, rb, rc, rt, root, comm);
    case F_LARGE_NONBLOCKING: return done(MPI_Igather_c(sb, sc, st, rb, rc, rt, root, comm, &r), &r, 0);
    case F_LARGE_PERSISTENT: return done(MPI_Gather_init_c(sb, sc, st, rb, rc, rt, root, comm, pinfo, &r), &r, 1);
#endif
  }
  return -1;
}

static int c_gatherv(int f, const void* sb, int sc, MPI_Datatype st, void* rb, const int* rcs, const int* dis,
                     MPI_Datatype rt, int root, MPI_Comm comm) {
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
    case F_BLOCKING: return MPI_Gatherv(sb, sc, st, rb, rcs, dis, rt, root, comm);
    case F_NONBLOCKING: return done(MPI_Igatherv(sb, sc, st, rb, rcs, dis, rt, root, comm, &r), &r, 0);
#ifdef HAVE_PERSISTENT
    case F_PERSISTENT:
      return done(PERSISTENT(Gatherv)(sb, sc, st, rb, rcs, dis, rt, root, comm, pinfo, &r), &r, 1);
#endif
#ifdef HAVE_LARGE
    case F_LARGE: return MPI_Gatherv_c(sb, sc, st, rb, rcl, disl, rt, root, comm);
    case F_LARGE_NONBLOCKING: return done(MPI_Igatherv_c(sb, sc, st, rb, rcl, disl, rt, root, comm, &r), &r, 0);
    case F_LARGE_PERSISTENT:
      return done(MPI_Gatherv_init_c(sb, sc, st, rb, rcl, disl, rt, root, comm, pinfo, &r), &r, 1);
#endif
  }
  return -1;
}

static int c_scatter(int f, const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, int root,
                     MPI_Comm comm) {
  MPI_Request r;
  switch (f) {
    case F_BLOCKING: return MPI_Scatter(sb, sc, st, rb, rc, rt, root, comm);
    case F_NONBLOCKING: return done(MPI_Iscatter(sb, sc, st, rb, rc, rt, root, comm, &r), &r, 0);
#ifdef HAVE_PERSISTENT
    case F_PERSISTENT: return done(PERSISTENT(Scatter)(sb, sc, st, rb, rc, rt, root, comm, pinfo, &r), &r, 1);
#endif
#ifdef HAVE_LARGE
    case F_LARGE: return MPI_Scatter_c(sb, sc, st, rb, rc, rt, root, comm);
    case F_LARGE_NONBLOCKING: return done(MPI_Iscatter_c(sb, sc, st, rb, rc, rt, root, comm, &r), &r, 0);
    case F_LARGE_PERSISTENT: return done(MPI_Scatter_init_c(sb, sc, st, rb, rc, rt, root, comm, pinfo, &r), &r, 1);
#endif
  }
  return -1;
}

static int c_scatterv(int f, const void* sb, const int* scs, const int* dis, MPI_Datatype st, void* rb, int rc,
                      MPI_Datatype rt, int root, MPI_Comm comm) {
  MPI_Request r;
#ifdef HAVE_LARGE
  int n;
  MPI_Comm_size(comm, &n);
  MPI_Count scs_c[16];
  MPI_Aint dis_c[16];
  const MPI_Count* scl = counts_c(scs, n, scs_c);
  const MPI_Aint* disl = displs_c(dis, n, dis_c);
#endif
  switch (f) {
    case F_BLOCKING: return MPI_Scatterv(sb, scs, dis, st, rb, rc, rt, root, comm);
    case F_NONBLOCKING: return done(MPI_Iscatterv(sb, scs, dis, st, rb, rc, rt, root, comm, &r), &r, 0);
#ifdef HAVE_PERSISTENT
    case F_PERSISTENT:
      return done(PERSISTENT(Scatterv)(sb, scs, dis, st, rb, rc, rt, root, comm, pinfo, &r), &r, 1);
#endif
#ifdef HAVE_LARGE
    case F_LARGE: return MPI_Scatterv_c(sb, scl, disl, st, rb, rc, rt, root, comm);
    case F_LARGE_NONBLOCKING: return done(MPI_Iscatterv_c(sb, scl, disl, st, rb, rc, rt, root, comm, &r), &r, 0);
    case F_LARGE_PERSISTENT:
      return done(MPI_Scatterv_init_c(sb, scl, disl, st, rb, rc, rt, root, comm, pinfo, &r), &r, 1);
#endif
  }
  return -1;
}

static int c_reduce(int f, const void* sb, void* rb, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm) {
  MPI_Request r;
  switch (f) {
    case F_BLOCKING: return MPI_Reduce(sb, rb, n, t, op, root, comm);
    case F_NONBLOCKING: return done(MPI_Ireduce(sb, rb, n, t, op, root, comm, &r), &r, 0);
#ifdef HAVE_PERSISTENT
    case F_PERSISTENT: return done(PERSISTENT(Reduce)(sb, rb, n, t, op, root, comm, pinfo, &r), &r, 1);
#endif
#ifdef HAVE_LARGE
    case F_LARGE: return MPI_Reduce_c(sb, rb, n, t, op, root, comm);
    case F_LARGE_NONBLOCKING: return done(MPI_Ireduce_c(sb, rb, n, t, op, root, comm, &r), &r, 0);
    case F_LARGE_PERSISTENT: return done(MPI_Reduce_init_c(sb, rb, n, t, op, root, comm, pinfo, &r), &r, 1);
#endif
  }
  return -1;
}

/* Non-commutative, associative: concatenation of decimal digit strings held as {value, length}. */
static void concat_fn(void* in, void* inout, int* len, MPI_Datatype* type) {
  const int* a = in;
  int* b = inout;
  (void)type;
  for (int i = 0; i < *len; ++i) {
    int p = 1;
    for (int k = 0; k < b[2 * i + 1]; ++k) p *= 10;
    b[2 * i] = a[2 * i] * p + b[2 * i];
    b[2 * i + 1] = a[2 * i + 1] + b[2 * i + 1];
  }
}

static MPI_Datatype pair_t, vector_t; /* contiguous 2 ints; every other int of 3 */
static MPI_Op concat_op;

static void run_form(int f, int rank, MPI_Comm comm) {
  const int base = 1000 * (f + 1);
  int rc, buf[16], exp[16], sbuf[16];

  /* Bcast: root 2, then root 0 with a strided type. */
  fill(buf, 3, -1);
  if (rank == 2) buf[0] = base + 7, buf[1] = base + 8, buf[2] = base + 9;
  rc = c_bcast(f, buf, 3, MPI_INT, 2, comm);
  exp[0] = base + 7, exp[1] = base + 8, exp[2] = base + 9;
  verify(label(f, "bcast root 2"), rc, buf, exp, 3);

  for (int i = 0; i < 6; ++i) buf[i] = rank == 0 ? base + i : -1, exp[i] = (i % 2 == 0 || rank == 0) ? base + i : -1;
  rc = c_bcast(f, buf, 1, vector_t, 0, comm);
  verify(label(f, "bcast root 0 vector type"), rc, buf, exp, 6);

  /* Bcast: root 1, MPI_BOTTOM with a type of absolute addresses (two separate variables). */
  {
    int x = rank == 1 ? base + 40 : -1, y[2] = {rank == 1 ? base + 41 : -1, rank == 1 ? base + 42 : -1};
    int lens[2] = {1, 2};
    MPI_Aint addr[2];
    MPI_Datatype types[2] = {MPI_INT, MPI_INT}, abs_t;
    MPI_Get_address(&x, &addr[0]);
    MPI_Get_address(y, &addr[1]);
    MPI_Type_create_struct(2, lens, addr, types, &abs_t);
    MPI_Type_commit(&abs_t);
    rc = c_bcast(f, MPI_BOTTOM, 1, abs_t, 1, comm);
    MPI_Type_free(&abs_t);
    int got[3] = {x, y[0], y[1]};
    exp[0] = base + 40, exp[1] = base + 41, exp[2] = base + 42;
    verify(label(f, "bcast root 1 MPI_BOTTOM absolute type"), rc, got, exp, 3);
  }

  /* Gather: root 2 (non-roots pass NULL, 0, MPI_DATATYPE_NULL for the receive side). */
  sbuf[0] = base + 10 * rank, sbuf[1] = base + 10 * rank + 1;
  fill(buf, 8, -1);
  for (int i = 0; i < 8; ++i) exp[i] = base + 10 * (i / 2) + i % 2;
  if (rank == 2) {
    rc = c_gather(f, sbuf, 2, MPI_INT, buf, 2, MPI_INT, 2, comm);
    verify(label(f, "gather root 2"), rc, buf, exp, 8);
  } else {
    rc = c_gather(f, sbuf, 2, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, 2, comm);
    verify(label(f, "gather root 2 (null receive arguments)"), rc, buf, buf, 0);
  }
  /* root 0 with MPI_IN_PLACE (its send arguments ignored: 0, MPI_DATATYPE_NULL). */
  fill(buf, 8, -1);
  fill(exp + 8, 8, -1); /* a non-root's receive buffer stays untouched */
  if (rank == 0) {
    buf[0] = base, buf[1] = base + 1;
    rc = c_gather(f, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, 2, MPI_INT, 0, comm);
    verify(label(f, "gather root 0 in place"), rc, buf, exp, 8);
  } else {
    rc = c_gather(f, sbuf, 2, MPI_INT, buf, 2, MPI_INT, 0, comm);
    verify(label(f, "gather root 0 in place (non-root)"), rc, buf, exp + 8, 8);
  }
  /* root 3 receiving pairs as one derived type each. */
  fill(buf, 8, -1);
  rc = c_gather(f, sbuf, 2, MPI_INT, buf, 1, pair_t, 3, comm);
  if (rank == 3) verify(label(f, "gather root 3 pair type"), rc, buf, exp, 8);
  else verify(label(f, "gather root 3 pair type (non-root)"), rc, buf, exp + 8, 8);

  /* Gatherv: root 1, rank r sends r+1 ints to displacement displs[r] (gaps stay -1). */
  {
    const int counts[4] = {1, 2, 3, 4}, displs[4] = {0, 2, 5, 9};
    for (int i = 0; i <= rank; ++i) sbuf[i] = base + 10 * rank + i;
    fill(exp, 13, -1);
    for (int r = 0; r < 4; ++r)
      for (int i = 0; i <= r; ++i) exp[displs[r] + i] = base + 10 * r + i;
    fill(buf, 13, -1);
    if (rank == 1) {
      rc = c_gatherv(f, sbuf, rank + 1, MPI_INT, buf, counts, displs, MPI_INT, 1, comm);
      verify(label(f, "gatherv root 1"), rc, buf, exp, 13);
    } else {
      rc = c_gatherv(f, sbuf, rank + 1, MPI_INT, NULL, NULL, NULL, MPI_DATATYPE_NULL, 1, comm);
      verify(label(f, "gatherv root 1 (null receive arguments)"), rc, buf, buf, 0);
    }
    /* root 3 in place. */
    fill(buf, 13, -1);
    if (rank == 3) {
      for (int i = 0; i < 4; ++i) buf[displs[3] + i] = base + 30 + i;
      rc = c_gatherv(f, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, counts, displs, MPI_INT, 3, comm);
      verify(label(f, "gatherv root 3 in place"), rc, buf, exp, 13);
    } else {
      rc = c_gatherv(f, sbuf, rank + 1, MPI_INT, buf, counts, displs, MPI_INT, 3, comm);
      verify(label(f, "gatherv root 3 in place (non-root)"), rc, buf, exp + 13, 0);
    }
  }

  /* Scatter: root 2 (non-roots pass NULL, 0, MPI_DATATYPE_NULL for the send side). */
  for (int i = 0; i < 8; ++i) sbuf[i] = base + i;
  exp[0] = base + 2 * rank, exp[1] = base + 2 * rank + 1;
  fill(buf, 2, -1);
  if (rank == 2) rc = c_scatter(f, sbuf, 2, MPI_INT, buf, 2, MPI_INT, 2, comm);
  else rc = c_scatter(f, NULL, 0, MPI_DATATYPE_NULL, buf, 2, MPI_INT, 2, comm);
  verify(label(f, rank == 2 ? "scatter root 2" : "scatter root 2 (null send arguments)"), rc, buf, exp, 2);
  /* root 0 in place (its receive arguments ignored), sending pairs as one derived type each. */
  fill(buf, 2, -1);
  if (rank == 0) {
    rc = c_scatter(f, sbuf, 1, pair_t, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, 0, comm);
    verify(label(f, "scatter root 0 in place pair type"), rc, sbuf, exp, 2);
  } else {
    rc = c_scatter(f, NULL, 0, MPI_DATATYPE_NULL, buf, 2, MPI_INT, 0, comm);
    verify(label(f, "scatter root 0 in place pair type (non-root)"), rc, buf, exp, 2);
  }

  /* Scatterv: root 3, rank r receives r+1 ints from displacement displs[r]. */
  {
    const int counts[4] = {1, 2, 3, 4}, displs[4] = {9, 5, 2, 0};
    for (int i = 0; i < 13; ++i) sbuf[i] = base + i;
    for (int i = 0; i <= rank; ++i) exp[i] = base + displs[rank] + i;
    fill(buf, 4, -1);
    if (rank == 3) rc = c_scatterv(f, sbuf, counts, displs, MPI_INT, buf, 4, MPI_INT, 3, comm);
    else rc = c_scatterv(f, NULL, NULL, NULL, MPI_DATATYPE_NULL, buf, rank + 1, MPI_INT, 3, comm);
    verify(label(f, rank == 3 ? "scatterv root 3" : "scatterv root 3 (null send arguments)"), rc, buf, exp, rank + 1);
    /* root 1 in place. */
    fill(buf, 4, -1);
    if (rank == 1) {
      rc = c_scatterv(f, sbuf, counts, displs, MPI_INT, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, 1, comm);
      verify(label(f, "scatterv root 1 in place"), rc, sbuf + displs[1], exp, 2);
    } else {
      rc = c_scatterv(f, sbuf, counts, displs, MPI_INT, buf, rank + 1, MPI_INT, 1, comm);
      verify(label(f, "scatterv root 1 in place (non-root)"), rc, buf, exp, rank + 1);
    }
  }

  /* Reduce: root 2 sum (non-roots pass a NULL receive buffer). */
  sbuf[0] = base + rank, sbuf[1] = 2 * rank, sbuf[2] = rank * rank;
  fill(buf, 3, -1);
  rc = c_reduce(f, sbuf, rank == 2 ? buf : NULL, 3, MPI_INT, MPI_SUM, 2, comm);
  exp[0] = 4 * base + 6, exp[1] = 12, exp[2] = 14;
  if (rank == 2) verify(label(f, "reduce root 2 sum"), rc, buf, exp, 3);
  else verify(label(f, "reduce root 2 sum (null receive buffer)"), rc, buf, buf, 0);
  /* root 0 in place, max. */
  if (rank == 0) {
    buf[0] = base, buf[1] = base + 30;
    rc = c_reduce(f, MPI_IN_PLACE, buf, 2, MPI_INT, MPI_MAX, 0, comm);
    exp[0] = exp[1] = base + 30;
    verify(label(f, "reduce root 0 in place max"), rc, buf, exp, 2);
  } else {
    sbuf[0] = base + 10 * rank, sbuf[1] = base + 30 - 10 * rank;
    rc = c_reduce(f, sbuf, NULL, 2, MPI_INT, MPI_MAX, 0, comm);
    verify(label(f, "reduce root 0 in place max (non-root)"), rc, buf, buf, 0);
  }
  /* root 1, maxloc on MPI_2INT. */
  sbuf[0] = base + (3 * rank) % 4, sbuf[1] = rank;
  fill(buf, 2, -1);
  rc = c_reduce(f, sbuf, buf, 1, MPI_2INT, MPI_MAXLOC, 1, comm);
  exp[0] = base + 3, exp[1] = 1;
  if (rank == 1) verify(label(f, "reduce root 1 maxloc"), rc, buf, exp, 2);
  else verify(label(f, "reduce root 1 maxloc (non-root)"), rc, buf, buf, 0);
  /* root 3, non-commutative user operation: the ranks' digits in rank order. */
  sbuf[0] = rank + 1, sbuf[1] = 1;
  fill(buf, 2, -1);
  rc = c_reduce(f, sbuf, rank == 3 ? buf : NULL, 1, MPI_2INT, concat_op, 3, comm);
  exp[0] = 1234, exp[1] = 4;
  if (rank == 3) verify(label(f, "reduce root 3 user op"), rc, buf, exp, 2);
  else verify(label(f, "reduce root 3 user op (non-root)"), rc, buf, buf, 0);
}

/* The rooted collectives on an intercommunicator between A = world {0,1} and B = world {2,3}:
   the root passes MPI_ROOT, the other members of its group MPI_PROC_NULL (with the root's
   arguments: Open MPI 4.1 rejects MPI_DATATYPE_NULL there with MPI_ERR_TYPE, and after its
   MPI_Ibcast with count 0 at an MPI_PROC_NULL rank the next nonblocking collective hangs; the
   blocking forms with NULL / 0 there: coll_intercomm_procnull.c), the other group's ignored
   arguments NULL / 0 / MPI_DATATYPE_NULL. */
static void run_inter(int f, MPI_Comm inter, int color, int lr) {
  const int base = 1000 * (f + 1);
  int rc, buf[16], exp[16], sbuf[16];
  const int A = color == 0, B = color == 1;

  /* Bcast from A0 to B. */
  fill(buf, 3, -1);
  if (A && lr == 0) {
    buf[0] = base + 1, buf[1] = base + 2, buf[2] = base + 3;
    rc = c_bcast(f, buf, 3, MPI_INT, MPI_ROOT, inter);
  } else if (A) {
    rc = c_bcast(f, buf, 3, MPI_INT, MPI_PROC_NULL, inter);
  } else {
    rc = c_bcast(f, buf, 3, MPI_INT, 0, inter);
  }
  exp[0] = base + 1, exp[1] = base + 2, exp[2] = base + 3;
  verify(label(f, "intercomm bcast A0 -> B"), rc, buf, exp, A && lr == 1 ? 0 : 3);

  /* Gather from A to B1. */
  sbuf[0] = base + 10 * lr, sbuf[1] = base + 10 * lr + 1;
  fill(buf, 4, -1);
  if (A) rc = c_gather(f, sbuf, 2, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, 1, inter);
  else if (lr == 1) rc = c_gather(f, NULL, 0, MPI_DATATYPE_NULL, buf, 2, MPI_INT, MPI_ROOT, inter);
  else rc = c_gather(f, sbuf, 2, MPI_INT, buf, 2, MPI_INT, MPI_PROC_NULL, inter);
  exp[0] = base, exp[1] = base + 1, exp[2] = base + 10, exp[3] = base + 11;
  verify(label(f, "intercomm gather A -> B1"), rc, buf, exp, B && lr == 1 ? 4 : 0);

  /* Gatherv from B to A0: B's rank r sends r+1 ints to displacement 2r. */
  {
    const int counts[2] = {1, 2}, displs[2] = {0, 2};
    for (int i = 0; i <= lr; ++i) sbuf[i] = base + 100 + 10 * lr + i;
    fill(buf, 4, -1);
    if (B) rc = c_gatherv(f, sbuf, lr + 1, MPI_INT, NULL, NULL, NULL, MPI_DATATYPE_NULL, 0, inter);
    else if (lr == 0) rc = c_gatherv(f, NULL, 0, MPI_DATATYPE_NULL, buf, counts, displs, MPI_INT, MPI_ROOT, inter);
    else rc = c_gatherv(f, sbuf, 1, MPI_INT, buf, counts, displs, MPI_INT, MPI_PROC_NULL, inter);
    exp[0] = base + 100, exp[1] = -1, exp[2] = base + 110, exp[3] = base + 111;
    verify(label(f, "intercomm gatherv B -> A0"), rc, buf, exp, A && lr == 0 ? 4 : 0);
  }

  /* Scatter from A1 to B. */
  for (int i = 0; i < 4; ++i) sbuf[i] = base + 200 + i;
  fill(buf, 2, -1);
  if (B) rc = c_scatter(f, NULL, 0, MPI_DATATYPE_NULL, buf, 2, MPI_INT, 1, inter);
  else if (lr == 1) rc = c_scatter(f, sbuf, 2, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, MPI_ROOT, inter);
  else rc = c_scatter(f, sbuf, 2, MPI_INT, buf, 2, MPI_INT, MPI_PROC_NULL, inter);
  exp[0] = base + 200 + 2 * lr, exp[1] = exp[0] + 1;
  verify(label(f, "intercomm scatter A1 -> B"), rc, buf, exp, B ? 2 : 0);

  /* Scatterv from B0 to A: A's rank 0 gets 2 ints from displacement 1, rank 1 one from 0. */
  {
    const int counts[2] = {2, 1}, displs[2] = {1, 0};
    for (int i = 0; i < 3; ++i) sbuf[i] = base + 300 + i;
    fill(buf, 2, -1);
    if (A) rc = c_scatterv(f, NULL, NULL, NULL, MPI_DATATYPE_NULL, buf, 2 - lr, MPI_INT, 0, inter);
    else if (lr == 0) rc = c_scatterv(f, sbuf, counts, displs, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, MPI_ROOT, inter);
    else rc = c_scatterv(f, sbuf, counts, displs, MPI_INT, buf, 1, MPI_INT, MPI_PROC_NULL, inter);
    exp[0] = base + 300 + (lr ? 0 : 1), exp[1] = base + 302;
    verify(label(f, "intercomm scatterv B0 -> A"), rc, buf, exp, A ? 2 - lr : 0);
  }

  /* Reduce from B to A0: sum, then the non-commutative operation (B's rank order). The root's
     send buffer is not significant, but MPICH 4.0.2 refuses a NULL one ("Null buffer pointer"). */
  sbuf[0] = base + lr, sbuf[1] = lr;
  fill(buf, 2, -1);
  if (B) rc = c_reduce(f, sbuf, NULL, 2, MPI_INT, MPI_SUM, 0, inter);
  else if (lr == 0) rc = c_reduce(f, sbuf, buf, 2, MPI_INT, MPI_SUM, MPI_ROOT, inter);
  else rc = c_reduce(f, sbuf, buf, 2, MPI_INT, MPI_SUM, MPI_PROC_NULL, inter);
  exp[0] = 2 * base + 1, exp[1] = 1;
  verify(label(f, "intercomm reduce sum B -> A0"), rc, buf, exp, A && lr == 0 ? 2 : 0);
  sbuf[0] = lr + 1, sbuf[1] = 1;
  fill(buf, 2, -1);
  if (B) rc = c_reduce(f, sbuf, NULL, 1, MPI_2INT, concat_op, 1, inter);
  else if (lr == 1) rc = c_reduce(f, sbuf, buf, 1, MPI_2INT, concat_op, MPI_ROOT, inter);
  else rc = c_reduce(f, sbuf, buf, 1, MPI_2INT, concat_op, MPI_PROC_NULL, inter);
  exp[0] = 12, exp[1] = 2;
  verify(label(f, "intercomm reduce user op B -> A1"), rc, buf, exp, A && lr == 1 ? 2 : 0);
}

/* Several nonblocking rooted collectives in flight at once, completed by MPI_Waitall and by
   MPI_Test polling. */
static void nonblocking_in_flight(int rank, MPI_Comm comm) {
  int b[3] = {-1, -1, -1}, g[8], s = 100 + rank, sc[2] = {-1, -1}, all[8], red = -1, rc;
  if (rank == 1) b[0] = 5, b[1] = 6, b[2] = 7;
  for (int i = 0; i < 8; ++i) all[i] = 200 + i;
  fill(g, 8, -1);
  MPI_Request req[4];
  rc = MPI_Ibcast(b, 3, MPI_INT, 1, comm, &req[0]);
  CHECK(rc == MPI_SUCCESS);
  rc = MPI_Igather(&s, 1, MPI_INT, g, 1, MPI_INT, 0, comm, &req[1]);
  CHECK(rc == MPI_SUCCESS);
  rc = MPI_Iscatter(all, 2, MPI_INT, sc, 2, MPI_INT, 3, comm, &req[2]);
  CHECK(rc == MPI_SUCCESS);
  rc = MPI_Ireduce(&s, &red, 1, MPI_INT, MPI_SUM, 2, comm, &req[3]);
  CHECK(rc == MPI_SUCCESS);
  MPI_Status st[4];
  rc = MPI_Waitall(4, req, st);
  int exp[8] = {5, 6, 7};
  verify("in flight ibcast", rc, b, exp, 3);
  if (rank == 0) {
    for (int i = 0; i < 4; ++i) exp[i] = 100 + i;
    verify("in flight igather", rc, g, exp, 4);
  }
  exp[0] = 200 + 2 * rank, exp[1] = 201 + 2 * rank;
  verify("in flight iscatter", rc, sc, exp, 2);
  if (rank == 2) {
    exp[0] = 406;
    verify("in flight ireduce", rc, &red, exp, 1);
  }
  /* MPI_Test until complete. */
  MPI_Request r;
  int flag = 0;
  fill(b, 3, rank == 3 ? 9 : -1);
  rc = MPI_Ibcast(b, 3, MPI_INT, 3, comm, &r);
  while (rc == MPI_SUCCESS && !flag) rc = MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
  fill(exp, 3, 9);
  verify("ibcast completed by MPI_Test", rc, b, exp, 3);
  SAY("request after MPI_Test is MPI_REQUEST_NULL %d", r == MPI_REQUEST_NULL);
  /* A derived datatype freed while the collective using it is in flight (allowed: the
     operation completes normally). */
  {
    MPI_Datatype triple;
    MPI_Type_contiguous(3, MPI_INT, &triple);
    MPI_Type_commit(&triple);
    fill(b, 3, rank == 0 ? 11 : -1);
    rc = MPI_Ibcast(b, 1, triple, 0, comm, &r);
    int frc = MPI_Type_free(&triple);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    fill(exp, 3, 11);
    verify("ibcast with its datatype freed before completion", rc, b, exp, 3);
    SAY("type_free rc %d null %d", frc, triple == MPI_DATATYPE_NULL);
  }
  /* MPI_COMM_SELF. */
  {
    int one = 40 + rank, got = -1;
    rc = MPI_Bcast(&one, 1, MPI_INT, 0, MPI_COMM_SELF);
    if (rc == MPI_SUCCESS) rc = MPI_Gather(&one, 1, MPI_INT, &got, 1, MPI_INT, 0, MPI_COMM_SELF);
    if (rc == MPI_SUCCESS) rc = MPI_Ireduce(MPI_IN_PLACE, &got, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_SELF, &r);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    exp[0] = 40 + rank;
    verify("bcast, gather, ireduce on MPI_COMM_SELF", rc, &got, exp, 1);
  }
}

#ifdef HAVE_PERSISTENT
/* Persistent collectives started several times, with new data between starts, one by one and
   together by MPI_Startall. */
static void persistent_restarts(int rank, MPI_Comm comm) {
  int b[2], s[2], red[2], g[8], exp[8], rc;
  MPI_Request req[3];
  rc = PERSISTENT(Bcast)(b, 2, MPI_INT, 1, comm, pinfo, &req[0]);
  CHECK(rc == MPI_SUCCESS);
  rc = PERSISTENT(Reduce)(s, red, 2, MPI_INT, MPI_SUM, 0, comm, pinfo, &req[1]);
  CHECK(rc == MPI_SUCCESS);
  /* MPI_Gatherv_init rather than MPI_Gather_init: MPICH 4.0.2's persistent MPI_Gather reads the
     send buffers when initialized, not when started, and never copies the root's own block (its
     MPI_Scatter_init fails on its second start and MPI_Allgather_init gathers only the caller's
     block from its second start on), so those three are started once, in run_form. */
  const int counts[4] = {2, 2, 2, 2}, displs[4] = {0, 2, 4, 6};
  rc = PERSISTENT(Gatherv)(s, 2, MPI_INT, g, counts, displs, MPI_INT, 3, comm, pinfo, &req[2]);
  CHECK(rc == MPI_SUCCESS);
  for (int round = 0; round < 3; ++round) {
    fill(b, 2, rank == 1 ? 50 + round : -1);
    s[0] = 10 * round + rank, s[1] = round;
    fill(red, 2, -1);
    fill(g, 8, -1);
    char what[64];
    if (round == 0) { /* one by one */
      for (int i = 0; i < 3 && rc == MPI_SUCCESS; ++i) {
        rc = MPI_Start(&req[i]);
        if (rc == MPI_SUCCESS) rc = MPI_Wait(&req[i], MPI_STATUS_IGNORE);
      }
    } else {
      rc = MPI_Startall(3, req); /* MPI_Waitall on active persistent collectives: coll_persistent.c */
      for (int i = 0; i < 3 && rc == MPI_SUCCESS; ++i) rc = MPI_Wait(&req[i], MPI_STATUS_IGNORE);
    }
    snprintf(what, sizeof what, "persistent round %d bcast", round);
    fill(exp, 2, 50 + round);
    verify(what, rc, b, exp, 2);
    if (rank == 0) {
      snprintf(what, sizeof what, "persistent round %d reduce", round);
      exp[0] = 40 * round + 6, exp[1] = 4 * round;
      verify(what, rc, red, exp, 2);
    }
    if (rank == 3) {
      snprintf(what, sizeof what, "persistent round %d gatherv", round);
      for (int i = 0; i < 4; ++i) exp[2 * i] = 10 * round + i, exp[2 * i + 1] = round;
      verify(what, rc, g, exp, 8);
    }
  }
  for (int i = 0; i < 3; ++i) {
    rc = MPI_Request_free(&req[i]);
    CHECK(rc == MPI_SUCCESS && req[i] == MPI_REQUEST_NULL);
  }
}
#endif

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "coll_rooted"), size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) {
    SAY("needs 4 ranks, has %d", size);
    ++cov_failures;
    return cov_finish();
  }
  MPI_Type_contiguous(2, MPI_INT, &pair_t);
  MPI_Type_commit(&pair_t);
  MPI_Type_vector(3, 1, 2, MPI_INT, &vector_t);
  MPI_Type_commit(&vector_t);
  MPI_Op_create(concat_fn, 0, &concat_op);
  MPI_Info_create(&pinfo);
  MPI_Info_set(pinfo, "tsmpi_coverage", "ignored");
  /* The intercommunicator: A = world {0,1}, B = world {2,3}. */
  int color = rank / 2, lr;
  MPI_Comm local, inter;
  MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
  MPI_Comm_rank(local, &lr);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? 0 : 2, 77, &inter);
  for (int f = 0; f < F_COUNT; ++f) {
    if (!form_available(f)) continue;
    SAY("form %s", form_name[f]);
    run_form(f, rank, MPI_COMM_WORLD);
    run_inter(f, inter, color, lr);
  }
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
  nonblocking_in_flight(rank, MPI_COMM_WORLD);
#ifdef HAVE_PERSISTENT
  persistent_restarts(rank, MPI_COMM_WORLD);
#endif
  MPI_Info_free(&pinfo);
  MPI_Op_free(&concat_op);
  MPI_Type_free(&vector_t);
  MPI_Type_free(&pair_t);
  return cov_finish();
}
