/* Own (seed 004 §3.4.3): three threads of rank 0 send with MPI_Bsend while a fourth detaches
   the attached buffer (which waits for the buffered messages) and attaches another, over and
   over. A send finding no buffer (MPI_ERR_BUFFER) tries again. Rank 1 checks every message. */
#include <sched.h>
#include <unistd.h>

#include "test_util.h"

enum { kSenders = 3, kMessages = 300, kInts = 64, kSwaps = 40 };
static atomic_int senders_done;

static void* sender(int t) {
  int buf[kInts];
  for (int m = 0; m < kMessages; ++m) {
    for (int i = 0; i < kInts; ++i) buf[i] = t * 1000000 + m * 100 + i;
    int rc, tries = 0;
    while ((rc = MPI_Bsend(buf, kInts, MPI_INT, 1, t, MPI_COMM_WORLD)) != MPI_SUCCESS) {
      int cls;
      MPI_Error_class(rc, &cls);
      CHECK(cls == MPI_ERR_BUFFER, "MPI_Bsend error class %d", cls);
      if (cls != MPI_ERR_BUFFER || ++tries > 1000000) return NULL;
      sched_yield();
    }
  }
  atomic_fetch_add(&senders_done, 1);
  return NULL;
}

static void* swapper(void) {
  int size = 8 * (kInts * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
  for (int s = 0; s < kSwaps && atomic_load(&senders_done) < kSenders; ++s) {
    void* old;
    int old_size;
    CHECK(MPI_Buffer_detach(&old, &old_size) == MPI_SUCCESS && old_size == size, "detach");
    free(old);
    usleep(1000);
    CHECK(MPI_Buffer_attach(malloc(size), size) == MPI_SUCCESS, "attach");
  }
  return NULL;
}

static void* role(void* p) {
  int t = *(int*)p;
  return t < kSenders ? sender(t) : swapper();
}

int main(int argc, char** argv) {
  int rank, peer;
  test_init_pair(&argc, &argv, "own_bsend_attach", &rank, &peer);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (rank == 0) {
    int size = 8 * (kInts * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    MPI_Buffer_attach(malloc(size), size);
    int roles[kSenders + 1];
    for (int i = 0; i <= kSenders; ++i) roles[i] = i;
    run_threads(kSenders + 1, role, roles, sizeof roles[0]);
    void* last;
    MPI_Buffer_detach(&last, &size);
    free(last);
  } else {
    int buf[kInts];
    for (int t = 0; t < kSenders; ++t)
      for (int m = 0; m < kMessages; ++m) {
        MPI_Recv(buf, kInts, MPI_INT, 0, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int bad = 0;
        for (int i = 0; i < kInts; ++i) bad += buf[i] != t * 1000000 + m * 100 + i;
        CHECK(!bad, "sender %d message %d: %d wrong elements", t, m, bad);
      }
    printf("own_bsend_attach: rank 1: %d messages checked\n", kSenders * kMessages);
  }
  return test_finish();
}
