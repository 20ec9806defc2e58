/* Coverage: MPI_Info objects (create, set, get, get_valuelen, get_nkeys, get_nthkey, delete, dup,
   free; MPICH's MPI-4 Info_get_string) and info on communicators (Comm_set_info, Comm_get_info,
   Comm_dup_with_info). Values are read back and printed; two threads also work on infos of
   their own at the same time. */
// ranks: 2
#include <pthread.h>

#include <string.h>

#include "coverage.h"

/* Open MPI 5 adds hints of its own ("ompi_assert_lazy_barrier", "ompi_assert_active_poll") to a
   communicator's info only at some thread levels, and serialize mode asks for a lower one: the
   MPI's own keys (prefix "ompi_") are counted apart and not printed. */
static void dump(const char* what, MPI_Info info) {
  int nkeys = -1, own = 0;
  MPI_Info_get_nkeys(info, &nkeys);
  for (int i = 0; i < nkeys; ++i) {
    char key[MPI_MAX_INFO_KEY + 1];
    MPI_Info_get_nthkey(info, i, key);
    own += strncmp(key, "ompi_", 5) == 0;
  }
  SAY("%s: %d keys", what, nkeys - own);
  for (int i = 0, shown = 0; i < nkeys; ++i) {
    char key[MPI_MAX_INFO_KEY + 1], value[256];
    int len = -1, flag = -1;
    MPI_Info_get_nthkey(info, i, key);
    if (strncmp(key, "ompi_", 5) == 0) continue;
    MPI_Info_get_valuelen(info, key, &len, &flag);
    MPI_Info_get(info, key, sizeof value - 1, value, &flag);
    SAY("%s: key %d '%s' valuelen %d flag %d value '%s'", what, shown++, key, len, flag, flag ? value : "");
  }
}

static int cls(int rc) {
  int c = -1;
  MPI_Error_class(rc, &c);
  return c;
}

/* Each thread: 200 rounds of create, set 3 keys, dup, read back from the duplicate, free. */
static void* worker(void* arg) {
  long id = (long)arg, sum = 0;
  for (int round = 0; round < 200; ++round) {
    MPI_Info info, dup;
    MPI_Info_create(&info);
    char key[32], value[32];
    for (int k = 0; k < 3; ++k) {
      snprintf(key, sizeof key, "t%ld_k%d", id, k);
      snprintf(value, sizeof value, "%d", round * 10 + k);
      MPI_Info_set(info, key, value);
    }
    MPI_Info_dup(info, &dup);
    MPI_Info_free(&info);
    for (int k = 0; k < 3; ++k) {
      int flag = 0;
      snprintf(key, sizeof key, "t%ld_k%d", id, k);
      MPI_Info_get(dup, key, sizeof value - 1, value, &flag);
      if (flag) sum += atoi(value);
    }
    MPI_Info_free(&dup);
  }
  return (void*)sum;
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "comm_info");
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int rc, flag, len, nkeys;
  char value[256];

  MPI_Info info = MPI_INFO_NULL;
  rc = MPI_Info_create(&info);
  CHECK(rc == MPI_SUCCESS && info != MPI_INFO_NULL);
  MPI_Info_get_nkeys(info, &nkeys);
  SAY("new info: %d keys", nkeys);
  MPI_Info_set(info, "alpha", "1");
  MPI_Info_set(info, "beta", "two");
  MPI_Info_set(info, "gamma", "the third value");
  rc = MPI_Info_set(info, "beta", "second");
  CHECK(rc == MPI_SUCCESS);
  char longkey[MPI_MAX_INFO_KEY];
  memset(longkey, 'k', sizeof longkey - 1);
  longkey[sizeof longkey - 1] = 0; /* the longest key allowed */
  rc = MPI_Info_set(info, longkey, "long key");
  SAY("set with key of %d chars rc %d", (int)strlen(longkey), rc);
  dump("info", info);

  /* A value read into a short buffer is truncated; a missing key is not found. */
  memset(value, 0, sizeof value);
  MPI_Info_get(info, "gamma", 3, value, &flag);
  SAY("get gamma with valuelen 3: flag %d value '%s'", flag, value);
  MPI_Info_get(info, "delta", sizeof value - 1, value, &flag);
  SAY("get missing key: flag %d", flag);
  len = -1;
  MPI_Info_get_valuelen(info, "delta", &len, &flag);
  SAY("valuelen of missing key: flag %d", flag);
