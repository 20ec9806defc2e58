/* asp_check: checking mode (TSMPI_CHECK) and the hang watchdog (TSMPI_HANG_TIMEOUT) on MPI
   processes of address spaces (`tsmpirun -asp K -np N`, docs/threads-as-ranks.md#address-spaces):
   the erroneous collective patterns of seed 004 §3.5 that threads acting as MPI processes can
   write, each with its correct twin, and a receive cycle among MPI processes.
   usage: asp_check MODE [S]

     concurrent       Listing 3.3: in each address space, MPI process index 0 has two threads that
                      both call MPI_Barrier(MPI_COMM_WORLD) at once; the other MPI processes wait
                      0.5 s (both threads are inside by then) and call MPI_Barrier twice. Erroneous
                      (MPI-4.0 §11.6.2) but it completes: tsmpi reports it, the run ends "ok".
     concurrent_twin  the same, with process index 0's second thread calling its barrier after
                      the first thread's has returned: no report.
     finalize         Listing 3.4 through MPI_Finalize (K >= 2): MPI process index 0 waits in
                      MPI_Ibarrier(MPI_COMM_WORLD) (tested until S seconds pass, default 3) while
                      index 1 calls MPI_Finalize 0.5 s later without calling it; tsmpi reports the
                      leaving. Index 0's Ibarrier never completes: after S seconds it prints
                      "asp_check: rank R: MPI_Ibarrier still pending after S s, as expected" and
                      ends its OS process with status 3.
     finalize_twin    every MPI process calls MPI_Ibarrier, then finalizes: no report.
     mismatch         Listing 3.5: as their first collective on MPI_COMM_WORLD, even indices call
                      MPI_Bcast (root 0) and odd ones MPI_Allreduce. tsmpi reports it; the
                      collectives never complete and the alarm ends each OS process after S
                      seconds (default 3); each collective returns an error, then a barrier.
     mismatch_twin    every MPI process calls MPI_Bcast then MPI_Allreduce: no report.
     cycle            each MPI process R calls MPI_Recv from R+1 (mod N), then would send to R-1:
                      a receive cycle over every MPI process. Run with TSMPI_HANG_TIMEOUT=2; the
                      alarm ends each OS process after S seconds (default 8; "watchdog: still in
                      stage [cycle]", status 1), after the watchdog's reports.
   The correct modes print "asp_check: rank R: ok" per MPI process and exit 0.
   Threads: one per MPI process (OpenMP), plus a second thread of index 0 in the concurrent
   modes. */
#include <omp.h>
#include <pthread.h>
#include <time.h>

#include "asp_util.h"

static void sleep_s(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Process index 0's first thread's barrier has returned (concurrent_twin). A mutex and a
   condition variable, not an atomic flag: checking mode sees the program's ordering through
   its synchronization calls (docs/checking.md). */
static int first_done;
static pthread_mutex_t first_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t first_cond = PTHREAD_COND_INITIALIZER;

/* Listing 3.3 and its twin; thread `t` of the address space (t == K: index 0's second thread). */
static void run_concurrent(int twin, int t) {
  const int second = t == asp_K;
  if (asp_idx == 0) {
    if (twin && second)
    {
      pthread_mutex_lock(&first_lock);
      while (!first_done) pthread_cond_wait(&first_cond, &first_lock);
      pthread_mutex_unlock(&first_lock);
    }
    double t0 = now();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    double waited = now() - t0;
    /* Index 1 of this address space enters its first barrier 0.5 s after both threads started. */
    if (asp_K > 1 && !(twin && second))
      CHECK(waited > 0.4, "%s thread's MPI_Barrier returned after %.3f s, before index 1 entered it",
            second ? "second" : "first", waited);
    if (twin && !second) {
      pthread_mutex_lock(&first_lock);
      first_done = 1;
      pthread_cond_broadcast(&first_cond);
      pthread_mutex_unlock(&first_lock);
    }
  } else {
    sleep_s(0.5);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  }
}

/* Listing 3.4 through MPI_Finalize and its twin. Returns 1 when this thread finalized its
   MPI process. */
static int run_finalize(int twin, int seconds) {
  if (asp_idx == 1) {
    if (twin) { /* the same call as the others (a blocking barrier would not match theirs) */
      MPI_Request req = MPI_REQUEST_NULL;
      MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &req));
      MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
      return 0; /* finalizes after the verdict */
    }
    sleep_s(0.5); /* index 0 is in its MPI_Ibarrier by then */
    asp_set_stage("finalize: index 1 finalizes");
    MPI_OK(MPI_Finalize());
    return 1;
  }
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &req));
  double end = now() + seconds;
  int done = 0;
  while (!done && now() < end) {
    MPI_OK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
    if (!done) sleep_s(0.01);
  }
  if (twin) {
    CHECK(done, "MPI_Ibarrier did not complete in %d s", seconds);
  } else {
    CHECK(!done, "MPI_Ibarrier completed without index 1");
    asp_say("asp_check: rank %d: MPI_Ibarrier still pending after %d s, as expected\n", asp_rank, seconds);
    _exit(3);
  }
  return 0;
}

