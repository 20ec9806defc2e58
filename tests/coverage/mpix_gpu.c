/* Coverage: MPICH's GPU support queries MPIX_GPU_query_support, MPIX_Query_cuda_support,
   MPIX_Query_ze_support and MPIX_Query_hip_support (answers are properties of the MPICH build),
   from the main thread and from two threads at once.
   MPICH's fault-tolerance extensions (MPIX_Comm_revoke, MPIX_Comm_agree, MPIX_Comm_shrink,
   MPIX_Comm_failure_ack, MPIX_Comm_failure_get_acked) are not called anywhere: MPICH 4.0.2's ch4
   device does not implement them, and each aborts natively even on a duplicate of
   MPI_COMM_WORLD without failures ("Assertion failed in file src/mpid/ch4/src/ch4_comm.c at
   line 46/56/66/76: 0"). Open MPI 4.1 exports none of these functions. */
// ranks: 2
#include <pthread.h>

#include "coverage.h"

#ifdef MPICH
struct answers {
  int rc[3], supported[3], cuda, ze, hip;
};

static void ask(struct answers* a) {
  const int types[3] = {MPIX_GPU_SUPPORT_CUDA, MPIX_GPU_SUPPORT_ZE, MPIX_GPU_SUPPORT_HIP};
  for (int i = 0; i < 3; ++i) {
    a->supported[i] = -1;
    a->rc[i] = MPIX_GPU_query_support(types[i], &a->supported[i]);
  }
  a->cuda = MPIX_Query_cuda_support();
  a->ze = MPIX_Query_ze_support();
  a->hip = MPIX_Query_hip_support();
}

static void* thread_main(void* arg) {
  for (int i = 0; i < 50; ++i) ask(arg);
  return NULL;
}

static int same(const struct answers* a, const struct answers* b) {
  for (int i = 0; i < 3; ++i)
    if (a->rc[i] != b->rc[i] || a->supported[i] != b->supported[i]) return 0;
  return a->cuda == b->cuda && a->ze == b->ze && a->hip == b->hip;
}
#endif

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "mpix_gpu");
#ifdef MPICH
  struct answers a;
  ask(&a);
  SAY("GPU_query_support cuda rc %d supported %d, ze rc %d supported %d, hip rc %d supported %d",
      a.rc[0], a.supported[0], a.rc[1], a.supported[1], a.rc[2], a.supported[2]);
  SAY("Query_cuda_support %d Query_ze_support %d Query_hip_support %d", a.cuda, a.ze, a.hip);
  CHECK(a.cuda == a.supported[0] && a.ze == a.supported[1] && a.hip == a.supported[2]);
  struct answers t[2];
  pthread_t th[2];
  for (int i = 0; i < 2; ++i) pthread_create(&th[i], NULL, thread_main, &t[i]);
  for (int i = 0; i < 2; ++i) pthread_join(th[i], NULL);
  SAY("threads got the same answers %d %d", same(&a, &t[0]), same(&a, &t[1]));
#else
  SAY("no MPIX GPU queries in this MPI");
#endif
  (void)rank;
  return cov_finish();
}
