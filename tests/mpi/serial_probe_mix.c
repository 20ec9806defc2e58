/* Mixed probe and receive traffic where each thread owns its tag (a correct program):
   Probe + Recv, Iprobe loops + Recv, Mprobe + Mrecv, Improbe + Imrecv, Sendrecv and
   Sendrecv_replace between the threads of two ranks, messages of varying sizes. */
#include "test_util.h"

enum { kThreads = 4, kMessages = 150 };
static int rank, peer;

static int length_of(int t, int m) { return 1 + (m * 37 + t * 11) % 700; }
static int value_of(int src, int t, int m, int i) { return src * 100000000 + t * 1000000 + m * 1000 + i % 1000; }

static void fill(int* buf, int src, int t, int m) {
  for (int i = 0; i < length_of(t, m); ++i) buf[i] = value_of(src, t, m, i);
}
static void verify(const int* buf, int n, int src, int t, int m, const char* how) {
  CHECK(n == length_of(t, m), "%s: thread %d message %d has %d ints, want %d", how, t, m, n, length_of(t, m));
  for (int i = 0; i < n && i < length_of(t, m); ++i)
    if (buf[i] != value_of(src, t, m, i)) {
      CHECK(0, "%s: thread %d message %d int %d = %d", how, t, m, i, buf[i]);
      return;
    }
}

static void* worker(void* p) {
  int t = *(int*)p;
  int* out = malloc(700 * sizeof(int));
  for (int m = 0; m < kMessages; ++m) {
    fill(out, rank, t, m);
    int style = (m + t) % 6;
    if (style == 4) { /* Sendrecv: send mine, receive the peer thread's */
      int* in = malloc(700 * sizeof(int));
      MPI_Status st;
      MPI_Sendrecv(out, length_of(t, m), MPI_INT, peer, t, in, 700, MPI_INT, peer, t, MPI_COMM_WORLD, &st);
      int n;
      MPI_Get_count(&st, MPI_INT, &n);
      verify(in, n, peer, t, m, "sendrecv");
      free(in);
      continue;
    }
    if (style == 5) { /* Sendrecv_replace: same length both ways */
      int* buf = malloc(700 * sizeof(int));
      fill(buf, rank, t, m);
      MPI_Status st;
      MPI_Sendrecv_replace(buf, length_of(t, m), MPI_INT, peer, t, peer, t, MPI_COMM_WORLD, &st);
      int n;
      MPI_Get_count(&st, MPI_INT, &n);
      verify(buf, n, peer, t, m, "sendrecv_replace");
      free(buf);
      continue;
    }
    MPI_Request send;
    MPI_Isend(out, length_of(t, m), MPI_INT, peer, t, MPI_COMM_WORLD, &send);
    MPI_Status st;
    int n, *in;
    switch (style) {
      case 0:
        MPI_Probe(peer, t, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &n);
        in = malloc(n * sizeof(int));
        MPI_Recv(in, n, MPI_INT, peer, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        verify(in, n, peer, t, m, "probe");
        break;
      case 1: {
        int flag = 0;
        while (!flag) MPI_Iprobe(peer, t, MPI_COMM_WORLD, &flag, &st);
        MPI_Get_count(&st, MPI_INT, &n);
        in = malloc(n * sizeof(int));
        MPI_Recv(in, n, MPI_INT, peer, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        verify(in, n, peer, t, m, "iprobe");
        break;
      }
      case 2: {
        MPI_Message msg;
        MPI_Mprobe(peer, t, MPI_COMM_WORLD, &msg, &st);
        MPI_Get_count(&st, MPI_INT, &n);
        in = malloc(n * sizeof(int));
        MPI_Mrecv(in, n, MPI_INT, &msg, MPI_STATUS_IGNORE);
        CHECK(msg == MPI_MESSAGE_NULL, "message handle not released");
        verify(in, n, peer, t, m, "mprobe");
        break;
      }
      default: {
        MPI_Message msg;
        int flag = 0;
        while (!flag) MPI_Improbe(peer, t, MPI_COMM_WORLD, &flag, &msg, &st);
        MPI_Get_count(&st, MPI_INT, &n);
        in = malloc(n * sizeof(int));
        MPI_Request r;
        MPI_Imrecv(in, n, MPI_INT, &msg, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        verify(in, n, peer, t, m, "improbe");
      }
    }
    free(in);
    MPI_Wait(&send, MPI_STATUS_IGNORE);
  }
  free(out);
  return NULL;
}

int main(int argc, char** argv) {
  test_init_pair(&argc, &argv, "serial_probe_mix", &rank, &peer);
  int ids[kThreads];
  for (int i = 0; i < kThreads; ++i) ids[i] = i;
  run_threads(kThreads, worker, ids, sizeof ids[0]);
  /* MPI_PROC_NULL and zero-byte cases */
  MPI_Status st;
  MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "probe of MPI_PROC_NULL source %d", st.MPI_SOURCE);
  MPI_Sendrecv(NULL, 0, MPI_INT, peer, 9, NULL, 0, MPI_INT, peer, 9, MPI_COMM_WORLD, &st);
  int n = -1;
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK(n == 0 && st.MPI_SOURCE == peer, "zero-byte sendrecv count %d source %d", n, st.MPI_SOURCE);
  return test_finish();
}
