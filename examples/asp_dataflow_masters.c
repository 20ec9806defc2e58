/* Example 12.4 of the MPI Forum draft "multiple MPI processes in one address space" (ticket 310,
   seed 003 §12.6.1), made runnable: a static dataflow graph executed by OpenMP tasks, with one
   communication master thread per MPI process, several MPI processes per OS process.

   Run under tsmpi:  tsmpirun -asp K -np N ./asp_dataflow_masters [LEVELS]
   (N a multiple of K: N/K OS processes, each holding K MPI processes.)

   The graph: LEVELS levels of W = 4*N tasks. Task (l, j) belongs to MPI process owner(l, j),
   spread over all ranks so that inputs cross address spaces; a task of level l > 0 has three
   inputs from level l-1, each arriving as one work item (a message) from the producer's MPI
   process. Each OS process runs one OpenMP team of K + MINWORKERS threads; every thread attaches
   to MPI process (thread number mod K), and the first thread to attach to each MPI process
   (MPI_Is_thread_main) is its communication master: it receives work items with MPI_ANY_SOURCE
   and, when a task has all its inputs, spawns an OpenMP task that computes it and spawns one
   task per output item, which any thread of the team sends.
   Termination: every MPI process knows from the static graph how many items it will receive.
   Check: every task's value equals a serial evaluation of the graph; each MPI process prints
   "asp_dataflow_masters: rank R: ok" (or FAILED with the reasons) and the exit status is
   non-zero on failure. */
#include <omp.h>

#include "asp_dataflow.h" /* the graph, the arrays, start and check */

enum { MINWORKERS = 2 };

/* A work item: the input of slot `slot` of task (level, j). */
typedef struct { long long level, j, slot, value; } Work_item;
static MPI_Datatype Work_packet_type[MAXASP]; /* a datatype is an MPI process's: one each */

static atomic_int failures[MAXASP];
static __thread int my_index = -1, my_rank = -1; /* the calling thread's MPI process */

#define FAIL(fmt, ...) (atomic_fetch_add(&failures[my_index], 1), \
                        printf("asp_dataflow_masters: rank %d: " fmt "\n", my_rank, __VA_ARGS__))

static void send_item(Work_item item, int dest) { /* an OpenMP task: any attached thread */
  MPI_Send(&item, 1, Work_packet_type[my_index], dest, 0, MPI_COMM_WORLD);
}

static void run_task(int l, int j) {
  int t = l * W + j;
  value[t] = compute(l, j, in_val[t]);
  atomic_fetch_add(&computed[t], 1);
  if (l + 1 == LEVELS) return;
  /* Make_output_list: every slot of level l+1 that reads task j, one item each. */
  for (int c = 0; c < W; ++c)
    for (int s = 0; s < NIN; ++s)
      if (input(c, s) == j) {
        Work_item item = {l + 1, c, s, value[t]};
        int dest = owner(l + 1, c);
#pragma omp task firstprivate(item, dest)
        send_item(item, dest);
      }
}

int main(int argc, char** argv) {
  const int rc = dataflow_init(&argc, &argv, "asp_dataflow_masters");
  if (rc) return rc;
  int status = 0;

#pragma omp parallel num_threads(asp + MINWORKERS) reduction(| : status)
  {
    if (omp_get_num_threads() < asp + MINWORKERS) { /* the draft: not enough threads */
      fprintf(stderr, "asp_dataflow_masters: %d threads, need %d\n", omp_get_num_threads(), asp + MINWORKERS);
      exit(1);
    }
    my_index = omp_get_thread_num() % asp;
    MPIX_Thread_attach(my_index);
    MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    int init = 0, is_main = 0;
    MPI_Initialized(&init);
    MPI_Is_thread_main(&is_main);
    if (is_main) { /* one thread per MPI process, whichever attached first */
      MPI_Type_contiguous(4, MPI_LONG_LONG, &Work_packet_type[my_index]);
      MPI_Type_commit(&Work_packet_type[my_index]);
    }
#pragma omp single
    dataflow_arrays(); /* once per address space; implicit barrier: every datatype committed, the arrays made */

    if (init && is_main) {
      /* communication master thread */
      int expected = 0, received = 0;
      for (int l = 1; l < LEVELS; ++l)
        for (int j = 0; j < W; ++j) expected += owner(l, j) == my_rank ? NIN : 0;
      for (int j = 0; j < W; ++j) /* level 0 has no inputs: runnable at once */
        if (owner(0, j) == my_rank) {
#pragma omp task firstprivate(j)
          run_task(0, j);
        }
      while (received < expected) { /* notdone */
        Work_item item;
        MPI_Status st;
        MPI_Recv(&item, 1, Work_packet_type[my_index], MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
        ++received;
        int l = (int)item.level, j = (int)item.j, s = (int)item.slot, t = l * W + j;
        if (l < 1 || l >= LEVELS || j < 0 || j >= W || s < 0 || s >= NIN || owner(l, j) != my_rank) {
          FAIL("work item (%d, %d, slot %d) is not for this MPI process", l, j, s);
          continue;
        }
        /* It was sent by a thread of the producer's address space. */
        if (st.MPI_SOURCE / asp != owner(l - 1, input(j, s)) / asp)
          FAIL("item for (%d, %d) came from rank %d, its producer is rank %d", l, j, st.MPI_SOURCE, owner(l - 1, input(j, s)));
        in_val[t][s] = item.value;
        if (++in_cnt[t] == NIN) { /* Make_runnable_list */
#pragma omp task firstprivate(l, j)
          run_task(l, j);
        }
      }
    }
#pragma omp barrier /* every task has run: all items sent */

    if (is_main) {
      int any = dataflow_check("asp_dataflow_masters", my_rank, atomic_load(&failures[my_index]));
      if (my_rank == 0)
        printf("asp_dataflow_masters: %d MPI processes, %d per address space, %d tasks\n", N, asp, LEVELS * W);
      printf("asp_dataflow_masters: rank %d: %s\n", my_rank, any ? "FAILED" : "ok");
      fflush(stdout);
      status = any != 0;
      MPI_Type_free(&Work_packet_type[my_index]);
      MPI_Finalize(); /* this MPI process's, by its master; the last one ends the MPI */
    }
  }
  return status;
}
