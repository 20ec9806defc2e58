/* Coverage: bad arguments to collectives get the MPI's error class through the communicator's
   error handler, never a crash or a hang: roots out of range, negative counts, MPI_OP_NULL,
   MPI_DATATYPE_NULL, MPI_COMM_NULL, NULL where a request must be written, a neighborhood
   collective on a communicator without topology, and collective communicator constructors with
   bad arguments (MPI_Comm_split, MPI_Comm_dup, MPI_Comm_create, MPI_Comm_create_group,
   MPI_Intercomm_create). Only errors every rank detects locally, before any communication, are
   made, so every rank fails the same call and none waits for the others. Blocking, nonblocking
   and (where the MPI has them) persistent forms.
   As in bad_args.c, each case runs twice on a duplicate of MPI_COMM_WORLD: with
   MPI_ERRORS_RETURN, then with a counting handler on the duplicate, MPI_COMM_WORLD and
   MPI_COMM_SELF recording each call's class and communicator; then a correct MPI_Allreduce on
   the duplicate shows every rank is still in step. */
// ranks: 3
#include "bad_args.h"

static void cases(MPI_Comm c, int rank, int size) {
  const int big = size + 3, bad = -7;
  int in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8] = {0}, counts[4] = {1, 1, 1, 1},
      displs[4] = {0, 1, 2, 3};
  MPI_Datatype types[4] = {MPI_INT, MPI_INT, MPI_INT, MPI_INT};
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Comm nc = MPI_COMM_NULL;
  MPI_Group g = MPI_GROUP_NULL;
  (void)rank;

  SAY(" blocking");
  CASE("barrier MPI_COMM_NULL", MPI_Barrier(MPI_COMM_NULL));
  CASE("bcast root size+3", MPI_Bcast(in, 1, MPI_INT, big, c));
  CASE("bcast root -7", MPI_Bcast(in, 1, MPI_INT, bad, c));
  CASE("bcast count -1", MPI_Bcast(in, -1, MPI_INT, 0, c));
  CASE("bcast MPI_DATATYPE_NULL", MPI_Bcast(in, 1, MPI_DATATYPE_NULL, 0, c));
  CASE("bcast MPI_COMM_NULL", MPI_Bcast(in, 1, MPI_INT, 0, MPI_COMM_NULL));
  CASE("reduce root size+3", MPI_Reduce(in, out, 1, MPI_INT, MPI_SUM, big, c));
  CASE("reduce MPI_OP_NULL", MPI_Reduce(in, out, 1, MPI_INT, MPI_OP_NULL, 0, c));
#ifndef MPICH /* MPICH 4.0.2 does not check it: an assertion in typerep_yaksa_pack.c, Abort */
  CASE("reduce count -1", MPI_Reduce(in, out, -1, MPI_INT, MPI_SUM, 0, c));
#endif
  CASE("allreduce MPI_OP_NULL", MPI_Allreduce(in, out, 1, MPI_INT, MPI_OP_NULL, c));
#ifndef MPICH /* MPICH 4.0.2 does not check it: as MPI_Reduce */
  CASE("allreduce count -1", MPI_Allreduce(in, out, -1, MPI_INT, MPI_SUM, c));
