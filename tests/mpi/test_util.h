/* Helpers for the multi-process test programs: MPI_Init_thread at the level the test asks for
   (MPI_THREAD_MULTIPLE unless TEST_THREAD_LEVEL names another, to run a program natively on an
   MPI below MULTIPLE), failure counting, and a verdict line per rank. */
#ifndef TSMPI_TEST_UTIL_H
#define TSMPI_TEST_UTIL_H
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_int test_failures;
static const char* test_name = "test";

#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (!(cond)) {                                                    \
      int rank_;                                                      \
      MPI_Comm_rank(MPI_COMM_WORLD, &rank_);                          \
      printf("%s: rank %d: check failed: %s: ", test_name, rank_, #cond); \
      printf(__VA_ARGS__);                                            \
      printf("\n");                                                   \
      fflush(stdout);                                                 \
      atomic_fetch_add(&test_failures, 1);                            \
    }                                                                 \
  } while (0)

static inline void test_init(int* argc, char*** argv, const char* name) {
  test_name = name;
  int required = MPI_THREAD_MULTIPLE, provided;
  const char* level = getenv("TEST_THREAD_LEVEL");
  if (level && !strcmp(level, "single")) required = MPI_THREAD_SINGLE;
  if (level && !strcmp(level, "serialized")) required = MPI_THREAD_SERIALIZED;
  MPI_Init_thread(argc, argv, required, &provided);
  if (required == MPI_THREAD_MULTIPLE && provided != MPI_THREAD_MULTIPLE) {
    printf("%s: MPI_THREAD_MULTIPLE not provided (%d)\n", name, provided);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
}

/* For programs between exactly two ranks: this rank and the other one. */
/* test_init for a program that needs exactly `ranks` processes; sets *rank. */
static inline void test_init_ranks(int* argc, char*** argv, const char* name, int ranks, int* rank) {
  test_init(argc, argv, name);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != ranks) {
    printf("%s: needs exactly %d ranks\n", name, ranks);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

static inline void test_init_pair(int* argc, char*** argv, const char* name, int* rank, int* peer) {
  test_init_ranks(argc, argv, name, 2, rank);
  *peer = 1 - *rank;
}

/* Prints "<name>: rank R: ok" or "... FAILED" and finalizes; returns the exit status (1 also
   when MPI_Finalize fails, which it prints). */
static inline int test_finish(void) {
  int rank, mine = atomic_load(&test_failures), total = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("%s: rank %d: %s\n", test_name, rank, total ? "FAILED" : "ok");
  fflush(stdout);
  /* Every rank's verdict is out before any rank finalizes: a rank whose MPI_Finalize fails
     (MPICH 4.2 refuses to finalize with a message never received) ends without telling its
     launcher, and Hydra then kills the others, maybe before they printed. */
  MPI_Barrier(MPI_COMM_WORLD);
  int rc = MPI_Finalize();
  if (rc != MPI_SUCCESS) {
    printf("%s: rank %d: MPI_Finalize returned %d\n", test_name, rank, rc);
    fflush(stdout);
    return 1;
  }
  return total ? 1 : 0;
}

typedef void* (*thread_fn)(void*);
static inline void run_threads(int n, thread_fn fn, void* args, size_t arg_size) {
  pthread_t* tids = malloc(n * sizeof *tids);
  for (int i = 0; i < n; ++i) pthread_create(&tids[i], NULL, fn, (char*)args + i * arg_size);
  for (int i = 0; i < n; ++i) pthread_join(tids[i], NULL);
  free(tids);
}
/* A thread's index and its own duplicate of MPI_COMM_WORLD. */
typedef struct {
  int index;
  MPI_Comm comm;
} ThreadComm;

/* Runs n threads, each given a ThreadComm; the duplicates are made before and freed after, in
   the same order on every rank. */
static inline void run_threads_with_own_comms(int n, thread_fn fn) {
  ThreadComm* args = malloc(n * sizeof *args);
  for (int t = 0; t < n; ++t) {
    args[t].index = t;
    MPI_Comm_dup(MPI_COMM_WORLD, &args[t].comm);
  }
  run_threads(n, fn, args, sizeof args[0]);
  for (int t = 0; t < n; ++t) MPI_Comm_free(&args[t].comm);
  free(args);
}
#endif
