/* Coverage: reductions on an intracommunicator — MPI_Allreduce, MPI_Reduce_scatter,
   MPI_Reduce_scatter_block, MPI_Scan, MPI_Exscan (MPI_Reduce is in coll_rooted.c) — in every
   form the MPI has: blocking, nonblocking (I*), persistent (MPI_X_init on MPICH 4.0, MPIX_X_init
   on Open MPI 4.1's pcollreq extension) and MPICH's large-count _c forms of all three. Each form
   runs the same cases: predefined operations on several types (MAXLOC/MINLOC pairs, bitwise),
   MPI_IN_PLACE, a non-commutative user operation whose result shows the order of the ranks, and a
   communicator whose rank order differs from MPI_COMM_WORLD's; then MPI_Allreduce and the
   reduce-scatters on an intercommunicator. Every receive buffer is printed and compared. */
// ranks: 4
#include "coll_forms.h"

/* One wrapper per function: the call in form f. */
static int c_allreduce(int f, const void* sb, void* rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  MPI_Request r;
  switch (f) {
    case F_BLOCKING: return MPI_Allreduce(sb, rb, n, t, op, comm);
    case F_NONBLOCKING: return done(MPI_Iallreduce(sb, rb, n, t, op, comm, &r), &r, 0);
#ifdef HAVE_PERSISTENT
    case F_PERSISTENT: return done(PERSISTENT(Allreduce)(sb, rb, n, t, op, comm, pinfo, &r), &r, 1);
#endif
#ifdef HAVE_LARGE
    case F_LARGE: return MPI_Allreduce_c(sb, rb, n, t, op, comm);
    case F_LARGE_NONBLOCKING: return done(MPI_Iallreduce_c(sb, rb, n, t, op, comm, &r), &r, 0);
    case F_LARGE_PERSISTENT: return done(MPI_Allreduce_init_c(sb, rb, n, t, op, comm, pinfo, &r), &r, 1);
#endif
  }
  return -1;
}

static int c_reduce_scatter(int f, const void* sb, void* rb, const int* rcs, MPI_Datatype t, MPI_Op op,
                            MPI_Comm comm) {
  MPI_Request r;
#ifdef HAVE_LARGE
  int n;
  MPI_Comm_size(comm, &n);
  MPI_Count rcs_c[16];
  const MPI_Count* rcl = counts_c(rcs, n, rcs_c);
#endif
  switch (f) {
    case F_BLOCKING: return MPI_Reduce_scatter(sb, rb, rcs, t, op, comm);
    case F_NONBLOCKING: return done(MPI_Ireduce_scatter(sb, rb, rcs, t, op, comm, &r), &r, 0);
#ifdef HAVE_PERSISTENT
    case F_PERSISTENT: return done(PERSISTENT(Reduce_scatter)(sb, rb, rcs, t, op, comm, pinfo, &r), &r, 1);
#endif
#ifdef HAVE_LARGE
    case F_LARGE: return MPI_Reduce_scatter_c(sb, rb, rcl, t, op, comm);
    case F_LARGE_NONBLOCKING: return done(MPI_Ireduce_scatter_c(sb, rb, rcl, t, op, comm, &r), &r, 0);
    case F_LARGE_PERSISTENT: return done(MPI_Reduce_scatter_init_c(sb, rb, rcl, t, op, comm, pinfo, &r), &r, 1);
#endif
  }
  return -1;
}

static int c_reduce_scatter_block(int f, const void* sb, void* rb, int n, MPI_Datatype t, MPI_Op op,
                                  MPI_Comm comm) {
  MPI_Request r;
  switch (f) {
    case F_BLOCKING: return MPI_Reduce_scatter_block(sb, rb, n, t, op, comm);
    case F_NONBLOCKING: return done(MPI_Ireduce_scatter_block(sb, rb, n, t, op, comm, &r), &r, 0);
#ifdef HAVE_PERSISTENT
    case F_PERSISTENT:
      return done(PERSISTENT(Reduce_scatter_block)(sb, rb, n, t, op, comm, pinfo, &r), &r, 1);
#endif
#ifdef HAVE_LARGE
    case F_LARGE: return MPI_Reduce_scatter_block_c(sb, rb, n, t, op, comm);
    case F_LARGE_NONBLOCKING: return done(MPI_Ireduce_scatter_block_c(sb, rb, n, t, op, comm, &r), &r, 0);
    case F_LARGE_PERSISTENT:
      return done(MPI_Reduce_scatter_block_init_c(sb, rb, n, t, op, comm, pinfo, &r), &r, 1);
#endif
  }
  return -1;
}

