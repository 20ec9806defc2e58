/* The ULFM extensions (Open MPI 5.0's MPIX_Comm_revoke, _is_revoked, _shrink, _agree, _iagree,
   _get_failed, _ack_failed) with threads, no process failing:
   A. each of THREADS threads exchanges a few ints around a ring of ranks on a duplicate `comm` of
      MPI_COMM_WORLD (tag = the thread's index) and checks them;
   B. on every rank threads 1..THREADS-1 block on `comm` in a call no message can match (tag
      1000 + index): thread 1 in MPI_Irecv + MPI_Wait, the other odd ones in MPI_Recv, the even
      ones in MPI_Probe. Once every rank's threads are about to block (an MPI_Barrier on a second
      duplicate, `other`, then 200 ms for them to block) rank 0's main thread revokes `comm`.
      Every blocked call on every rank must return an error of class MPIX_ERR_REVOKED (within
      30 s: else the program names the threads still blocked and calls MPI_Abort), and
      MPIX_Comm_is_revoked must report `comm` revoked on every rank (polled for up to 30 s, the
      revocation reaches the other ranks asynchronously); then MPI_Send and MPI_Barrier on
      `comm` must fail with MPIX_ERR_REVOKED, while `other` is not revoked and still carries an
      MPI_Allreduce;
   C. MPIX_Comm_shrink of the revoked `comm` gives `shrunk`, of the same size and ranks (nothing
      failed), not revoked, with an empty MPIX_Comm_get_failed group and nothing for
      MPIX_Comm_ack_failed to acknowledge; each thread, on its own duplicate of `shrunk` (agree
      is collective: two threads must not call it on one communicator at once), runs
      MPIX_Comm_agree and MPIX_Comm_iagree + MPI_Wait on flags that differ per rank and per
      thread (the threads in turn: Open MPI 5.0.7's concurrent agreements are wrong, below), checks the bitwise AND over the ranks, and passes ints around the ring again.
   Blocked calls that a revocation does not interrupt show as "round B: ... still blocked" and
   the job aborts; a wrong error class, flag or value as a "check failed" line. Every rank
   prints "ulfm_revoke: rank R: ok" (exit status 0) or "... FAILED" (exit status 1).
   Without the ULFM extension (no mpi-ext.h, or no FT in it) it prints "ulfm_revoke: no ULFM"
   and exits with 77 without initializing MPI; with it but FT not enabled at run time (Open
   MPI's MPIX_FT attribute of MPI_COMM_WORLD false) rank 0 prints "ulfm_revoke: no ULFM: not
   enabled at run time ..." and every rank exits with 77 after MPI_Finalize.
   Usage: mpiexec --with-ft ulfm -np N ulfm_revoke [threads] — N >= 2, threads 2..64 (default
   4). Open MPI 5 needs ULFM enabled at run time (--with-ft ulfm, or OMPI_MCA_mpi_ft_enable=1).
   MPI_THREAD_MULTIPLE is asked for and whatever level is provided accepted (tsmpi serializes
   the calls below MULTIPLE). */
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

#if defined(OMPI_HAVE_MPI_EXT_FTMPI) || defined(MPIX_ERR_REVOKED)

#define MAX_THREADS 64
#define RING_INTS 4
#define RING_ROUNDS 10
#define BLOCK_TAG 1000
#define PROPAGATION_SECONDS 30

static int world_rank, world_size, threads;
static MPI_Comm comm, other;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

/* The error class of an MPI return code (MPI_SUCCESS stays MPI_SUCCESS). */
static int error_class(int err) {
  int cls = err;
  if (err != MPI_SUCCESS) MPI_Error_class(err, &cls);
  return cls;
}

/* "class C (text)" for a return code, into buf. */
static const char* describe(int err, char* buf, size_t size) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  text[0] = '\0';
  if (MPI_Error_string(err, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "?");
  snprintf(buf, size, "code %d, class %d (%s)", err, error_class(err), text);
  return buf;
}