#endif
  CASE("allreduce MPI_DATATYPE_NULL", MPI_Allreduce(in, out, 1, MPI_DATATYPE_NULL, MPI_SUM, c));
  CASE("allreduce MPI_COMM_NULL", MPI_Allreduce(in, out, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL));
  CASE("gather root size+3", MPI_Gather(in, 1, MPI_INT, out, 1, MPI_INT, big, c));
  CASE("gather sendcount -1", MPI_Gather(in, -1, MPI_INT, out, 1, MPI_INT, 0, c));
  CASE("gatherv root -7", MPI_Gatherv(in, 1, MPI_INT, out, counts, displs, MPI_INT, bad, c));
  CASE("scatter root -7", MPI_Scatter(in, 1, MPI_INT, out, 1, MPI_INT, bad, c));
  CASE("scatter recvcount -1", MPI_Scatter(in, 1, MPI_INT, out, -1, MPI_INT, 0, c));
  CASE("scatterv root size+3", MPI_Scatterv(in, counts, displs, MPI_INT, out, 1, MPI_INT, big, c));
  CASE("allgather sendcount -1", MPI_Allgather(in, -1, MPI_INT, out, 1, MPI_INT, c));
  CASE("allgather recvtype MPI_DATATYPE_NULL", MPI_Allgather(in, 1, MPI_INT, out, 1, MPI_DATATYPE_NULL, c));
  CASE("alltoall sendcount -1", MPI_Alltoall(in, -1, MPI_INT, out, 1, MPI_INT, c));
  CASE("alltoallv MPI_COMM_NULL", MPI_Alltoallv(in, counts, displs, MPI_INT, out, counts, displs, MPI_INT, MPI_COMM_NULL));
  CASE("alltoallw MPI_COMM_NULL", MPI_Alltoallw(in, counts, displs, types, out, counts, displs, types, MPI_COMM_NULL));
  CASE("scan MPI_OP_NULL", MPI_Scan(in, out, 1, MPI_INT, MPI_OP_NULL, c));
#ifndef MPICH /* MPICH 4.0.2 does not check it: as MPI_Reduce */
  CASE("exscan count -1", MPI_Exscan(in, out, -1, MPI_INT, MPI_SUM, c));
#endif
#ifndef MPICH /* MPICH 4.0.2 does not check it: as MPI_Reduce */
  CASE("reduce_scatter_block recvcount -1", MPI_Reduce_scatter_block(in, out, -1, MPI_INT, MPI_SUM, c));
#endif
  CASE("reduce_scatter MPI_OP_NULL", MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_OP_NULL, c));
  CASE("neighbor_allgather without topology", MPI_Neighbor_allgather(in, 1, MPI_INT, out, 1, MPI_INT, c));
  CASE("neighbor_alltoall without topology", MPI_Neighbor_alltoall(in, 1, MPI_INT, out, 1, MPI_INT, c));

  SAY(" local");
  CASE("reduce_local MPI_OP_NULL", MPI_Reduce_local(in, out, 1, MPI_INT, MPI_OP_NULL));
#ifndef MPICH /* MPICH 4.0.2 does not check it: a segmentation fault */
  CASE("reduce_local count -1", MPI_Reduce_local(in, out, -1, MPI_INT, MPI_SUM));
#endif
  CASE("reduce_local MPI_DATATYPE_NULL", MPI_Reduce_local(in, out, 1, MPI_DATATYPE_NULL, MPI_SUM));

  SAY(" nonblocking");
  CASE("ibarrier MPI_COMM_NULL", MPI_Ibarrier(MPI_COMM_NULL, &req));
#ifndef OPEN_MPI /* Open MPI 4.1.4 does not check it: a segmentation fault in NBC_Schedule_request */
  CASE("ibarrier NULL request", MPI_Ibarrier(c, NULL));
#endif
  CASE("ibcast root size+3", MPI_Ibcast(in, 1, MPI_INT, big, c, &req));
  CASE("ibcast count -1", MPI_Ibcast(in, -1, MPI_INT, 0, c, &req));
  CASE("ireduce root -7", MPI_Ireduce(in, out, 1, MPI_INT, MPI_SUM, bad, c, &req));
  CASE("iallreduce MPI_OP_NULL", MPI_Iallreduce(in, out, 1, MPI_INT, MPI_OP_NULL, c, &req));
  CASE("iallreduce MPI_DATATYPE_NULL", MPI_Iallreduce(in, out, 1, MPI_DATATYPE_NULL, MPI_SUM, c, &req));
  CASE("igather root size+3", MPI_Igather(in, 1, MPI_INT, out, 1, MPI_INT, big, c, &req));
  CASE("iscatter recvcount -1", MPI_Iscatter(in, 1, MPI_INT, out, -1, MPI_INT, 0, c, &req));
#ifndef OPEN_MPI /* Open MPI 4.1.4 does not check it: a segmentation fault in PMPI_Iallgather */
  CASE("iallgather MPI_COMM_NULL", MPI_Iallgather(in, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_NULL, &req));