#ifdef MPICH
  /* MPI-4 MPI_Info_get_string: buflen 0 asks for the length (with the terminating null). */
  int buflen = 0;
  value[0] = 'x';
  rc = MPI_Info_get_string(info, "gamma", &buflen, value, &flag);
  SAY("get_string gamma length query: rc %d flag %d buflen %d value untouched %d", rc, flag, buflen,
      value[0] == 'x');
  buflen = 5;
  memset(value, 0, sizeof value);
  MPI_Info_get_string(info, "gamma", &buflen, value, &flag);
  SAY("get_string gamma into 5: flag %d buflen %d value '%s'", flag, buflen, value);
  buflen = sizeof value;
  MPI_Info_get_string(info, "gamma", &buflen, value, &flag);
  SAY("get_string gamma: flag %d buflen %d value '%s'", flag, buflen, value);
  buflen = sizeof value;
  MPI_Info_get_string(info, "delta", &buflen, value, &flag);
  SAY("get_string missing: flag %d", flag);
#endif

  /* Dup is a deep copy. */
  MPI_Info dup = MPI_INFO_NULL;
  rc = MPI_Info_dup(info, &dup);
  CHECK(rc == MPI_SUCCESS && dup != info);
  rc = MPI_Info_delete(info, "alpha");
  CHECK(rc == MPI_SUCCESS);
  MPI_Info_set(info, "beta", "changed after dup");
  rc = MPI_Info_delete(info, "alpha");
  SAY("delete of a deleted key: class is MPI_ERR_INFO_NOKEY %d", cls(rc) == MPI_ERR_INFO_NOKEY);
  dump("original after delete", info);
  dump("dup", dup);

  rc = MPI_Info_free(&info);
  SAY("free rc %d null %d", rc, info == MPI_INFO_NULL);
  dump("dup after original freed", dup);

  /* Info on communicators. */
  MPI_Info hints, got;
  MPI_Info_create(&hints);
  MPI_Info_set(hints, "mpi_assert_no_any_tag", "true");
  MPI_Info_set(hints, "coverage_private_hint", "42");
  MPI_Comm comm;
  rc = MPI_Comm_dup_with_info(MPI_COMM_WORLD, hints, &comm);
  CHECK(rc == MPI_SUCCESS);
  rc = MPI_Comm_get_info(comm, &got);
  CHECK(rc == MPI_SUCCESS);
  dump("get_info after dup_with_info", got);
  MPI_Info_free(&got);
  MPI_Info_set(hints, "mpi_assert_no_any_source", "true");
  MPI_Info_set(hints, "mpi_assert_no_any_tag", "false");
  rc = MPI_Comm_set_info(comm, hints);
  CHECK(rc == MPI_SUCCESS);
  MPI_Info_free(&hints);
  rc = MPI_Comm_get_info(comm, &got);
  CHECK(rc == MPI_SUCCESS);
  dump("get_info after set_info", got);
  MPI_Info_free(&got);
  /* The communicator still works. */
  int mine = rank + 1, sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, comm);
  SAY("allreduce on the communicator %d", sum);
  MPI_Comm_free(&comm);

  MPI_Comm_get_info(MPI_COMM_WORLD, &got);
  MPI_Info_get_nkeys(got, &nkeys);
  CHECK(nkeys >= 0);
  MPI_Info_free(&got);

  /* Many infos made and freed (beyond tsmpi's quarantine of 64 per kind). */
  long total = 0;
  for (int i = 0; i < 150; ++i) {
    MPI_Info t;
    MPI_Info_create(&t);
    snprintf(value, sizeof value, "%d", i);
    MPI_Info_set(t, "i", value);
    MPI_Info_get(t, "i", sizeof value - 1, value, &flag);
    total += flag ? atoi(value) : -1000;
    MPI_Info_free(&t);
  }
  SAY("150 create/set/get/free rounds sum %ld", total);

  /* Two threads at once, each on infos of its own. */
  pthread_t threads[2];
  for (long t = 0; t < 2; ++t) pthread_create(&threads[t], NULL, worker, (void*)t);
  long tsum = 0;
  for (int t = 0; t < 2; ++t) {
    void* r;
    pthread_join(threads[t], &r);
    tsum += (long)r;
  }
  SAY("two threads: sum %ld", tsum);

  MPI_Info_free(&dup);
  return cov_finish();
}
