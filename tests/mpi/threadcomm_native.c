/* MPIX_Threadcomm_* as MPICH 4.2 declares them in its own mpi.h, from a program that does not
   link tsmpi (no tsmpi.h, no -ltsmpi): natively it gets MPICH's threadcomm; under tsmpirun it
   gets tsmpi's thread-ranks (TSMPI_THREADCOMM=tsmpi, the default: tsmpi's definitions are
   preloaded) or MPICH's own through tsmpi's wrappers (TSMPI_THREADCOMM=native). Either way the
   program must not tell the difference:
   each process opens an OpenMP region of THREADS threads, each a rank of the threadcomm
   (MPIX_Threadcomm_start); every thread-rank checks its rank and the size (processes x THREADS),
   sends ROUNDS messages around the ring of all thread-ranks (MPI_Isend/MPI_Irecv/MPI_Waitall,
   and MPI_Send/MPI_Recv; not MPI_Sendrecv, on which MPICH 4.2.1's own threadcomm crashes in UCX) with data that names sender and round, and takes part in an
   MPI_Allreduce of its rank and an MPI_Barrier; then MPIX_Threadcomm_finish, and after the
   region MPIX_Threadcomm_free. Every process prints "threadcomm_native: rank R: ok" (its rank in
   MPI_COMM_WORLD) or "... FAILED" with the failed checks, exit status 1.
   Usage: threadcomm_native [threads] [rounds]   (default 4 threads, 20 rounds; any number of
   processes). Needs MPI_THREAD_MULTIPLE from the MPI (MPICH's threadcomm does). */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static int failures;

#define CHECK(cond, ...)                                      \
  do {                                                        \
    if (!(cond)) {                                            \
      _Pragma("omp critical(report)") {                       \
        printf("threadcomm_native: check failed: " __VA_ARGS__); \
        printf("\n");                                         \
        ++failures;                                           \
      }                                                       \
    }                                                         \
  } while (0)

int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 4, rounds = argc > 2 ? atoi(argv[2]) : 20;
  int provided = 0, wrank = 0, wsize = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  if (threads < 1 || rounds < 1) {
    if (wrank == 0) printf("usage: threadcomm_native [threads >= 1] [rounds >= 1]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm tc = MPI_COMM_NULL;
  int rc = MPIX_Threadcomm_init(MPI_COMM_WORLD, threads, &tc);
  CHECK(rc == MPI_SUCCESS && tc != MPI_COMM_NULL, "MPIX_Threadcomm_init returned %d", rc);
  if (rc == MPI_SUCCESS) {
#pragma omp parallel num_threads(threads)
    {
      int r = MPIX_Threadcomm_start(tc);
      CHECK(r == MPI_SUCCESS, "MPIX_Threadcomm_start returned %d", r);
      int rank = -1, size = -1;
      MPI_Comm_rank(tc, &rank);
      MPI_Comm_size(tc, &size);
      CHECK(size == wsize * threads, "size %d, expected %d", size, wsize * threads);
      CHECK(rank >= wrank * threads && rank < (wrank + 1) * threads, "rank %d of process %d", rank, wrank);
      const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
      for (int i = 0; i < rounds; ++i) {
        int out[2] = {rank, i}, in[2] = {-1, -1};
        int in2[2] = {-1, -1};
        MPI_Request q[2];
        MPI_Irecv(in2, 2, MPI_INT, prev, 1000 + i, tc, &q[0]);
        MPI_Isend(out, 2, MPI_INT, next, 1000 + i, tc, &q[1]);
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        CHECK(in2[0] == prev && in2[1] == i, "isend/irecv round %d got %d/%d", i, in2[0], in2[1]);
        if (rank % 2 == 0) {  /* blocking send/recv pairs, ordered so that nobody waits on itself */
          MPI_Send(out, 2, MPI_INT, next, 2000 + i, tc);
          MPI_Recv(in, 2, MPI_INT, prev, 2000 + i, tc, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(in, 2, MPI_INT, prev, 2000 + i, tc, MPI_STATUS_IGNORE);
          MPI_Send(out, 2, MPI_INT, next, 2000 + i, tc);
        }
        CHECK(in[0] == prev && in[1] == i, "send/recv round %d got %d/%d", i, in[0], in[1]);
      }
      int sum = -1;
      MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, tc);
      CHECK(sum == size * (size - 1) / 2, "allreduce %d, expected %d", sum, size * (size - 1) / 2);
      MPI_Barrier(tc);
      r = MPIX_Threadcomm_finish(tc);
      CHECK(r == MPI_SUCCESS, "MPIX_Threadcomm_finish returned %d", r);
    }
    rc = MPIX_Threadcomm_free(&tc);
    CHECK(rc == MPI_SUCCESS && tc == MPI_COMM_NULL, "MPIX_Threadcomm_free returned %d", rc);
  }
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("threadcomm_native: rank %d: %s\n", wrank, failures ? "FAILED" : "ok");
  MPI_Finalize();
  return failures ? 1 : 0;
}
