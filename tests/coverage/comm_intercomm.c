/* Coverage: intercommunicators. Intercomm_create (equal and unequal halves, peer communicator a
   duplicate of world), Comm_test_inter, Comm_remote_size, Comm_remote_group (translated to world
   ranks), point-to-point and collectives across, Intercomm_merge with both orders, Comm_dup,
   Comm_idup and Comm_split of an intercommunicator, Comm_compare. */
// ranks: 4
#include "coverage.h"

static int wrank;

static const char* cmp_name(int r) {
  switch (r) {
    case MPI_IDENT: return "IDENT";
    case MPI_CONGRUENT: return "CONGRUENT";
    case MPI_SIMILAR: return "SIMILAR";
    case MPI_UNEQUAL: return "UNEQUAL";
  }
  return "?";
}

static void members(char* text, size_t cap, MPI_Group g) {
  MPI_Group world;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int n = 0, in[8], out[8];
  MPI_Group_size(g, &n);
  for (int i = 0; i < n; ++i) in[i] = i;
  MPI_Group_translate_ranks(g, n, in, world, out);
  int k = 0;
  text[0] = 0;
  for (int i = 0; i < n; ++i) k += snprintf(text + k, cap - k, i ? " %d" : "%d", out[i]);
  MPI_Group_free(&world);
}

/* Sizes, ranks, both groups, and an exchange: each process sends its world rank to the remote
   process of the same local rank (if any), and an Allreduce sums the remote group's world ranks. */
static void describe(const char* what, MPI_Comm inter) {
  int flag = -1, size = -1, rsize = -1, rank = -1;
  MPI_Comm_test_inter(inter, &flag);
  MPI_Comm_size(inter, &size);
  MPI_Comm_remote_size(inter, &rsize);
  MPI_Comm_rank(inter, &rank);
  MPI_Group local, remote;
  MPI_Comm_group(inter, &local);
  int rc = MPI_Comm_remote_group(inter, &remote);
  CHECK(rc == MPI_SUCCESS);
  char lt[64], rt[64];
  members(lt, sizeof lt, local);
  members(rt, sizeof rt, remote);
  int grsize = -1, grrank = -2;
  MPI_Group_size(remote, &grsize);
  MPI_Group_rank(remote, &grrank);
  MPI_Group_free(&local);
  MPI_Group_free(&remote);
  int got = -1;
  MPI_Request reqs[2];
  int n = 0;
  if (rank < rsize) {
    MPI_Irecv(&got, 1, MPI_INT, rank, 5, inter, &reqs[n++]);
    MPI_Isend(&wrank, 1, MPI_INT, rank, 5, inter, &reqs[n++]);
  }
  MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
  int sum = -1;
  MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, inter);
  SAY("%s: inter %d size %d remote size %d rank %d local [%s] remote [%s] (group size %d, rank in "
      "it undefined %d), got %d, allreduce %d",
      what, flag, size, rsize, rank, lt, rt, grsize, grrank == MPI_UNDEFINED, got, sum);
}

int main(int argc, char** argv) {
  wrank = cov_init(&argc, &argv, "comm_intercomm");
  int rc, cmp;

  /* Halves by parity: evens {0,2} and odds {1,3}; leaders world ranks 0 and 1. */
  MPI_Comm half, inter;
  MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &half);
  rc = MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, wrank % 2 ? 0 : 1, 11, &inter);
  CHECK(rc == MPI_SUCCESS);
  describe("parity", inter);

  /* A broadcast from the odd side's rank 0 to the even side. */
  int value = wrank == 1 ? 4242 : -1;
  int root = wrank % 2 ? (wrank == 1 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  MPI_Bcast(&value, 1, MPI_INT, root, inter);
  SAY("bcast from odd leader: %d", wrank % 2 ? 0 : value);

  /* Merge: evens low, odds high; then the other order. */
  MPI_Comm merged;
  rc = MPI_Intercomm_merge(inter, wrank % 2, &merged);
  CHECK(rc == MPI_SUCCESS);
  int mrank = -1, msize = -1, mflag = -1;
  MPI_Comm_rank(merged, &mrank);
  MPI_Comm_size(merged, &msize);
  MPI_Comm_test_inter(merged, &mflag);
  MPI_Comm_compare(merged, MPI_COMM_WORLD, &cmp);
  SAY("merge odds high: size %d rank %d inter %d vs world %s", msize, mrank, mflag, cmp_name(cmp));
  MPI_Comm_free(&merged);
  MPI_Intercomm_merge(inter, !(wrank % 2), &merged);
  MPI_Comm_rank(merged, &mrank);
  MPI_Comm_compare(merged, MPI_COMM_WORLD, &cmp);
  SAY("merge evens high: rank %d vs world %s", mrank, cmp_name(cmp));
  MPI_Comm_free(&merged);

  /* Duplicates of the intercommunicator. */
  MPI_Comm dup, idup;
  rc = MPI_Comm_dup(inter, &dup);
  CHECK(rc == MPI_SUCCESS);
  MPI_Comm_compare(inter, dup, &cmp);
  SAY("dup vs inter %s", cmp_name(cmp));
  describe("dup", dup);
  MPI_Request req;
  rc = MPI_Comm_idup(inter, &idup, &req);
  CHECK(rc == MPI_SUCCESS);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  describe("idup", idup);
  MPI_Comm_free(&idup);
  MPI_Comm_free(&dup);

  /* Comm_split of an intercommunicator: world ranks 0 and 1 together, 2 and 3 together. */
  MPI_Comm sub;
  rc = MPI_Comm_split(inter, wrank / 2, 0, &sub);
  CHECK(rc == MPI_SUCCESS);
  if (sub == MPI_COMM_NULL)
    SAY("split of inter: MPI_COMM_NULL");
  else {
    describe("split of inter", sub);
    MPI_Comm_free(&sub);
  }
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);

  /* Unequal halves: {0} and {3,2,1} (ordered by key), the peer communicator a duplicate. The
     peer communicator and remote leader are significant only at the local leader: the others
     pass MPI_COMM_NULL and -1. */
  MPI_Comm peer;
  MPI_Comm_dup(MPI_COMM_WORLD, &peer);
  int side = wrank == 0 ? 0 : 1, hrank;
  MPI_Comm_split(MPI_COMM_WORLD, side, -wrank, &half);
  MPI_Comm_rank(half, &hrank);
  rc = MPI_Intercomm_create(half, 0, hrank == 0 ? peer : MPI_COMM_NULL, hrank == 0 ? (side ? 0 : 3) : -1, 12, &inter);
  CHECK(rc == MPI_SUCCESS);
  describe("one vs three", inter);
  rc = MPI_Intercomm_merge(inter, side, &merged);
  CHECK(rc == MPI_SUCCESS);
  MPI_Comm_rank(merged, &mrank);
  MPI_Group mg;
  MPI_Comm_group(merged, &mg);
  char text[64];
  members(text, sizeof text, mg);
  MPI_Group_free(&mg);
  SAY("one vs three merged: rank %d members [%s]", mrank, text);
  MPI_Comm_free(&merged);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
  MPI_Comm_free(&peer);
  return cov_finish();
}
