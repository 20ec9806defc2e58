/* Example 12.5 of the MPI Forum draft "multiple MPI processes in one address space" (ticket 310,
   seed 003 §12.6.1), made runnable: the dataflow graph of asp_dataflow_masters.c executed by
   dedicated receiver, sender and worker threads of one OpenMP team per OS process.

   Run under tsmpi:  tsmpirun -asp K -np N ./asp_dataflow_omp [LEVELS [WORKERS]]

   Threads 0..K-1 are receivers and K..2K-1 senders; receiver i and sender K+i attach to MPI
   process i, so each MPI process has one receiving and one sending thread (two threads of one
   MPI process calling MPI at once). The other threads are workers: they never call MPI and
   never attach. Receivers enqueue tasks whose inputs are complete on one work queue per
   address space; workers compute them and put each output item on the send queue of the task's
   MPI process (the draft has one send queue; one per MPI process makes every item leave from
   its producer's MPI process, which the receiver checks); senders send them.
   Termination: from the static graph every receiver knows how many items it will get, every
   sender how many it will send, and the workers how many tasks the address space has.
   Check: every task's value equals a serial evaluation of the graph; each MPI process prints
   "asp_dataflow_omp: rank R: ok" (or FAILED with the reasons); the exit status is non-zero on
   failure. */
#include <omp.h>
#include <time.h>

#include "asp_dataflow.h" /* the graph, the arrays, start and check */

/* An empty queue: wait 20 us. Spinning threads (sched_yield) took the cores from the threads
   in MPI calls on 2-core machines, and runs then crawled. */
static void idle(void) { nanosleep(&(struct timespec){0, 20000}, NULL); }

/* A work item: the input of slot `slot` of task (level, j); also the queues' element. */
typedef struct { long long level, j, slot, value; int dest; } Work_item;

/* A FIFO of items, guarded by an OpenMP critical section named at the call. */
typedef struct { Work_item* a; int head, tail; } Queue;
static void enqueue(Queue* q, Work_item it) { q->a[q->tail++] = it; }
static int dequeue(Queue* q, Work_item* it) { return q->head < q->tail ? (*it = q->a[q->head++], 1) : 0; }

static Queue workqueue, sendqueue[MAXASP];
static atomic_int tasks_done, failures[MAXASP];

#define FAIL(i, rank, fmt, ...) (atomic_fetch_add(&failures[i], 1), \
                                 printf("asp_dataflow_omp: rank %d: " fmt "\n", rank, __VA_ARGS__))

