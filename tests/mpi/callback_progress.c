/* A blocking MPI call made inside a callback the MPI runs (an attribute delete callback run by
   MPI_Comm_free or MPI_Comm_delete_attr, an error handler run by MPI_Comm_call_errhandler) must
   not stop the process's other threads. Rank 0 has one thread in the callback, blocked in an
   MPI_Allreduce until rank 1 joins, and another thread sending to rank 1; rank 1 joins only after
   that message arrived (it gives up after WAIT_S seconds, so a process that withholds the message
   fails the check instead of hanging). Runs natively and under tsmpi at MPI_THREAD_MULTIPLE; in
   serialize mode such a callback holds tsmpi's lock (docs/serialize-mode.md, "What it cannot do"). */
#include <unistd.h>

#include "test_util.h"

#define WAIT_S 20.0

static int rank;
static MPI_Comm inner; /* the blocking calls inside callbacks run on it */
static int blocked_calls = 0;

static void blocking_call(void) {
  int one = 1, sum = 0;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, inner);
  blocked_calls += sum == 2;
}

static int delete_fn(MPI_Comm comm, int keyval, void* value, void* extra) {
  (void)comm, (void)keyval, (void)value, (void)extra;
  blocking_call();
  return MPI_SUCCESS;
}

static void handler(MPI_Comm* comm, int* code, ...) {
  (void)comm, (void)code;
  blocking_call();
}

static void* sender(void* arg) {
  usleep(100000);
  int v = (int)(long)arg;
  MPI_Send(&v, 1, MPI_INT, 1, v, MPI_COMM_WORLD);
  return NULL;
}

/* Rank 1: whether tag `tag` from rank 0 arrived within WAIT_S seconds; the value in *got. */
static int receive_in_time(int tag, int* got, MPI_Request* pending) {
  MPI_Irecv(got, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, pending);
  double start = MPI_Wtime();
  int flag = 0;
  while (!flag && MPI_Wtime() - start < WAIT_S) {
    MPI_Test(pending, &flag, MPI_STATUS_IGNORE);
    if (!flag) usleep(1000);
  }
  return flag;
}

enum { FREE, DELETE_ATTR, CALL_ERRHANDLER };
static const char* names[] = {"delete callback in MPI_Comm_free", "delete callback in MPI_Comm_delete_attr",
                              "error handler in MPI_Comm_call_errhandler"};

static void scenario(int which) {
  int keyval;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &keyval, NULL);
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_attr(c, keyval, NULL);
  MPI_Errhandler eh;
  MPI_Comm_create_errhandler(handler, &eh);
  MPI_Comm_set_errhandler(c, eh);
  MPI_Errhandler_free(&eh);
  int tag = 10 + which, arrived = -1, got = -1;
  MPI_Request pending = MPI_REQUEST_NULL;
  pthread_t thread;
  if (rank == 0) pthread_create(&thread, NULL, sender, (void*)(long)tag);
  else arrived = receive_in_time(tag, &got, &pending);
  switch (which) {
    case FREE: MPI_Comm_free(&c); break;
    case DELETE_ATTR: MPI_Comm_delete_attr(c, keyval); break;
    case CALL_ERRHANDLER: MPI_Comm_call_errhandler(c, MPI_ERR_OTHER); break;
  }
  if (rank == 0) {
    pthread_join(thread, NULL);
  } else {
    MPI_Wait(&pending, MPI_STATUS_IGNORE);
    CHECK(arrived == 1, "%s: the message of rank 0's other thread did not arrive before rank 1 joined", names[which]);
    CHECK(got == tag, "%s: received %d, expected %d", names[which], got, tag);
  }
  if (c != MPI_COMM_NULL) {
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Comm_free(&c);
  }
  MPI_Comm_free_keyval(&keyval);
}

int main(int argc, char** argv) {
  test_init_ranks(&argc, &argv, "callback_progress", 2, &rank);
  MPI_Comm_dup(MPI_COMM_WORLD, &inner);
  for (int which = FREE; which <= CALL_ERRHANDLER; ++which) scenario(which);
  /* one per scenario, and the delete callback of the last scenario's attribute at its free */
  CHECK(blocked_calls == 4, "collectives completed inside callbacks: %d of 4", blocked_calls);
  MPI_Comm_free(&inner);
  return test_finish();
}