/* Ring exchange: RING_ROUNDS times, RING_INTS ints to rank + 1, from rank - 1, tag `tag`. */
static void ring(MPI_Comm c, int tag, const char* what) {
  int rank, size;
  MPI_Comm_rank(c, &rank);
  MPI_Comm_size(c, &size);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (int round = 0; round < RING_ROUNDS; ++round) {
    int out[RING_INTS], in[RING_INTS];
    for (int i = 0; i < RING_INTS; ++i) {
      out[i] = ((rank * 1000 + tag) * 100 + round) * 10 + i;
      in[i] = -1;
    }
    MPI_Status status;
    char buf[MPI_MAX_ERROR_STRING + 64];
    int err = MPI_Sendrecv(out, RING_INTS, MPI_INT, right, tag, in, RING_INTS, MPI_INT, left, tag, c, &status);
    CHECK(err == MPI_SUCCESS, "%s: tag %d round %d: MPI_Sendrecv: %s", what, tag, round, describe(err, buf, sizeof buf));
    if (err != MPI_SUCCESS) return;
    CHECK(status.MPI_SOURCE == left && status.MPI_TAG == tag, "%s: tag %d round %d: status source %d tag %d, expected %d %d",
          what, tag, round, status.MPI_SOURCE, status.MPI_TAG, left, tag);
    for (int i = 0; i < RING_INTS; ++i) {
      int expect = ((left * 1000 + tag) * 100 + round) * 10 + i;
      CHECK(in[i] == expect, "%s: tag %d round %d: int %d is %d, expected %d", what, tag, round, i, in[i], expect);
    }
  }
}

/* ---- Round A ---- */

static void* round_a(void* arg) {
  ring(comm, *(int*)arg, "round A");
  return NULL;
}

/* ---- Round B ---- */

enum { USE_RECV, USE_PROBE, USE_IRECV_WAIT };
static const char* const call_names[] = {"MPI_Recv", "MPI_Probe", "MPI_Irecv+MPI_Wait"};

static int call_of(int t) { return t == 1 ? USE_IRECV_WAIT : t % 2 ? USE_RECV : USE_PROBE; }

static atomic_int about_to_block, unblocked;
static atomic_int returned[MAX_THREADS];
static int blocked_error[MAX_THREADS];

static void* round_b(void* arg) {
  const int t = *(int*)arg, tag = BLOCK_TAG + t;
  int data[RING_INTS] = {0}, err;
  MPI_Status status;
  atomic_fetch_add(&about_to_block, 1);
  switch (call_of(t)) {
    case USE_RECV:
      err = MPI_Recv(data, RING_INTS, MPI_INT, MPI_ANY_SOURCE, tag, comm, &status);
      break;
    case USE_PROBE:
      err = MPI_Probe(MPI_ANY_SOURCE, tag, comm, &status);
      break;
    default: {
      MPI_Request request = MPI_REQUEST_NULL;
      err = MPI_Irecv(data, RING_INTS, MPI_INT, MPI_ANY_SOURCE, tag, comm, &request);
      /* An Irecv made after the revocation may fail itself; else the Wait must. */
      if (err == MPI_SUCCESS) {
        err = MPI_Wait(&request, &status);
        /* A request completed in error is deallocated like any other. */
        CHECK(request == MPI_REQUEST_NULL, "round B: thread %d: MPI_Wait returned without freeing the request", t);
      }
      if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
    }
  }
  blocked_error[t] = err;
  atomic_store(&returned[t], 1);
  atomic_fetch_add(&unblocked, 1);
  return NULL;
}

/* Polls MPIX_Comm_is_revoked(c) until it reports 1 or `seconds` pass; returns the flag. */
static int wait_revoked(MPI_Comm c, double seconds) {
  const double deadline = now() + seconds;
  for (;;) {
    int flag = 0, err = MPIX_Comm_is_revoked(c, &flag);
    char buf[MPI_MAX_ERROR_STRING + 64];
    CHECK(err == MPI_SUCCESS, "round B: MPIX_Comm_is_revoked: %s", describe(err, buf, sizeof buf));
    if (err != MPI_SUCCESS || flag) return flag;
    if (now() > deadline) return 0;
    sleep_ms(10);
  }
}

