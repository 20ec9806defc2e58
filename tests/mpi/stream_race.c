/* Two threads of one rank on one MPIX_Stream (MPICH's serial execution context), which the
   program does not order: erroneous. A stream is a serial context: its operations, also those
   on a stream communicator attached to it, must be ordered by the program (MPICH skips its
   locks for a stream's VCI). Rank 0 makes a stream and a stream communicator from it
   (MPIX_Stream_comm_create over MPI_COMM_WORLD; rank 1 attaches a stream of its own, used by
   its main thread only); then thread A of rank 0 sends MESSAGES messages with MPI_Isend on the
   stream communicator (tag 1) and completes them with MPI_Waitall, and thread B sends
   MESSAGES others (tag 2) the same way. Rank 1's main thread receives them all; the data,
   sources, tags and each tag's message order are verified. Rank 0's main thread joins both
   threads, then frees the stream communicator and the stream.

   Modes:
     racy      (default) nothing of the program orders B's calls after A's: a checking tool
               should report two threads' unordered calls on one stream (communicator).
               In this run they do not overlap in time: B first waits for a message that
               rank 1 sends on another communicator (a duplicate of MPI_COMM_WORLD) once it
               has received all of A's messages. That is no ordering of B's calls after A's
               (a message can be received before the MPI_Isend that sent it, or the
               MPI_Waitall after it, has returned; and a message from another process orders
               no threads of this one), but it keeps the native run clear of MPICH's failure.
     ordered   the correct twin: the same, and a pthread barrier between A's last call and
               B's first (A arrives after its MPI_Waitall, B before its first MPI_Isend).

   Natively (MPICH 4.2.1, ch4:ucx) two threads really at once on one stream communicator fail:
   MPICH takes no lock for a stream's (explicit) VCI, so both drive one UCX worker made for one
   thread at a time. Two threads of rank 0 each making 2000 MPI_Isend on it: with an MPI_Wait
   after each, 9 of 13 runs aborted ("ucp_worker.c: Assertion `worker->inprogress++ == 0'
   failed"); MPI_Isend only (the main thread waits after the joins), 7 of 33 runs failed (UCX
   "arbiter.c: Assertion `group->tail->next == group_head' failed" or `!ucs_arbiter_elem_is_
   scheduled(elem)', a SIGSEGV, MPI_Waitall returning an error); the same on a plain duplicate
   (MPICH locks its VCI), 0 of 13. Hence the separation above: this program completes
   natively in both modes.

   Needs 2 ranks and MPIR_CVAR_CH4_RESERVE_VCIS=1 or more (each rank makes one stream).
   Usage: stream_race [racy|ordered], e.g. MPIR_CVAR_CH4_RESERVE_VCIS=1 mpiexec -np 2 ./stream_race racy
   Prints "stream_race: rank R: check failed: ..." for each failed check, then
   "stream_race: rank R: ok" or "stream_race: rank R: FAILED" (exit status 1). */
// ranks: 2
#define _POSIX_C_SOURCE 200809L /* pthread barriers under -std=c11 */
#include "test_util.h"

#define MESSAGES 8
#define LENGTH 4
#define TAG_A 1
#define TAG_B 2
#define TAG_GO 3

static int rank, peer, ordered;
static MPI_Comm stream_comm = MPI_COMM_NULL; /* attached to this rank's stream */
static MPI_Comm control = MPI_COMM_NULL;     /* a plain duplicate: rank 1's "A's messages are in" */
static pthread_barrier_t between;             /* ordered: A's last call, then B's first */

static const char* error_text(int rc) {
  static _Thread_local char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "error %d", rc);
  return text;
}
#define CHECK_RC(rc, what) CHECK((rc) == MPI_SUCCESS, "%s: %s", what, error_text(rc))

static int value(int tag, int message, int i) { return (tag * 1000 + message) * 100 + i; }

/* Thread A (tag 1) or B (tag 2) of rank 0: MESSAGES sends on the stream communicator. */
static void send_all(int tag) {
  int out[MESSAGES][LENGTH];
  MPI_Request req[MESSAGES];
  for (int m = 0; m < MESSAGES; ++m) {
    for (int i = 0; i < LENGTH; ++i) out[m][i] = value(tag, m, i);
    int rc = MPI_Isend(out[m], LENGTH, MPI_INT, peer, tag, stream_comm, &req[m]);
    CHECK_RC(rc, tag == TAG_A ? "thread A: MPI_Isend" : "thread B: MPI_Isend");
  }
  int rc = MPI_Waitall(MESSAGES, req, MPI_STATUSES_IGNORE);
  CHECK_RC(rc, tag == TAG_A ? "thread A: MPI_Waitall" : "thread B: MPI_Waitall");
  for (int m = 0; m < MESSAGES; ++m) CHECK(req[m] == MPI_REQUEST_NULL, "thread %c: request %d not freed", tag == TAG_A ? 'A' : 'B', m);
}

static void* thread_a(void* arg) {
  (void)arg;
  send_all(TAG_A);
  if (ordered) pthread_barrier_wait(&between);
  return NULL;
}

