/* MPICH's MPIX_Stream (a serial execution context: MPICH 4.1 and later) used correctly by
   THREADS threads of every rank, each on a stream of its own. The main thread duplicates
   MPI_COMM_WORLD once per thread beforehand; then thread t
     - creates its stream (MPIX_Stream_create with MPI_INFO_NULL; the threads take turns, see
       below) and, concurrently with the other threads, a stream communicator from its own
       duplicate (MPIX_Stream_comm_create: collective over the duplicate, so distinct parents
       from distinct threads at once are legal under MPI_THREAD_MULTIPLE);
     - checks that MPIX_Comm_get_stream gives its stream at index 0 and MPIX_STREAM_NULL at 1;
     - on its stream communicator: a ring of MPI_Send/MPI_Recv (even ranks send first), a ring
       both ways of MPI_Isend/MPI_Irecv/MPI_Waitall with one small and one large (rendezvous)
       message each way, an MPI_Allreduce, and MPIX_Stream_progress on its stream;
   then the main thread makes one multiplex communicator over the THREADS streams
   (MPIX_Stream_comm_create_multiplex, stream t at index t) and checks MPIX_Comm_get_stream on
   it, and thread t, on that communicator from its stream index t to stream index t of the
   other ranks, makes a ring of MPIX_Stream_send/MPIX_Stream_recv and a ring both ways of
   MPIX_Stream_isend/MPIX_Stream_irecv/MPI_Waitall; thread 0, whose stream is index 0 (what
   MPICH uses for a collective on a multiplex communicator), also an MPI_Allreduce on it.
   Every message's data is verified, and its status' source, tag and count (but
   MPIX_Stream_recv's, below). Threads free their stream communicators;
   the main thread then frees the multiplex communicator, the streams (after every
   communicator holding them: MPICH refuses to free a stream still attached, and drops a
   reference all the same) and the duplicates. No call is made on a stream by two threads the
   program leaves unordered: stream_race.c is the erroneous twin.

   The program asks for MPI_THREAD_MULTIPLE (its threads call MPI at once); MPICH's streams
   themselves also work at MPI_THREAD_SINGLE. MPICH 4.2.1 (Debian 13, ch4:ucx, per-vci critical
   sections), what this program adapts to:
     - Each stream takes a reserved VCI: run with MPIR_CVAR_CH4_RESERVE_VCIS at least THREADS
       (the default 0 makes MPIX_Stream_create fail, "No streams available"; at most 63, since
       MPIR_CVAR_CH4_NUM_VCIS (1) + the reserved ones may not exceed 64: 64 fails an assertion
       in MPI_Init). A failed MPIX_Stream_create here aborts with that hint.
     - MPIX_Stream_create/free allocate the VCI without any lock (MPID_Allocate_vci; the
       global critical section they take is a no-op under per-vci), and MPIX_Stream_send/recv
       on a multiplex communicator take the destination VCI from the sender's entry
       (MPIR_Stream_comm_set_attr), right only where stream t has the same VCI on every rank.
       So the threads create their streams in turn, thread 0 first, which gives stream t the
       same VCI on every process; the main thread frees them. (Made in reverse order on odd
       ranks, the threads' MPIX_Stream_send/recv share UCX workers without a lock and UCX
       aborts: "Assertion `worker->inprogress++ == 0' failed", in most runs.)
     - MPIX_Comm_get_stream on a multiplex communicator reads its local stream idx at
       local_streams[displs[rank] + idx], past the end of the array on any rank but 0 (seen:
       SIGSEGV). So the streams of the multiplex communicator are checked on its rank 0 only;
       every rank checks that the index THREADS (out of range) gives MPIX_STREAM_NULL.
     - MPIX_Stream_recv never fills its status (ch4's MPID_Recv drops it and the binding
       waits with MPI_STATUS_IGNORE), so only its data is checked; the statuses of
       MPIX_Stream_irecv's requests, from MPI_Waitall, are checked.
     - The enqueue operations (MPIX_Send/Recv/Isend/Irecv/Wait/Waitall/Allreduce_enqueue)
       need a GPU stream: on a stream made with MPI_INFO_NULL (or any "type" but
       "cudaStream_t"/"hipStream_t") they return MPI_ERR_OTHER, "The communicator does not
       have a local gpu stream attached", and MPIX_Wait_enqueue without an enqueued request
       fails an assertion; "type"="cudaStream_t" or "hipStream_t" fails an assertion in
       MPIX_Stream_create on this build without CUDA/HIP. They are left out.
   Not done here: calling MPIX_Stream_progress on a copy of a freed stream's handle (undefined).

   Usage: streams [threads]   (2 or more ranks; threads 1..63, default 4), e.g.
     MPIR_CVAR_CH4_RESERVE_VCIS=4 mpiexec -np 2 ./streams 4
   Prints "streams: rank R: check failed: ..." for each failed check and then
   "streams: rank R: ok" or "streams: rank R: FAILED" (exit status 1). */
