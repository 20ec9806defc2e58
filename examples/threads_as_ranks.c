/* Threads as MPI ranks (docs/threads-as-ranks.md): a 1-D Jacobi heat solver written for MPICH
   4.2's MPIX_Threadcomm API. Every OpenMP thread of every process is an MPI rank of the
   threadcomm, owns a slab of the rod, exchanges halo cells with its neighbour ranks (threads of
   its own process or of the next one: the same MPI_Sendrecv either way) and joins an
   MPI_Allreduce of the residual; rank 0 gathers the rod and compares it with a serial solve.
   usage: threads_as_ranks [THREADS [CELLS_PER_RANK [STEPS]]]; runs under tsmpirun, linked
   -ltsmpi. Prints "threads_as_ranks: rank R: ok" per process when the result matches. */
#include <math.h>
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "tsmpi.h"

static void step(const double* in, double* out, int n) {
  for (int i = 1; i <= n; ++i) out[i] = 0.5 * in[i] + 0.25 * (in[i - 1] + in[i + 1]);
}

static double initial(long global_index) { return (global_index % 17) * 1.0; }

int main(int argc, char** argv) {
  int provided, wrank, wsize;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  int threads = argc > 1 ? atoi(argv[1]) : 3;
  int cells = argc > 2 ? atoi(argv[2]) : 1000;
  int steps = argc > 3 ? atoi(argv[3]) : 200;

  MPI_Comm tc;
  MPIX_Threadcomm_init(MPI_COMM_WORLD, threads, &tc);
  int failed = 0;
  double seconds = 0;
#pragma omp parallel num_threads(threads) reduction(+ : failed)
  {
    MPIX_Threadcomm_start(tc);
    int rank, size;
    MPI_Comm_rank(tc, &rank);
    MPI_Comm_size(tc, &size);
    /* Ends of the rod are fixed at 0: ranks at the ends exchange with MPI_PROC_NULL. */
    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL, right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    double* u = calloc((size_t)cells + 2, sizeof(double));
    double* v = calloc((size_t)cells + 2, sizeof(double));
    for (int i = 1; i <= cells; ++i) u[i] = initial((long)rank * cells + i - 1);
    double t0 = MPI_Wtime(), residual = 0;
    for (int s = 0; s < steps; ++s) {
      MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, 0, &u[cells + 1], 1, MPI_DOUBLE, right, 0, tc, MPI_STATUS_IGNORE);
      MPI_Sendrecv(&u[cells], 1, MPI_DOUBLE, right, 1, &u[0], 1, MPI_DOUBLE, left, 1, tc, MPI_STATUS_IGNORE);
      step(u, v, cells);
      double local = 0;
      for (int i = 1; i <= cells; ++i) local += fabs(v[i] - u[i]);
      MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, tc);
      double* t = u; u = v; v = t;
    }
    double t1 = MPI_Wtime();
    /* Rank 0 gathers the rod and solves it again alone. */
    double* rod = rank == 0 ? malloc(sizeof(double) * (size_t)cells * size) : NULL;
    MPI_Gather(&u[1], cells, MPI_DOUBLE, rod, cells, MPI_DOUBLE, 0, tc);
    if (rank == 0) {
      long n = (long)cells * size;
      double* a = calloc((size_t)n + 2, sizeof(double));
      double* b = calloc((size_t)n + 2, sizeof(double));
      for (long i = 1; i <= n; ++i) a[i] = initial(i - 1);
      for (int s = 0; s < steps; ++s) {
        step(a, b, (int)n);
        double* t = a; a = b; b = t;
      }
      for (long i = 0; i < n; ++i)
        if (a[i + 1] != rod[i]) {
          printf("threads_as_ranks: cell %ld: %g, the serial solve gives %g\n", i, rod[i], a[i + 1]);
          failed = 1;
          break;
        }
      printf("threads_as_ranks: %d processes x %d threads = %d thread-ranks, %d cells, %d steps, residual %.6g, "
             "%.1f us per step\n", wsize, threads, size, (int)n, steps, residual, (t1 - t0) / steps * 1e6);
      free(a);
      free(b);
      free(rod);
      seconds = t1 - t0;
    }
    free(u);
    free(v);
    MPIX_Threadcomm_finish(tc);
  }
  (void)seconds;
  MPIX_Threadcomm_free(&tc);
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  printf("threads_as_ranks: rank %d: %s\n", wrank, any ? "FAILED" : "ok");
  MPI_Finalize();
  return any;
}
