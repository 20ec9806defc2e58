/* Attribute races (Update List against Read List, seed 000 §3): two threads set attributes on
   one communicator, one reads them, one deletes them. Every value set is a distinct slot;
   every slot must reach the delete callback exactly once (a set replacing it, a delete, or the
   final MPI_Comm_free), and a reader sees only values that were set. Then a key is freed while
   a thread sets attributes with it: nothing set after the free returned succeeds. */
#include <sched.h>

#include "test_util.h"

enum { kSets = 4000, kSlots = 2 * kSets + 1 };
static int slots[kSlots];
static atomic_int deleted[kSlots];
static atomic_int next_slot, setting_done, key_freed;
static MPI_Comm comm;
static int key, free_key;

static int on_delete(MPI_Comm c, int k, void* value, void* extra) {
  (void)c; (void)k; (void)extra;
  int* v = value;
  if (v >= slots && v < slots + kSlots) atomic_fetch_add(&deleted[v - slots], 1);
  else atomic_fetch_add(&deleted[kSlots - 1], 1000);  /* not one of ours */
  return MPI_SUCCESS;
}

static void* setter(void* p) {
  (void)p;
  for (int i = 0; i < kSets; ++i) {
    int s = atomic_fetch_add(&next_slot, 1);
    CHECK(MPI_Comm_set_attr(comm, key, &slots[s]) == MPI_SUCCESS, "set_attr");
  }
  atomic_fetch_add(&setting_done, 1);
  return NULL;
}

static void* reader(void* p) {
  (void)p;
  while (atomic_load(&setting_done) < 2) {
    void* v;
    int flag;
    CHECK(MPI_Comm_get_attr(comm, key, &v, &flag) == MPI_SUCCESS, "get_attr");
    if (flag) CHECK((int*)v >= slots && (int*)v < slots + kSlots - 1, "read a value never set: %p", v);
  }
  return NULL;
}

static void* deleter(void* p) {
  (void)p;
  while (atomic_load(&setting_done) < 2) {
    void* v;
    int flag;
    MPI_Comm_get_attr(comm, key, &v, &flag);
    if (flag) MPI_Comm_delete_attr(comm, key);  /* may race with a setter: either order is fine */
    sched_yield();
  }
  return NULL;
}

static void* role(void* p) {
  int r = *(int*)p;
  return r < 2 ? setter(p) : r == 2 ? reader(p) : deleter(p);
}

static void* key_setter(void* p) {
  (void)p;
  int failed = 0;
  for (int i = 0; i < 2000; ++i) {
    int freed_before = atomic_load(&key_freed);
    int rc = MPI_Comm_set_attr(MPI_COMM_SELF, free_key, &slots[0]);
    if (rc == MPI_SUCCESS) {
      CHECK(!freed_before && !failed, "MPI_Comm_set_attr succeeded with a key freed before (%d)", i);
    } else {
      int cls;
      MPI_Error_class(rc, &cls);
      CHECK(cls == MPI_ERR_KEYVAL, "error class %d, expected MPI_ERR_KEYVAL", cls);
      failed = 1;
    }
  }
  return NULL;
}

static void* key_freer(void* p) {
  (void)p;
  for (int i = 0; i < 200; ++i) sched_yield();
  int k = free_key;
  CHECK(MPI_Comm_free_keyval(&k) == MPI_SUCCESS, "free_keyval");
  atomic_store(&key_freed, 1);
  return NULL;
}

static void* key_role(void* p) { return *(int*)p == 0 ? key_setter(p) : key_freer(p); }

int main(int argc, char** argv) {
  test_init(&argc, &argv, "lifetime_attr_race");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_delete, &key, NULL);
  int roles[4] = {0, 1, 2, 3};
  run_threads(4, role, roles, sizeof roles[0]);
  MPI_Comm_free(&comm);
  int used = atomic_load(&next_slot), bad = 0;
  for (int s = 0; s < used; ++s) bad += atomic_load(&deleted[s]) != 1;
  CHECK(bad == 0, "%d of %d values did not reach the delete callback exactly once", bad, used);
  CHECK(atomic_load(&deleted[kSlots - 1]) == 0, "the delete callback got values never set");
  MPI_Comm_free_keyval(&key);

  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &free_key, NULL);
  int key_roles[2] = {0, 1};
  run_threads(2, key_role, key_roles, sizeof key_roles[0]);
  MPI_Comm_delete_attr(MPI_COMM_SELF, free_key);  /* the attribute may outlive its key */
  return test_finish();
}
