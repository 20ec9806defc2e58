/* Checks the thread level tsmpi reports: MPI_Init_thread's provided, MPI_Query_thread and
   MPI_Is_thread_main (true on the initializing thread, false on another).
   usage: thread_level REQUIRED EXPECTED_PROVIDED   (levels as names: single ... multiple) */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static int level_of(const char* s) {
  if (!strcmp(s, "single")) return MPI_THREAD_SINGLE;
  if (!strcmp(s, "funneled")) return MPI_THREAD_FUNNELED;
  if (!strcmp(s, "serialized")) return MPI_THREAD_SERIALIZED;
  if (!strcmp(s, "multiple")) return MPI_THREAD_MULTIPLE;
  return -1;
}

static int other_thread_flag = -1;
static void* other(void* arg) {
  (void)arg;
  MPI_Is_thread_main(&other_thread_flag);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 3 || level_of(argv[1]) < 0 || level_of(argv[2]) < 0) {
    fprintf(stderr, "usage: thread_level REQUIRED EXPECTED_PROVIDED\n");
    return 2;
  }
  int provided = -1, queried = -1, main_flag = -1;
  MPI_Init_thread(&argc, &argv, level_of(argv[1]), &provided);
  MPI_Query_thread(&queried);
  MPI_Is_thread_main(&main_flag);
  pthread_t t;
  pthread_create(&t, NULL, other, NULL);
  pthread_join(t, NULL);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int ok = provided == level_of(argv[2]) && queried == provided && main_flag == 1 && other_thread_flag == 0;
  printf("rank %d: provided=%d queried=%d expected=%d main=%d other=%d %s\n", rank, provided, queried,
         level_of(argv[2]), main_flag, other_thread_flag, ok ? "ok" : "WRONG");
  MPI_Finalize();
  return ok ? 0 : 1;
}