#endif
  CASE("ialltoall sendcount -1", MPI_Ialltoall(in, -1, MPI_INT, out, 1, MPI_INT, c, &req));
  CASE("iscan MPI_OP_NULL", MPI_Iscan(in, out, 1, MPI_INT, MPI_OP_NULL, c, &req));
  CASE("ineighbor_allgather without topology", MPI_Ineighbor_allgather(in, 1, MPI_INT, out, 1, MPI_INT, c, &req));

#if defined(MPICH) && MPI_VERSION >= 4
  SAY(" persistent (MPI-4)");
  CASE("bcast_init root size+3", MPI_Bcast_init(in, 1, MPI_INT, big, c, MPI_INFO_NULL, &req));
  CASE("allreduce_init MPI_OP_NULL", MPI_Allreduce_init(in, out, 1, MPI_INT, MPI_OP_NULL, c, MPI_INFO_NULL, &req));
  CASE("barrier_init MPI_COMM_NULL", MPI_Barrier_init(MPI_COMM_NULL, MPI_INFO_NULL, &req));
#endif

  SAY(" communicator constructors");
#ifndef MPICH /* MPICH 4.0.2 does not detect it: every rank gets a new communicator */
  CASE("comm_split color -5", MPI_Comm_split(c, -5, 0, &nc));
#endif
  CASE("comm_split MPI_COMM_NULL", MPI_Comm_split(MPI_COMM_NULL, 0, 0, &nc));
  CASE("comm_split NULL newcomm", MPI_Comm_split(c, 0, 0, NULL));
  CASE("comm_dup MPI_COMM_NULL", MPI_Comm_dup(MPI_COMM_NULL, &nc));
  CASE("comm_dup NULL newcomm", MPI_Comm_dup(c, NULL));
  CASE("comm_idup MPI_COMM_NULL", MPI_Comm_idup(MPI_COMM_NULL, &nc, &req));
  CASE("comm_create MPI_GROUP_NULL", MPI_Comm_create(c, MPI_GROUP_NULL, &nc));
  CASE("comm_create MPI_COMM_NULL", MPI_Comm_create(MPI_COMM_NULL, MPI_GROUP_EMPTY, &nc));
  MPI_Comm_group(c, &g);
#ifndef OPEN_MPI /* Open MPI 4.1.4 does not detect it (returns MPI_SUCCESS) */
  CASE("comm_create_group MPI_GROUP_NULL", MPI_Comm_create_group(c, MPI_GROUP_NULL, 0, &nc));
#endif
  CASE("comm_create_group tag -3", MPI_Comm_create_group(c, g, -3, &nc));
  MPI_Group_free(&g);
  CASE("intercomm_create local leader size+3", MPI_Intercomm_create(c, big, c, 0, 0, &nc));
  CASE("intercomm_create MPI_COMM_NULL", MPI_Intercomm_create(MPI_COMM_NULL, 0, c, 0, 0, &nc));
  CASE("cart_create ndims -1", MPI_Cart_create(c, -1, counts, displs, 0, &nc));
  CASE("cart_create dims too large", MPI_Cart_create(c, 1, (int[]){size + 1}, displs, 0, &nc));
#ifndef MPICH /* MPICH 4.0.2 does not check it: an assertion in ch4i_comm.c, Abort */
  CASE("intercomm_merge not an intercommunicator", MPI_Intercomm_merge(c, 0, &nc));
#endif
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "bad_args_coll");
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Errhandler eh;
  MPI_Comm_create_errhandler(handler, &eh);
  MPI_Comm_dup(MPI_COMM_WORLD, &tested);
  for (int pass = 0; pass < 2; ++pass) {
    begin_pass(pass, eh);
    cases(tested, rank, size);
    end_pass();
    /* Every rank still in step: a correct collective on the duplicate. */
    int v = rank + 1, sum = -1;
    int rc = MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, tested);
    SAY("pass %d: allreduce afterwards rc %d sum %d", pass + 1, rc, sum);
    CHECK(rc == MPI_SUCCESS && sum == size * (size + 1) / 2);
  }
  MPI_Comm_free(&tested);
  MPI_Errhandler_free(&eh);
  return cov_finish();
}
