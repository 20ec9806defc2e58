/* The Info race of seed 004 Fig. 3.1: one thread sets keys on an MPI_Info while another frees
   it, and a third reads it. Natively this touches freed memory (segfaults on both MPIs). Under
   tsmpi: no crash; no call that starts after MPI_Info_free returned succeeds; once a call has
   failed none succeeds later; failures are MPI_ERR_INFO; a reader never sees a torn value. */
#include <sched.h>
#include <unistd.h>

#include "test_util.h"

enum { kRounds = 300, kKeys = 64 };

static MPI_Info shared_info;
static atomic_int freed;      /* set once MPI_Info_free has returned */
static int round_no;

static void* setter(void* p) {
  (void)p;
  int failed = 0;
  for (int k = 0; k < kKeys; ++k) {
    int freed_before = atomic_load(&freed);
    char key[32], value[32];
    snprintf(key, sizeof key, "key%d", k);
    snprintf(value, sizeof value, "value%d", k);
    int rc = MPI_Info_set(shared_info, key, value);
    if (rc == MPI_SUCCESS) {
      CHECK(!freed_before, "round %d: MPI_Info_set %d succeeded after MPI_Info_free returned", round_no, k);
      CHECK(!failed, "round %d: MPI_Info_set %d succeeded after an earlier one failed", round_no, k);
    } else {
      int cls;
      MPI_Error_class(rc, &cls);
      CHECK(cls == MPI_ERR_INFO, "round %d: error class %d, expected MPI_ERR_INFO", round_no, cls);
      failed = 1;
    }
    if (k % 8 == 0) sched_yield();
  }
  return NULL;
}

static void* reader(void* p) {
  (void)p;
  int failed = 0;
  for (int k = 0; k < kKeys; ++k) {
    int freed_before = atomic_load(&freed);
    char value[64];
    int flag = 0;
    int rc = MPI_Info_get(shared_info, "fixed", sizeof value - 1, value, &flag);
    if (rc == MPI_SUCCESS) {
      CHECK(!freed_before && !failed, "round %d: MPI_Info_get succeeded after free or failure", round_no);
      CHECK(flag && !strcmp(value, "constant-value"), "round %d: read flag %d value '%s'", round_no, flag,
            flag ? value : "");
    } else {
      failed = 1;
    }
  }
  return NULL;
}

static void* freer(void* p) {
  (void)p;
  for (int i = rand() % 50; i > 0; --i) sched_yield();
  MPI_Info copy = shared_info;
  int rc = MPI_Info_free(&copy);
  CHECK(rc == MPI_SUCCESS && copy == MPI_INFO_NULL, "round %d: MPI_Info_free rc %d", round_no, rc);
  atomic_store(&freed, 1);
  return NULL;
}

static void* role(void* p) {
  int r = *(int*)p;
  return r == 0 ? setter(p) : r == 1 ? reader(p) : freer(p);
}

int main(int argc, char** argv) {
  test_init(&argc, &argv, "lifetime_info_race");
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  srand(rank + 1);
  /* Errors of calls without a communicator go to MPI_COMM_SELF's handler (MPI-4) or to
     MPI_COMM_WORLD's (MPI-3.1): both return. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int roles[3] = {0, 1, 2};
  for (round_no = 0; round_no < kRounds; ++round_no) {
    MPI_Info_create(&shared_info);
    MPI_Info_set(shared_info, "fixed", "constant-value");
    atomic_store(&freed, 0);
    run_threads(3, role, roles, sizeof roles[0]);
    /* Long after the free: still refused. */
    int rc = MPI_Info_set(shared_info, "late", "x");
    CHECK(rc != MPI_SUCCESS, "round %d: MPI_Info_set long after free succeeded", round_no);
  }
  printf("lifetime_info_race: rank %d: %d rounds of set/get/free races\n", rank, kRounds);
  return test_finish();
}
