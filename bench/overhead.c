/* overhead: single-threaded ping-pong latency, seed 000 §2 (Fig. 1).
   usage: overhead single|multiple ITERATIONS SIZE...                             (np = 2)
   Initializes MPI at MPI_THREAD_SINGLE (MPI_Init) or MPI_THREAD_MULTIPLE (MPI_Init_thread) and
   runs one thread per process: rank 0 sends SIZE bytes to rank 1, which sends them back.
   For every SIZE: 5 blocks of ITERATIONS round trips (fewer above 1 KiB), after a warm-up
   block; rank 0 prints the median block as one line:
     overhead size=S iterations=N latency_us=L provided=LEVEL
   latency_us: one-way latency (half the round trip) in microseconds. Every byte is checked
   on arrival at both ends (outside the timed region: each block's last message). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCKS 5

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static long iterations_for(long base, int bytes) {
  long n = bytes <= 1024 ? base : base * 1024 / bytes;
  return n < 50 ? 50 : n;
}

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE, rank, np;
  int multiple = argc > 1 && !strcmp(argv[1], "multiple");
  if (multiple)
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  else
    MPI_Init(&argc, &argv);
  MPI_Query_thread(&provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (argc < 4 || np != 2 || (!multiple && strcmp(argv[1], "single"))) {
    if (rank == 0) fprintf(stderr, "usage: overhead single|multiple ITERATIONS SIZE... (np = 2)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  long base = atol(argv[2]);
  int max = 0;
  for (int a = 3; a < argc; ++a)
    if (atoi(argv[a]) > max) max = atoi(argv[a]);
  unsigned char* buf = malloc((size_t)max + 1);
  long errors = 0;
  for (int a = 3; a < argc; ++a) {
    int size = atoi(argv[a]);
    long n = iterations_for(base, size);
    double block[BLOCKS];
    for (int b = -1; b < BLOCKS; ++b) {
      unsigned char stamp = (unsigned char)(b + 2 + size);
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (long i = 0; i < n; ++i) {
        if (rank == 0) {
          if (i == n - 1) memset(buf, stamp, (size_t)size);
          MPI_Send(buf, size, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
          MPI_Recv(buf, size, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(buf, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buf, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
      }
      double t = MPI_Wtime() - t0;
      for (int k = 0; k < size; ++k) errors += buf[k] != stamp;
      if (b >= 0) block[b] = t / n / 2 * 1e6;
    }
    qsort(block, BLOCKS, sizeof block[0], cmp);
    if (rank == 0)
      printf("overhead size=%d iterations=%ld latency_us=%.4f provided=%d\n", size, n, block[BLOCKS / 2], provided);
    fflush(stdout);
  }
  long all = 0;
  MPI_Reduce(&errors, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0 && all) {
    fprintf(stderr, "overhead: %ld bytes arrived wrong\n", all);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
