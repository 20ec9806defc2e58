/* One hung rank with three threads, for the hang watchdog. 2 ranks.
   Rank 0: a receiver thread blocks in MPI_Recv from rank 1, which never sends; a barrier thread
   blocks in MPI_Barrier on MPI_COMM_WORLD, which rank 1 never enters; the main thread, after
   an MPI call of its own, waits for them in pthread_join, outside MPI.
   Rank 1 sleeps outside MPI. alarm(S) (argument, default 10) ends both ranks after tsmpi's
   report: the wait-for graph has no cycle, rank 0 waits for rank 1, which is not blocked. */
#include <unistd.h>

#include "test_util.h"

static void* receiver_thread(void* arg) {
  (void)arg;
  int v;
  MPI_Recv(&v, 1, MPI_INT, 1, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return NULL;
}

static void* barrier_thread(void* arg) {
  (void)arg;
  MPI_Barrier(MPI_COMM_WORLD);
  return NULL;
}

int main(int argc, char** argv) {
  alarm(argc > 1 ? (unsigned)atoi(argv[1]) : 10);
  int rank;
  test_init_ranks(&argc, &argv, "hang_threads", 2, &rank);
  printf("hang_threads: rank %d started\n", rank);
  fflush(stdout);
  if (rank == 1) {
    for (;;) sleep(60); /* never sends, never enters the barrier */
  }
  pthread_t r, b;
  pthread_create(&r, NULL, receiver_thread, NULL);
  pthread_create(&b, NULL, barrier_thread, NULL);
  pthread_join(r, NULL);
  pthread_join(b, NULL);
  printf("hang_threads: rank 0: the receive completed\n");
  return test_finish();
}
