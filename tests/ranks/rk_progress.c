/* rk_progress: messages between thread-ranks of one process are matched by their receivers
   (docs/threads-as-ranks.md, Receivers match); every way a program learns that a message has
   arrived must still see it, whoever waits where. Thread-ranks of one process in pairs (local
   thread 2i with 2i+1; an odd one out only takes part in the OpenMP barriers), ROUNDS times:

     a. progress while the receiver is outside MPI: the even one posts MPI_Irecv of 64 KiB and
        of 4 ints, then waits in an OpenMP barrier; its partner's MPI_Ssend (4 ints) and MPI_Send
        (64 KiB, rendezvous) must complete before it reaches that barrier (MPI-4.0 §3.7.4: a
        send matched by a posted receive completes whatever the receiver does);
     b. MPI_Test in a loop, then MPI_Iprobe in a loop, each until the partner's message arrives;
     c. a receive freed while active (MPI_Request_free): the partner's message for it, then a
        second one received with MPI_Recv, after which the first buffer holds its data;
     d. 300 messages in a row before any receive is posted (more than a fast box holds), 8 B and
        100 B alternating (inline and as packets), received in order;
     e. MPI_Waitany over two receives whose second message comes first, the first only after the
        receiver has answered (it must not wait for the first);
     f. a blocking MPI_Recv whose sender waits a while first (the receiver sleeps, and the
        sender's match must wake it).
   Every payload is checked. usage: rk_progress ROUNDS SPEC */
#include <omp.h>
#include <sched.h>
#include <time.h>

#include "ranks_util.h"

enum { kLarge = 16384 /* ints: 64 KiB */, kRow = 300 };

static MPI_Comm tc;
static int N, T, offset;

static void pause_us(long us) {
  struct timespec t = {0, us * 1000};
  nanosleep(&t, NULL);
}

static int value(int round, int from, int k) { return round * 1000003 + from * 1009 + k; }

static void part_outside_mpi(int r, int partner, int even, int round) {
  static __thread int big[kLarge];
  int small[4] = {0, 0, 0, 0};
  if (partner < 0) {
#pragma omp barrier
    return;
  }
  if (even) {
    MPI_Request q[2];
    for (int i = 0; i < kLarge; ++i) big[i] = -1;
    MPI_OK(MPI_Irecv(big, kLarge, MPI_INT, partner, 1, tc, &q[0]));
    MPI_OK(MPI_Irecv(small, 4, MPI_INT, partner, 2, tc, &q[1]));
#pragma omp barrier
    MPI_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 4; ++i) CHECK(small[i] == value(round, partner, i), "a: small[%d] = %d", i, small[i]);
    int wrong = 0;
    for (int i = 0; i < kLarge; ++i) wrong += big[i] != value(round, partner, i);
    CHECK(wrong == 0, "a: %d of %d ints of the 64 KiB message wrong", wrong, kLarge);
  } else {
    for (int i = 0; i < 4; ++i) small[i] = value(round, r, i);
    for (int i = 0; i < kLarge; ++i) big[i] = value(round, r, i);
    MPI_OK(MPI_Ssend(small, 4, MPI_INT, partner, 2, tc));
    MPI_OK(MPI_Send(big, kLarge, MPI_INT, partner, 1, tc));
#pragma omp barrier
  }
}

