/* probe_isendrecv: MPI-4 nonblocking send-receive under a probe policy (MPICH 4; Open MPI 4.1
   has no MPI_Isendrecv). Two ranks, 4 threads each; thread t exchanges ROUNDS messages with the
   same thread of the other rank on tag t, alternating MPI_Isendrecv and MPI_Isendrecv_replace,
   completed with MPI_Wait or an MPI_Test loop, while the other threads probe and receive on the
   neighbouring tags. Every payload is checked; the status too with PROBE_ISENDRECV_STATUS=1
   (MPICH 4.0.2's own MPI_Isendrecv completes with source 0, tag 0, count 0, so only runs where
   tsmpi carries it out, under the helper policy, can check it). */
#include "test_util.h"

enum { kThreads = 4, kInts = 64 };
static int rank, peer, rounds = 300, check_status;

#if MPI_VERSION >= 4
static void* exchange(void* arg) {
  int t = *(int*)arg;
  for (int r = 0; r < rounds; ++r) {
    int out[kInts], in[kInts];
    for (int i = 0; i < kInts; ++i) out[i] = rank * 1000000 + t * 10000 + r * 10 + i % 10;
    MPI_Request req;
    MPI_Status st;
    int* got = in;
    if (r % 2 == 0) {
      MPI_Isendrecv(out, kInts, MPI_INT, peer, t, in, kInts, MPI_INT, peer, t, MPI_COMM_WORLD, &req);
    } else {
      MPI_Isendrecv_replace(out, kInts, MPI_INT, peer, t, peer, t, MPI_COMM_WORLD, &req);
      got = out;
    }
    if (r % 3 == 0) {
      int done = 0;
      while (!done) MPI_Test(&req, &done, &st);
    } else {
      MPI_Wait(&req, &st);
    }
    int n = -1;
    MPI_Get_count(&st, MPI_INT, &n);
    if (check_status)
      CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == t && n == kInts, "thread %d round %d: status %d/%d/%d", t, r,
            st.MPI_SOURCE, st.MPI_TAG, n);
    for (int i = 0; i < kInts; ++i)
      if (got[i] != peer * 1000000 + t * 10000 + r * 10 + i % 10) {
        CHECK(0, "thread %d round %d: int %d is %d", t, r, i, got[i]);
        break;
      }
    /* probe -> receive on a tag of its own, interleaved */
    int v = r, w = -1;
    MPI_Send(&v, 1, MPI_INT, peer, 100 + t, MPI_COMM_WORLD);
    MPI_Probe(peer, 100 + t, MPI_COMM_WORLD, &st);
    MPI_Recv(&w, 1, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(w == r, "thread %d round %d: probed message %d", t, r, w);
  }
  return NULL;
}
#endif

int main(int argc, char** argv) {
  test_init_pair(&argc, &argv, "probe_isendrecv", &rank, &peer);
  if (argc > 1) rounds = atoi(argv[1]);
  const char* e = getenv("PROBE_ISENDRECV_STATUS");
  check_status = e && !strcmp(e, "1");
#if MPI_VERSION >= 4
  int ids[kThreads] = {0, 1, 2, 3};
  run_threads(kThreads, exchange, ids, sizeof ids[0]);
  printf("probe_isendrecv: rank %d: %d threads x %d rounds\n", rank, kThreads, rounds);
#else
  printf("probe_isendrecv: rank %d: MPI %d has no MPI_Isendrecv\n", rank, MPI_VERSION);
#endif
  return test_finish();
}
