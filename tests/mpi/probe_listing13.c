/* Listings 1.3/1.4 of seed 001 (§2.1): a correct program that a per-(source, tag) lock around
   "probe -> receive" deadlocks.

     rank 0:                     rank 1, thread A:            rank 1, thread B:
       send(1, tag 1)              probe/recv(0, 2)             probe/recv(0, MPI_ANY_TAG)
       recv(1, tag 1)                                           send(0, tag 1)
       send(1, tag 2)

   A's message (tag 2) is sent only after B has received tag 1 and replied. If A locks (0, 2)
   and blocks in its probe, and B's (0, *) must wait for that lock, nothing proceeds. To make
   that interleaving likely, B waits until A has entered its probe and then 50 ms more.

   usage: probe_listing13 [ROUNDS]      (exactly 2 ranks; ROUNDS defaults to 50)
   Round r varies: A and B each use MPI_Probe or an MPI_Iprobe loop (all four combinations);
   A probes (0, 2) or (MPI_ANY_SOURCE, 2); the receives use the status' source and tag or the
   probe's own pattern (here only one message can match, so both are correct without tsmpi).
   Checks: A gets tag 2, B gets tag 1, from rank 0, with the right sizes and contents.
   PROBE_TEST_NATIVE_MPROBE=1: MPI_Mprobe/MPI_Improbe + MPI_Mrecv instead (natively correct). */
#define _GNU_SOURCE
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

static int rank, peer, native_mprobe;
static atomic_int a_probing;
static atomic_int a_ok, b_ok;

static int len1(int r) { return 3 + r % 5; }
static int len2(int r) { return 10 + (r * 7) % 40; }
static int value(int r, int tag, int i) { return r * 1000 + tag * 100 + i; }

static void pause_ns(long ns) {
  struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
  nanosleep(&ts, NULL);
}

/* Probe (blocking or an Iprobe loop with backoff) then receive what was probed; returns the
   buffer and fills *n (ints) and *st (receive status). */
static int* probe_and_receive(int src, int tag, int use_iprobe, int original_pattern, int* n, MPI_Status* st,
                              atomic_int* started) {
  MPI_Status pst;
  MPI_Message msg = MPI_MESSAGE_NULL;
  if (started) atomic_store(started, 1);
  if (!use_iprobe) {
    if (native_mprobe) MPI_Mprobe(src, tag, MPI_COMM_WORLD, &msg, &pst);
    else MPI_Probe(src, tag, MPI_COMM_WORLD, &pst);
  } else {
    int flag = 0;
    for (int polls = 0; !flag; ++polls) {
      if (native_mprobe) MPI_Improbe(src, tag, MPI_COMM_WORLD, &flag, &msg, &pst);
      else MPI_Iprobe(src, tag, MPI_COMM_WORLD, &flag, &pst);
      if (!flag) {
        if (polls < 10) sched_yield();
        else pause_ns(polls < 100 ? 20000 : 200000);
      }
    }
  }
  MPI_Get_count(&pst, MPI_INT, n);
  int* buf = malloc((*n > 0 ? *n : 1) * sizeof(int));
  if (native_mprobe) MPI_Mrecv(buf, *n, MPI_INT, &msg, st);
  else if (original_pattern) MPI_Recv(buf, *n, MPI_INT, src, tag, MPI_COMM_WORLD, st);
  else MPI_Recv(buf, *n, MPI_INT, pst.MPI_SOURCE, pst.MPI_TAG, MPI_COMM_WORLD, st);
  CHECK(pst.MPI_SOURCE == st->MPI_SOURCE && pst.MPI_TAG == st->MPI_TAG,
        "probe saw (source %d, tag %d), receive got (source %d, tag %d)", pst.MPI_SOURCE, pst.MPI_TAG,
        st->MPI_SOURCE, st->MPI_TAG);
  return buf;
}