// ranks: 2
#define _POSIX_C_SOURCE 200809L /* pthread barriers under -std=c11 */
#include "test_util.h"

#define SMALL 16
#define LARGE (1 << 16) /* ints: 256 KiB, past the eager limit */
#define MAX_THREADS 63

static int world_rank, world_size, threads;
static MPI_Comm* parents;       /* duplicates of MPI_COMM_WORLD, one per thread */
static MPIX_Stream* streams;    /* thread t's stream */
static MPI_Comm multiplex = MPI_COMM_NULL;
static pthread_barrier_t phase; /* threads + main: around the multiplex communicator's creation */

/* Streams are created in turn (see the header). */
static pthread_mutex_t turn_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_cond = PTHREAD_COND_INITIALIZER;
static int turn;

static const char* error_text(int rc) {
  static _Thread_local char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "error %d", rc);
  return text;
}
#define CHECK_RC(rc, t, what) CHECK((rc) == MPI_SUCCESS, "thread %d: %s: %s", t, what, error_text(rc))

/* Element i of the message from `src` for thread t, kind `kind`. */
static int value(int src, int t, int kind, int i) {
  return (int)((((unsigned)src * 64u + (unsigned)t) * 8u + (unsigned)kind) * (unsigned)LARGE + (unsigned)i);
}

static void fill(int* buf, int n, int src, int t, int kind) {
  for (int i = 0; i < n; ++i) buf[i] = value(src, t, kind, i);
}

/* Checks a received message: its data, and its status' source, tag and count (st NULL: data only). */
static void verify(const int* buf, int n, const MPI_Status* st, int src, int tag, int t, int kind, const char* what) {
  int bad = -1;
  for (int i = 0; i < n && bad < 0; ++i)
    if (buf[i] != value(src, t, kind, i)) bad = i;
  CHECK(bad < 0, "thread %d: %s: element %d is %d, expected %d", t, what, bad, bad < 0 ? 0 : buf[bad],
        bad < 0 ? 0 : value(src, t, kind, bad));
  if (!st) return;
  int count = -1;
  MPI_Get_count(st, MPI_INT, &count);
  CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && count == n,
        "thread %d: %s: status source %d tag %d count %d, expected %d %d %d", t, what, st->MPI_SOURCE, st->MPI_TAG,
        count, src, tag, n);
}

