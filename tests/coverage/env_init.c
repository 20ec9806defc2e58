/* Coverage: MPI_Init. Every other coverage program starts with cov_init (MPI_Init_thread); this
   one initializes with plain MPI_Init, then does what cov_init does after it (MPI_ERRORS_RETURN on
   MPI_COMM_WORLD) and records the thread level MPI_Query_thread reports and a little traffic. */
// ranks: 2
#include "coverage.h"

int main(int argc, char** argv) {
  cov_name = "env_init";
  (void)cov_init; /* not used here: this program is about MPI_Init */
  int flag = -1;
  MPI_Initialized(&flag);
  int before = flag;
  int rc = MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = -1, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  SAY("init rc %d, initialized before %d", rc, before);
  MPI_Initialized(&flag);
  SAY("initialized after %d, size %d", flag, size);
  int provided = -1;
  MPI_Query_thread(&provided);
  SAY("query_thread %d (single %d funneled %d serialized %d multiple %d)", provided,
      MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE);
  MPI_Is_thread_main(&flag);
  SAY("is_thread_main %d", flag);
  /* The world works as after MPI_Init_thread: a ring exchange and a reduction. */
  int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
  int value = 100 + rank;
  rc = MPI_Sendrecv(&value, 1, MPI_INT, right, 5, &got, 1, MPI_INT, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  SAY("sendrecv rc %d got %d", rc, got);
  CHECK(got == 100 + left);
  int sum = 0;
  MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  SAY("allreduce sum %d", sum);
  return cov_finish();
}