static void part_test_loops(int r, int partner, int even, int round) {
  if (partner < 0) return;
  if (even) {
    int x = -1, flag = 0;
    MPI_Request q;
    MPI_OK(MPI_Irecv(&x, 1, MPI_INT, partner, 3, tc, &q));
    MPI_OK(MPI_Send(&flag, 0, MPI_INT, partner, 30, tc));  // go
    long tests = 0;
    while (!flag) {
      MPI_OK(MPI_Test(&q, &flag, MPI_STATUS_IGNORE));
      ++tests;
      sched_yield();
    }
    CHECK(x == value(round, partner, 3), "b: MPI_Test loop got %d after %ld tests", x, tests);
    MPI_OK(MPI_Send(&flag, 0, MPI_INT, partner, 31, tc));  // go again
    flag = 0;
    MPI_Status st;
    while (!flag) {
      MPI_OK(MPI_Iprobe(partner, 4, tc, &flag, &st));
      sched_yield();
    }
    x = -1;
    MPI_OK(MPI_Recv(&x, 1, MPI_INT, partner, 4, tc, MPI_STATUS_IGNORE));
    CHECK(x == value(round, partner, 4), "b: after the MPI_Iprobe loop got %d", x);
  } else {
    int v = value(round, r, 3), go;
    MPI_OK(MPI_Recv(&go, 0, MPI_INT, partner, 30, tc, MPI_STATUS_IGNORE));
    pause_us(200);  // the receiver is in its test loop by now
    MPI_OK(MPI_Send(&v, 1, MPI_INT, partner, 3, tc));
    MPI_OK(MPI_Recv(&go, 0, MPI_INT, partner, 31, tc, MPI_STATUS_IGNORE));
    pause_us(200);
    v = value(round, r, 4);
    MPI_OK(MPI_Send(&v, 1, MPI_INT, partner, 4, tc));
  }
}

