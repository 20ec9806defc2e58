/* Checking mode on thread-ranks (seed 004 §3.5.2): erroneous collective patterns that only a
   thread-as-rank program can write.
     mismatch  thread-rank 0 calls MPI_Allreduce while thread-rank 1 calls MPI_Bcast as their
               first collective on the threadcomm (Listing 3.5)
     missing   only thread-rank 0 calls MPI_Barrier; the other thread-ranks leave the region
               (Listing 3.4: `if (ThreadID == 0) MPI_Alltoall(...)`)
     twin      the same program written correctly: every thread-rank calls every collective
   Under TSMPI_CHECK=abort the erroneous modes end the job (status 1) with a report; the twin
   prints "rk_check: rank R: ok" and tsmpi prints nothing.
   usage: rk_check MODE THREADS */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tsmpi.h"

int main(int argc, char** argv) {
  int provided, wrank;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  const char* mode = argc > 1 ? argv[1] : "twin";
  int threads = argc > 2 ? atoi(argv[2]) : 3;
  alarm(60);  /* an undetected erroneous mode would hang */
  MPI_Comm tc;
  MPIX_Threadcomm_init(MPI_COMM_WORLD, threads, &tc);
  int failures = 0;
#pragma omp parallel num_threads(threads) reduction(+ : failures)
  {
    MPIX_Threadcomm_start(tc);
    int rank, size;
    MPI_Comm_rank(tc, &rank);
    MPI_Comm_size(tc, &size);
    int in = rank + 1, out = 0;
    if (!strcmp(mode, "mismatch")) {
      if (rank == 0) MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, tc);
      else MPI_Bcast(&in, 1, MPI_INT, 1, tc);
    } else if (!strcmp(mode, "missing")) {
      if (rank == 0) MPI_Barrier(tc);
    } else {
      MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, tc);
      if (out != size * (size + 1) / 2) ++failures;
      int v = rank == 1 % size ? 42 : 0;
      MPI_Bcast(&v, 1, MPI_INT, 1 % size, tc);
      if (v != 42) ++failures;
      MPI_Barrier(tc);
    }
    MPIX_Threadcomm_finish(tc);
  }
  MPIX_Threadcomm_free(&tc);
  printf("rk_check: rank %d: %s\n", wrank, failures ? "FAILED" : "ok");
  MPI_Finalize();
  return failures != 0;
}