/* Ring exchanges on a stream communicator with MPI point-to-point calls. */
static void plain_rings(MPI_Comm comm, int t, int* out_small, int* in_small, int* out_large, int* in_large) {
  const int next = (world_rank + 1) % world_size, prev = (world_rank + world_size - 1) % world_size;
  MPI_Status st;
  int rc;

  /* Blocking ring, even ranks first: the chain is broken at every odd rank, so no cycle. */
  fill(out_small, SMALL, world_rank, t, 0);
  memset(in_small, 0xff, SMALL * sizeof(int));
  if (world_rank % 2 == 0) {
    rc = MPI_Send(out_small, SMALL, MPI_INT, next, t, comm);
    CHECK_RC(rc, t, "MPI_Send");
    rc = MPI_Recv(in_small, SMALL, MPI_INT, prev, t, comm, &st);
    CHECK_RC(rc, t, "MPI_Recv");
  } else {
    rc = MPI_Recv(in_small, SMALL, MPI_INT, prev, t, comm, &st);
    CHECK_RC(rc, t, "MPI_Recv");
    rc = MPI_Send(out_small, SMALL, MPI_INT, next, t, comm);
    CHECK_RC(rc, t, "MPI_Send");
  }
  verify(in_small, SMALL, &st, prev, t, t, 0, "MPI_Recv on the stream communicator");

  /* Nonblocking ring both ways: small to the next rank, large to the previous one. */
  MPI_Request req[4];
  MPI_Status sts[4];
  fill(out_small, SMALL, world_rank, t, 1);
  fill(out_large, LARGE, world_rank, t, 2);
  memset(in_small, 0xff, SMALL * sizeof(int));
  memset(in_large, 0xff, LARGE * sizeof(int));
  rc = MPI_Irecv(in_small, SMALL, MPI_INT, prev, 1, comm, &req[0]);
  CHECK_RC(rc, t, "MPI_Irecv small");
  rc = MPI_Irecv(in_large, LARGE, MPI_INT, next, 2, comm, &req[1]);
  CHECK_RC(rc, t, "MPI_Irecv large");
  rc = MPI_Isend(out_small, SMALL, MPI_INT, next, 1, comm, &req[2]);
  CHECK_RC(rc, t, "MPI_Isend small");
  rc = MPI_Isend(out_large, LARGE, MPI_INT, prev, 2, comm, &req[3]);
  CHECK_RC(rc, t, "MPI_Isend large");
  rc = MPI_Waitall(4, req, sts);
  CHECK_RC(rc, t, "MPI_Waitall");
  verify(in_small, SMALL, &sts[0], prev, 1, t, 1, "MPI_Irecv small on the stream communicator");
  verify(in_large, LARGE, &sts[1], next, 2, t, 2, "MPI_Irecv large on the stream communicator");
  for (int i = 0; i < 4; ++i) CHECK(req[i] == MPI_REQUEST_NULL, "thread %d: request %d not freed", t, i);

  /* Allreduce: thread t's contribution differs from the other threads'. */
  int mine[2] = {(world_rank + 1) * (t + 1), t}, sum[2] = {-1, -1};
  rc = MPI_Allreduce(mine, sum, 2, MPI_INT, MPI_SUM, comm);
  CHECK_RC(rc, t, "MPI_Allreduce");
  CHECK(sum[0] == (t + 1) * world_size * (world_size + 1) / 2 && sum[1] == t * world_size,
        "thread %d: MPI_Allreduce gave %d %d, expected %d %d", t, sum[0], sum[1],
        (t + 1) * world_size * (world_size + 1) / 2, t * world_size);
}

/* Ring exchanges on the multiplex communicator from stream index t to stream index t. */
static void stream_rings(int t, int* out_small, int* in_small, int* out_large, int* in_large) {
  const int next = (world_rank + 1) % world_size, prev = (world_rank + world_size - 1) % world_size;
  const int tag = 100 + t;
  MPI_Status st;
  int rc;

  fill(out_small, SMALL, world_rank, t, 3);
  memset(in_small, 0xff, SMALL * sizeof(int));
  if (world_rank % 2 == 0) {
    rc = MPIX_Stream_send(out_small, SMALL, MPI_INT, next, tag, multiplex, t, t);
    CHECK_RC(rc, t, "MPIX_Stream_send");
    rc = MPIX_Stream_recv(in_small, SMALL, MPI_INT, prev, tag, multiplex, t, t, &st);
    CHECK_RC(rc, t, "MPIX_Stream_recv");
  } else {
    rc = MPIX_Stream_recv(in_small, SMALL, MPI_INT, prev, tag, multiplex, t, t, &st);
    CHECK_RC(rc, t, "MPIX_Stream_recv");
    rc = MPIX_Stream_send(out_small, SMALL, MPI_INT, next, tag, multiplex, t, t);
    CHECK_RC(rc, t, "MPIX_Stream_send");
  }
  verify(in_small, SMALL, NULL, prev, tag, t, 3, "MPIX_Stream_recv");

  MPI_Request req[4];
  MPI_Status sts[4];
  fill(out_small, SMALL, world_rank, t, 4);
  fill(out_large, LARGE, world_rank, t, 5);
  memset(in_small, 0xff, SMALL * sizeof(int));
  memset(in_large, 0xff, LARGE * sizeof(int));
  rc = MPIX_Stream_irecv(in_small, SMALL, MPI_INT, prev, tag, multiplex, t, t, &req[0]);
  CHECK_RC(rc, t, "MPIX_Stream_irecv small");
  rc = MPIX_Stream_irecv(in_large, LARGE, MPI_INT, next, tag + 100, multiplex, t, t, &req[1]);
  CHECK_RC(rc, t, "MPIX_Stream_irecv large");
  rc = MPIX_Stream_isend(out_small, SMALL, MPI_INT, next, tag, multiplex, t, t, &req[2]);
  CHECK_RC(rc, t, "MPIX_Stream_isend small");
  rc = MPIX_Stream_isend(out_large, LARGE, MPI_INT, prev, tag + 100, multiplex, t, t, &req[3]);
  CHECK_RC(rc, t, "MPIX_Stream_isend large");
  rc = MPI_Waitall(4, req, sts);
  CHECK_RC(rc, t, "MPI_Waitall (multiplex)");
  verify(in_small, SMALL, &sts[0], prev, tag, t, 4, "MPIX_Stream_irecv small");
  verify(in_large, LARGE, &sts[1], next, tag + 100, t, 5, "MPIX_Stream_irecv large");

  if (t == 0) {
    int mine = world_rank + 1, sum = -1;
    rc = MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, multiplex);
    CHECK_RC(rc, t, "MPI_Allreduce (multiplex)");
    CHECK(sum == world_size * (world_size + 1) / 2, "thread 0: MPI_Allreduce on the multiplex communicator gave %d, expected %d",
          sum, world_size * (world_size + 1) / 2);
  }
}