static void revoke_while_blocked(void) {
  char buf[MPI_MAX_ERROR_STRING + 64];
  pthread_t tids[MAX_THREADS];
  int index[MAX_THREADS];
  for (int t = 1; t < threads; ++t) {
    index[t] = t;
    pthread_create(&tids[t], NULL, round_b, &index[t]);
  }
  /* Every thread of this rank is about to block; the barrier tells the other ranks so. */
  while (atomic_load(&about_to_block) < threads - 1) sleep_ms(1);
  int err = MPI_Barrier(other);
  CHECK(err == MPI_SUCCESS, "round B: MPI_Barrier on the other communicator: %s", describe(err, buf, sizeof buf));
  sleep_ms(200); /* Time for the threads to block: a call made after the revocation must fail as well. */
  if (world_rank == 0) {
    err = MPIX_Comm_revoke(comm);
    CHECK(err == MPI_SUCCESS, "round B: MPIX_Comm_revoke: %s", describe(err, buf, sizeof buf));
    int flag = 0;
    MPIX_Comm_is_revoked(comm, &flag);
    CHECK(flag == 1, "round B: MPIX_Comm_is_revoked right after MPIX_Comm_revoke at the revoking rank: flag %d", flag);
  }

  /* The blocked calls must return; a thread still blocked cannot be joined, so abort then. */
  const double deadline = now() + PROPAGATION_SECONDS;
  while (atomic_load(&unblocked) < threads - 1 && now() < deadline) sleep_ms(10);
  if (atomic_load(&unblocked) < threads - 1) {
    for (int t = 1; t < threads; ++t)
      if (!atomic_load(&returned[t]))
        printf("ulfm_revoke: rank %d: round B: thread %d still blocked in %s on the revoked communicator %d s after the revocation\n",
               world_rank, t, call_names[call_of(t)], PROPAGATION_SECONDS);
    int flag = -1;
    MPIX_Comm_is_revoked(comm, &flag);
    printf("ulfm_revoke: rank %d: round B: MPIX_Comm_is_revoked gives %d; FAILED, aborting\n", world_rank, flag);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int t = 1; t < threads; ++t) {
    pthread_join(tids[t], NULL);
    CHECK(error_class(blocked_error[t]) == MPIX_ERR_REVOKED, "round B: thread %d: %s returned %s, expected class MPIX_ERR_REVOKED (%d)",
          t, call_names[call_of(t)], describe(blocked_error[t], buf, sizeof buf), MPIX_ERR_REVOKED);
  }

  CHECK(wait_revoked(comm, PROPAGATION_SECONDS) == 1, "round B: MPIX_Comm_is_revoked still 0 %d s after the revocation", PROPAGATION_SECONDS);

  /* Any other operation on the revoked communicator fails with MPIX_ERR_REVOKED. */
  int one = 1;
  err = MPI_Send(&one, 1, MPI_INT, (world_rank + 1) % world_size, 7, comm);
  CHECK(error_class(err) == MPIX_ERR_REVOKED, "round B: MPI_Send on the revoked communicator returned %s, expected class MPIX_ERR_REVOKED",
        describe(err, buf, sizeof buf));
  err = MPI_Barrier(comm);
  CHECK(error_class(err) == MPIX_ERR_REVOKED, "round B: MPI_Barrier on the revoked communicator returned %s, expected class MPIX_ERR_REVOKED",
        describe(err, buf, sizeof buf));

  /* The other duplicate is untouched. */
  int flag = -1, sum = -1;
  MPIX_Comm_is_revoked(other, &flag);
  CHECK(flag == 0, "round B: the other communicator reports revoked (%d)", flag);
  err = MPI_Allreduce(&world_rank, &sum, 1, MPI_INT, MPI_SUM, other);
  CHECK(err == MPI_SUCCESS && sum == world_size * (world_size - 1) / 2, "round B: MPI_Allreduce on the other communicator: %s, sum %d, expected %d",
        describe(err, buf, sizeof buf), sum, world_size * (world_size - 1) / 2);
}

/* ---- Round C ---- */

/* What rank r's thread t contributes to an agreement (kind 0: agree, 1: iagree): all bits but
   one per rank, plus a per-thread pattern, so the AND differs between threads. */
