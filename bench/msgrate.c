/* msgrate: receive message rate of a multithreaded process, seed 001 §4.1 (Fig. 2).
   usage: msgrate probe|mprobe THREADS MESSAGES SIZE...      (np >= 2: np-1 sender processes)
   Rank 0 runs THREADS receiving threads; thread j is fed by sender 1 + j % (np-1), which sends
   it MESSAGES messages (fewer above 256 B, see messages_for) with tag j+1. Thread j receives
   from its sender with tag j+1 ("directed") or with MPI_ANY_SOURCE / MPI_ANY_TAG ("any"),
   every message by probe -> receive:
     probe:  MPI_Probe + MPI_Recv of the probed source and tag, into a buffer of the largest
             size: racy natively with wildcards (false matches counted); thread-safe under
             tsmpi's probe policies
     mprobe: MPI_Mprobe + MPI_Mrecv, the native thread-safe program
   For each pattern (directed, then any) and SIZE, rank 0 prints one line:
     msgrate pattern=P size=S messages=N rate=R false_matches=F drains=D errors=E
   rate: messages per second, from the release of the senders to the last receive. Every data
   byte is checked (errors); stranded.h keeps the racy program from hanging (drains). */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stranded.h"

static MPI_Comm data, ctrl;
static int use_mprobe, directed, size, threads;
static long messages;
static struct worker* workers;
static double* finish;

/* Fewer messages above 256 B, so that every size takes similar time on the wire. */
static long messages_for(long base, int bytes) {
  long n = bytes <= 256 ? base : base * 256 / bytes;
  return n < 100 ? 100 : n;
}

static void* receiver(void* arg) {
  int j = (int)(long)arg;
  struct worker* w = &workers[j];
  char* buf = malloc((size_t)size + 2);
  int senders = 0;
  MPI_Comm_size(data, &senders);
  --senders;
  int source = directed ? 1 + j % senders : MPI_ANY_SOURCE, tag = directed ? j + 1 : MPI_ANY_TAG;
  MPI_Status st;
  for (long got = 0; got < messages;) got += probe_receive(w, data, source, tag, use_mprobe, buf, size + 2, &st);
  finish[j] = MPI_Wtime();
  atomic_store(&w->done, 1);
  free(buf);
  return NULL;
}

/* One measurement: returns the rate at rank 0. */
static double round_of(int rank, int np, long* totals) {
  int senders = np - 1;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  if (rank == 0) {
    pthread_t tid[threads];
    int peers[senders];
    for (int j = 0; j < threads; ++j) worker_reset(&workers[j]);
    for (int p = 0; p < senders; ++p) peers[p] = p + 1;
    struct stranded side;
    stranded_begin(&side, data, ctrl, peers, senders);
    for (long j = 0; j < threads; ++j) pthread_create(&tid[j], NULL, receiver, (void*)j);
    stranded_serve(&side, workers, threads, size + 1);
    for (int j = 0; j < threads; ++j) pthread_join(tid[j], NULL);
    double last = t0;
    for (int j = 0; j < threads; ++j) {
      if (finish[j] > last) last = finish[j];
      totals[0] += workers[j].false_matches;
      totals[1] += workers[j].drains;
      totals[2] += workers[j].errors;
    }
    return messages * threads / (last - t0);
  }
  char* buf = malloc((size_t)size + 2);
  memset(buf, rank, (size_t)size + 2);
  int peer = 0;
  struct stranded side;
  stranded_begin(&side, data, ctrl, &peer, 1);
  long sent = 0; /* the size alternates along this sender's stream, whichever thread it feeds */
  for (long i = 0; i < messages; ++i)
    for (int j = rank - 1; j < threads; j += senders) stranded_send(&side, buf, data_count(size, sent++), 0, j + 1);
  free(buf);
  stranded_serve(&side, NULL, 0, size + 1);
  return 0;
}

int main(int argc, char** argv) {
  int provided, rank, np;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (argc < 5 || np < 2 || atoi(argv[2]) < 1 || (strcmp(argv[1], "probe") && strcmp(argv[1], "mprobe")) ||
      provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0) fprintf(stderr, "usage: msgrate probe|mprobe THREADS MESSAGES SIZE... (np >= 2, MPI_THREAD_MULTIPLE)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  use_mprobe = !strcmp(argv[1], "mprobe");
  threads = atoi(argv[2]);
  long base = atol(argv[3]);
  stranded_comms(&data, &ctrl);
  workers = calloc((size_t)threads, sizeof *workers);
  finish = calloc((size_t)threads, sizeof *finish);
  long warm[3] = {0, 0, 0};
  directed = 1, size = 1, messages = 100;
  round_of(rank, np, warm);  /* connections and first-touch costs, not reported */
  for (directed = 1; directed >= 0; --directed) {
    for (int a = 4; a < argc; ++a) {
      size = atoi(argv[a]);
      messages = messages_for(base, size);
      long totals[3] = {0, 0, 0};
      double rate = round_of(rank, np, totals);
      if (rank == 0)
        printf("msgrate pattern=%s size=%d messages=%ld rate=%.1f false_matches=%ld drains=%ld errors=%ld\n",
               directed ? "directed" : "any", size, messages * threads, rate, totals[0], totals[1], totals[2]);
      fflush(stdout);
    }
  }
  MPI_Comm_free(&ctrl);
  MPI_Comm_free(&data);
  free(workers);
  free(finish);
  MPI_Finalize();
  return 0;
}
