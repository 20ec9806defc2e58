/* Coverage: MPI_Intercomm_create_from_groups (MPICH 4.0 only), with MPI_Session_init,
   MPI_Group_from_session_pset and MPI_Comm_create_from_group around it. The mpi://WORLD group of a
   session is split into ranks {0,1} and {2,3}; each half makes its own communicator from its group
   and the two halves make an intercommunicator from the two groups, then exchange values. */
// ranks: 4
#include <string.h>

#include "coverage.h"

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "sess_inter");
#if MPI_VERSION >= 4 || defined(MPI_SESSION_NULL) /* Open MPI 5.0: sessions, MPI_VERSION 3 */
  MPI_Session session = MPI_SESSION_NULL;
  int rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session);
  SAY("session_init rc %d", rc);
  MPI_Group world = MPI_GROUP_NULL, low = MPI_GROUP_NULL, high = MPI_GROUP_NULL;
  rc = MPI_Group_from_session_pset(session, "mpi://WORLD", &world);
  int gsize = -1, grank = -1;
  MPI_Group_size(world, &gsize);
  MPI_Group_rank(world, &grank);
  SAY("group_from_session_pset rc %d size %d rank %d", rc, gsize, grank);
  int low_range[1][3] = {{0, 1, 1}}, high_range[1][3] = {{2, 3, 1}};
  MPI_Group_range_incl(world, 1, low_range, &low);
  MPI_Group_range_incl(world, 1, high_range, &high);
  int in_low = grank < 2;
  MPI_Group mine = in_low ? low : high, other = in_low ? high : low;

  /* Each half's own communicator, from its group. */
  MPI_Comm local = MPI_COMM_NULL;
  rc = MPI_Comm_create_from_group(mine, in_low ? "org.tsmpi.coverage.sess_inter.low" : "org.tsmpi.coverage.sess_inter.high",
                                  MPI_INFO_NULL, MPI_ERRORS_RETURN, &local);
  int lrank = -1, lsize = -1, lsum = -1;
  MPI_Comm_rank(local, &lrank);
  MPI_Comm_size(local, &lsize);
  MPI_Allreduce(&grank, &lsum, 1, MPI_INT, MPI_SUM, local);
  SAY("comm_create_from_group rc %d rank %d of %d sum of world ranks %d", rc, lrank, lsize, lsum);

  /* The intercommunicator: local leader 0 of each group, remote leader 0 of the other. */
  MPI_Comm inter = MPI_COMM_NULL;
  rc = MPI_Intercomm_create_from_groups(mine, 0, other, 0, "org.tsmpi.coverage.sess_inter.bridge",
                                        MPI_INFO_NULL, MPI_ERRORS_RETURN, &inter);
  int isinter = 0, remote = -1, irank = -1;
  MPI_Comm_test_inter(inter, &isinter);
  MPI_Comm_remote_size(inter, &remote);
  MPI_Comm_rank(inter, &irank);
  SAY("intercomm_create_from_groups rc %d inter %d remote size %d rank %d", rc, isinter, remote, irank);
  int value = (in_low ? 100 : 200) + irank, got = -1;
  MPI_Sendrecv(&value, 1, MPI_INT, irank, 3, &got, 1, MPI_INT, irank, 3, inter, MPI_STATUS_IGNORE);
  SAY("got %d from the other half", got);
  CHECK(got == (in_low ? 200 : 100) + irank);
  int sum = -1;
  MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, inter);
  SAY("allreduce over the other half %d", sum);
  int b = in_low ? 555 : -1;
  MPI_Bcast(&b, 1, MPI_INT, in_low ? (irank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter);
  SAY("bcast from the low half %d", b);
  MPI_Comm merged = MPI_COMM_NULL;
  int mrank = -1;
  MPI_Intercomm_merge(inter, in_low ? 0 : 1, &merged);
  MPI_Comm_rank(merged, &mrank);
  SAY("merged rank %d", mrank);
  MPI_Comm_free(&merged);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
  MPI_Group_free(&low);
  MPI_Group_free(&high);
  MPI_Group_free(&world);
  rc = MPI_Session_finalize(&session);
  SAY("session_finalize rc %d", rc);
#else
  SAY("no sessions in MPI %d.%d", MPI_VERSION, MPI_SUBVERSION);
#endif
  (void)rank;
  return cov_finish();
}
