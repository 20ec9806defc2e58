/* A threaded program of the MPI-4 sessions model, as tsmpi must protect it: MPI started with
   MPI_Session_init asking "thread_level" = MPI_THREAD_MULTIPLE (and, with argument "init", with
   MPI_Init_thread as well, before the session), a communicator made from the process set
   mpi://WORLD (MPI_Group_from_session_pset, MPI_Comm_create_from_group), and THREADS threads per
   rank that each send MSGS messages to the other rank, then receive MSGS messages by
   MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG) -> MPI_Get_count -> MPI_Recv of the probed source and
   tag: the probe race of seed 001, on a session's communicator. Natively two threads may probe
   one message and one of them receive another (of another size) or none; under tsmpi's probe
   policy each receives the message it probed. Every message carries its tag, length and a
   pattern, checked on arrival; every message sent is received once (the counts are summed over
   the threads and compared with what the peer sent).
   It also checks that MPI_Session_get_info reports the thread level asked for.
   usage: sessions_threads [init]   (2 ranks)
   Prints "sessions_threads: rank R: ok" or "... FAILED"; exit status 1 on failure, 77 on an MPI
   without sessions. */
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4
#define MSGS 200
#define MAXLEN 64

static atomic_int failures;
static MPI_Comm comm = MPI_COMM_NULL;
static int rank = -1, peer = -1;

#define CHECK(cond, ...)                                                         \
  do {                                                                           \
    if (!(cond)) {                                                               \
      printf("sessions_threads: rank %d: check failed: %s: ", rank, #cond);       \
      printf(__VA_ARGS__);                                                       \
      printf("\n");                                                              \
      fflush(stdout);                                                            \
      atomic_fetch_add(&failures, 1);                                            \
    }                                                                            \
  } while (0)

#if MPI_VERSION >= 4 || defined(MPI_SESSION_NULL) /* Open MPI 5.0 has sessions and says 3.1 */
/* Message i of thread t: tag t, 3 to MAXLEN ints: [tag, length, pattern...]. */
static int length_of(int t, int i) { return 1 + (t * 7 + i) % (MAXLEN - 2) + 2; }

static void* worker(void* arg) {
  const int t = (int)(long)arg;
  int out[MSGS][MAXLEN];
  MPI_Request sends[MSGS];
  for (int i = 0; i < MSGS; ++i) {
    const int n = length_of(t, i);
    out[i][0] = t, out[i][1] = n;
    for (int k = 2; k < n; ++k) out[i][k] = 1000 * t + k + rank;
    MPI_Isend(out[i], n, MPI_INT, peer, t, comm, &sends[i]);
  }
  int in[MAXLEN];
  for (int i = 0; i < MSGS; ++i) {
    MPI_Status st;
    int count = -1, got = -1;
    MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    memset(in, 0xff, sizeof in);
    MPI_Recv(in, MAXLEN, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, comm, &st);
    MPI_Get_count(&st, MPI_INT, &got);
    CHECK(got == count, "thread %d: probed %d ints (tag %d), received %d: another message", t, count, st.MPI_TAG, got);
    CHECK(in[0] == st.MPI_TAG && in[1] == got, "thread %d: message says tag %d length %d, status %d %d", t, in[0],
          in[1], st.MPI_TAG, got);
    for (int k = 2; k < got; ++k)
      if (in[k] != 1000 * in[0] + k + peer) {
        CHECK(0, "thread %d: word %d is %d", t, k, in[k]);
        break;
      }
  }
  MPI_Waitall(MSGS, sends, MPI_STATUSES_IGNORE);
  return NULL;
}

int main(int argc, char** argv) {
  const int with_init = argc > 1 && !strcmp(argv[1], "init");
  int provided = -1;
  if (with_init) MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE");
  MPI_Session session;
  if (MPI_Session_init(info, MPI_ERRORS_RETURN, &session) != MPI_SUCCESS) {
    printf("sessions_threads: MPI_Session_init failed\n");
    return 1;
  }
  MPI_Info_free(&info);
  MPI_Group group;
  MPI_Group_from_session_pset(session, "mpi://WORLD", &group);
  MPI_Comm_create_from_group(group, "org.tsmpi.sessions-threads", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
  MPI_Group_free(&group);
  int size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  peer = 1 - rank;
  CHECK(size == 2, "needs 2 ranks, has %d", size);

  MPI_Info got = MPI_INFO_NULL;
  char level[64] = "";
  int flag = 0;
  MPI_Session_get_info(session, &got);
  MPI_Info_get(got, "thread_level", sizeof level - 1, level, &flag);
  MPI_Info_free(&got);
  CHECK(flag && !strcmp(level, "MPI_THREAD_MULTIPLE"), "the session's thread_level is '%s'", level);
  if (with_init) CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_Init_thread provided %d", provided);

  if (size == 2) {
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; ++t) pthread_create(&th[t], NULL, worker, (void*)t);
    for (int t = 0; t < THREADS; ++t) pthread_join(th[t], NULL);
    int flag2 = 1;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag2, MPI_STATUS_IGNORE);
    CHECK(!flag2, "a message is left over");
  }
  MPI_Barrier(comm);
  MPI_Comm_free(&comm);
  MPI_Session_finalize(&session);
  const int ok = atomic_load(&failures) == 0;
  printf("sessions_threads: rank %d: %s\n", rank, ok ? "ok" : "FAILED");
  fflush(stdout);
  if (with_init) MPI_Finalize();
  return ok ? 0 : 1;
}
#else
int main(void) {
  printf("sessions_threads: this MPI has no sessions (MPI_VERSION %d)\n", MPI_VERSION);
  return 77;
}
#endif
