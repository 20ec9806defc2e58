/* Threads that wait for each other's nonblocking duplications (the shape of MPICH's
   threads/comm/idup_deadlock): each of THREADS threads duplicates its own communicator with
   MPI_Comm_idup and waits for it, then clears its flag. On even ranks the even threads first wait,
   reading the flags under a mutex, until at most half the threads still have theirs set: so on
   even ranks the odd threads' duplications must complete while the even threads' have not even
   started, although on odd ranks every thread started at once. Repeated ROUNDS times.
   Usage: idup_start_flags [info] [threads]. Needs at least 2 ranks. */
#include <sched.h>

#include "idup_overlap_util.h"

#define ROUNDS 5
#define MAX_THREADS 16

static pthread_mutex_t flags_lock = PTHREAD_MUTEX_INITIALIZER;
static int started[MAX_THREADS];  /* 1 until the thread's duplication completed; under flags_lock */
static int threads;

static int flags_set(void) {
  pthread_mutex_lock(&flags_lock);
  int n = 0;
  for (int i = 0; i < threads; ++i) n += started[i];
  pthread_mutex_unlock(&flags_lock);
  return n;
}

static void* duplicate_when_allowed(void* arg) {
  ThreadComm* self = arg;
  int rank, size;
  MPI_Comm_rank(self->comm, &rank);
  MPI_Comm_size(self->comm, &size);
  if (self->index % 2 == 0 && rank % 2 == 0)
    while (flags_set() > threads / 2) sched_yield();
  MPI_Comm dup;
  MPI_Request request;
  start_idup(self->comm, &dup, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  pthread_mutex_lock(&flags_lock);
  started[self->index] = 0;
  pthread_mutex_unlock(&flags_lock);
  check_comm(dup, 0, size, 0, "idup");
  MPI_Comm_free(&dup);
  return NULL;
}

int main(int argc, char** argv) {
  test_init(&argc, &argv, "idup_start_flags");
  overlap_forms_from_args(argc, argv);
  threads = argc > 2 ? atoi(argv[2]) : 4;
  if (threads < 2 || threads > MAX_THREADS) threads = 4;
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    printf("idup_start_flags: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (int round = 0; round < ROUNDS; ++round) {
    for (int i = 0; i < threads; ++i) started[i] = 1;
    run_threads_with_own_comms(threads, duplicate_when_allowed);
  }
  overlap_forms_done();
  return test_finish();
}
