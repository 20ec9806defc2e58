/* What the three runnable forms of the draft's Examples 12.4-12.6 share (asp_dataflow_masters.c,
   asp_dataflow_omp.c, asp_dataflow_pthreads.c): the static dataflow graph, the address space's
   arrays, starting MPI at MPIX_THREAD_ATTACH, and the check against a serial evaluation.

   The graph: LEVELS levels of W = 4*N tasks. Task (l, j) belongs to MPI process owner(l, j),
   spread over all ranks so that inputs cross address spaces; a task of level l > 0 has NIN
   inputs from level l-1, each arriving as one work item (a message) from its producer. */
#ifndef ASP_DATAFLOW_H
#define ASP_DATAFLOW_H
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "tsmpi.h" /* MPIX_THREAD_ATTACH, MPIX_Thread_attach (tsmpi's names for the draft's) */

enum { MAXLEVELS = 64, NIN = 3, MAXASP = 64 };
static int N, W, LEVELS = 8, asp;

static inline int owner(int l, int j) { return (int)(((unsigned)j * 2654435761u + (unsigned)l * 40503u) % (unsigned)N); }
static inline int input(int j, int s) { return s == 0 ? j : s == 1 ? (j + 1) % W : (7 * j + 3) % W; }
static inline long long compute(int l, int j, const long long in[NIN]) {
  if (l == 0) return 1000 + 7919LL * j;
  return (3 * in[0] + 5 * in[1] + 7 * in[2] + (long long)l * j + 1) % 1000000007LL;
}
static inline int consumers(int j) { /* output items of a task of level < LEVELS-1 */
  int n = 0;
  for (int c = 0; c < W; ++c)
    for (int s = 0; s < NIN; ++s) n += input(c, s) == j;
  return n;
}

/* Per task, in this address space (a task has one owner, so the K MPI processes never share an
   entry): its inputs (written by its owner's receiving thread only), its value, times computed. */
static long long (*in_val)[NIN], *value;
static int* in_cnt;
static atomic_int* computed;

/* Once per address space, by an attached thread, before any task runs. */
static inline void dataflow_arrays(void) {
  MPI_Comm_size(MPI_COMM_WORLD, &N);
  W = 4 * N;
  in_val = calloc((size_t)LEVELS * W, sizeof *in_val);
  value = calloc((size_t)LEVELS * W, sizeof *value);
  in_cnt = calloc((size_t)LEVELS * W, sizeof *in_cnt);
  computed = calloc((size_t)LEVELS * W, sizeof *computed);
}

/* MPI_Init_thread at MPIX_THREAD_ATTACH (the draft asks for MPI_THREAD_MULTIPLE and then tests
   provided < MPI_THREAD_ATTACH; the level that lets several MPI processes share an address space
   is the one to ask for), asp from MPI_INFO_ENV, LEVELS from argv[1]. 0, or the exit status. */
static inline int dataflow_init(int* argc, char*** argv, const char* name) {
  int provided, flag;
  char val[MPI_MAX_INFO_VAL + 1];
  MPI_Init_thread(argc, argv, MPIX_THREAD_ATTACH, &provided);
  if (provided != MPIX_THREAD_ATTACH) {
    fprintf(stderr, "%s: provided %d, not MPIX_THREAD_ATTACH\n", name, provided);
    return 1;
  }
  MPI_Info_get(MPI_INFO_ENV, "asp", MPI_MAX_INFO_VAL, val, &flag);
  asp = flag ? atoi(val) : 1;
  if (*argc > 1) LEVELS = atoi((*argv)[1]);
  return asp < 1 || asp > MAXASP || LEVELS < 1 || LEVELS > MAXLEVELS ? 2 : 0;
}

/* After the run, by one thread of MPI process `rank`: its tasks against a serial evaluation of
   the whole graph (each wrong one printed), plus the `failed` checks it failed before, summed over
   every MPI process (collective over MPI_COMM_WORLD). */
static inline int dataflow_check(const char* name, int rank, int failed) {
  long long* serial = malloc(sizeof(long long) * LEVELS * W);
  for (int l = 0; l < LEVELS; ++l)
    for (int j = 0; j < W; ++j) {
      long long in[NIN] = {0, 0, 0};
      for (int s = 0; l > 0 && s < NIN; ++s) in[s] = serial[(l - 1) * W + input(j, s)];
      const int t = l * W + j;
      serial[t] = compute(l, j, in);
      if (owner(l, j) != rank) continue;
      const int c = atomic_load(&computed[t]);
      if (c != 1 || value[t] != serial[t]) ++failed;
      if (c != 1) printf("%s: rank %d: task (%d, %d) computed %d times\n", name, rank, l, j, c);
      else if (value[t] != serial[t]) printf("%s: rank %d: task (%d, %d) = %lld, serial %lld\n", name, rank, l, j, value[t], serial[t]);
    }
  free(serial);
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return any;
}
#endif
