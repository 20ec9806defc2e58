/* probe_rate: receive message rate of a multithreaded rank, seed 001 §4.1.
   usage: probe_rate MESSAGES SIZE directed|any probe|mprobe      (np = T + 1, T >= 1)
   Ranks 1..T each send MESSAGES messages of SIZE bytes with tag = rank to rank 0. Rank 0 runs T
   threads; thread j receives MESSAGES messages, from source j+1 with tag j+1 ("directed") or
   with MPI_ANY_SOURCE/MPI_ANY_TAG ("any"), each by probe -> malloc -> receive:
     probe:  MPI_Probe + MPI_Recv (correct only with tsmpi's probe policies, or one thread)
     mprobe: MPI_Mprobe + MPI_Mrecv (the native thread-safe program)
   Prints "probe_rate: T threads, N messages of S bytes, MODE, API: R messages/s" on rank 0. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int messages, size, directed, use_mprobe;

static void* receiver(void* arg) {
  int j = (int)(long)arg;
  int source = directed ? j + 1 : MPI_ANY_SOURCE, tag = directed ? j + 1 : MPI_ANY_TAG;
  for (int i = 0; i < messages; ++i) {
    MPI_Status st;
    int count;
    if (use_mprobe) {
      MPI_Message m;
      MPI_Mprobe(source, tag, MPI_COMM_WORLD, &m, &st);
      MPI_Get_count(&st, MPI_BYTE, &count);
      char* buf = malloc(count > 0 ? count : 1);
      MPI_Mrecv(buf, count, MPI_BYTE, &m, MPI_STATUS_IGNORE);
      free(buf);
    } else {
      MPI_Probe(source, tag, MPI_COMM_WORLD, &st);
      MPI_Get_count(&st, MPI_BYTE, &count);
      char* buf = malloc(count > 0 ? count : 1);
      MPI_Recv(buf, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      free(buf);
    }
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided, rank, np;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (argc != 5 || np < 2) {
    if (rank == 0) fprintf(stderr, "usage: probe_rate MESSAGES SIZE directed|any probe|mprobe (np >= 2)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  messages = atoi(argv[1]);
  size = atoi(argv[2]);
  directed = !strcmp(argv[3], "directed");
  use_mprobe = !strcmp(argv[4], "mprobe");
  int threads = np - 1;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  if (rank == 0) {
    pthread_t tid[threads];
    for (long j = 0; j < threads; ++j) pthread_create(&tid[j], NULL, receiver, (void*)j);
    for (int j = 0; j < threads; ++j) pthread_join(tid[j], NULL);
  } else {
    char* buf = calloc(size > 0 ? size : 1, 1);
    for (int i = 0; i < messages; ++i) MPI_Send(buf, size, MPI_BYTE, 0, rank, MPI_COMM_WORLD);
    free(buf);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime() - t0;
  if (rank == 0)
    printf("probe_rate: %d threads, %d messages of %d bytes, %s, %s: %.0f messages/s\n", threads,
           messages * threads, size, argv[3], argv[4], messages * threads / t);
  MPI_Finalize();
  return 0;
}
