/* Example 12.6 of the MPI Forum draft "multiple MPI processes in one address space" (ticket 310,
   seed 003 §12.6.2), made runnable: example 12.5 (asp_dataflow_omp.c) written with pthreads.

   Run under tsmpi:  tsmpirun -asp K -np N ./asp_dataflow_pthreads [LEVELS [WORKERS]]

   The main thread initializes MPI and never attaches. It starts K receiver threads, K sender
   threads (receiver i and sender i attach to MPI process i) and WORKERS worker threads (no MPI
   calls, never attached), joins them, and then calls MPI_Finalize once: as the thread that
   initialized MPI, unattached, it finalizes every MPI process of its address space.
   Queues, termination and the check are those of asp_dataflow_omp.c: each MPI process prints
   "asp_dataflow_pthreads: rank R: ok" (or FAILED with the reasons); the exit status is non-zero
   on failure. */
#include <pthread.h>
#include <time.h>
#include <stdint.h>

#include "asp_dataflow.h" /* the graph, the arrays, start and check */

enum { MAXWORKERS = 64 };
static int NUMWORKERS = 2;

/* An empty queue: wait 20 us. Spinning threads (sched_yield) took the cores from the threads
   in MPI calls on 2-core machines, and runs then crawled. */
static void idle(void) { nanosleep(&(struct timespec){0, 20000}, NULL); }

typedef struct { long long level, j, slot, value; int dest; } Work_item;
typedef struct { Work_item* a; int head, tail; pthread_mutex_t lock; } Queue;
static void enqueue(Queue* q, Work_item it) {
  pthread_mutex_lock(&q->lock);
  q->a[q->tail++] = it;
  pthread_mutex_unlock(&q->lock);
}
static int dequeue(Queue* q, Work_item* it) {
  pthread_mutex_lock(&q->lock);
  int got = q->head < q->tail;
  if (got) *it = q->a[q->head++];
  pthread_mutex_unlock(&q->lock);
  return got;
}

static Queue workqueue, sendqueue[MAXASP];
static int local_tasks;
static atomic_int tasks_done, failures[MAXASP];
static pthread_barrier_t all; /* every thread the main thread starts */

#define FAIL(i, rank, fmt, ...) (atomic_fetch_add(&failures[i], 1), \
                                 printf("asp_dataflow_pthreads: rank %d: " fmt "\n", rank, __VA_ARGS__))

static void* Receiver(void* arg) {
  int i = (int)(intptr_t)arg, rank, expected = 0, received = 0;
  MPIX_Thread_attach(i);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (i == 0) { /* the graph's arrays and queues, once per address space */
    dataflow_arrays();
    workqueue.a = malloc(sizeof(Work_item) * LEVELS * W);
    for (int k = 0; k < asp; ++k) sendqueue[k].a = malloc(sizeof(Work_item) * LEVELS * W * NIN);
    for (int l = 0; l < LEVELS; ++l)
      for (int j = 0; j < W; ++j) local_tasks += owner(l, j) / asp == rank / asp;
  }
  pthread_barrier_wait(&all); /* setup done */
  for (int l = 0; l < LEVELS; ++l)
    for (int j = 0; j < W; ++j)
      if (owner(l, j) == rank) {
        Work_item seed = {0, j, 0, 0, rank};
        if (l > 0) expected += NIN;
        else enqueue(&workqueue, seed); /* level 0 has no inputs: runnable at once */
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
    if (++in_cnt[t] == NIN) enqueue(&workqueue, item); /* runnable */
  }
  pthread_barrier_wait(&all); /* every item of the address space received and sent */

  int any = dataflow_check("asp_dataflow_pthreads", rank, atomic_load(&failures[i]));
  if (rank == 0)
    printf("asp_dataflow_pthreads: %d MPI processes, %d per address space, %d tasks, %d workers each\n", N,
           asp, LEVELS * W, NUMWORKERS);
  printf("asp_dataflow_pthreads: rank %d: %s\n", rank, any ? "FAILED" : "ok");
  fflush(stdout);
  return (void*)(intptr_t)(any != 0);
}

static void* Sender(void* arg) {
  int i = (int)(intptr_t)arg, rank, to_send = 0;
  MPIX_Thread_attach(i);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  pthread_barrier_wait(&all); /* setup done */
  for (int l = 0; l + 1 < LEVELS; ++l)
    for (int j = 0; j < W; ++j) to_send += owner(l, j) == rank ? consumers(j) : 0;
  while (to_send > 0) { /* notdone */
    Work_item item;
    if (!dequeue(&sendqueue[i], &item)) { idle(); continue; }
    MPI_Send(&item, 4, MPI_LONG_LONG, item.dest, 0, MPI_COMM_WORLD);
    --to_send;
  }
  pthread_barrier_wait(&all);
  return NULL;
}

static void* Worker(void* arg) { /* no MPI calls, never attached */
  (void)arg;
  pthread_barrier_wait(&all); /* setup done */
  while (atomic_load(&tasks_done) < local_tasks) { /* notdone */
    Work_item task;
    if (!dequeue(&workqueue, &task)) { idle(); continue; }
    int l = (int)task.level, j = (int)task.j, t = l * W + j, o = owner(l, j);
    value[t] = compute(l, j, in_val[t]);
    atomic_fetch_add(&computed[t], 1);
    for (int c = 0; l + 1 < LEVELS && c < W; ++c) /* the items for level l+1 */
      for (int s = 0; s < NIN; ++s)
        if (input(c, s) == j) enqueue(&sendqueue[o % asp], (Work_item){l + 1, c, s, value[t], owner(l + 1, c)});
    atomic_fetch_add(&tasks_done, 1);
  }
  pthread_barrier_wait(&all);
  return NULL;
}

int main(int argc, char** argv) {
  const int rc = dataflow_init(&argc, &argv, "asp_dataflow_pthreads");
  if (rc) return rc;
  if (argc > 2) NUMWORKERS = atoi(argv[2]);
  if (NUMWORKERS < 1 || NUMWORKERS > MAXWORKERS) return 2;
  int NUM_THREADS = 2 * asp + NUMWORKERS;
  pthread_t thread[2 * MAXASP + MAXWORKERS];
  pthread_attr_t attr;
  pthread_mutex_init(&workqueue.lock, NULL);
  for (int k = 0; k < asp; ++k) pthread_mutex_init(&sendqueue[k].lock, NULL);
  pthread_barrier_init(&all, NULL, NUM_THREADS);
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_JOINABLE);
  /* The draft reuses thread[t] for each kind; each thread needs its own handle to be joined. */
  for (int t = 0; t < asp; t++) pthread_create(&thread[t], &attr, Receiver, (void*)(intptr_t)t);
  for (int t = 0; t < asp; t++) pthread_create(&thread[asp + t], &attr, Sender, (void*)(intptr_t)t);
  for (int t = 0; t < NUMWORKERS; t++) pthread_create(&thread[2 * asp + t], &attr, Worker, NULL);
  int failed = 0;
  for (int t = 0; t < NUM_THREADS; t++) { /* wait for all compute slaves */
    void* status;
    pthread_join(thread[t], &status);
    failed |= status != NULL;
  }
  MPI_Finalize(); /* by the initializing thread: every MPI process of this address space */
  return failed;
}
