/* RMA synchronization that waits for another process's application (serialize mode must not
   hold its lock there, docs/serialize-mode.md). 3 ranks; argv[1] selects:
   start  rank 1 posts its window only after a message from rank 0's second thread, while rank
          0's first thread is in MPI_Win_start (MPI may block there until the post);
   lock   rank 2 holds an exclusive lock on rank 1 until a message from rank 0's second thread
          arrives, while rank 0's first thread asks for the same lock;
   lockall  the same, rank 0's first thread in MPI_Win_lock_all;
   mixed  every rank has 3 threads, each on a target no other thread of its process uses (a
          process may hold lock epochs on different targets at once): two repeatedly take an
          exclusive lock on rank+1 and rank+2, read a counter there, add one and write it back;
          the third takes shared locks on its own rank and reads its counter (it must never
          decrease). At the end each counter must equal the increments aimed at it: the
          exclusive locks excluded each other across processes.
   Windows come from MPI_Win_create (MPICH 4.0.2 loses puts into tiny MPI_Win_allocate windows).
   Data is checked with MPI_Get. */
#include <unistd.h>

#include "test_util.h"

static int rank, size;
static MPI_Win win;
static int mem[4];

static void* late_sender(void* arg) {
  int to = (int)(long)arg, v = 7;
  sleep(1);
  MPI_Send(&v, 1, MPI_INT, to, 0, MPI_COMM_WORLD);
  return NULL;
}

static int read_at(int target, int disp) {
  int v = -1;
  MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
  MPI_Get(&v, 1, MPI_INT, target, disp, 1, MPI_INT, win);
  MPI_Win_unlock(target, win);
  return v;
}

static void start_mode(void) {
  MPI_Group world, g;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int r0 = 0, r1 = 1, v = 42;
  if (rank == 0) {
    pthread_t t;
    pthread_create(&t, NULL, late_sender, (void*)1L);
    MPI_Group_incl(world, 1, &r1, &g);
    MPI_Win_start(g, 0, win);
    MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
    MPI_Win_complete(win);
    pthread_join(t, NULL);
    MPI_Group_free(&g);
  } else if (rank == 1) {
    int x;
    MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Group_incl(world, 1, &r0, &g);
    MPI_Win_post(g, 0, win);
    MPI_Win_wait(win);
    MPI_Group_free(&g);
  }
  MPI_Group_free(&world);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) CHECK(read_at(1, 0) == 42, "rank 1's window holds %d after the PSCW epoch", read_at(1, 0));
}

static void lock_mode(int all) {
  if (rank == 2) {
    int v = 41, x, go = 1;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
    MPI_Win_flush(1, win);
    MPI_Send(&go, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);  /* rank 0 may ask for the lock now */
    MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Win_unlock(1, win);
  } else if (rank == 0) {
    int go, v = 43;
    MPI_Recv(&go, 1, MPI_INT, 2, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    pthread_t t;
    pthread_create(&t, NULL, late_sender, (void*)2L);
    if (all) MPI_Win_lock_all(0, win);
    else MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
    if (all) MPI_Win_unlock_all(win);
    else MPI_Win_unlock(1, win);
    pthread_join(t, NULL);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) CHECK(read_at(1, 0) == 43, "rank 1's window holds %d, expected rank 0's put after rank 2's", read_at(1, 0));
}

enum { kRounds = 200 };

static void* incrementer(void* arg) {
  int t = (int)(long)arg, target = (rank + 1 + t) % size;
  for (int i = 0; i < kRounds; ++i) {
    int v = -1;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
    MPI_Get(&v, 1, MPI_INT, target, 0, 1, MPI_INT, win);
    MPI_Win_flush(target, win);
    ++v;
    MPI_Put(&v, 1, MPI_INT, target, 0, 1, MPI_INT, win);
    MPI_Win_unlock(target, win);
  }
  return NULL;
}

static void* reader(void* arg) {
  (void)arg;
  int last = 0;
  for (int i = 0; i < kRounds; ++i) {
    int now = read_at(rank, 0);
    CHECK(now >= last, "counter of rank %d went from %d to %d", rank, last, now);
    last = now;
  }
  return NULL;
}

static void mixed_mode(void) {
  pthread_t th[3];
  for (long t = 0; t < 2; ++t) pthread_create(&th[t], NULL, incrementer, (void*)t);
  pthread_create(&th[2], NULL, reader, NULL);
  for (int t = 0; t < 3; ++t) pthread_join(th[t], NULL);
  MPI_Barrier(MPI_COMM_WORLD);
  /* increments aimed at this rank: from each rank r, thread t with (r + 1 + t) % size == rank */
  int expected = 0;
  for (int r = 0; r < size; ++r)
    for (int t = 0; t < 2; ++t) expected += (r + 1 + t) % size == rank ? kRounds : 0;
  int got = read_at(rank, 0);
  CHECK(got == expected, "counter %d, expected %d", got, expected);
}

int main(int argc, char** argv) {
  test_init_ranks(&argc, &argv, "rma_dependency", 3, &rank);
  size = 3;
  const char* mode = argc > 1 ? argv[1] : "start";
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (!strcmp(mode, "start")) start_mode();
  else if (!strcmp(mode, "lock")) lock_mode(0);
  else if (!strcmp(mode, "lockall")) lock_mode(1);
  else mixed_mode();
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  return test_finish();
}
