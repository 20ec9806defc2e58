/* check_unordered.c's collective and request rules with POSIX threads: two threads of rank 0 make
   a pair of MPI calls that nothing of the program orders (TSMPI_CHECK reports "no ordering
   between thread A's CALL and thread B's CALL on OBJECT"), although the second thread sleeps
   200 ms first, so the calls never overlap in time and the program ends with correct data; and
   correct twins in which pthread synchronization orders the same calls.

   usage: check_unordered_pthreads MODE [KIND]      (2 ranks; rank 1 makes the peer side)
   MODE:
     barrier   both threads MPI_Barrier on one communicator
     wait      both MPI_Wait(&req) on one request variable (the later finds MPI_REQUEST_NULL)
   KIND, a correct twin:
     mutex     each call under one pthread mutex
     cond      the second thread waits on a condition variable until the first has called (the
               first is the one delayed here, so the second is waiting in pthread_cond_wait)
     barrier   a pthread_barrier_wait between the first call and the second
     join      a thread makes the first call; the main thread joins it and makes the second
     create    the main thread makes the first call, then creates the thread making the second
   Prints "check_unordered_pthreads: rank R: MODE[ twin KIND] done" and "...: rank R: ok". */
#include <unistd.h>

#include "test_util.h"

#define DELAY_US 200000
#define TAG 7

static int rank, peer, waits;
static const char* kind = "none";
static MPI_Comm comm;
static MPI_Request shared_req;
static int recv_val = -1;
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t bar;
static int first_done;

static int is(const char* k) { return !strcmp(kind, k); }

static void call(void) {
  int rc;
  if (waits) {
    MPI_Status st;
    rc = MPI_Wait(&shared_req, &st);
  } else {
    rc = MPI_Barrier(comm);
  }
  CHECK(rc == MPI_SUCCESS, "%s returned %d", waits ? "MPI_Wait" : "MPI_Barrier", rc);
}

static void* pair_thread(void* p) {
  int t = *(int*)p;
  if (is("barrier")) {
    if (t == 0) call();
    pthread_barrier_wait(&bar);
    if (t == 1) call();
    return NULL;
  }
  /* cond: the first thread is the late one, so that the second already waits on the condition
     variable when it is signalled. */
  if (t == (is("cond") ? 0 : 1)) usleep(DELAY_US);
  if (is("mutex")) {
    pthread_mutex_lock(&mtx);
    call();
    pthread_mutex_unlock(&mtx);
  } else if (is("cond")) {
    if (t == 0) {
      call();
      pthread_mutex_lock(&mtx);
      first_done = 1;
      pthread_cond_signal(&cond);
      pthread_mutex_unlock(&mtx);
    } else {
      pthread_mutex_lock(&mtx);
      while (!first_done) pthread_cond_wait(&cond, &mtx);
      pthread_mutex_unlock(&mtx);
      call();
    }
  } else {  /* none, or one thread of join/create */
    call();
  }
  return NULL;
}

int main(int argc, char** argv) {
  test_init_pair(&argc, &argv, "check_unordered_pthreads", &rank, &peer);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const char* mode = argc > 1 ? argv[1] : "";
  if (argc > 2) kind = argv[2];
  waits = !strcmp(mode, "wait");
  if ((!waits && strcmp(mode, "barrier")) ||
      !(is("none") || is("mutex") || is("cond") || is("barrier") || is("join") || is("create"))) {
    if (rank == 0) printf("check_unordered_pthreads: unknown mode or twin '%s' '%s'\n", mode, kind);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  if (waits && rank == 0) MPI_Irecv(&recv_val, 1, MPI_INT, 1, TAG, comm, &shared_req);
  /* Rank 1 sends before the barrier: the first wait ends at once however loaded the machine,
     long before the second thread's delay is over (check_unordered.c, prepare()). */
  if (waits && rank == 1) {
    int v = 42;
    MPI_Send(&v, 1, MPI_INT, 0, TAG, comm);
  }
  pthread_barrier_init(&bar, NULL, 2);
  /* Rank 1 is in its calls when rank 0's threads make theirs. */
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    int ids[2] = {0, 1};
    pthread_t th;
    if (is("join")) {
      pthread_create(&th, NULL, pair_thread, &ids[0]);
      pthread_join(th, NULL);
      call();
    } else if (is("create")) {
      call();
      pthread_create(&th, NULL, pair_thread, &ids[0]);
      pthread_join(th, NULL);
    } else {
      run_threads(2, pair_thread, ids, sizeof ids[0]);
    }
    if (waits) {
      CHECK(recv_val == 42, "received %d, expected 42", recv_val);
      CHECK(shared_req == MPI_REQUEST_NULL, "the request is not MPI_REQUEST_NULL");
    }
  } else if (!waits) {
    MPI_Barrier(comm);
    MPI_Barrier(comm);
  }
  pthread_barrier_destroy(&bar);
  MPI_Comm_free(&comm);
  printf("check_unordered_pthreads: rank %d: %s%s%s done\n", rank, mode, is("none") ? "" : " twin ",
         is("none") ? "" : kind);
  return test_finish();
}
