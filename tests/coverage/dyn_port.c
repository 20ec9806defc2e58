/* Coverage: MPI_Open_port, MPI_Comm_accept, MPI_Comm_connect, MPI_Close_port (and
   MPI_Comm_disconnect on the result). MPI_COMM_WORLD is split into two halves of two ranks; rank 0
   of the first half opens a port and sends its name to rank 0 of the second half over
   MPI_COMM_WORLD; the first half accepts, the second connects, they exchange values over the
   intercommunicator and disconnect. port_name and info are significant only at the root, so the
   other rank of each half passes NULL as port_name. It passes MPI_INFO_NULL as info: Open MPI 4.1
   checks info on every rank and fails a NULL one there with MPI_ERR_INFO (then the roots hang).
   MPICH 4.0 (ch4:ucx) cannot do this natively: MPI_Open_port fails with "MPIDI_UCX_get_local_upids:
   The function is currently not supported with ucx netmod", so there the program only splits. */
// ranks: 4
#include <string.h>

#include "coverage.h"

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "dyn_port");
  int server = rank < 2, hrank = -1;
  MPI_Comm half = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, server ? 0 : 1, rank, &half);
  MPI_Comm_rank(half, &hrank);
  SAY("%s half rank %d", server ? "server" : "client", hrank);
#ifdef OPEN_MPI
  char port[MPI_MAX_PORT_NAME];
  memset(port, 0, sizeof port);
  MPI_Comm inter = MPI_COMM_NULL;
  int rc;
  if (server) {
    if (hrank == 0) {
      rc = MPI_Open_port(MPI_INFO_NULL, port);
      SAY("open_port rc %d name non-empty %d", rc, port[0] != 0 && strlen(port) < MPI_MAX_PORT_NAME);
      MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 2, 11, MPI_COMM_WORLD);
    }
    MPI_Info info = MPI_INFO_NULL;
    if (hrank == 0) {
      MPI_Info_create(&info);
      MPI_Info_set(info, "tsmpi_coverage", "accept"); /* a key the MPI ignores */
    }
    rc = MPI_Comm_accept(hrank == 0 ? port : NULL, hrank == 0 ? info : MPI_INFO_NULL, 0, half, &inter);
    SAY("accept rc %d", rc);
    if (hrank == 0) MPI_Info_free(&info);
  } else {
    if (hrank == 0) {
      MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      SAY("port name received non-empty %d", port[0] != 0);
    }
    rc = MPI_Comm_connect(hrank == 0 ? port : NULL, MPI_INFO_NULL, 0, half, &inter);
    SAY("connect rc %d", rc);
  }
  if (rc == MPI_SUCCESS) {
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    int isinter = 0, remote = -1, lrank = -1;
    MPI_Comm_test_inter(inter, &isinter);
    MPI_Comm_remote_size(inter, &remote);
    MPI_Comm_rank(inter, &lrank);
    SAY("inter %d remote size %d local rank %d", isinter, remote, lrank);
    /* Each rank swaps a value with the remote rank of the same number. */
    int mine = (server ? 500 : 900) + lrank, got = -1;
    MPI_Sendrecv(&mine, 1, MPI_INT, lrank, 12, &got, 1, MPI_INT, lrank, 12, inter, MPI_STATUS_IGNORE);
    SAY("got %d from the other side", got);
    CHECK(got == (server ? 900 : 500) + lrank);
    /* Intercommunicator reduction: each side gets the sum over the other side. */
    int sum = -1;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter);
    SAY("allreduce over the other side %d", sum);
    /* Merged, the server half comes first. */
    MPI_Comm merged = MPI_COMM_NULL;
    int mrank = -1, msize = -1;
    MPI_Intercomm_merge(inter, server ? 0 : 1, &merged);
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    SAY("merged rank %d of %d", mrank, msize);
    MPI_Comm_free(&merged);
    rc = MPI_Comm_disconnect(&inter);
    SAY("disconnect rc %d null %d", rc, inter == MPI_COMM_NULL);
  }
  if (server && hrank == 0) SAY("close_port rc %d", MPI_Close_port(port));
#endif
  MPI_Comm_free(&half);
  return cov_finish();
}
