/* MPI_Barrier on an intercommunicator returns at a process only after every process of the other
   group has called it (MPI-4.0 §6.4). Each round one process, in turn each of the 4 (2 in each
   group), sleeps 200 ms, creates a file, then calls the barrier; after it every process checks
   that the file exists. A barrier that lets a process go on before the late one has called it
   fails the check (Open MPI 4.1's MPI_Ibarrier does for processes that are not rank 0 of their
   group, so serialize mode must not make MPI_Barrier on an intercommunicator that way). Threads:
   the barrier is called from a second thread while the main thread waits for it. */
// ranks: 4
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

#define ROUNDS 8

static MPI_Comm inter;
static int world_rank;
static char path[256];

static void* barrier_thread(void* arg) {
  (void)arg;
  MPI_Barrier(inter);
  return NULL;
}

int main(int argc, char** argv) {
  test_init_ranks(&argc, &argv, "intercomm_barrier", 4, &world_rank);
  int left = world_rank < 2;
  MPI_Comm local;
  MPI_Comm_split(MPI_COMM_WORLD, left, world_rank, &local);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, left ? 2 : 0, 5, &inter);
  long job = getpid();
  MPI_Bcast(&job, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  for (int round = 0; round < ROUNDS; ++round) {
    int late = round % 4;
    snprintf(path, sizeof path, "/tmp/tsmpi_intercomm_barrier_%ld_%d", job, round);
    if (world_rank == late) {
      usleep(200 * 1000);
      FILE* f = fopen(path, "w");
      CHECK(f != NULL, "cannot create %s", path);
      if (f) fclose(f);
    }
    pthread_t t;
    pthread_create(&t, NULL, barrier_thread, NULL);
    pthread_join(t, NULL);
    struct stat st;
    CHECK(stat(path, &st) == 0, "round %d: the barrier returned before rank %d called it", round, late);
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank == late) unlink(path);
  }
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
  return test_finish();
}
