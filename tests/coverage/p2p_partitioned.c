/* Coverage: MPI-4 partitioned communication (MPICH 4.0; Open MPI 4.1 has none): MPI_Psend_init,
   MPI_Precv_init, MPI_Start / MPI_Startall, MPI_Pready, MPI_Pready_range, MPI_Pready_list,
   MPI_Parrived, completion by MPI_Wait / MPI_Test / MPI_Waitall, three rounds on the same
   requests, MPI_Request_free. Each partition holds P ints; every received value is checked. */
// ranks: 2
#include "coverage.h"

#if COV_MPI4
enum { PARTS = 4, P = 8 };

static void fill(int* buf, int round) {
  for (int i = 0; i < PARTS * P; ++i) buf[i] = 1000 * (round + 1) + i;
}
static int check(const int* buf, int round) {
  for (int i = 0; i < PARTS * P; ++i)
    if (buf[i] != 1000 * (round + 1) + i) return 0;
  return 1;
}
#endif

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "p2p_partitioned");
#if COV_MPI4
  MPI_Comm comm = MPI_COMM_WORLD;
  int buf[PARTS * P], rc, flag;
  MPI_Request req;
  MPI_Status st;
  if (rank == 0) {
    rc = MPI_Psend_init(buf, PARTS, P, MPI_INT, 1, 7, comm, MPI_INFO_NULL, &req);
    SAY("psend_init rc %d", rc);
    for (int round = 0; round < 3; ++round) {
      fill(buf, round);
      rc = round == 1 ? MPI_Startall(1, &req) : MPI_Start(&req);
      /* Partition 0 alone, 1..2 as a range, 3 from a list. */
      int rc1 = MPI_Pready(0, req);
      int rc2 = MPI_Pready_range(1, 2, req);
      int list[1] = {3};
      int rc3 = MPI_Pready_list(1, list, req);
      int rc4;
      if (round == 2) {
        flag = 0;
        while (!flag) rc4 = MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
      } else {
        rc4 = MPI_Wait(&req, MPI_STATUS_IGNORE);
      }
      SAY("round %d start rc %d pready rc %d pready_range rc %d pready_list rc %d completion rc %d",
          round, rc, rc1, rc2, rc3, rc4);
    }
    rc = MPI_Request_free(&req);
    SAY("request_free rc %d null %d", rc, req == MPI_REQUEST_NULL);
  } else {
    rc = MPI_Precv_init(buf, PARTS, P, MPI_INT, 0, 7, comm, MPI_INFO_NULL, &req);
    SAY("precv_init rc %d", rc);
    for (int round = 0; round < 3; ++round) {
      memset(buf, 0, sizeof buf);
      rc = MPI_Start(&req);
      /* Every partition arrives eventually: poll each with MPI_Parrived. */
      int arrived = 0, rc1 = MPI_SUCCESS;
      for (int p = 0; p < PARTS; ++p) {
        flag = 0;
        while (!flag && rc1 == MPI_SUCCESS) rc1 = MPI_Parrived(req, p, &flag);
        arrived += flag;
      }
      MPI_Request one[1] = {req};
      int rc2 = round == 1 ? MPI_Waitall(1, one, &st) : MPI_Wait(&req, &st);
      SAY("round %d start rc %d parrived rc %d partitions arrived %d completion rc %d data ok %d",
          round, rc, rc1, arrived, rc2, check(buf, round));
      CHECK(check(buf, round));
    }
    rc = MPI_Request_free(&req);
    SAY("request_free rc %d null %d", rc, req == MPI_REQUEST_NULL);
  }
#else
  (void)rank;
  SAY("no partitioned communication before MPI-4");
#endif
  return cov_finish();
}
