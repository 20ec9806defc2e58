/* A nonblocking duplication one rank never joins, for the hang watchdog in serialize mode.
   2 ranks. Rank 0 starts MPI_Comm_idup of MPI_COMM_WORLD, then an MPI_Iallreduce on
   MPI_COMM_WORLD (which serialize mode keeps behind the duplication), and waits for the
   duplication; rank 1 sleeps outside MPI. alarm(S) (argument, default 10) ends both ranks after
   tsmpi's report, which must say what waits in MPI_COMM_WORLD's sequence. */
#include <unistd.h>

#include "test_util.h"

int main(int argc, char** argv) {
  alarm(argc > 1 ? (unsigned)atoi(argv[1]) : 10);
  int rank;
  test_init_ranks(&argc, &argv, "hang_idup", 2, &rank);
  printf("hang_idup: rank %d started\n", rank);
  fflush(stdout);
  if (rank == 1) {
    for (;;) sleep(60); /* never calls MPI_Comm_idup */
  }
  MPI_Comm dup;
  MPI_Request requests[2];
  int one = 1, sum = 0;
  MPI_Comm_idup(MPI_COMM_WORLD, &dup, &requests[0]);
  MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &requests[1]);
  MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
  printf("hang_idup: rank 0: the duplication completed\n");
  return test_finish();
}
