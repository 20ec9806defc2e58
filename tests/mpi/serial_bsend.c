/* Buffered sends from several threads through one attached buffer, received by several
   threads; the buffer is detached (which waits for the buffered messages) and attached again. */
#include "test_util.h"

enum { kThreads = 3, kMessages = 200, kInts = 32 };
static int rank, peer;

static void* sender(void* p) {
  int t = *(int*)p;
  int buf[kInts];
  for (int m = 0; m < kMessages; ++m) {
    for (int i = 0; i < kInts; ++i) buf[i] = rank * 1000000 + t * 10000 + m * 10 + i % 10;
    MPI_Bsend(buf, kInts, MPI_INT, peer, t, MPI_COMM_WORLD);
  }
  return NULL;
}

static void* receiver(void* p) {
  int t = *(int*)p;
  int buf[kInts];
  for (int m = 0; m < kMessages; ++m) {
    MPI_Recv(buf, kInts, MPI_INT, peer, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < kInts; ++i)
      if (buf[i] != peer * 1000000 + t * 10000 + m * 10 + i % 10) {
        CHECK(0, "thread %d message %d element %d = %d", t, m, i, buf[i]);
        break;
      }
  }
  return NULL;
}

static void* both(void* p) {
  int t = *(int*)p;
  if (t < kThreads) sender(p);
  else {
    int r = t - kThreads;
    receiver(&r);
  }
  return NULL;
}

int main(int argc, char** argv) {
  test_init_pair(&argc, &argv, "serial_bsend", &rank, &peer);
  int pack;
  MPI_Pack_size(kInts, MPI_INT, MPI_COMM_WORLD, &pack);
  int bytes = kThreads * kMessages * (pack + MPI_BSEND_OVERHEAD);
  for (int phase = 0; phase < 2; ++phase) {
    char* buffer = malloc(bytes);
    MPI_Buffer_attach(buffer, bytes);
    int ids[2 * kThreads];
    for (int i = 0; i < 2 * kThreads; ++i) ids[i] = i;
    run_threads(2 * kThreads, both, ids, sizeof ids[0]);
    void* detached;
    int detached_size;
    MPI_Buffer_detach(&detached, &detached_size);
    CHECK(detached == buffer && detached_size == bytes, "detach gave %p/%d", detached, detached_size);
    free(buffer);
  }
  return test_finish();
}
