/* A call on a handle freed long before returns the error class of its kind through the error
   handler MPI prescribes, for every handle kind; predefined handles, MPI_*_NULL, several
   references to one object and attribute delete callbacks behave as MPI says. Needs tsmpi
   (natively these calls touch freed memory). Argument "message": also a message consumed by
   MPI_Mrecv (checked only with TSMPI_CHECK). */
#include <unistd.h>

#include "test_util.h"

static int rank, size;

static void expect_class(int rc, int expected, const char* what) {
  int cls = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  CHECK(cls == expected, "%s: error class %d, expected %d", what, cls, expected);
}

static int deletes;
static int count_delete(MPI_Comm c, int k, void* v, void* extra) {
  (void)c; (void)k; (void)v; (void)extra;
  ++deletes;
  return MPI_SUCCESS;
}
static int count_type_delete(MPI_Datatype t, int k, void* v, void* extra) {
  (void)t; (void)k; (void)v; (void)extra;
  ++deletes;
  return MPI_SUCCESS;
}
static void sum_op(void* in, void* inout, int* len, MPI_Datatype* t) {
  (void)t;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] += ((int*)in)[i];
}
static void eh_fn(MPI_Comm* c, int* code, ...) { (void)c; (void)code; }

static void info_kind(void) {
  MPI_Info info, stale;
  MPI_Info_create(&info);
  stale = info;
  MPI_Info_free(&info);
  CHECK(info == MPI_INFO_NULL, "MPI_Info_free did not set MPI_INFO_NULL");
  expect_class(MPI_Info_set(stale, "k", "v"), MPI_ERR_INFO, "MPI_Info_set on freed info");
  int n;
  expect_class(MPI_Info_get_nkeys(stale, &n), MPI_ERR_INFO, "MPI_Info_get_nkeys on freed info");
  MPI_Info dup;
  expect_class(MPI_Info_dup(stale, &dup), MPI_ERR_INFO, "MPI_Info_dup on freed info");
  expect_class(MPI_Info_free(&stale), MPI_ERR_INFO, "MPI_Info_free twice");
  /* A freed handle stays invalid while new objects are made (the quarantine keeps the MPI
     from reusing its value). */
  MPI_Info_create(&info);
  stale = info;
  MPI_Info_free(&info);
  for (int i = 0; i < 20; ++i) {
    MPI_Info fresh;
    MPI_Info_create(&fresh);
    CHECK(fresh != stale, "a new info got the freed handle's value");
    MPI_Info_set(fresh, "k", "v");
    MPI_Info_free(&fresh);
  }
  expect_class(MPI_Info_set(stale, "k", "v"), MPI_ERR_INFO, "MPI_Info_set on info freed before 20 others");
}

static void comm_kind(void) {
  MPI_Comm c, stale;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  int key;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &key, NULL);
  MPI_Comm_set_attr(c, key, &rank);
  deletes = 0;
  stale = c;
  MPI_Comm_free(&c);
  CHECK(c == MPI_COMM_NULL, "MPI_Comm_free did not set MPI_COMM_NULL");
  CHECK(deletes == 1, "attribute delete callback ran %d times during MPI_Comm_free", deletes);
  int r;
  expect_class(MPI_Comm_rank(stale, &r), MPI_ERR_COMM, "MPI_Comm_rank on freed communicator");
  void* v;
  int flag;
  expect_class(MPI_Comm_get_attr(stale, key, &v, &flag), MPI_ERR_COMM, "MPI_Comm_get_attr on freed communicator");
  MPI_Comm d;
  expect_class(MPI_Comm_dup(stale, &d), MPI_ERR_COMM, "MPI_Comm_dup of freed communicator");
  /* Attribute keys. */
  int stale_key = key;
  MPI_Comm_free_keyval(&key);
  CHECK(key == MPI_KEYVAL_INVALID, "MPI_Comm_free_keyval did not set MPI_KEYVAL_INVALID");
  expect_class(MPI_Comm_set_attr(MPI_COMM_WORLD, stale_key, &rank), MPI_ERR_KEYVAL, "MPI_Comm_set_attr with freed key");
  /* Predefined communicators work; freeing one is the MPI's error, not a crash. */
  CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &r) == MPI_SUCCESS && r == rank, "MPI_Comm_rank(MPI_COMM_WORLD)");
  CHECK(MPI_Comm_size(MPI_COMM_SELF, &r) == MPI_SUCCESS && r == 1, "MPI_Comm_size(MPI_COMM_SELF)");
  CHECK(MPI_Comm_rank(MPI_COMM_NULL, &r) != MPI_SUCCESS, "MPI_Comm_rank(MPI_COMM_NULL) succeeded");
}

static void group_kind(void) {
  MPI_Group g1, g2, stale;
  MPI_Comm_group(MPI_COMM_WORLD, &g1);
  MPI_Comm_group(MPI_COMM_WORLD, &g2);  /* may be the same handle: two references */
  stale = g1;
  MPI_Group_free(&g1);
  int n = -1;
  CHECK(MPI_Group_size(g2, &n) == MPI_SUCCESS && n == size, "second reference to the group after freeing the first");
  MPI_Group_free(&g2);
  expect_class(MPI_Group_size(stale, &n), MPI_ERR_GROUP, "MPI_Group_size on freed group");
  CHECK(MPI_Group_size(MPI_GROUP_EMPTY, &n) == MPI_SUCCESS && n == 0, "MPI_GROUP_EMPTY");
}

