/* Coverage: point-to-point from several threads at once (MPI_THREAD_MULTIPLE), the case tsmpi
   exists for. Thread t of rank 0 talks to thread t of rank 1: on MPI_COMM_WORLD with tag t
   (MPI_Sendrecv, MPI_Isend / MPI_Irecv / MPI_Waitall, MPI_Probe + MPI_Recv, MPI_Iprobe + MPI_Recv,
   MPI_Mprobe + MPI_Mrecv, MPI_Ssend, MPI_Bsend into one shared attached buffer) and on a
   communicator of its own with MPI_ANY_SOURCE / MPI_ANY_TAG probes and receives. Each thread
   records a checksum of what it received. */
// ranks: 2
#include <pthread.h>

#include "coverage.h"

enum { NT = 3, ITER = 40, M = 16 };

static int rank, peer;
static MPI_Comm own[NT];
static long sums[NT];
static int bad[NT];

static void fill(int* buf, int n, int base) {
  for (int i = 0; i < n; ++i) buf[i] = base + i;
}
static long sum(const int* buf, int n) {
  long s = 0;
  for (int i = 0; i < n; ++i) s += buf[i];
  return s;
}
static int same(const int* buf, int n, int base) {
  for (int i = 0; i < n; ++i)
    if (buf[i] != base + i) return 0;
  return 1;
}

static void* worker(void* arg) {
  int t = (int)(long)arg;
  MPI_Comm comm = MPI_COMM_WORLD;
  int out[M], in[M], out2[M], in2[M];
  long s = 0;
  for (int it = 0; it < ITER; ++it) {
    int base = 10000 * rank + 1000 * t + it, pbase = 10000 * peer + 1000 * t + it, n = 1 + it % M;
    MPI_Status st;
    MPI_Request r[2];
    int count;

    /* MPI_Sendrecv. */
    fill(out, n, base);
    memset(in, 0, sizeof in);
    MPI_Sendrecv(out, n, MPI_INT, peer, t, in, M, MPI_INT, peer, t, comm, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    bad[t] += count != n || !same(in, n, pbase);
    s += sum(in, n);

    /* MPI_Isend / MPI_Irecv / MPI_Waitall. */
    memset(in, 0, sizeof in);
    MPI_Irecv(in, M, MPI_INT, peer, t, comm, &r[0]);
    MPI_Isend(out, n, MPI_INT, peer, t, comm, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    bad[t] += !same(in, n, pbase);
    s += sum(in, n);

    /* MPI_Probe, then MPI_Recv of the probed size. */
    MPI_Isend(out, n, MPI_INT, peer, t, comm, &r[1]);
    MPI_Probe(peer, t, comm, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    memset(in, 0, sizeof in);
    MPI_Recv(in, count, MPI_INT, peer, t, comm, MPI_STATUS_IGNORE);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    bad[t] += count != n || !same(in, n, pbase);
    s += sum(in, n);

    /* MPI_Iprobe loop, then MPI_Recv. */
    MPI_Isend(out, n, MPI_INT, peer, t, comm, &r[1]);
    int flag = 0;
    while (!flag) MPI_Iprobe(peer, t, comm, &flag, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    memset(in, 0, sizeof in);
    MPI_Recv(in, count, MPI_INT, peer, t, comm, MPI_STATUS_IGNORE);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    bad[t] += count != n || !same(in, n, pbase);
    s += sum(in, n);

    /* MPI_Mprobe + MPI_Mrecv. */
    MPI_Isend(out, n, MPI_INT, peer, t, comm, &r[1]);
    MPI_Message msg;
    MPI_Mprobe(peer, t, comm, &msg, &st);
    memset(in, 0, sizeof in);
    MPI_Mrecv(in, M, MPI_INT, &msg, MPI_STATUS_IGNORE);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    bad[t] += !same(in, n, pbase);
    s += sum(in, n);

    /* MPI_Ssend one way, then the other way; MPI_Bsend both ways. */
    memset(in, 0, sizeof in);
    if (rank == 0) {
      MPI_Ssend(out, n, MPI_INT, peer, t, comm);
      MPI_Recv(in, M, MPI_INT, peer, t, comm, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(in, M, MPI_INT, peer, t, comm, MPI_STATUS_IGNORE);
      MPI_Ssend(out, n, MPI_INT, peer, t, comm);
    }
    bad[t] += !same(in, n, pbase);
    s += sum(in, n);
    memset(in, 0, sizeof in);
    MPI_Bsend(out, n, MPI_INT, peer, t, comm);
    MPI_Recv(in, M, MPI_INT, peer, t, comm, MPI_STATUS_IGNORE);
    bad[t] += !same(in, n, pbase);
    s += sum(in, n);

    /* Wildcards on the thread's own communicator: two messages with different tags, probed with
       MPI_ANY_SOURCE / MPI_ANY_TAG and received with the probed envelope, in either order. */
    fill(out2, n, base + 500);
    MPI_Request sr[2];
    MPI_Isend(out, n, MPI_INT, peer, 1, own[t], &sr[0]);
    MPI_Isend(out2, n, MPI_INT, peer, 2, own[t], &sr[1]);
    for (int m = 0; m < 2; ++m) {
      MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, own[t], &st);
      int tag = st.MPI_TAG;
      int* dst = tag == 1 ? in : in2;
      memset(dst, 0, M * sizeof *dst);
      MPI_Recv(dst, M, MPI_INT, st.MPI_SOURCE, tag, own[t], &st);
      bad[t] += st.MPI_TAG != tag || st.MPI_SOURCE != peer;
    }
    MPI_Waitall(2, sr, MPI_STATUSES_IGNORE);
    bad[t] += !same(in, n, pbase) || !same(in2, n, pbase + 500);
    s += sum(in, n) + sum(in2, n);
    /* And MPI_Recv with both wildcards. */
    MPI_Isend(out, n, MPI_INT, peer, 3, own[t], &sr[0]);
    memset(in, 0, sizeof in);
    MPI_Recv(in, M, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, own[t], &st);
    MPI_Wait(&sr[0], MPI_STATUS_IGNORE);
    bad[t] += st.MPI_TAG != 3 || !same(in, n, pbase);
    s += sum(in, n);
  }
  sums[t] = s;
  return NULL;
}

int main(int argc, char** argv) {
  rank = cov_init(&argc, &argv, "p2p_threads");
  peer = 1 - rank;
  for (int t = 0; t < NT; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &own[t]);
  int one = 0;
  MPI_Pack_size(M, MPI_INT, MPI_COMM_WORLD, &one);
  int size = 4 * NT * (one + MPI_BSEND_OVERHEAD);
  char* attached = malloc((size_t)size);
  MPI_Buffer_attach(attached, size);

  pthread_t th[NT];
  for (int t = 0; t < NT; ++t) pthread_create(&th[t], NULL, worker, (void*)(long)t);
  for (int t = 0; t < NT; ++t) pthread_join(th[t], NULL);

  void* detached;
  int detached_size;
  MPI_Buffer_detach(&detached, &detached_size);
  CHECK(detached == (void*)attached && detached_size == size);
  free(attached);
  for (int t = 0; t < NT; ++t) {
    SAY("thread %d checksum %ld errors %d", t, sums[t], bad[t]);
    CHECK(bad[t] == 0);
    MPI_Comm_free(&own[t]);
  }
  return cov_finish();
}
