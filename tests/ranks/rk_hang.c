/* rk_hang: a deadlock between thread-ranks, for the hang watchdog (docs/hang-watchdog.md).
   usage: rk_hang [S]    2 processes x 2 threads (OpenMP) on a threadcomm of MPI_COMM_WORLD

   Thread-rank 0 (process 0 thread 0) and thread-rank 3 (process 1 thread 1) each first
   MPI_Recv from the other, then would send to it: a cycle between two processes. Thread-ranks
   1 and 2 wait in MPI_Barrier on the threadcomm, which 0 and 3 never enter. Nothing completes;
   after S seconds (default 10) the alarm ends each process with status 1 ("rk_hang: rank R:
   watchdog: still in stage [deadlock], giving up"), after tsmpi's reports (run with
   TSMPI_HANG_TIMEOUT=2): each process lists its two thread-ranks' calls, and rank 0 names the
   cycle between thread-ranks 0 and 3 with their process and thread. */
#include <omp.h>

#include "ranks_util.h"

int main(int argc, char** argv) {
  rk_init(&argc, &argv, "rk_hang");
  alarm(argc > 1 ? (unsigned)atoi(argv[1]) : 10);
  if (rk_wsize != 2) {
    rk_say("rk_hang: rank %d: needs 2 processes, got %d: FAILED\n", rk_wrank, rk_wsize);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm tc = MPI_COMM_NULL;
  MPI_OK(MPIX_Threadcomm_init(MPI_COMM_WORLD, 2, &tc));
  rk_set_stage("deadlock");
  rk_say("rk_hang: rank %d enters the cycle\n", rk_wrank);
#pragma omp parallel num_threads(2)
  {
    MPI_OK(MPIX_Threadcomm_start(tc));
    int r = -1, n = 0;
    MPI_OK(MPI_Comm_rank(tc, &r));
    MPI_OK(MPI_Comm_size(tc, &n));
    rk_my = r;
    if (r == 0 || r == n - 1) {
      const int other = r == 0 ? n - 1 : 0;
      int v = -1;
      MPI_OK(MPI_Recv(&v, 1, MPI_INT, other, 7, tc, MPI_STATUS_IGNORE));
      MPI_OK(MPI_Send(&r, 1, MPI_INT, other, 7, tc));
    } else {
      MPI_OK(MPI_Barrier(tc));
    }
    rk_say("rk_hang: rank %d: thread-rank %d: deadlock did not happen\n", rk_wrank, r);
    MPI_OK(MPIX_Threadcomm_finish(tc));
  }
  MPI_OK(MPIX_Threadcomm_free(&tc));
  return rk_finish();
}
