/* Rank 0 exits with the status given on the command line after a clean MPI_Finalize; the
   launcher (and tsmpirun) must pass it through. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int code = argc > 1 ? atoi(argv[1]) : 0;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("exit_status: rank 0 exits with %d\n", code);
  fflush(stdout);
  MPI_Finalize();
  return rank == 0 ? code : 0;
}