static void* thread_b(void* arg) {
  (void)arg;
  /* Not an ordering (see the header): only keeps the native run from overlapping A's calls. */
  int go = -1;
  int rc = MPI_Recv(&go, 1, MPI_INT, peer, TAG_GO, control, MPI_STATUS_IGNORE);
  CHECK_RC(rc, "thread B: MPI_Recv (control)");
  CHECK(go == MESSAGES, "thread B: control message %d, expected %d", go, MESSAGES);
  if (ordered) pthread_barrier_wait(&between);
  send_all(TAG_B);
  return NULL;
}

/* Rank 1: receives A's and B's messages on one thread, tells B when A's are in. */
static void receive_all(void) {
  static int in[2][MESSAGES][LENGTH];
  MPI_Request req[2][MESSAGES];
  MPI_Status st[2][MESSAGES];
  memset(in, 0xff, sizeof in);
  for (int k = 0; k < 2; ++k)
    for (int m = 0; m < MESSAGES; ++m) {
      int rc = MPI_Irecv(in[k][m], LENGTH, MPI_INT, peer, k ? TAG_B : TAG_A, stream_comm, &req[k][m]);
      CHECK_RC(rc, "MPI_Irecv");
    }
  int rc = MPI_Waitall(MESSAGES, req[0], st[0]);
  CHECK_RC(rc, "MPI_Waitall (A's messages)");
  int go = MESSAGES;
  rc = MPI_Send(&go, 1, MPI_INT, peer, TAG_GO, control);
  CHECK_RC(rc, "MPI_Send (control)");
  rc = MPI_Waitall(MESSAGES, req[1], st[1]);
  CHECK_RC(rc, "MPI_Waitall (B's messages)");
  for (int k = 0; k < 2; ++k) {
    const int tag = k ? TAG_B : TAG_A;
    for (int m = 0; m < MESSAGES; ++m) {
      int count = -1;
      MPI_Get_count(&st[k][m], MPI_INT, &count);
      CHECK(st[k][m].MPI_SOURCE == peer && st[k][m].MPI_TAG == tag && count == LENGTH,
            "message %d of tag %d: source %d tag %d count %d", m, tag, st[k][m].MPI_SOURCE, st[k][m].MPI_TAG, count);
      /* Messages of one tag come in the order the thread sent them. */
      for (int i = 0; i < LENGTH; ++i)
        CHECK(in[k][m][i] == value(tag, m, i), "message %d of tag %d, element %d: %d, expected %d", m, tag, i,
              in[k][m][i], value(tag, m, i));
    }
  }
}

int main(int argc, char** argv) {
  test_init_pair(&argc, &argv, "stream_race", &rank, &peer);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const char* mode = argc > 1 ? argv[1] : "racy";
  ordered = !strcmp(mode, "ordered");
  if (!ordered && strcmp(mode, "racy")) {
    if (rank == 0) printf("stream_race: unknown mode '%s' (usage: stream_race [racy|ordered])\n", mode);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  MPIX_Stream stream = MPIX_STREAM_NULL;
  int rc = MPIX_Stream_create(MPI_INFO_NULL, &stream);
  if (rc != MPI_SUCCESS || stream == MPIX_STREAM_NULL) {
    printf("stream_race: rank %d: MPIX_Stream_create failed (%s); run with MPIR_CVAR_CH4_RESERVE_VCIS=1 or more\n", rank,
           rc == MPI_SUCCESS ? "MPIX_STREAM_NULL" : error_text(rc));
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  rc = MPIX_Stream_comm_create(MPI_COMM_WORLD, stream, &stream_comm);
  CHECK_RC(rc, "MPIX_Stream_comm_create");
  if (rc != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 2);
  MPI_Comm_set_errhandler(stream_comm, MPI_ERRORS_RETURN);
  MPIX_Stream got = MPIX_STREAM_NULL;
  rc = MPIX_Comm_get_stream(stream_comm, 0, &got);
  CHECK(rc == MPI_SUCCESS && got == stream, "MPIX_Comm_get_stream gave %#x, expected %#x", (unsigned)got,
        (unsigned)stream);
  MPI_Comm_dup(MPI_COMM_WORLD, &control);

  if (rank == 0) {
    pthread_barrier_init(&between, NULL, 2);
    pthread_t a, b;
    pthread_create(&a, NULL, thread_a, NULL);
    pthread_create(&b, NULL, thread_b, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    pthread_barrier_destroy(&between);
  } else {
    receive_all();
  }

  /* After the joins: ordered after both threads' calls. */
  rc = MPI_Comm_free(&stream_comm);
  CHECK_RC(rc, "MPI_Comm_free(stream communicator)");
  rc = MPIX_Stream_free(&stream);
  CHECK_RC(rc, "MPIX_Stream_free");
  CHECK(stream == MPIX_STREAM_NULL, "MPIX_Stream_free left the handle set");
  MPI_Comm_free(&control);
  return test_finish();
}