static int c_scan(int f, const void* sb, void* rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  MPI_Request r;
  switch (f) {
    case F_BLOCKING: return MPI_Scan(sb, rb, n, t, op, comm);
    case F_NONBLOCKING: return done(MPI_Iscan(sb, rb, n, t, op, comm, &r), &r, 0);
#ifdef HAVE_PERSISTENT
    case F_PERSISTENT: return done(PERSISTENT(Scan)(sb, rb, n, t, op, comm, pinfo, &r), &r, 1);
#endif
#ifdef HAVE_LARGE
    case F_LARGE: return MPI_Scan_c(sb, rb, n, t, op, comm);
    case F_LARGE_NONBLOCKING: return done(MPI_Iscan_c(sb, rb, n, t, op, comm, &r), &r, 0);
    case F_LARGE_PERSISTENT: return done(MPI_Scan_init_c(sb, rb, n, t, op, comm, pinfo, &r), &r, 1);
#endif
  }
  return -1;
}

static int c_exscan(int f, const void* sb, void* rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  MPI_Request r;
  switch (f) {
    case F_BLOCKING: return MPI_Exscan(sb, rb, n, t, op, comm);
    case F_NONBLOCKING: return done(MPI_Iexscan(sb, rb, n, t, op, comm, &r), &r, 0);
#ifdef HAVE_PERSISTENT
    case F_PERSISTENT: return done(PERSISTENT(Exscan)(sb, rb, n, t, op, comm, pinfo, &r), &r, 1);
#endif
#ifdef HAVE_LARGE
    case F_LARGE: return MPI_Exscan_c(sb, rb, n, t, op, comm);
    case F_LARGE_NONBLOCKING: return done(MPI_Iexscan_c(sb, rb, n, t, op, comm, &r), &r, 0);
    case F_LARGE_PERSISTENT: return done(MPI_Exscan_init_c(sb, rb, n, t, op, comm, pinfo, &r), &r, 1);
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
static MPI_Op concat_op;

/* The digits 1..n as a number: 1, 12, 123, 1234. */
static int digits(int n) {
  int v = 0;
  for (int i = 1; i <= n; ++i) v = 10 * v + i;
  return v;
}

static void run_form(int f, int rank, MPI_Comm comm, MPI_Comm reversed, MPI_Comm three) {
  const int base = 1000 * (f + 1);
  int rc, buf[64], exp[64], sbuf[64];

  /* Allreduce: sum, in-place product, minloc on MPI_DOUBLE_INT, bitwise or/and on unsigned,
     the user operation on MPI_COMM_WORLD and on the reversed communicator. */
  sbuf[0] = base + rank, sbuf[1] = rank, sbuf[2] = 2 * rank, sbuf[3] = rank * rank;
  fill(buf, 4, -1);
  rc = c_allreduce(f, sbuf, buf, 4, MPI_INT, MPI_SUM, comm);
  exp[0] = 4 * base + 6, exp[1] = 6, exp[2] = 12, exp[3] = 14;
  verify(label(f, "allreduce sum"), rc, buf, exp, 4);
  buf[0] = rank + 1, buf[1] = 2;
  rc = c_allreduce(f, MPI_IN_PLACE, buf, 2, MPI_INT, MPI_PROD, comm);
  exp[0] = 24, exp[1] = 16;
  verify(label(f, "allreduce in place prod"), rc, buf, exp, 2);
  {
    struct { double v; int i; } in = {10.5 - rank % 3, rank}, out = {-1, -1};
    rc = c_allreduce(f, &in, &out, 1, MPI_DOUBLE_INT, MPI_MINLOC, comm);
    int got[2] = {(int)(out.v * 10), out.i};
    exp[0] = 85, exp[1] = 2;
    verify(label(f, "allreduce minloc double_int (value x10, rank)"), rc, got, exp, 2);
  }
  {
    unsigned in[2] = {1u << rank, 0xF0u | (1u << rank)}, out[2] = {0, 0};
    rc = c_allreduce(f, in, out, 1, MPI_UNSIGNED, MPI_BOR, comm);
    if (rc == MPI_SUCCESS) rc = c_allreduce(f, in + 1, out + 1, 1, MPI_UNSIGNED, MPI_BAND, comm);
    int got[2] = {(int)out[0], (int)out[1]};
    exp[0] = 15, exp[1] = 0xF0;
    verify(label(f, "allreduce bor band"), rc, got, exp, 2);
  }
  sbuf[0] = rank + 1, sbuf[1] = 1;
  fill(buf, 2, -1);
  rc = c_allreduce(f, sbuf, buf, 1, MPI_2INT, concat_op, comm);
  exp[0] = 1234, exp[1] = 4;
  verify(label(f, "allreduce user op"), rc, buf, exp, 2);
  fill(buf, 2, -1);
  rc = c_allreduce(f, sbuf, buf, 1, MPI_2INT, concat_op, reversed);
  exp[0] = 4321, exp[1] = 4;
  verify(label(f, "allreduce user op reversed communicator"), rc, buf, exp, 2);

  /* Reduce_scatter: counts {1,2,1,2}; sum, in place, user operation. */
  {
    const int counts[4] = {1, 2, 1, 2}, offset[4] = {0, 1, 3, 4};
    for (int i = 0; i < 6; ++i) sbuf[i] = base + 10 * rank + i;
    for (int i = 0; i < counts[rank]; ++i) exp[i] = 4 * base + 60 + 4 * (offset[rank] + i);
    fill(buf, 6, -1);
    rc = c_reduce_scatter(f, sbuf, buf, counts, MPI_INT, MPI_SUM, comm);
    verify(label(f, "reduce_scatter sum"), rc, buf, exp, counts[rank]);
    memcpy(buf, sbuf, 6 * sizeof(int));
    rc = c_reduce_scatter(f, MPI_IN_PLACE, buf, counts, MPI_INT, MPI_SUM, comm);
    verify(label(f, "reduce_scatter in place sum"), rc, buf, exp, counts[rank]);
    for (int i = 0; i < 6; ++i) sbuf[2 * i] = rank + 1, sbuf[2 * i + 1] = 1;
    for (int i = 0; i < counts[rank]; ++i) exp[2 * i] = 1234, exp[2 * i + 1] = 4;
    fill(buf, 12, -1);
    rc = c_reduce_scatter(f, sbuf, buf, counts, MPI_2INT, concat_op, comm);
    verify(label(f, "reduce_scatter user op"), rc, buf, exp, 2 * counts[rank]);
  }

  /* Reduce_scatter with zero counts at ranks 0 and 2. */
  {
    const int counts[4] = {0, 3, 0, 3};
    for (int i = 0; i < 6; ++i) sbuf[i] = base + 10 * rank + i;
    int first = rank == 1 ? 0 : 3;
    for (int i = 0; i < counts[rank]; ++i) exp[i] = 4 * base + 60 + 4 * (first + i);
    fill(buf, 3, -1);
    rc = c_reduce_scatter(f, sbuf, buf, counts, MPI_INT, MPI_SUM, comm);
    fill(exp + counts[rank], 3 - counts[rank], -1);
    verify(label(f, "reduce_scatter zero counts"), rc, buf, exp, 3);
  }

  /* Reduce_scatter_block: 2 per rank; max, in place sum. */
  for (int i = 0; i < 8; ++i) sbuf[i] = base + ((rank + i) % 4) * 10 + i;
  for (int i = 0; i < 2; ++i) exp[i] = base + 30 + 2 * rank + i;
  fill(buf, 8, -1);
  rc = c_reduce_scatter_block(f, sbuf, buf, 2, MPI_INT, MPI_MAX, comm);
  verify(label(f, "reduce_scatter_block max"), rc, buf, exp, 2);
  memcpy(buf, sbuf, 8 * sizeof(int));
  for (int i = 0; i < 2; ++i) exp[i] = 4 * base + 60 + 4 * (2 * rank + i);
  rc = c_reduce_scatter_block(f, MPI_IN_PLACE, buf, 2, MPI_INT, MPI_SUM, comm);
  verify(label(f, "reduce_scatter_block in place sum"), rc, buf, exp, 2);

  /* Scan: sum, in place, user operation (prefix in rank order). */
  sbuf[0] = base + rank, sbuf[1] = rank;
  exp[0] = (rank + 1) * base + rank * (rank + 1) / 2, exp[1] = rank * (rank + 1) / 2;
  fill(buf, 2, -1);
  rc = c_scan(f, sbuf, buf, 2, MPI_INT, MPI_SUM, comm);
  verify(label(f, "scan sum"), rc, buf, exp, 2);
  memcpy(buf, sbuf, 2 * sizeof(int));
  rc = c_scan(f, MPI_IN_PLACE, buf, 2, MPI_INT, MPI_SUM, comm);
  verify(label(f, "scan in place sum"), rc, buf, exp, 2);
  sbuf[0] = rank + 1, sbuf[1] = 1;
  fill(buf, 2, -1);
  rc = c_scan(f, sbuf, buf, 1, MPI_2INT, concat_op, comm);
  exp[0] = digits(rank + 1), exp[1] = rank + 1;
  verify(label(f, "scan user op"), rc, buf, exp, 2);

  /* Exscan: sum, in place, user operation; rank 0's receive buffer is undefined (not checked). */
  sbuf[0] = base + rank, sbuf[1] = rank;
  exp[0] = rank * base + rank * (rank - 1) / 2, exp[1] = rank * (rank - 1) / 2;
  fill(buf, 2, -1);
  rc = c_exscan(f, sbuf, buf, 2, MPI_INT, MPI_SUM, comm);
  verify(label(f, "exscan sum"), rc, buf, exp, rank ? 2 : 0);
  memcpy(buf, sbuf, 2 * sizeof(int));
  rc = c_exscan(f, MPI_IN_PLACE, buf, 2, MPI_INT, MPI_SUM, comm);
  verify(label(f, "exscan in place sum"), rc, buf, exp, rank ? 2 : 0);
  sbuf[0] = rank + 1, sbuf[1] = 1;
  fill(buf, 2, -1);
  rc = c_exscan(f, sbuf, buf, 1, MPI_2INT, concat_op, comm);
  exp[0] = digits(rank), exp[1] = rank;
  verify(label(f, "exscan user op"), rc, buf, exp, rank ? 2 : 0);

  /* The user operation on a communicator of 3 ranks (not a power of two); rank 3 is not in it. */
  if (three != MPI_COMM_NULL) {
    int in[2] = {rank + 1, 1}, ar[2] = {-1, -1}, sc[2] = {-1, -1};
    rc = c_allreduce(f, in, ar, 1, MPI_2INT, concat_op, three);
    if (rc == MPI_SUCCESS) rc = c_scan(f, in, sc, 1, MPI_2INT, concat_op, three);
    int got[2] = {ar[0], sc[0]};
    exp[0] = 123, exp[1] = digits(rank + 1);
    verify(label(f, "allreduce, scan user op on 3 ranks"), rc, got, exp, 2);
  }
}

/* Allreduce and the reduce-scatters on an intercommunicator between A = world {0,1} and
   B = world {2,3}: each group receives the reduction of the other group's data. */
static void run_inter(int f, MPI_Comm inter, int color, int lr) {
  const int base = 1000 * (f + 1), other = 1 - color;
  int rc, buf[16], exp[16], sbuf[16];

  sbuf[0] = base + 100 * color + lr, sbuf[1] = lr;
  exp[0] = 2 * base + 200 * other + 1, exp[1] = 1;
  fill(buf, 2, -1);
  rc = c_allreduce(f, sbuf, buf, 2, MPI_INT, MPI_SUM, inter);
  verify(label(f, "intercomm allreduce sum"), rc, buf, exp, 2);
  sbuf[0] = 2 * color + lr + 1, sbuf[1] = 1;
  exp[0] = other ? 34 : 12, exp[1] = 2;
  fill(buf, 2, -1);
  rc = c_allreduce(f, sbuf, buf, 1, MPI_2INT, concat_op, inter);
  verify(label(f, "intercomm allreduce user op"), rc, buf, exp, 2);

  /* Reduce_scatter_block: 1 int per local rank. */
  for (int i = 0; i < 2; ++i) sbuf[i] = base + 100 * color + 10 * lr + i;
  exp[0] = 2 * base + 200 * other + 10 + 2 * lr;
  fill(buf, 1, -1);
  rc = c_reduce_scatter_block(f, sbuf, buf, 1, MPI_INT, MPI_SUM, inter);
  verify(label(f, "intercomm reduce_scatter_block"), rc, buf, exp, 1);

  /* Reduce_scatter: A scatters {1,2}, B {2,1}; 3 ints from everyone. */
  {
    const int counts_a[2] = {1, 2}, counts_b[2] = {2, 1};
    const int* counts = color ? counts_b : counts_a;
    int first = lr ? counts[0] : 0;
    for (int i = 0; i < 3; ++i) sbuf[i] = base + 100 * color + 10 * lr + i;
    for (int i = 0; i < counts[lr]; ++i) exp[i] = 2 * base + 200 * other + 10 + 2 * (first + i);
    fill(buf, 3, -1);
    rc = c_reduce_scatter(f, sbuf, buf, counts, MPI_INT, MPI_SUM, inter);
    verify(label(f, "intercomm reduce_scatter"), rc, buf, exp, counts[lr]);
  }
}

/* Several nonblocking reductions in flight at once, completed by one MPI_Waitall. */
static void nonblocking_in_flight(int rank, MPI_Comm comm) {
  int s[4] = {rank, rank + 1, rank + 2, rank + 3}, ar[4], sc, ex = -1, rs[2], rsb, exp[4], rc;
  const int counts[4] = {1, 1, 1, 1};
  fill(ar, 4, -1);
  MPI_Request req[5];
  rc = MPI_Iallreduce(s, ar, 4, MPI_INT, MPI_SUM, comm, &req[0]);
  CHECK(rc == MPI_SUCCESS);
  rc = MPI_Iscan(s, &sc, 1, MPI_INT, MPI_SUM, comm, &req[1]);
  CHECK(rc == MPI_SUCCESS);
  rc = MPI_Iexscan(s, &ex, 1, MPI_INT, MPI_SUM, comm, &req[2]);
  CHECK(rc == MPI_SUCCESS);
  rc = MPI_Ireduce_scatter(s, rs, counts, MPI_INT, MPI_MAX, comm, &req[3]);
  CHECK(rc == MPI_SUCCESS);
  rc = MPI_Ireduce_scatter_block(s, &rsb, 1, MPI_INT, MPI_MIN, comm, &req[4]);
  CHECK(rc == MPI_SUCCESS);
  rc = MPI_Waitall(5, req, MPI_STATUSES_IGNORE);
  for (int i = 0; i < 4; ++i) exp[i] = 6 + 4 * i;
  verify("in flight iallreduce", rc, ar, exp, 4);
  exp[0] = rank * (rank + 1) / 2;
  verify("in flight iscan", rc, &sc, exp, 1);
  exp[0] = rank * (rank - 1) / 2;
  verify("in flight iexscan", rc, &ex, exp, rank ? 1 : 0);
  exp[0] = 3 + rank;
  verify("in flight ireduce_scatter", rc, rs, exp, 1);
  exp[0] = rank;
  verify("in flight ireduce_scatter_block", rc, &rsb, exp, 1);
  /* A user operation freed while the reduction using it is in flight (allowed: the operation
     completes normally). */
  {
    MPI_Op op;
    int in[2] = {rank + 1, 1}, out[2] = {-1, -1};
    MPI_Op_create(concat_fn, 0, &op);
    rc = MPI_Iallreduce(in, out, 1, MPI_2INT, op, comm, &req[0]);
    int frc = MPI_Op_free(&op);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&req[0], MPI_STATUS_IGNORE);
    exp[0] = 1234, exp[1] = 4;
    verify("iallreduce with its user op freed before completion", rc, out, exp, 2);
    SAY("op_free rc %d null %d", frc, op == MPI_OP_NULL);
  }
  /* Count 0 with NULL buffers, and reductions on MPI_COMM_SELF. */
  rc = MPI_Allreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, comm);
  SAY("allreduce count 0 NULL buffers: rc %d", rc);
  {
    int in = 5 + rank, out = -1, sc = -1;
    rc = MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_SELF);
    if (rc == MPI_SUCCESS) rc = MPI_Scan(&in, &sc, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
    exp[0] = 5 + rank, exp[1] = 5 + rank;
    int got[2] = {out, sc};
    verify("allreduce, scan on MPI_COMM_SELF", rc, got, exp, 2);
  }
}

