/* Coverage: MPI_Probe followed by the MPI-4 MPI_Isendrecv / MPI_Isendrecv_replace whose receive
   is for the probed message (MPICH only: Open MPI 4.1 has no MPI_Isendrecv). Kept apart from
   p2p_probe.c because under tsmpi's default probe policy (mprobe) the probed message is taken out
   of the MPI and MPI_Isendrecv(_replace) posts its own receive, which never sees it: rank 0 then
   waits forever (tsmpi defect, found with this program). */
// ranks: 2
#include "coverage.h"

static void fill(int* buf, int n, int base) {
  for (int i = 0; i < n; ++i) buf[i] = base + i;
}
static int same(const int* buf, int n, int base) {
  for (int i = 0; i < n; ++i)
    if (buf[i] != base + i) return 0;
  return 1;
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "p2p_probe_isendrecv");
#if COV_MPI4
  MPI_Comm comm = MPI_COMM_WORLD;
  int rc, in[8], out[3];
  MPI_Status st;
  MPI_Request req;
  if (rank == 0) {
    MPI_Probe(1, 50, comm, &st);
    memset(in, 0, sizeof in);
    out[0] = 50;
    rc = MPI_Isendrecv(out, 1, MPI_INT, 1, 150, in, 8, MPI_INT, 1, 50, comm, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    SAY("probe + isendrecv: rc %d data ok %d", rc, same(in, 3, 1050));
    CHECK(same(in, 3, 1050));

    MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st);
    fill(in, 3, 51);
    rc = MPI_Isendrecv_replace(in, 3, MPI_INT, 1, 151, 1, 51, comm, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    SAY("probe + isendrecv_replace: rc %d data ok %d", rc, same(in, 3, 1051));
    CHECK(same(in, 3, 1051));
  } else {
    int got = 0;
    fill(out, 3, 1050);
    MPI_Send(out, 3, MPI_INT, 0, 50, comm);
    MPI_Recv(&got, 1, MPI_INT, 0, 150, comm, MPI_STATUS_IGNORE);
    fill(out, 3, 1051);
    MPI_Send(out, 3, MPI_INT, 0, 51, comm);
    memset(in, 0, sizeof in);
    MPI_Recv(in, 3, MPI_INT, 0, 151, comm, MPI_STATUS_IGNORE);
    SAY("received from the isendrecvs: %d, %d %d %d", got, in[0], in[1], in[2]);
    CHECK(got == 50 && same(in, 3, 51));
  }
#else
  (void)rank;
  (void)fill;
  (void)same;
  SAY("no MPI_Isendrecv before MPI-4");
#endif
  return cov_finish();
}
