/* Many threads in nonblocking point-to-point with large (rendezvous) messages: every rank runs
   as many threads as there are ranks; thread t of rank p posts MPI_Isend to rank t and MPI_Irecv
   from rank t (the receiving thread at rank t is thread p: the tag names it), then MPI_Waitall
   on its own two requests. Sizes from 1 int up to MAX_INTS ints (x4 each step, and MAX_INTS),
   ROUNDS rounds per size, a pthread barrier between rounds. Every received int is checked.

   usage: serial_rendezvous MAX_INTS ROUNDS */
#include "test_util.h"

static int rank, size, max_ints, rounds;
static pthread_barrier_t barrier;

static int value(int from, int to, int round, int i) { return (from * 31 + to) * 1000003 + round * 7919 + i; }

static void* worker(void* arg) {
  int t = *(int*)arg;
  int* out = malloc((size_t)max_ints * sizeof *out);
  int* in = malloc((size_t)max_ints * sizeof *in);
  int round = 0;
  for (int n = 1;; n = n * 4 > max_ints && n < max_ints ? max_ints : n * 4) {
    for (int r = 0; r < rounds; ++r, ++round) {
      for (int i = 0; i < n; ++i) out[i] = value(rank, t, round, i);
      MPI_Request req[2];
      MPI_Irecv(in, n, MPI_INT, t, t, MPI_COMM_WORLD, &req[0]);
      MPI_Isend(out, n, MPI_INT, t, rank, MPI_COMM_WORLD, &req[1]);
      MPI_Status st[2];
      int rc = MPI_Waitall(2, req, st);
      int bad = rc != MPI_SUCCESS;
      for (int i = 0; i < n && !bad; ++i) bad = in[i] != value(t, rank, round, i);
      CHECK(!bad, "thread %d: round %d of %d ints from rank %d wrong (rc %d)", t, round, n, t, rc);
      pthread_barrier_wait(&barrier);
    }
    if (n >= max_ints) break;
  }
  free(out);
  free(in);
  return NULL;
}

int main(int argc, char** argv) {
  test_init(&argc, &argv, "serial_rendezvous");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 3) {
    if (rank == 0) printf("usage: serial_rendezvous MAX_INTS ROUNDS\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  max_ints = atoi(argv[1]);
  rounds = atoi(argv[2]);
  pthread_barrier_init(&barrier, NULL, size);
  double t0 = MPI_Wtime();
  int* index = malloc(size * sizeof *index);
  for (int t = 0; t < size; ++t) index[t] = t;
  run_threads(size, worker, index, sizeof *index);
  free(index);
  pthread_barrier_destroy(&barrier);
  if (rank == 0) printf("serial_rendezvous: %d ranks x %d threads, up to %d ints, %d rounds per size in %.2f s\n", size, size,
                        max_ints, rounds, MPI_Wtime() - t0);
  return test_finish();
}
