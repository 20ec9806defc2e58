/* A deadlock through three communicators (Fig. 3.10 of the thesis), for the hang watchdog.
   3 ranks; C0 = {0,1}, C1 = {1,2}, C2 = {2,0}. Each rank takes part in two collectives:
   MPI_Alltoall on C0, MPI_Allreduce on C1, MPI_Bcast on C2 (root world rank 0, so rank 2
   waits for it).

   hang_cycle deadlock [S]: each rank first calls the collective the next rank is not in yet:
     rank 0 MPI_Alltoall on C0 (waits for 1), rank 1 MPI_Allreduce on C1 (waits for 2), rank 2
     MPI_Bcast on C2 (waits for 0). Nothing completes; alarm(S) (default 10) ends every rank
     after tsmpi has printed its reports.
   hang_cycle twin: the same collectives in one global order (C0, C1, C2), so every rank
     finishes. Rank 2 first sleeps 1 s, below TSMPI_HANG_TIMEOUT=2: a short wait is no hang. */
#include <unistd.h>

#include "test_util.h"

/* The communicator of the ranks a and b (MPI_COMM_NULL on the others), ordered by world rank. */
static MPI_Comm pair_comm(int rank, int a, int b) {
  MPI_Comm c;
  MPI_Comm_split(MPI_COMM_WORLD, rank == a || rank == b ? 1 : MPI_UNDEFINED, rank, &c);
  return c;
}

static void alltoall(MPI_Comm c) {
  int out[2] = {1, 2}, in[2];
  MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, c);
}

static void allreduce(MPI_Comm c) {
  int one = 1, sum = 0;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
  CHECK(sum == 2, "sum %d", sum);
}

static void bcast(MPI_Comm c, int rank) {
  int v = rank == 0 ? 42 : 0;
  MPI_Bcast(&v, 1, MPI_INT, 0, c); /* root: rank 0 of C2 = world rank 0 */
  CHECK(v == 42, "bcast %d", v);
}

int main(int argc, char** argv) {
  int deadlock = argc > 1 && !strcmp(argv[1], "deadlock");
  alarm(argc > 2 ? (unsigned)atoi(argv[2]) : 10);
  int rank;
  test_init_ranks(&argc, &argv, "hang_cycle", 3, &rank);
  MPI_Comm c0 = pair_comm(rank, 0, 1), c1 = pair_comm(rank, 1, 2), c2 = pair_comm(rank, 2, 0);
  if (deadlock) {
    printf("hang_cycle: rank %d enters the cycle\n", rank);
    fflush(stdout);
    if (rank == 0) alltoall(c0), bcast(c2, rank);
    if (rank == 1) allreduce(c1), alltoall(c0);
    if (rank == 2) bcast(c2, rank), allreduce(c1);
    printf("hang_cycle: rank %d: deadlock did not happen\n", rank);
  } else {
    if (rank == 2) sleep(1);
    if (rank == 0) alltoall(c0), bcast(c2, rank);
    if (rank == 1) alltoall(c0), allreduce(c1);
    if (rank == 2) allreduce(c1), bcast(c2, rank);
  }
  MPI_Comm* comms[] = {&c0, &c1, &c2};
  for (int i = 0; i < 3; ++i)
    if (*comms[i] != MPI_COMM_NULL) MPI_Comm_free(comms[i]);
  return test_finish();
}
