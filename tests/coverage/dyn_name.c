/* Coverage: MPI_Publish_name, MPI_Lookup_name, MPI_Unpublish_name (the launcher's name service,
   within one job), MPI_Comm_get_parent and MPI_Comm_disconnect on an intracommunicator. Rank 0
   publishes a port name under a service name, rank 1 looks it up and compares it with the name
   rank 0 sends it over MPI_COMM_WORLD, rank 0 unpublishes it, and a lookup afterwards fails.
   On Open MPI the name published is a real port from MPI_Open_port; MPICH 4.0 (ch4:ucx) cannot
   open ports (MPI_Open_port is not supported by its ucx netmod), so there a made-up port name is
   published: MPICH's name service stores the string without looking at it. */
// ranks: 2
#include <string.h>

#include "coverage.h"

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "dyn_name");
  MPI_Comm parent = (MPI_Comm)-1;
  MPI_Comm_get_parent(&parent);
  SAY("get_parent null %d", parent == MPI_COMM_NULL);

  const char* service = "tsmpi-coverage-dyn-name";
  char port[MPI_MAX_PORT_NAME];
  memset(port, 0, sizeof port);
  int rc;
  if (rank == 0) {
#ifdef OPEN_MPI
    rc = MPI_Open_port(MPI_INFO_NULL, port);
    SAY("open_port rc %d", rc);
#else
    strcpy(port, "tsmpi-coverage-port#1$description#localhost$");
#endif
    rc = MPI_Publish_name(service, MPI_INFO_NULL, port);
    SAY("publish rc %d", rc);
    MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 1, 31, MPI_COMM_WORLD);
  } else {
    char expected[MPI_MAX_PORT_NAME], found[MPI_MAX_PORT_NAME];
    MPI_Recv(expected, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    memset(found, 0, sizeof found);
    rc = MPI_Lookup_name(service, MPI_INFO_NULL, found);
    SAY("lookup rc %d same name %d", rc, strcmp(found, expected) == 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    rc = MPI_Unpublish_name(service, MPI_INFO_NULL, port);
    SAY("unpublish rc %d", rc);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    char found[MPI_MAX_PORT_NAME];
    int cls = -1;
    rc = MPI_Lookup_name(service, MPI_INFO_NULL, found);
    MPI_Error_class(rc, &cls);
    SAY("lookup after unpublish fails %d class is MPI_ERR_NAME %d", rc != MPI_SUCCESS, cls == MPI_ERR_NAME);
  }
#ifdef OPEN_MPI
  if (rank == 0) SAY("close_port rc %d", MPI_Close_port(port));
#endif

  /* MPI_Comm_disconnect is collective on any communicator: here on a duplicate of the world,
     after traffic on it has completed. */
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  int mine = 40 + rank, sum = -1;
  MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, dup);
  SAY("allreduce on dup %d", sum);
  rc = MPI_Comm_disconnect(&dup);
  SAY("disconnect dup rc %d null %d", rc, dup == MPI_COMM_NULL);
  return cov_finish();
}