/* Listing 3.5 and its twin. */
static void run_mismatch(int twin) {
  int v = asp_rank == 0 ? 42 : -1, in = asp_rank + 1, out = -1;
  if (twin) {
    MPI_OK(MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(v == 42, "MPI_Bcast gave %d", v);
    MPI_OK(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(out == asp_N * (asp_N + 1) / 2, "MPI_Allreduce gave %d", out);
    return;
  }
  /* The MPI processes of one address space meet in one round of the engine's shared-memory
     collective with different calls: every one of them that waits for another gets an error
     (never a combination of the other's buffers), and the communicator stays usable. The root
     of a small broadcast within one OS process waits for nobody (as a process's eager
     broadcast): it may return before the others call, and then succeeds. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int bcast = asp_idx % 2 == 0;
  int rc = bcast ? MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD)
                 : MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  if (rc == MPI_SUCCESS && bcast && asp_rank == 0) {
    asp_say("asp_check: rank %d: mismatched collective's root returned without waiting\n", asp_rank);
  } else {
    CHECK(rc != MPI_SUCCESS, "the mismatched collective succeeded");
    asp_say("asp_check: rank %d: mismatched collective failed: %s\n", asp_rank, text);
  }
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void run_cycle(void) {
  const int next = (asp_rank + 1) % asp_N, prev = (asp_rank + asp_N - 1) % asp_N;
  int v = -1;
  MPI_OK(MPI_Recv(&v, 1, MPI_INT, next, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  MPI_OK(MPI_Send(&asp_rank, 1, MPI_INT, prev, 7, MPI_COMM_WORLD));
  asp_say("asp_check: rank %d: the cycle did not deadlock\n", asp_rank);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "concurrent_twin";
  asp_init(&argc, &argv, "asp_check", MPIX_THREAD_ATTACH);
  const int concurrent = !strcmp(mode, "concurrent"), concurrent_twin = !strcmp(mode, "concurrent_twin");
  const int finalize = !strcmp(mode, "finalize"), finalize_twin = !strcmp(mode, "finalize_twin");
  const int mismatch = !strcmp(mode, "mismatch"), mismatch_twin = !strcmp(mode, "mismatch_twin");
  const int cycle = !strcmp(mode, "cycle");
  if (!(concurrent || concurrent_twin || finalize || finalize_twin || mismatch || mismatch_twin || cycle)) {
    asp_say("asp_check: unknown mode %s: FAILED\n", mode);
    return 2;
  }
  if ((finalize || finalize_twin) && asp_K < 2) {
    asp_say("asp_check: mode %s needs -asp 2 or more: FAILED\n", mode);
    return 2;
  }
  int seconds = argc > 2 ? atoi(argv[2]) : (cycle ? 8 : 3);
  if (mismatch || cycle) {
    asp_set_stage(mode); /* asp_alarm ends the OS process after `seconds` */
    alarm((unsigned)seconds);
  }
  const int threads = asp_K + (concurrent || concurrent_twin ? 1 : 0);
  int status = 0;
#pragma omp parallel num_threads(threads) reduction(| : status)
  {
    const int t = omp_get_thread_num();
    const int index = t < asp_K ? t : 0;
    int finalized = 0;
    const int attached = asp_attach(index) == MPI_SUCCESS;
#pragma omp barrier
    if (attached) {
      if (concurrent || concurrent_twin) run_concurrent(concurrent_twin, t);
      else if (finalize || finalize_twin) finalized = run_finalize(finalize_twin, seconds);
      else if (mismatch || mismatch_twin) run_mismatch(mismatch_twin);
      else run_cycle();
    }
#pragma omp barrier
    /* Every check of the address space is done: one verdict per MPI process. */
    if (t < asp_K && !finalized && attached) {
      status |= asp_verdict();
      /* Each MPI process finalizes from one of its threads (the initializing thread is
         OpenMP's thread 0, attached to index 0: it finalizes only that MPI process). */
      int rc = MPI_Finalize();
      if (rc != MPI_SUCCESS) {
        asp_say("asp_check: rank %d: MPI_Finalize returned %d: FAILED\n", asp_rank, rc);
        status = 1;
      }
    }
  }
  alarm(0);
  return status;
}