static void datatype_kind(void) {
  MPI_Datatype t, stale, pair;
  MPI_Type_contiguous(2, MPI_INT, &t);
  MPI_Type_commit(&t);
  int key;
  MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, count_type_delete, &key, NULL);
  MPI_Type_set_attr(t, key, &rank);
  MPI_Type_vector(2, 1, 2, t, &pair);
  int sz = 0;
#ifndef OPEN_MPI /* Open MPI 4.1.4's MPI_Type_get_contents segfaults natively, on any type */
  /* Its contents: one more reference to t, which the application frees. */
  int ints[4];
  MPI_Aint addrs[4];
  MPI_Datatype types[4];
  MPI_Type_get_contents(pair, 4, 4, 4, ints, addrs, types);
  CHECK(types[0] == t, "MPI_Type_get_contents did not return the component type");
  MPI_Type_free(&types[0]);  /* the reference get_contents gave */
  CHECK(MPI_Type_size(t, &sz) == MPI_SUCCESS && sz == 2 * (int)sizeof(int), "type still alive after freeing the contents' reference");
#endif
  deletes = 0;
  stale = t;
  MPI_Type_free(&t);
  /* The MPI runs the delete callback when it destroys the type: not before `pair`, built on it,
     is freed too (both MPIs), so at most once by now. */
  CHECK(deletes <= 1, "type attribute delete callback ran %d times during MPI_Type_free", deletes);
  expect_class(MPI_Type_size(stale, &sz), MPI_ERR_TYPE, "MPI_Type_size on freed datatype");
  /* A type built on the freed one is still usable (MPI keeps what it needs). */
  CHECK(MPI_Type_size(pair, &sz) == MPI_SUCCESS && sz == 4 * (int)sizeof(int), "type built on a freed type");
  MPI_Type_free(&pair);
  CHECK(deletes == 1, "type attribute delete callback ran %d times once the types built on it were freed", deletes);
  MPI_Type_free_keyval(&key);
  CHECK(MPI_Type_size(MPI_INT, &sz) == MPI_SUCCESS && sz == sizeof(int), "MPI_INT");
}

static void op_kind(void) {
  MPI_Op op, stale;
  MPI_Op_create(sum_op, 1, &op);
  int in = rank + 1, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, op, MPI_COMM_WORLD);
  CHECK(out == size * (size + 1) / 2, "user op result %d", out);
  stale = op;
  MPI_Op_free(&op);
  int commute;
  expect_class(MPI_Op_commutative(stale, &commute), MPI_ERR_OP, "MPI_Op_commutative on freed op");
}

static void errhandler_kind(void) {
  MPI_Errhandler eh, stale, got;
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  MPI_Comm_create_errhandler(eh_fn, &eh);
  stale = eh;
  MPI_Errhandler_free(&eh);
  expect_class(MPI_Comm_set_errhandler(c, stale), MPI_ERR_ARG, "MPI_Comm_set_errhandler with freed errhandler");
  /* A predefined handler got from the MPI may be freed (a reference); it stays usable. */
  MPI_Comm_get_errhandler(c, &got);
  MPI_Errhandler_free(&got);
  CHECK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN) == MPI_SUCCESS, "MPI_ERRORS_RETURN after freeing a reference to it");
  MPI_Comm_free(&c);
}

static void win_kind(void) {
  int mem[4];
  MPI_Win w, stale;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w);
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  stale = w;
  MPI_Win_free(&w);
  MPI_Group g;
  expect_class(MPI_Win_get_group(stale, &g), MPI_ERR_WIN, "MPI_Win_get_group on freed window");
}

static void file_kind(void) {
  char name[64];
  snprintf(name, sizeof name, "/tmp/tsmpi_lifetime_%d_%d", (int)getpid(), rank);
  MPI_File f, stale;
  int rc = MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &f);
  CHECK(rc == MPI_SUCCESS, "MPI_File_open %s: %d", name, rc);
  if (rc != MPI_SUCCESS) return;
  stale = f;
  MPI_File_close(&f);
  MPI_Offset sz;
  expect_class(MPI_File_get_size(stale, &sz), MPI_ERR_FILE, "MPI_File_get_size on closed file");
}

#if MPI_VERSION >= 4
static void session_kind(void) {
  MPI_Session s, stale;
  CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS, "MPI_Session_init");
  stale = s;
  MPI_Session_finalize(&s);
  expect_class(MPI_Session_finalize(&stale), MPI_ERR_SESSION, "MPI_Session_finalize twice");
}
#endif

static void message_kind(void) {
  int peer = (rank + 1) % size, from = (rank + size - 1) % size, v = rank, got = -1;
  MPI_Request req;
  MPI_Isend(&v, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &req);
  MPI_Message m, stale;
  MPI_Mprobe(from, 7, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE);
  stale = m;
  MPI_Mrecv(&got, 1, MPI_INT, &m, MPI_STATUS_IGNORE);
  CHECK(got == from, "message payload %d", got);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  expect_class(MPI_Mrecv(&got, 1, MPI_INT, &stale, MPI_STATUS_IGNORE), MPI_ERR_REQUEST, "MPI_Mrecv of a consumed message");
}

int main(int argc, char** argv) {
  test_init(&argc, &argv, "lifetime_handles");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  info_kind();
  comm_kind();
  group_kind();
  datatype_kind();
  op_kind();
  errhandler_kind();
  win_kind();
  file_kind();
#if MPI_VERSION >= 4
  session_kind();
#endif
  if (argc > 1 && !strcmp(argv[1], "message")) message_kind();
  return test_finish();
}
