/* probe_thread_exit: a thread probes a message and ends without receiving it; the process must
   go on receiving with overlapping patterns.
   Rank 0 sends tag 5 then tag 6 (8 ints each) to rank 1. On rank 1 a thread probes (0, 5) and
   ends; then the main thread receives with (0, MPI_ANY_TAG) until it has the tag-6 message.
   Under tsmpi's mprobe and helper policies the tag-5 message stays reserved for the ended
   thread, so the main thread gets tag 6 first; under lock2d (and natively) the message stays in
   the MPI and the main thread gets tag 5, then 6. Either way: no hang, right data, and with
   TSMPI_CHECK=warn tsmpi reports the probe at MPI_Finalize. */
#include "test_util.h"

static void* probe_and_end(void* arg) {
  (void)arg;
  MPI_Status st;
  MPI_Probe(0, 5, MPI_COMM_WORLD, &st);
  CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 5, "probe: source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
  return NULL; /* probed, never received */
}

int main(int argc, char** argv) {
  int rank, peer;
  test_init_pair(&argc, &argv, "probe_thread_exit", &rank, &peer);
  int buf[8];
  if (rank == 0) {
    for (int tag = 5; tag <= 6; ++tag) {
      for (int i = 0; i < 8; ++i) buf[i] = tag * 100 + i;
      MPI_Send(buf, 8, MPI_INT, 1, tag, MPI_COMM_WORLD);
    }
  } else {
    pthread_t t;
    pthread_create(&t, NULL, probe_and_end, NULL);
    pthread_join(t, NULL);
    char got[64] = "";
    for (int tag = -1; tag != 6;) {
      MPI_Status st;
      int n = -1;
      MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      MPI_Get_count(&st, MPI_INT, &n);
      CHECK(n == 8, "count %d", n);
      MPI_Recv(buf, 8, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      tag = st.MPI_TAG;
      CHECK(tag == 5 || tag == 6, "tag %d", tag);
      for (int i = 0; i < 8; ++i) CHECK(buf[i] == tag * 100 + i, "tag %d int %d is %d", tag, i, buf[i]);
      snprintf(got + strlen(got), sizeof got - strlen(got), " %d", tag);
      if (tag != 5 && tag != 6) break;
    }
    printf("probe_thread_exit: rank 1: received tags%s\n", got);
  }
  return test_finish();
}
