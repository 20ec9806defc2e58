/* Passive-target RMA from several threads: MPI_Win_allocate + MPI_Win_lock_all, then every thread
   of every rank loops MPI_Put of one int into its own slot at rank 0 followed by
   MPI_Win_flush(0, win), then MPI_Win_unlock_all. Checked: each slot at rank 0 holds the last
   value its thread put. Also MPI_Win_lock(exclusive)/MPI_Win_unlock, MPI_Get + MPI_Win_flush_local
   and MPI_Accumulate + MPI_Win_flush_all from each thread.

   usage: serial_rma_threads THREADS ITERATIONS   (2 or more ranks) */
#include "test_util.h"

static int rank, size, threads, iterations;
static MPI_Win win;
static int* base;

static void* worker(void* arg) {
  int t = *(int*)arg, slot = rank * threads + t;
  for (int i = 1; i <= iterations; ++i) {
    int v = slot * 1000003 + i;
    MPI_Put(&v, 1, MPI_INT, 0, slot, 1, MPI_INT, win);
    MPI_Win_flush(0, win);
  }
  /* Read back the own slot and add to the shared counter at every rank (the last slot). */
  int got = -1, one = 1;
  MPI_Get(&got, 1, MPI_INT, 0, slot, 1, MPI_INT, win);
  MPI_Win_flush_local(0, win);
  CHECK(got == slot * 1000003 + iterations, "slot %d read back %d", slot, got);
  for (int r = 0; r < size; ++r) MPI_Accumulate(&one, 1, MPI_INT, r, size * threads, 1, MPI_INT, MPI_SUM, win);
  MPI_Win_flush_all(win);
  return NULL;
}

int main(int argc, char** argv) {
  test_init(&argc, &argv, "serial_rma_threads");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 3 || size < 2) {
    if (rank == 0) printf("usage: serial_rma_threads THREADS ITERATIONS (2 or more ranks)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  threads = atoi(argv[1]);
  iterations = atoi(argv[2]);
  int slots = size * threads + 1;
  MPI_Win_allocate(slots * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  int* zeros = calloc(slots, sizeof *zeros);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
  MPI_Put(zeros, slots, MPI_INT, rank, 0, slots, MPI_INT, win);
  MPI_Win_unlock(rank, win);
  free(zeros);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  MPI_Win_lock_all(0, win);
  int* index = malloc(threads * sizeof *index);
  for (int t = 0; t < threads; ++t) index[t] = t;
  run_threads(threads, worker, index, sizeof *index);
  free(index);
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  double dt = MPI_Wtime() - t0;
  /* Read through the window, not with loads: the window may be in the separate memory model. */
  int* seen = malloc(slots * sizeof *seen);
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
  MPI_Get(seen, slots, MPI_INT, rank, 0, slots, MPI_INT, win);
  MPI_Win_unlock(rank, win);
  if (rank == 0)
    for (int s = 0; s < size * threads; ++s)
      CHECK(seen[s] == s * 1000003 + iterations, "slot %d holds %d", s, seen[s]);
  CHECK(seen[size * threads] == size * threads, "counter at rank %d is %d, expected %d", rank, seen[size * threads],
        size * threads);
  free(seen);
  MPI_Win_free(&win);
  if (rank == 0) printf("serial_rma_threads: %d ranks x %d threads x %d put+flush in %.2f s\n", size, threads, iterations, dt);
  return test_finish();
}
