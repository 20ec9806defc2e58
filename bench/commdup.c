/* commdup: time of MPI_Comm_dup, seed 000 §5.3.2 (Fig. 4).
   usage: commdup single|multi1|multi2 DUPS BLOCKS                              (np >= 2)
     single: MPI_Init (MPI_THREAD_SINGLE), one thread duplicates MPI_COMM_WORLD
     multi1: MPI_THREAD_MULTIPLE, one thread duplicates MPI_COMM_WORLD
     multi2: MPI_THREAD_MULTIPLE, two threads at once, each duplicating its own duplicate of
             MPI_COMM_WORLD
   Each thread times BLOCKS blocks of DUPS calls (after a warm-up block), then frees what it
   made; rank 0 prints the median block's time per call, averaged over the threads:
     commdup mode=M procs=P dup_us=T
   Every duplicate is checked: same size and rank as its parent, and an allreduce on it. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int dups, blocks, rank, np;

struct thread_arg {
  MPI_Comm parent;
  double per_call_us;
  long errors;
};

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static void* duplicate(void* p) {
  struct thread_arg* a = p;
  MPI_Comm* made = malloc(sizeof(MPI_Comm) * (size_t)dups);
  double* t = malloc(sizeof(double) * (size_t)blocks);
  for (int b = -1; b < blocks; ++b) {
    MPI_Barrier(a->parent);
    double t0 = MPI_Wtime();
    for (int i = 0; i < dups; ++i) MPI_Comm_dup(a->parent, &made[i]);
    if (b >= 0) t[b] = (MPI_Wtime() - t0) / dups * 1e6;
    for (int i = 0; i < dups; ++i) {
      int r, s, sum = 0;
      MPI_Comm_rank(made[i], &r);
      MPI_Comm_size(made[i], &s);
      MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, made[i]);
      a->errors += r != rank || s != np || sum != np * (np - 1) / 2;
      MPI_Comm_free(&made[i]);
    }
  }
  qsort(t, (size_t)blocks, sizeof t[0], cmp);
  a->per_call_us = t[blocks / 2];
  free(t);
  free(made);
  return NULL;
}

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  const char* mode = argc > 1 ? argv[1] : "";
  int threads = !strcmp(mode, "multi2") ? 2 : 1;
  if (!strcmp(mode, "single"))
    MPI_Init(&argc, &argv);
  else
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (argc != 4 || (strcmp(mode, "single") && strcmp(mode, "multi1") && strcmp(mode, "multi2")) ||
      (threads == 2 && provided < MPI_THREAD_MULTIPLE) || atoi(argv[2]) < 1 || atoi(argv[3]) < 1) {
    if (rank == 0) fprintf(stderr, "usage: commdup single|multi1|multi2 DUPS BLOCKS\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  dups = atoi(argv[2]);
  blocks = atoi(argv[3]);
  struct thread_arg arg[2];
  memset(arg, 0, sizeof arg);
  for (int k = 0; k < threads; ++k) MPI_Comm_dup(MPI_COMM_WORLD, &arg[k].parent);
  if (threads == 1) {
    duplicate(&arg[0]);
  } else {
    pthread_t tid[2];
    for (int k = 0; k < 2; ++k) pthread_create(&tid[k], NULL, duplicate, &arg[k]);
    for (int k = 0; k < 2; ++k) pthread_join(tid[k], NULL);
  }
  double us = 0;
  long errors = 0;
  for (int k = 0; k < threads; ++k) {
    us += arg[k].per_call_us / threads;
    errors += arg[k].errors;
    MPI_Comm_free(&arg[k].parent);
  }
  long all = 0;
  MPI_Reduce(&errors, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    if (all) {
      fprintf(stderr, "commdup: %ld duplicates were wrong\n", all);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    printf("commdup mode=%s procs=%d dup_us=%.3f\n", mode, np, us);
  }
  MPI_Finalize();
  return 0;
}