static int agree_flag(int kind, int r, int t) {
  unsigned flag;
  if (kind == 0)
    flag = 0x7fffffffu & ~(1u << ((r + t) % 31));
  else
    flag = (0x7fffff00u | (unsigned)(0xa5 ^ t)) & ~(1u << (8 + (2 * r + 3 * t) % 23));
  return (int)flag;
}

static int agree_expected(int kind, int size, int t) {
  int all = ~0;
  for (int r = 0; r < size; ++r) all &= agree_flag(kind, r, t);
  return all;
}

/* Open MPI 5.0.7's agreements on distinct communicators from several threads, at the same time
   as each other or as the other threads' messages, give wrong results, natively (with 8 threads,
   3 runs of 12; in turn but beside the rings, 1 of 15 with 4 threads: flags no rank passed, the
   same on every rank or not). The threads take their agreements in turn, in thread order on every
   rank (a lock taken in any order would deadlock between processes), and start their rings once
   every thread has agreed: 0 of 15 with 8 threads. */
static pthread_mutex_t turn_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_cond = PTHREAD_COND_INITIALIZER;
static int turn, agreeing_threads;
static void wait_turn(int t) {
  pthread_mutex_lock(&turn_mutex);
  while (turn != t) pthread_cond_wait(&turn_cond, &turn_mutex);
  pthread_mutex_unlock(&turn_mutex);
}
static void pass_turn(void) {
  pthread_mutex_lock(&turn_mutex);
  ++turn;
  pthread_cond_broadcast(&turn_cond);
  pthread_mutex_unlock(&turn_mutex);
}

static void* round_c(void* arg) {
  ThreadComm* self = arg;
  const int t = self->index;
  char buf[MPI_MAX_ERROR_STRING + 64];
  int rank, size;
  MPI_Comm_rank(self->comm, &rank);
  MPI_Comm_size(self->comm, &size);
  wait_turn(t);

  int flag = agree_flag(0, rank, t);
  int err = MPIX_Comm_agree(self->comm, &flag);
  CHECK(err == MPI_SUCCESS, "round C: thread %d: MPIX_Comm_agree: %s", t, describe(err, buf, sizeof buf));
  CHECK(flag == agree_expected(0, size, t), "round C: thread %d: MPIX_Comm_agree gave %#x, expected %#x", t, (unsigned)flag,
        (unsigned)agree_expected(0, size, t));

  MPI_Request request = MPI_REQUEST_NULL;
  flag = agree_flag(1, rank, t);
  err = MPIX_Comm_iagree(self->comm, &flag, &request);
  CHECK(err == MPI_SUCCESS, "round C: thread %d: MPIX_Comm_iagree: %s", t, describe(err, buf, sizeof buf));
  if (err == MPI_SUCCESS) {
    err = MPI_Wait(&request, MPI_STATUS_IGNORE);
    CHECK(err == MPI_SUCCESS, "round C: thread %d: MPI_Wait on MPIX_Comm_iagree: %s", t, describe(err, buf, sizeof buf));
    CHECK(request == MPI_REQUEST_NULL, "round C: thread %d: MPIX_Comm_iagree's request not freed by MPI_Wait", t);
    CHECK(flag == agree_expected(1, size, t), "round C: thread %d: MPIX_Comm_iagree gave %#x, expected %#x", t, (unsigned)flag,
          (unsigned)agree_expected(1, size, t));
  }
  pass_turn();
  wait_turn(agreeing_threads);  /* every thread's agreements done before the rings */

  ring(self->comm, t, "round C");
  return NULL;
}