static void* stream_thread(void* arg) {
  const int t = *(int*)arg;
  int* bufs = malloc((2 * SMALL + 2 * LARGE) * sizeof(int));
  int *out_small = bufs, *in_small = bufs + SMALL, *out_large = bufs + 2 * SMALL, *in_large = out_large + LARGE;
  int rc;

  /* Thread t creates its stream after thread t-1. */
  pthread_mutex_lock(&turn_mutex);
  while (turn != t) pthread_cond_wait(&turn_cond, &turn_mutex);
  pthread_mutex_unlock(&turn_mutex);
  MPIX_Stream stream = MPIX_STREAM_NULL;
  rc = MPIX_Stream_create(MPI_INFO_NULL, &stream);
  if (rc != MPI_SUCCESS || stream == MPIX_STREAM_NULL) {
    printf("streams: rank %d: thread %d: MPIX_Stream_create failed (%s); "
           "run with MPIR_CVAR_CH4_RESERVE_VCIS=%d or more\n",
           world_rank, t, rc == MPI_SUCCESS ? "MPIX_STREAM_NULL" : error_text(rc), threads);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  streams[t] = stream;
  pthread_mutex_lock(&turn_mutex);
  ++turn;
  pthread_cond_broadcast(&turn_cond);
  pthread_mutex_unlock(&turn_mutex);

  MPI_Comm comm = MPI_COMM_NULL;
  rc = MPIX_Stream_comm_create(parents[t], stream, &comm);
  CHECK_RC(rc, t, "MPIX_Stream_comm_create");
  if (rc != MPI_SUCCESS || comm == MPI_COMM_NULL) {
    printf("streams: rank %d: thread %d: no stream communicator\n", world_rank, t);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int size = -1, rank = -1;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  CHECK(size == world_size && rank == world_rank, "thread %d: stream communicator: rank %d of %d, expected %d of %d", t,
        rank, size, world_rank, world_size);
  MPIX_Stream got = MPIX_STREAM_NULL;
  rc = MPIX_Comm_get_stream(comm, 0, &got);
  CHECK_RC(rc, t, "MPIX_Comm_get_stream(0)");
  CHECK(got == stream, "thread %d: MPIX_Comm_get_stream(0) gave %#x, expected its stream %#x", t, (unsigned)got,
        (unsigned)stream);
  got = stream;
  rc = MPIX_Comm_get_stream(comm, 1, &got);
  CHECK_RC(rc, t, "MPIX_Comm_get_stream(1)");
  CHECK(got == MPIX_STREAM_NULL, "thread %d: MPIX_Comm_get_stream(1) gave %#x, expected MPIX_STREAM_NULL", t,
        (unsigned)got);

  plain_rings(comm, t, out_small, in_small, out_large, in_large);
  rc = MPIX_Stream_progress(stream);
  CHECK_RC(rc, t, "MPIX_Stream_progress");

  /* The main thread makes the multiplex communicator while the threads wait here. */
  pthread_barrier_wait(&phase);
  pthread_barrier_wait(&phase);
  if (multiplex != MPI_COMM_NULL) {
    stream_rings(t, out_small, in_small, out_large, in_large);
    rc = MPIX_Stream_progress(stream);
    CHECK_RC(rc, t, "MPIX_Stream_progress (after the multiplex exchanges)");
  }

  rc = MPI_Comm_free(&comm);
  CHECK_RC(rc, t, "MPI_Comm_free(stream communicator)");
  CHECK(comm == MPI_COMM_NULL, "thread %d: MPI_Comm_free left the handle set", t);
  free(bufs);
  return NULL;
}

int main(int argc, char** argv) {
  test_init(&argc, &argv, "streams");
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  threads = argc > 1 ? atoi(argv[1]) : 4;
  if (world_size < 2 || threads < 1 || threads > MAX_THREADS) {
    if (world_rank == 0) printf("streams: needs 2 or more ranks and 1 to %d threads (usage: streams [threads])\n", MAX_THREADS);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  parents = malloc(threads * sizeof *parents);
  streams = malloc(threads * sizeof *streams);
  int* ids = malloc(threads * sizeof *ids);
  for (int t = 0; t < threads; ++t) {
    ids[t] = t;
    streams[t] = MPIX_STREAM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &parents[t]);
  }
  pthread_barrier_init(&phase, NULL, threads + 1);
  pthread_t* tids = malloc(threads * sizeof *tids);
  for (int t = 0; t < threads; ++t) pthread_create(&tids[t], NULL, stream_thread, &ids[t]);

  /* Every thread has made its stream and is done with its stream communicator's exchanges. */
  pthread_barrier_wait(&phase);
  int rc = MPIX_Stream_comm_create_multiplex(MPI_COMM_WORLD, threads, streams, &multiplex);
  CHECK(rc == MPI_SUCCESS, "MPIX_Stream_comm_create_multiplex: %s", error_text(rc));
  if (rc != MPI_SUCCESS) multiplex = MPI_COMM_NULL;
  if (multiplex != MPI_COMM_NULL) {
    MPI_Comm_set_errhandler(multiplex, MPI_ERRORS_RETURN);
    int size = -1, rank = -1;
    MPI_Comm_size(multiplex, &size);
    MPI_Comm_rank(multiplex, &rank);
    CHECK(size == world_size && rank == world_rank, "multiplex communicator: rank %d of %d, expected %d of %d", rank,
          size, world_rank, world_size);
    MPIX_Stream got;
    if (rank == 0) {
      for (int t = 0; t < threads; ++t) {
        got = MPIX_STREAM_NULL;
        rc = MPIX_Comm_get_stream(multiplex, t, &got);
        CHECK(rc == MPI_SUCCESS && got == streams[t], "multiplex: MPIX_Comm_get_stream(%d) gave %#x (%s), expected %#x",
              t, (unsigned)got, error_text(rc), (unsigned)streams[t]);
      }
    }
    got = streams[0];
    rc = MPIX_Comm_get_stream(multiplex, threads, &got);
    CHECK(rc == MPI_SUCCESS && got == MPIX_STREAM_NULL,
          "multiplex: MPIX_Comm_get_stream(%d) gave %#x (%s), expected MPIX_STREAM_NULL", threads, (unsigned)got,
          error_text(rc));
  }
  pthread_barrier_wait(&phase);

  for (int t = 0; t < threads; ++t) pthread_join(tids[t], NULL);
  if (multiplex != MPI_COMM_NULL) {
    rc = MPI_Comm_free(&multiplex);
    CHECK(rc == MPI_SUCCESS, "MPI_Comm_free(multiplex): %s", error_text(rc));
  }
  /* No communicator holds a stream any more. */
  for (int t = 0; t < threads; ++t) {
    rc = MPIX_Stream_free(&streams[t]);
    CHECK(rc == MPI_SUCCESS, "MPIX_Stream_free(stream %d): %s", t, error_text(rc));
    CHECK(streams[t] == MPIX_STREAM_NULL, "MPIX_Stream_free(stream %d) left the handle set", t);
  }
  for (int t = 0; t < threads; ++t) MPI_Comm_free(&parents[t]);
  pthread_barrier_destroy(&phase);
  free(tids);
  free(ids);
  free(streams);
  free(parents);
  return test_finish();
}
