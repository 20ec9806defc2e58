/* Reads without the lock (object lifetime's fast read, docs/object-lifetime.md) against frees,
   reuse and updates. Eight reader threads call MPI_Type_size on the datatype a churner thread
   publishes, frees and replaces (contiguous types of a size that changes each time), and
   MPI_Comm_rank / MPI_Comm_get_name on a communicator whose name a renamer thread keeps
   changing. Natively MPI_Type_size on a freed type touches freed memory. Under tsmpi:
   - a successful MPI_Type_size gives the size of the type that was published, or of a type
     made since under the same handle value (checked by the sizes made since);
   - a call that starts after MPI_Type_free returned fails with MPI_ERR_TYPE, unless the MPI has
     since handed out the value again (tsmpi's quarantine keeps it from doing so for its bound
     of further frees; with fewer frees since, the call must fail);
   - MPI_Comm_rank always gives this rank; names are never torn. */
#include <sched.h>

#include "test_util.h"

enum { kReaders = 8, kTypes = 1000, kQuarantine = 64 };

static pthread_mutex_t published_mutex = PTHREAD_MUTEX_INITIALIZER;
static MPI_Datatype published = MPI_DATATYPE_NULL;
static int published_ints;        /* its size in ints */
static long published_serial;     /* types made so far */
static int published_freed;       /* MPI_Type_free of the published type has returned */
static long frees_done;           /* MPI_Type_free calls returned */
static int sizes_made[kTypes + 1]; /* ints per type, by serial */
static atomic_int stop;
static MPI_Comm named;
static int rank;

static void publish(MPI_Datatype t, int ints, long serial) {
  pthread_mutex_lock(&published_mutex);
  published = t;
  published_ints = ints;
  published_serial = serial;
  published_freed = 0;
  sizes_made[serial] = ints;
  pthread_mutex_unlock(&published_mutex);
}

static void* churner(void* p) {
  (void)p;
  for (long serial = 1; serial <= kTypes; ++serial) {
    MPI_Datatype t;
    int ints = 1 + (int)(serial % 97);
    MPI_Type_contiguous(ints, MPI_INT, &t);
    MPI_Type_commit(&t);
    publish(t, ints, serial);
    if (serial % 4 == 0) sched_yield();  /* let readers in while the type lives */
    MPI_Datatype victim = t;
    int rc = MPI_Type_free(&victim);
    CHECK(rc == MPI_SUCCESS, "MPI_Type_free: %d", rc);
    pthread_mutex_lock(&published_mutex);
    published_freed = 1;
    ++frees_done;
    pthread_mutex_unlock(&published_mutex);
  }
  atomic_store(&stop, 1);
  return NULL;
}

static void* reader(void* p) {
  (void)p;
  long calls = 0;
  while (!atomic_load(&stop)) {
    pthread_mutex_lock(&published_mutex);
    MPI_Datatype t = published;
    int ints = published_ints, freed_before = published_freed;
    long serial = published_serial, frees_before = frees_done;
    pthread_mutex_unlock(&published_mutex);
    if (t == MPI_DATATYPE_NULL) continue;
    int size = -1;
    int rc = MPI_Type_size(t, &size);
    pthread_mutex_lock(&published_mutex);
    long frees_after = frees_done, newest = published_serial;
    pthread_mutex_unlock(&published_mutex);
    if (rc == MPI_SUCCESS) {
      /* The handle may name a type made since (the MPI reused the value): its size is one of those. */
      int known = size == ints * (int)sizeof(int);
      for (long s = serial + 1; !known && s <= newest; ++s) known = size == sizes_made[s] * (int)sizeof(int);
      CHECK(known, "MPI_Type_size gave %d for a type of %d ints (serial %ld)", size, ints, serial);
      CHECK(!freed_before || frees_after - frees_before >= kQuarantine,
            "MPI_Type_size succeeded on a type freed before the call (serial %ld, %ld frees since)", serial,
            frees_after - frees_before);
    } else {
      int cls;
      MPI_Error_class(rc, &cls);
      CHECK(cls == MPI_ERR_TYPE, "MPI_Type_size failed with class %d, expected MPI_ERR_TYPE", cls);
    }
    int r = -1;
    CHECK(MPI_Comm_rank(named, &r) == MPI_SUCCESS && r == rank, "MPI_Comm_rank gave %d, expected %d", r, rank);
    if (++calls % 16 == 0) {
      char name[MPI_MAX_OBJECT_NAME];
      int len = 0;
      CHECK(MPI_Comm_get_name(named, name, &len) == MPI_SUCCESS, "MPI_Comm_get_name failed");
      CHECK(len == 12 && !strncmp(name, "named-", 6) && !strcmp(name + 6, name[6] == 'a' ? "aaaaaa" : "bbbbbb"),
            "torn or wrong name \"%s\" (%d)", name, len);
    }
  }
  return NULL;
}

static void* renamer(void* p) {
  (void)p;
  for (long i = 0; !atomic_load(&stop); ++i) {
    MPI_Comm_set_name(named, i % 2 ? "named-aaaaaa" : "named-bbbbbb");
    if (i % 8 == 0) sched_yield();
  }
  return NULL;
}

int main(int argc, char** argv) {
  test_init(&argc, &argv, "lifetime_read_race");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_dup(MPI_COMM_WORLD, &named);
  MPI_Comm_set_name(named, "named-aaaaaa");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  pthread_t readers[kReaders], churn, rename;
  for (int i = 0; i < kReaders; ++i) pthread_create(&readers[i], NULL, reader, NULL);
  pthread_create(&rename, NULL, renamer, NULL);
  pthread_create(&churn, NULL, churner, NULL);
  pthread_join(churn, NULL);
  pthread_join(rename, NULL);
  for (int i = 0; i < kReaders; ++i) pthread_join(readers[i], NULL);
  MPI_Comm_free(&named);
  return test_finish();
}
