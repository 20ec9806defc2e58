/* Plain MPI ping-pong between ranks 0 and 1 over sizes 0 B .. 64 KiB; every byte is checked.
   Built with the MPI's own mpicc and run unmodified under tsmpirun. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char pattern(int iter, int size, int i) { return (unsigned char)(iter * 31 + size + i * 7); }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    fprintf(stderr, "pingpong needs 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  unsigned char* buf = malloc(65536);
  int errors = 0, exchanges = 0;
  for (int bytes = 0; bytes <= 65536; bytes = bytes ? bytes * 4 : 1) {
    for (int iter = 0; iter < 20; ++iter) {
      if (rank == 0) {
        for (int i = 0; i < bytes; ++i) buf[i] = pattern(iter, bytes, i);
        MPI_Send(buf, bytes, MPI_BYTE, 1, bytes, MPI_COMM_WORLD);
        MPI_Status st;
        MPI_Recv(buf, bytes, MPI_BYTE, 1, bytes, MPI_COMM_WORLD, &st);
        int count;
        MPI_Get_count(&st, MPI_BYTE, &count);
        if (count != bytes) ++errors;
        for (int i = 0; i < bytes; ++i)
          if (buf[i] != (unsigned char)(pattern(iter, bytes, i) + 1)) { ++errors; break; }
        ++exchanges;
      } else if (rank == 1) {
        MPI_Recv(buf, bytes, MPI_BYTE, 0, bytes, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < bytes; ++i) {
          if (buf[i] != pattern(iter, bytes, i)) { ++errors; break; }
        }
        for (int i = 0; i < bytes; ++i) buf[i] = (unsigned char)(buf[i] + 1);
        MPI_Send(buf, bytes, MPI_BYTE, 0, bytes, MPI_COMM_WORLD);
      }
    }
  }
  int total_errors = 0;
  MPI_Reduce(&errors, &total_errors, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("pingpong: %d exchanges, %d errors\n", exchanges, total_errors);
  free(buf);
  MPI_Finalize();
  return total_errors ? 1 : 0;
}