static void shrink_and_agree(void) {
  char buf[MPI_MAX_ERROR_STRING + 64];
  MPI_Comm shrunk = MPI_COMM_NULL;
  int err = MPIX_Comm_shrink(comm, &shrunk);
  CHECK(err == MPI_SUCCESS && shrunk != MPI_COMM_NULL, "round C: MPIX_Comm_shrink: %s", describe(err, buf, sizeof buf));
  if (err != MPI_SUCCESS || shrunk == MPI_COMM_NULL) return;
  MPI_Comm_set_errhandler(shrunk, MPI_ERRORS_RETURN);
  int rank = -1, size = -1, flag = -1;
  MPI_Comm_rank(shrunk, &rank);
  MPI_Comm_size(shrunk, &size);
  CHECK(size == world_size && rank == world_rank, "round C: shrunk communicator: rank %d of %d, expected %d of %d (no process failed)", rank,
        size, world_rank, world_size);
  MPIX_Comm_is_revoked(shrunk, &flag);
  CHECK(flag == 0, "round C: the shrunk communicator reports revoked (%d)", flag);

  MPI_Group failed = MPI_GROUP_NULL;
  err = MPIX_Comm_get_failed(shrunk, &failed);
  CHECK(err == MPI_SUCCESS, "round C: MPIX_Comm_get_failed: %s", describe(err, buf, sizeof buf));
  if (err == MPI_SUCCESS) {
    int n = -1;
    MPI_Group_size(failed, &n);
    CHECK(n == 0, "round C: MPIX_Comm_get_failed: %d failed processes, expected none", n);
    if (failed != MPI_GROUP_EMPTY) MPI_Group_free(&failed);
  }
  int acked = -1;
  err = MPIX_Comm_ack_failed(shrunk, 0, &acked);
  CHECK(err == MPI_SUCCESS && acked == 0, "round C: MPIX_Comm_ack_failed(0): %s, %d acknowledged, expected 0", describe(err, buf, sizeof buf),
        acked);

  /* One duplicate per thread, made in the same order on every rank. */
  ThreadComm args[MAX_THREADS];
  for (int t = 0; t < threads; ++t) {
    args[t].index = t;
    args[t].comm = MPI_COMM_NULL;
    err = MPI_Comm_dup(shrunk, &args[t].comm);
    CHECK(err == MPI_SUCCESS, "round C: MPI_Comm_dup of the shrunk communicator: %s", describe(err, buf, sizeof buf));
    if (err != MPI_SUCCESS) {
      printf("ulfm_revoke: rank %d: round C: cannot go on; FAILED, aborting\n", world_rank);
      fflush(stdout);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_set_errhandler(args[t].comm, MPI_ERRORS_RETURN);
  }
  agreeing_threads = threads;
  run_threads(threads, round_c, args, sizeof args[0]);
  for (int t = 0; t < threads; ++t) MPI_Comm_free(&args[t].comm);
  MPI_Comm_free(&shrunk);
}

int main(int argc, char** argv) {
  test_name = "ulfm_revoke";
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
#ifdef MPIX_FT
  /* Open MPI 5 has the functions but, unless enabled at run time, a revocation stays local to
     the revoking process and interrupts no blocked call (every thread would stay blocked). */
  int* ft_enabled = NULL;
  int has_ft = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPIX_FT, &ft_enabled, &has_ft);
  if (has_ft && !*ft_enabled) {
    if (world_rank == 0) printf("ulfm_revoke: no ULFM: not enabled at run time (mpiexec --with-ft ulfm, or OMPI_MCA_mpi_ft_enable=1)\n");
    fflush(stdout);
    MPI_Finalize();
    return 77;
  }
#endif
  threads = argc > 1 ? atoi(argv[1]) : 4;
  if (world_size < 2 || threads < 2 || threads > MAX_THREADS) {
    if (world_rank == 0) printf("usage: mpiexec --with-ft ulfm -np N ulfm_revoke [threads] (N >= 2, threads 2..%d)\n", MAX_THREADS);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Comm_dup(MPI_COMM_WORLD, &other);
  MPI_Comm_set_errhandler(other, MPI_ERRORS_RETURN);

  int index[MAX_THREADS];
  for (int t = 0; t < threads; ++t) index[t] = t;
  run_threads(threads, round_a, index, sizeof index[0]);

  revoke_while_blocked();
  shrink_and_agree();

  int err = MPI_Comm_free(&comm);
  CHECK(err == MPI_SUCCESS, "MPI_Comm_free of the revoked communicator: error class %d", error_class(err));
  MPI_Comm_free(&other);
  return test_finish();
}

#else /* no ULFM */

int main(void) {
  printf("ulfm_revoke: no ULFM\n");
  return 77;
}

#endif
