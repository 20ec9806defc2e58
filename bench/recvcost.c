/* recvcost: the time one probe -> receive of a message costs, without other threads or
   processes in the way: the noise-free counterpart of msgrate.c's rates (docs/performance.md).
   usage: recvcost probe|mprobe MESSAGES                                        (np = 1)
   The process sends itself MESSAGES 1-byte messages, one at a time (MPI_Isend, then probe,
   MPI_Get_count, receive, MPI_Wait), MPI_ANY_SOURCE/MPI_ANY_TAG, as msgrate.c's threads do:
     probe:  MPI_Probe + MPI_Recv        mprobe: MPI_Mprobe + MPI_Mrecv
   Prints the best of 5 blocks, after a warm-up block:
     recvcost api=API ns=N */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  int provided, np;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (argc != 3 || np != 1 || (strcmp(argv[1], "probe") && strcmp(argv[1], "mprobe")) || atol(argv[2]) < 1) {
    fprintf(stderr, "usage: recvcost probe|mprobe MESSAGES (np = 1)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int mprobe = !strcmp(argv[1], "mprobe");
  const long n = atol(argv[2]);
  char out = 7, in = 0;
  double best = 1e30;
  for (int block = -1; block < 5; ++block) {
    double t0 = MPI_Wtime();
    for (long i = 0; i < n; ++i) {
      MPI_Request r;
      MPI_Status st;
      int count;
      MPI_Isend(&out, 1, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &r);
      if (mprobe) {
        MPI_Message m;
        MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &m, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        MPI_Mrecv(&in, count, MPI_BYTE, &m, MPI_STATUS_IGNORE);
      } else {
        MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        MPI_Recv(&in, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      if (in != out) {
        fprintf(stderr, "recvcost: wrong byte\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      in = 0;
    }
    double ns = (MPI_Wtime() - t0) / n * 1e9;
    if (block >= 0 && ns < best) best = ns;
  }
  printf("recvcost api=%s ns=%.1f\n", argv[1], best);
  MPI_Finalize();
  return 0;
}
