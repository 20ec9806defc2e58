/* rtt: threaded round-trip time between two processes, seed 001 §4.2 (Fig. 3).
   usage: rtt probe|mprobe THREADS ROUNDS SIZE...                                 (np = 2)
   Each process runs THREADS threads. Thread j of rank 0 waits at a pthread barrier, then does
   ROUNDS round trips (fewer above 1 KiB): it sends a message with tag j to rank 1 and receives
   one reply. Rank 1's threads receive requests and send each back with its tag. Receives are
   probe -> receive, from the peer with tag j ("directed") or with MPI_ANY_SOURCE/MPI_ANY_TAG
   ("any"), in the same two programs as msgrate.c:
     probe:  MPI_Probe + MPI_Recv (racy natively with wildcards; false matches counted)
     mprobe: MPI_Mprobe + MPI_Mrecv (the native thread-safe program)
   For each pattern (directed, then any) and SIZE, rank 0 prints one line:
     rtt pattern=P size=S rounds=N rtt_us=T false_matches=F drains=D errors=E
   rtt_us: wall time from the barrier to the last thread's last reply, divided by the rounds of
   one thread, in microseconds. Both processes' false matches, drains and errors are summed. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stranded.h"

static MPI_Comm data, ctrl;
static int use_mprobe, directed, size, threads, rank;
static long rounds;
static struct worker* workers;
static double *start, *finish;
static pthread_barrier_t go;

static long rounds_for(long base, int bytes) {
  long n = bytes <= 1024 ? base : base * 1024 / bytes;
  return n < 20 ? 20 : n;
}

static void* client(void* arg) {  /* rank 0 */
  int j = (int)(long)arg;
  struct worker* w = &workers[j];
  char* buf = malloc((size_t)size + 2);
  memset(buf, 0, (size_t)size + 2);
  MPI_Status st;
  pthread_barrier_wait(&go);
  start[j] = MPI_Wtime();
  for (long i = 0; i < rounds; ++i) {
    memset(buf, 0, (size_t)data_count(size, i));  /* a false match may have left other bytes */
    MPI_Send(buf, data_count(size, i), MPI_BYTE, 1, j, data);
    ++w->sent;
    while (!probe_receive(w, data, directed ? 1 : MPI_ANY_SOURCE, directed ? j : MPI_ANY_TAG, use_mprobe, buf, size + 2,
                          &st)) {
    }
  }
  finish[j] = MPI_Wtime();
  atomic_store(&w->done, 1);
  free(buf);
  return NULL;
}

static void* server(void* arg) {  /* rank 1 */
  int j = (int)(long)arg;
  struct worker* w = &workers[j];
  char* buf = malloc((size_t)size + 2);
  MPI_Status st;
  for (long served = 0; served < rounds;) {
    if (!probe_receive(w, data, directed ? 0 : MPI_ANY_SOURCE, directed ? j : MPI_ANY_TAG, use_mprobe, buf, size + 2,
                       &st))
      continue;
    memset(buf, 1, (size_t)data_count(size, served));
    MPI_Send(buf, data_count(size, served), MPI_BYTE, 0, st.MPI_TAG, data);
    ++w->sent;
    ++served;
  }
  atomic_store(&w->done, 1);
  free(buf);
  return NULL;
}

static double round_trip(long* totals) {
  MPI_Barrier(MPI_COMM_WORLD);
  pthread_t tid[threads];
  for (int j = 0; j < threads; ++j) worker_reset(&workers[j]);
  for (long j = 0; j < threads; ++j) pthread_create(&tid[j], NULL, rank == 0 ? client : server, (void*)j);
  int peer = 1 - rank;
  struct stranded side;
  stranded_begin(&side, data, ctrl, &peer, 1);
  stranded_serve(&side, workers, threads, size + 1);
  for (int j = 0; j < threads; ++j) pthread_join(tid[j], NULL);
  long mine[3] = {0, 0, 0};
  double first = 0, last = 0;
  for (int j = 0; j < threads; ++j) {
    mine[0] += workers[j].false_matches;
    mine[1] += workers[j].drains;
    mine[2] += workers[j].errors;
    if (rank == 0 && (j == 0 || start[j] < first)) first = start[j];
    if (rank == 0 && finish[j] > last) last = finish[j];
  }
  MPI_Reduce(mine, totals, 3, MPI_LONG, MPI_SUM, 0, ctrl);
  return (last - first) / rounds * 1e6;
}

int main(int argc, char** argv) {
  int provided, np;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (argc < 5 || np != 2 || atoi(argv[2]) < 1 || (strcmp(argv[1], "probe") && strcmp(argv[1], "mprobe")) ||
      provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0) fprintf(stderr, "usage: rtt probe|mprobe THREADS ROUNDS SIZE... (np = 2, MPI_THREAD_MULTIPLE)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  use_mprobe = !strcmp(argv[1], "mprobe");
  threads = atoi(argv[2]);
  long base = atol(argv[3]);
  stranded_comms(&data, &ctrl);
  workers = calloc((size_t)threads, sizeof *workers);
  start = calloc((size_t)threads, sizeof *start);
  finish = calloc((size_t)threads, sizeof *finish);
  pthread_barrier_init(&go, NULL, (unsigned)threads);
  long warm[3];
  directed = 1, size = 1, rounds = 50;
  round_trip(warm);  /* connections and first-touch costs, not reported */
  for (directed = 1; directed >= 0; --directed) {
    for (int a = 4; a < argc; ++a) {
      size = atoi(argv[a]);
      rounds = rounds_for(base, size);
      long totals[3] = {0, 0, 0};
      double us = round_trip(totals);
      if (rank == 0)
        printf("rtt pattern=%s size=%d rounds=%ld rtt_us=%.3f false_matches=%ld drains=%ld errors=%ld\n",
               directed ? "directed" : "any", size, rounds, us, totals[0], totals[1], totals[2]);
      fflush(stdout);
    }
  }
  pthread_barrier_destroy(&go);
  MPI_Comm_free(&ctrl);
  MPI_Comm_free(&data);
  free(workers);
  free(start);
  free(finish);
  MPI_Finalize();
  return 0;
}