#ifdef HAVE_PERSISTENT
/* Persistent reductions started several times with new data between the starts. */
static void persistent_restarts(int rank, MPI_Comm comm) {
  int s[4], ar[4], sc[2], rsb[1], exp[4], rc = MPI_SUCCESS;
  MPI_Request req[3];
  rc = PERSISTENT(Allreduce)(MPI_IN_PLACE, ar, 4, MPI_INT, MPI_SUM, comm, pinfo, &req[0]);
  CHECK(rc == MPI_SUCCESS);
  rc = PERSISTENT(Scan)(s, sc, 2, MPI_INT, MPI_MAX, comm, pinfo, &req[1]);
  CHECK(rc == MPI_SUCCESS);
  rc = PERSISTENT(Reduce_scatter_block)(s, rsb, 1, MPI_INT, MPI_SUM, comm, pinfo, &req[2]);
  CHECK(rc == MPI_SUCCESS);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 4; ++i) s[i] = 100 * round + 10 * rank + i, ar[i] = round + rank + i;
    fill(sc, 2, -1), fill(rsb, 1, -1);
    for (int i = 0; i < 3 && rc == MPI_SUCCESS; ++i) {
      rc = MPI_Start(&req[i]);
      if (rc == MPI_SUCCESS) rc = MPI_Wait(&req[i], MPI_STATUS_IGNORE);
    }
    char what[64];
    snprintf(what, sizeof what, "persistent round %d allreduce in place", round);
    for (int i = 0; i < 4; ++i) exp[i] = 4 * round + 6 + 4 * i;
    verify(what, rc, ar, exp, 4);
    snprintf(what, sizeof what, "persistent round %d scan max", round);
    exp[0] = 100 * round + 10 * rank, exp[1] = exp[0] + 1;
    verify(what, rc, sc, exp, 2);
    snprintf(what, sizeof what, "persistent round %d reduce_scatter_block", round);
    exp[0] = 400 * round + 60 + 4 * rank;
    verify(what, rc, rsb, exp, 1);
  }
  for (int i = 0; i < 3; ++i) {
    rc = MPI_Request_free(&req[i]);
    CHECK(rc == MPI_SUCCESS && req[i] == MPI_REQUEST_NULL);
  }
}
#endif

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "coll_reduce"), size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) {
    SAY("needs 4 ranks, has %d", size);
    ++cov_failures;
    return cov_finish();
  }
  MPI_Op_create(concat_fn, 0, &concat_op);
  MPI_Info_create(&pinfo);
  MPI_Info_set(pinfo, "tsmpi_coverage", "ignored");
  MPI_Comm reversed, three;
  MPI_Comm_split(MPI_COMM_WORLD, 0, 3 - rank, &reversed);
  MPI_Comm_split(MPI_COMM_WORLD, rank < 3 ? 0 : MPI_UNDEFINED, rank, &three);
  /* The intercommunicator: A = world {0,1}, B = world {2,3}. */
  int color = rank / 2, lr;
  MPI_Comm local, inter;
  MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
  MPI_Comm_rank(local, &lr);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? 0 : 2, 79, &inter);
  for (int f = 0; f < F_COUNT; ++f) {
    if (!form_available(f)) continue;
    SAY("form %s", form_name[f]);
    run_form(f, rank, MPI_COMM_WORLD, reversed, three);
    run_inter(f, inter, color, lr);
  }
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
  nonblocking_in_flight(rank, MPI_COMM_WORLD);
#ifdef HAVE_PERSISTENT
  persistent_restarts(rank, MPI_COMM_WORLD);
#endif
  MPI_Comm_free(&reversed);
  if (three != MPI_COMM_NULL) MPI_Comm_free(&three);
  MPI_Info_free(&pinfo);
  MPI_Op_free(&concat_op);
  return cov_finish();
}