static void part_freed_receive(int r, int partner, int even, int round) {
  if (partner < 0) return;
  if (even) {
    static __thread int x;
    int y = -1;
    x = -1;
    MPI_Request q;
    MPI_OK(MPI_Irecv(&x, 1, MPI_INT, partner, 5, tc, &q));
    MPI_OK(MPI_Request_free(&q));
    MPI_OK(MPI_Send(&y, 0, MPI_INT, partner, 50, tc));  // go
    MPI_OK(MPI_Recv(&y, 1, MPI_INT, partner, 6, tc, MPI_STATUS_IGNORE));
    CHECK(y == value(round, partner, 6), "c: second message %d", y);
    CHECK(x == value(round, partner, 5), "c: the freed receive's buffer holds %d", x);
  } else {
    int v5 = value(round, r, 5), v6 = value(round, r, 6), go;
    MPI_OK(MPI_Recv(&go, 0, MPI_INT, partner, 50, tc, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Send(&v5, 1, MPI_INT, partner, 5, tc));
    MPI_OK(MPI_Send(&v6, 1, MPI_INT, partner, 6, tc));
  }
}

static void part_row(int r, int partner, int even, int round) {
  if (partner < 0) {
#pragma omp barrier
    return;
  }
  int msg[25];  // 100 B
  if (!even) {
    for (int k = 0; k < kRow; ++k) {
      for (int i = 0; i < 25; ++i) msg[i] = value(round, r, k) + i;
      MPI_OK(MPI_Send(msg, k % 2 ? 25 : 2, MPI_INT, partner, 7, tc));  // 100 B or 8 B
    }
  }
#pragma omp barrier
  if (even) {
    for (int k = 0; k < kRow; ++k) {
      MPI_Status st;
      for (int i = 0; i < 25; ++i) msg[i] = -1;
      MPI_OK(MPI_Recv(msg, 25, MPI_INT, partner, 7, tc, &st));
      int count = -1;
      MPI_Get_count(&st, MPI_INT, &count);
      const int want = k % 2 ? 25 : 2;
      int wrong = count != want;
      for (int i = 0; i < want; ++i) wrong += msg[i] != value(round, partner, k) + i;
      if (wrong) {
        CHECK(0, "d: message %d of the row: count %d (expected %d), first int %d (expected %d)", k, count, want,
              msg[0], value(round, partner, k));
        break;
      }
    }
  }
}

static void part_waitany(int r, int partner, int even, int round) {
  if (partner < 0) return;
  if (even) {
    int a = -1, b = -1, go = 0, index = -1;
    MPI_Request q[2];
    MPI_OK(MPI_Irecv(&a, 1, MPI_INT, partner, 8, tc, &q[0]));
    MPI_OK(MPI_Irecv(&b, 1, MPI_INT, partner, 9, tc, &q[1]));
    MPI_OK(MPI_Waitany(2, q, &index, MPI_STATUS_IGNORE));
    CHECK(index == 1 && b == value(round, partner, 9), "e: MPI_Waitany gave index %d, b = %d", index, b);
    MPI_OK(MPI_Send(&go, 0, MPI_INT, partner, 10, tc));
    MPI_OK(MPI_Waitany(2, q, &index, MPI_STATUS_IGNORE));
    CHECK(index == 0 && a == value(round, partner, 8), "e: second MPI_Waitany gave index %d, a = %d", index, a);
  } else {
    int v9 = value(round, r, 9), v8 = value(round, r, 8), go;
    MPI_OK(MPI_Send(&v9, 1, MPI_INT, partner, 9, tc));
    MPI_OK(MPI_Recv(&go, 0, MPI_INT, partner, 10, tc, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Send(&v8, 1, MPI_INT, partner, 8, tc));
  }
}

static void part_sleeping_receiver(int r, int partner, int even, int round) {
  if (partner < 0) return;
  if (even) {
    int x = -1;
    MPI_OK(MPI_Recv(&x, 1, MPI_INT, partner, 11, tc, MPI_STATUS_IGNORE));
    CHECK(x == value(round, partner, 11), "f: got %d", x);
  } else {
    int v = value(round, r, 11);
    pause_us(round % 2 ? 300000 : 2000);  // beyond the spin, and beyond the brief sleep
    MPI_OK(MPI_Send(&v, 1, MPI_INT, partner, 11, tc));
  }
}

int main(int argc, char** argv) {
  rk_init(&argc, &argv, "rk_progress");
  if (argc < 3) {
    rk_say("usage: rk_progress ROUNDS SPEC\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rounds = atoi(argv[1]);
  T = rk_threads_of(argv[2], rk_wrank);
  rk_layout(MPI_COMM_WORLD, T, &offset, &N);
  rk_set_stage("MPIX_Threadcomm_init");
  MPI_OK(MPIX_Threadcomm_init(MPI_COMM_WORLD, T, &tc));
  for (int round = 0; round < rounds; ++round) {
#pragma omp parallel num_threads(T)
    {
      if (omp_get_num_threads() != T) MPI_Abort(MPI_COMM_WORLD, 5);
      MPI_OK(MPIX_Threadcomm_start(tc));
      int r = -1;
      MPI_Comm_rank(tc, &r);
      rk_my = r;
      const int local = r - offset, even = local % 2 == 0;
      const int partner = (local ^ 1) < T ? offset + (local ^ 1) : -1;
      if (r == offset) rk_set_stage("a. progress outside MPI");
      part_outside_mpi(r, partner, even, round);
      if (r == offset) rk_set_stage("b. test loops");
      part_test_loops(r, partner, even, round);
      if (r == offset) rk_set_stage("c. freed receive");
      part_freed_receive(r, partner, even, round);
#pragma omp barrier
      if (r == offset) rk_set_stage("d. a row of messages");
      part_row(r, partner, even, round);
      if (r == offset) rk_set_stage("e. waitany");
      part_waitany(r, partner, even, round);
      if (r == offset) rk_set_stage("f. sleeping receiver");
      part_sleeping_receiver(r, partner, even, round);
      MPI_OK(MPIX_Threadcomm_finish(tc));
      rk_my = -1;
    }
  }
  rk_set_stage("MPIX_Threadcomm_free");
  MPI_OK(MPIX_Threadcomm_free(&tc));
  rk_say("rk_progress: rank %d: %d threads of %d thread-ranks, %d rounds\n", rk_wrank, T, N, rounds);
  return rk_finish();
}