int main(int argc, char** argv) {
  const int rc = dataflow_init(&argc, &argv, "asp_dataflow_omp");
  if (rc) return rc;
  const int workers = argc > 2 ? atoi(argv[2]) : 2;
  if (workers < 1) return 2;
  int status = 0, local_tasks = 0;

#pragma omp parallel num_threads(2 * asp + workers) reduction(| : status)
  {
    int tid = omp_get_thread_num(), i = tid < asp ? tid : tid - asp, rank = -1;
    if (omp_get_num_threads() < 2 * asp + workers) { /* the draft: not enough threads */
      fprintf(stderr, "asp_dataflow_omp: %d threads, need %d\n", omp_get_num_threads(), 2 * asp + workers);
      exit(1);
    }
    if (tid < 2 * asp) { /* receivers and senders belong to MPI process i */
      MPIX_Thread_attach(i);
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    }
    if (tid == 0) { /* the graph, its arrays and queues, once per address space (receiver 0) */
      dataflow_arrays();
      workqueue.a = malloc(sizeof(Work_item) * LEVELS * W);
      for (int k = 0; k < asp; ++k) sendqueue[k].a = malloc(sizeof(Work_item) * LEVELS * W * NIN);
      int first = rank - rank % asp; /* this address space's MPI processes: first .. first+asp-1 */
      for (int l = 0; l < LEVELS; ++l)
        for (int j = 0; j < W; ++j) local_tasks += owner(l, j) / asp == first / asp;
    }
#pragma omp barrier

    if (tid < asp) {
      /* receiver thread of MPI process i */
      int expected = 0, received = 0;
      for (int l = 0; l < LEVELS; ++l)
        for (int j = 0; j < W; ++j)
          if (owner(l, j) == rank) {
            if (l > 0) expected += NIN;
            else { /* level 0 has no inputs: runnable at once */
              Work_item seed = {0, j, 0, 0, rank};
#pragma omp critical(workqueue)
              enqueue(&workqueue, seed);
            }
          }
      while (received < expected) { /* notdone */
        Work_item item;
        MPI_Status st;
        MPI_Recv(&item, 4, MPI_LONG_LONG, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
        ++received;
        int l = (int)item.level, j = (int)item.j, s = (int)item.slot, t = l * W + j;
        if (l < 1 || l >= LEVELS || j < 0 || j >= W || s < 0 || s >= NIN || owner(l, j) != rank) {
          FAIL(i, rank, "work item (%d, %d, slot %d) is not for this MPI process", l, j, s);
          continue;
        }
        if (st.MPI_SOURCE != owner(l - 1, input(j, s))) /* sent by its producer's sender */
          FAIL(i, rank, "item for (%d, %d) came from rank %d, not its producer %d", l, j, st.MPI_SOURCE, owner(l - 1, input(j, s)));
        in_val[t][s] = item.value;
        if (++in_cnt[t] == NIN) { /* Make_runnable_list */
#pragma omp critical(workqueue)
          enqueue(&workqueue, item);
        }
      }
    } else if (tid < 2 * asp) {
      /* sender thread of MPI process i: every item of its tasks */
      int to_send = 0;
      for (int l = 0; l + 1 < LEVELS; ++l)
        for (int j = 0; j < W; ++j) to_send += owner(l, j) == rank ? consumers(j) : 0;
      while (to_send > 0) { /* notdone */
        Work_item item;
        int got;
#pragma omp critical(sendqueue)
        got = dequeue(&sendqueue[i], &item);
        if (!got) { idle(); continue; }
        MPI_Send(&item, 4, MPI_LONG_LONG, item.dest, 0, MPI_COMM_WORLD);
        --to_send;
      }
    } else {
      /* worker thread: no MPI calls, never attached */
      while (atomic_load(&tasks_done) < local_tasks) { /* notdone */
        Work_item task;
        int got;
#pragma omp critical(workqueue)
        got = dequeue(&workqueue, &task);
        if (!got) { idle(); continue; }
        int l = (int)task.level, j = (int)task.j, t = l * W + j, o = owner(l, j);
        value[t] = compute(l, j, in_val[t]);
        atomic_fetch_add(&computed[t], 1);
        for (int c = 0; l + 1 < LEVELS && c < W; ++c) /* the items for level l+1 */
          for (int s = 0; s < NIN; ++s)
            if (input(c, s) == j) {
              Work_item out = {l + 1, c, s, value[t], owner(l + 1, c)};
#pragma omp critical(sendqueue)
              enqueue(&sendqueue[o % asp], out);
            }
        atomic_fetch_add(&tasks_done, 1);
      }
    }
#pragma omp barrier /* every item of the address space received and sent */

    if (tid < asp) {
      int any = dataflow_check("asp_dataflow_omp", rank, atomic_load(&failures[i]));
      if (rank == 0)
        printf("asp_dataflow_omp: %d MPI processes, %d per address space, %d tasks, %d workers each\n", N, asp,
               LEVELS * W, workers);
      printf("asp_dataflow_omp: rank %d: %s\n", rank, any ? "FAILED" : "ok");
      fflush(stdout);
      status = any != 0;
      /* The draft calls MPI_Finalize after the region, from the initial thread; that thread is
         receiver 0 here, attached to MPI process 0, so each MPI process finalizes itself. */
      MPI_Finalize();
    }
  }
  return status;
}
