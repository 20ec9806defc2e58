/* Threads run collectives on per-thread communicators, started in opposite orders on even and
   odd ranks: nonblocking-convertible ones (Barrier, Bcast, Allreduce, Allgather, Alltoall,
   Reduce_scatter_block) and ones without a nonblocking form (Comm_split, Win_fence), which go
   through the admission protocol in serialize mode. */
#include <unistd.h>

#include "test_util.h"

enum { kThreads = 3, kRounds = 24 };  /* each thread splits and fences in 3 of them */
static int rank, size;

static void collectives(MPI_Comm comm, int salt) {
  int v = rank + salt, sum = -1;
  MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, comm);
  CHECK(sum == size * (size - 1) / 2 + size * salt, "allreduce %d", sum);
  int root_value = rank == salt % size ? salt * 3 : -1;
  MPI_Bcast(&root_value, 1, MPI_INT, salt % size, comm);
  CHECK(root_value == salt * 3, "bcast %d", root_value);
  int* all = malloc(size * sizeof *all);
  MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, comm);
  for (int i = 0; i < size; ++i) CHECK(all[i] == i + salt, "allgather[%d] = %d", i, all[i]);
  int* out = malloc(size * sizeof *out);
  for (int i = 0; i < size; ++i) out[i] = rank * 100 + i + salt;
  MPI_Alltoall(out, 1, MPI_INT, all, 1, MPI_INT, comm);
  for (int i = 0; i < size; ++i) CHECK(all[i] == i * 100 + rank + salt, "alltoall[%d] = %d", i, all[i]);
  int piece = -1;
  MPI_Reduce_scatter_block(out, &piece, 1, MPI_INT, MPI_SUM, comm);
  CHECK(piece == 100 * size * (size - 1) / 2 + size * (rank + salt), "reduce_scatter_block %d", piece);
  MPI_Barrier(comm);
  free(all);
  free(out);
}

static void split_and_fence(MPI_Comm comm, int salt) {
  MPI_Comm half;
  MPI_Comm_split(comm, rank % 2, -rank, &half); /* reversed key: reversed ranks */
  int hrank, hsize;
  MPI_Comm_rank(half, &hrank);
  MPI_Comm_size(half, &hsize);
  CHECK(hsize == (size + 1 - rank % 2) / 2, "split size %d", hsize);
  int sum = 0;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, half);
  int expect = 0;
  for (int r = rank % 2; r < size; r += 2) expect += r;
  CHECK(sum == expect, "split allreduce %d != %d", sum, expect);
  MPI_Comm_free(&half);

  /* MPI_Win_create: MPICH 4.0.2's MPI_Win_allocate windows lose fence-synchronized puts
     here even with one thread. */
  int* base = malloc(sizeof(int));
  MPI_Win win;
  MPI_Win_create(base, sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &win);
  *base = -1;
  MPI_Win_fence(0, win);
  int value = rank * 10 + salt;
  MPI_Put(&value, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  int from = (rank + size - 1) % size;
  CHECK(*base == from * 10 + salt, "window holds %d, want %d", *base, from * 10 + salt);
  MPI_Win_free(&win);
  free(base);
}

static void* worker(void* p) {
  ThreadComm* a = p;
  /* Opposite orders: thread 0 starts first on even ranks and last on odd ranks. */
  int delay = rank % 2 ? a->index : kThreads - 1 - a->index;
  usleep(2000 * delay);
  for (int round = 0; round < kRounds; ++round) {
    collectives(a->comm, round + a->index);
    if (round % 8 == a->index) split_and_fence(a->comm, round);
  }
  return NULL;
}

int main(int argc, char** argv) {
  test_init(&argc, &argv, "serial_collectives");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  run_threads_with_own_comms(kThreads, worker);
  return test_finish();
}