static int check_payload(const char* who, int r, int tag, const int* buf, int n, const MPI_Status* st, int want_len) {
  int got = -1, ok = 1;
  MPI_Get_count(st, MPI_INT, &got);
  if (st->MPI_SOURCE != 0 || st->MPI_TAG != tag || n != want_len || got != want_len) {
    CHECK(0, "round %d: %s got (source %d, tag %d, %d ints, probed %d), want (0, %d, %d ints)", r, who,
          st->MPI_SOURCE, st->MPI_TAG, got, n, tag, want_len);
    return 0;
  }
  for (int i = 0; i < n; ++i)
    if (buf[i] != value(r, tag, i)) {
      CHECK(0, "round %d: %s: int %d is %d, want %d", r, who, i, buf[i], value(r, tag, i));
      ok = 0;
      break;
    }
  return ok;
}

typedef struct {
  int round, who; /* 0: A, 1: B */
} Arg;

static void* thread_main(void* p) {
  Arg* a = p;
  int r = a->round, n;
  MPI_Status st;
  if (a->who == 0) { /* A: probe/recv(0 or ANY_SOURCE, 2) */
    int src = (r / 4) % 2 ? MPI_ANY_SOURCE : 0;
    int* buf = probe_and_receive(src, 2, r % 2, (r / 8) % 2, &n, &st, &a_probing);
    if (check_payload("thread A", r, 2, buf, n, &st, len2(r))) atomic_fetch_add(&a_ok, 1);
    free(buf);
  } else { /* B: wait until A is in its probe, then probe/recv(0, ANY_TAG) and reply */
    for (int k = 0; !atomic_load(&a_probing); ++k) {
      if (k < 10) sched_yield();
      else pause_ns(100000);
    }
    pause_ns(50 * 1000000L);
    int* buf = probe_and_receive(0, MPI_ANY_TAG, (r / 2) % 2, (r / 16) % 2, &n, &st, NULL);
    if (check_payload("thread B", r, 1, buf, n, &st, len1(r))) atomic_fetch_add(&b_ok, 1);
    int reply[2] = {r, n};
    MPI_Send(reply, 2, MPI_INT, 0, 1, MPI_COMM_WORLD);
    free(buf);
  }
  return NULL;
}

int main(int argc, char** argv) {
  test_init_pair(&argc, &argv, "probe_listing13", &rank, &peer);
  int rounds = argc > 1 ? atoi(argv[1]) : 50;
  const char* e = getenv("PROBE_TEST_NATIVE_MPROBE");
  native_mprobe = e && !strcmp(e, "1");
  double start = MPI_Wtime();
  for (int r = 0; r < rounds; ++r) {
    if (rank == 0) {
      int* m1 = malloc(len1(r) * sizeof(int));
      int* m2 = malloc(len2(r) * sizeof(int));
      for (int i = 0; i < len1(r); ++i) m1[i] = value(r, 1, i);
      for (int i = 0; i < len2(r); ++i) m2[i] = value(r, 2, i);
      MPI_Send(m1, len1(r), MPI_INT, 1, 1, MPI_COMM_WORLD);
      int reply[2] = {-1, -1};
      MPI_Status st;
      MPI_Recv(reply, 2, MPI_INT, 1, 1, MPI_COMM_WORLD, &st);
      CHECK(reply[0] == r && reply[1] == len1(r), "round %d: reply (%d, %d), want (%d, %d)", r, reply[0], reply[1],
            r, len1(r));
      MPI_Send(m2, len2(r), MPI_INT, 1, 2, MPI_COMM_WORLD);
      free(m1);
      free(m2);
    } else {
      atomic_store(&a_probing, 0);
      Arg args[2] = {{r, 0}, {r, 1}};
      run_threads(2, thread_main, args, sizeof args[0]);
    }
  }
  if (rank == 1) {
    printf("probe_listing13: rank 1: %d rounds in %.2f s (%s): thread A got tag 2 %d times, thread B got tag 1 %d "
           "times\n", rounds, MPI_Wtime() - start, native_mprobe ? "mprobe+mrecv" : "probe+recv",
           (int)atomic_load(&a_ok), (int)atomic_load(&b_ok));
    CHECK(a_ok == rounds && b_ok == rounds, "not every round was right");
  }
  return test_finish();
}
