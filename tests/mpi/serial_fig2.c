/* Seed 000 Fig. 2: on each of two ranks one thread receives from the other rank while another
   thread sends to it with MPI_Ssend. A lock held across a blocking call deadlocks this. */
#include "test_util.h"

enum { kIterations = 2000, kCount = 64 };
static int rank, peer;

static void* receiver(void* arg) {
  (void)arg;
  int buf[kCount];
  for (int it = 0; it < kIterations; ++it) {
    MPI_Status st;
    MPI_Recv(buf, kCount, MPI_INT, peer, 7, MPI_COMM_WORLD, &st);
    CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 7, "status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
    for (int i = 0; i < kCount; ++i)
      if (buf[i] != peer * 1000000 + it * 100 + i) {
        CHECK(0, "iteration %d element %d = %d", it, i, buf[i]);
        break;
      }
  }
  return NULL;
}

static void* sender(void* arg) {
  (void)arg;
  int buf[kCount];
  for (int it = 0; it < kIterations; ++it) {
    for (int i = 0; i < kCount; ++i) buf[i] = rank * 1000000 + it * 100 + i;
    MPI_Ssend(buf, kCount, MPI_INT, peer, 7, MPI_COMM_WORLD);
  }
  return NULL;
}

int main(int argc, char** argv) {
  test_init_pair(&argc, &argv, "serial_fig2", &rank, &peer);
  pthread_t r, s;
  /* Receive first on both ranks: the schedule that deadlocks a lock held while blocked. */
  pthread_create(&r, NULL, receiver, NULL);
  pthread_create(&s, NULL, sender, NULL);
  pthread_join(r, NULL);
  pthread_join(s, NULL);
  return test_finish();
}
