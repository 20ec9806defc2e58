/* Coverage: MPI_Comm_join (and MPI_Comm_disconnect on its result). Rank 0 listens on a loopback
   TCP port (chosen by the kernel) and sends its number to rank 1 over MPI_COMM_WORLD; rank 1
   connects; both pass their end of the connected socket to MPI_Comm_join and talk over the
   intercommunicator it returns.
   MPICH 4.0 (ch4:ucx) cannot join natively: MPI_Comm_join opens a port internally and
   MPI_Open_port fails with "MPIDI_UCX_get_local_upids: The function is currently not supported
   with ucx netmod", so there the program only records that the socket pair was set up. */
// ranks: 2
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coverage.h"

/* A connected loopback TCP socket between ranks 0 and 1; -1 on failure. */
static int socket_pair_end(int rank) {
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int fd = -1, port = -1;
  if (rank == 0) {
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    socklen_t len = sizeof a;
    if (ls >= 0 && bind(ls, (struct sockaddr*)&a, sizeof a) == 0 && listen(ls, 1) == 0 &&
        getsockname(ls, (struct sockaddr*)&a, &len) == 0)
      port = ntohs(a.sin_port);
    MPI_Send(&port, 1, MPI_INT, 1, 21, MPI_COMM_WORLD);
    if (port >= 0) fd = accept(ls, NULL, NULL);
    if (ls >= 0) close(ls);
  } else {
    MPI_Recv(&port, 1, MPI_INT, 0, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (port >= 0) {
      a.sin_port = htons((unsigned short)port);
      fd = socket(AF_INET, SOCK_STREAM, 0);
      if (fd >= 0 && connect(fd, (struct sockaddr*)&a, sizeof a) != 0) {
        close(fd);
        fd = -1;
      }
    }
  }
  return fd;
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "dyn_join");
  int fd = socket_pair_end(rank);
  SAY("socket connected %d", fd >= 0);
#ifdef OPEN_MPI
  MPI_Comm inter = MPI_COMM_NULL;
  int rc = MPI_Comm_join(fd, &inter);
  SAY("join rc %d", rc);
  if (rc == MPI_SUCCESS) {
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    int isinter = 0, remote = -1, size = -1, lrank = -1;
    MPI_Comm_test_inter(inter, &isinter);
    MPI_Comm_remote_size(inter, &remote);
    MPI_Comm_size(inter, &size);
    MPI_Comm_rank(inter, &lrank);
    SAY("inter %d size %d remote size %d rank %d", isinter, size, remote, lrank);
    int mine = 30 + rank, got = -1;
    MPI_Sendrecv(&mine, 1, MPI_INT, 0, 22, &got, 1, MPI_INT, 0, 22, inter, MPI_STATUS_IGNORE);
    SAY("got %d", got);
    CHECK(got == 30 + (1 - rank));
    double d[3] = {rank + 0.5, rank * 2.0, -1.0}, e[3] = {0, 0, 0};
    MPI_Allreduce(d, e, 3, MPI_DOUBLE, MPI_MAX, inter);
    SAY("allreduce %.1f %.1f %.1f", e[0], e[1], e[2]);
    rc = MPI_Comm_disconnect(&inter);
    SAY("disconnect rc %d null %d", rc, inter == MPI_COMM_NULL);
  }
#endif
  if (fd >= 0) close(fd);
  return cov_finish();
}
