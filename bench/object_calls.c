/* Cost of object lifetime on the calls it checks: nanoseconds per call of MPI_Comm_rank on a
   predefined communicator (a lookup that finds nothing) and on a duplicate (lookup + shared
   lock), MPI_Type_size of a derived type, MPI_Info_set / MPI_Info_get (exclusive / shared
   lock), MPI_Info_create + MPI_Info_free (adoption, quarantine, release). Run natively and
   under tsmpi in the same job script to compare: object_calls [iterations]. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define TIME(label, n, body)                                          \
  do {                                                                \
    double t0 = MPI_Wtime();                                          \
    for (long i_ = 0; i_ < (n); ++i_) { body; }                       \
    double t = MPI_Wtime() - t0;                                      \
    printf("object_calls: %-28s %8.1f ns/call\n", label, t / (n) * 1e9); \
  } while (0)

int main(int argc, char** argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  int r, sz, flag;
  char value[32];
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Datatype t;
  MPI_Type_contiguous(4, MPI_INT, &t);
  MPI_Type_commit(&t);
  MPI_Info info;
  MPI_Info_create(&info);
  TIME("Comm_rank(WORLD)", n, MPI_Comm_rank(MPI_COMM_WORLD, &r));
  TIME("Comm_rank(dup)", n, MPI_Comm_rank(dup, &r));
  TIME("Type_size(derived)", n, MPI_Type_size(t, &sz));
  TIME("Info_set", n, MPI_Info_set(info, "key", "value"));
  TIME("Info_get", n, MPI_Info_get(info, "key", 31, value, &flag));
  TIME("Info_create+Info_free", n / 10, { MPI_Info i2; MPI_Info_create(&i2); MPI_Info_free(&i2); });
  MPI_Info_free(&info);
  MPI_Type_free(&t);
  MPI_Comm_free(&dup);
  MPI_Finalize();
  return 0;
}
