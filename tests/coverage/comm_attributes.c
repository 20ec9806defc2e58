/* Coverage: attribute caching on communicators. MPI-2 keyvals (Comm_create_keyval with user
   and predefined callbacks, Comm_set_attr/get_attr/delete_attr, Comm_free_keyval) and MPI-1 ones
   (Keyval_create, Attr_put/get/delete, Keyval_free). The copy and delete callbacks count their
   calls and check their arguments; copies happen on Comm_dup, Comm_idup and Comm_dup_with_info,
   deletions on replacement, delete_attr and Comm_free, also for a keyval freed while still
   attached, and for MPI_COMM_SELF at MPI_Finalize. Predefined attributes are read. */
// ranks: 2
#include <stdint.h>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* the MPI-1 functions are the point */

#include "coverage.h"

typedef struct {
  const char* name;
  int copy_flag;     /* what the copy callback answers */
  int copies;        /* copy callback calls */
  int deletes;       /* delete callback calls */
  long deleted_sum;  /* sum of the deleted values */
  int bad_args;      /* callbacks called with another keyval than expected */
  int keyval;        /* expected keyval */
  int fail_delete;   /* delete callback returns this error code when non-zero */
} state_t;

static int self_rank;
static MPI_Comm expect = MPI_COMM_NULL; /* the communicator the callbacks must be given */

static int copy_fn(MPI_Comm oldcomm, int keyval, void* extra, void* in, void* out, int* flag) {
  state_t* s = extra;
  ++s->copies;
  if (keyval != s->keyval || oldcomm == MPI_COMM_NULL) ++s->bad_args;
  if (expect != MPI_COMM_NULL && oldcomm != expect) ++s->bad_args;
  *flag = s->copy_flag;
  if (s->copy_flag) *(void**)out = (void*)((intptr_t)in + 1000);
  return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm comm, int keyval, void* value, void* extra) {
  state_t* s = extra;
  ++s->deletes;
  s->deleted_sum += (intptr_t)value;
  if (keyval != s->keyval || comm == MPI_COMM_NULL) ++s->bad_args;
  if (expect != MPI_COMM_NULL && comm != expect) ++s->bad_args;
  return s->fail_delete;
}

/* MPI-1 callback types (MPI_Copy_function, MPI_Delete_function). */
static int copy1_fn(MPI_Comm oldcomm, int keyval, void* extra, void* in, void* out, int* flag) {
  return copy_fn(oldcomm, keyval, extra, in, out, flag);
}
static int delete1_fn(MPI_Comm comm, int keyval, void* value, void* extra) {
  return delete_fn(comm, keyval, value, extra);
}

/* Runs at MPI_Finalize: attributes on MPI_COMM_SELF are deleted first thing there, in the
   reverse order of setting (MPI-3.1 8.7.1), MPI not yet finalized. Prints on rank 0. */
static int self_delete_fn(MPI_Comm comm, int keyval, void* value, void* extra) {
  (void)keyval, (void)extra;
  int finalized = -1;
  MPI_Finalized(&finalized);
  if (self_rank == 0)
    printf("comm_attributes: rank 0: MPI_COMM_SELF attribute %ld deleted at MPI_Finalize, comm is self %d, finalized %d\n",
           (long)(intptr_t)value, comm == MPI_COMM_SELF, finalized);
  fflush(stdout);
  return MPI_SUCCESS;
}

/* A library's pattern: an inner communicator cached as an attribute, freed by the delete
   callback, which also queries the communicator being freed. */
static int inner_deletes = 0, inner_ok = 0;
static int inner_copy_fn(MPI_Comm oldcomm, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)keyval, (void)extra, (void)in;
  MPI_Comm* inner = malloc(sizeof *inner);
  int rc = MPI_Comm_dup(MPI_COMM_WORLD, inner); /* collective: every rank duplicates oldcomm */
  int size = -1;
  MPI_Comm_size(oldcomm, &size);
  *(MPI_Comm**)out = inner;
  *flag = rc == MPI_SUCCESS && size == 2;
  return rc;
}
static int inner_delete_fn(MPI_Comm comm, int keyval, void* value, void* extra) {
  (void)keyval, (void)extra;
  MPI_Comm* inner = value;
  int rank = -1, isize = -1;
  int rc1 = MPI_Comm_rank(comm, &rank);
  int rc2 = MPI_Comm_size(*inner, &isize);
  int rc3 = MPI_Comm_free(inner);
  ++inner_deletes;
  inner_ok += rc1 == MPI_SUCCESS && rank == self_rank && rc2 == MPI_SUCCESS && isize == 2 &&
              rc3 == MPI_SUCCESS && *inner == MPI_COMM_NULL;
  free(inner);
  return MPI_SUCCESS;
}

static void report(const state_t* s) {
  SAY("%s: copies %d deletes %d deleted sum %ld bad args %d", s->name, s->copies, s->deletes,
      s->deleted_sum, s->bad_args);
}

static void get(const char* what, MPI_Comm comm, int keyval) {
  void* v = NULL;
  int flag = -1;
  int rc = MPI_Comm_get_attr(comm, keyval, &v, &flag);
  if (flag)
    SAY("%s: rc %d flag 1 value %ld", what, rc, (long)(intptr_t)v);
  else
    SAY("%s: rc %d flag 0", what, rc);
}

static int cls(int rc) {
  int c = -1;
  MPI_Error_class(rc, &c);
  return c;
}

int main(int argc, char** argv) {
  int rank = self_rank = cov_init(&argc, &argv, "comm_attributes");
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int rc;
  state_t copying = {"copying", 1}, refusing = {"refusing", 0}, mpi1 = {"mpi1", 1};

  int kv_copy = MPI_KEYVAL_INVALID, kv_refuse = MPI_KEYVAL_INVALID, kv_null, kv_dup;
  rc = MPI_Comm_create_keyval(copy_fn, delete_fn, &kv_copy, &copying);
  CHECK(rc == MPI_SUCCESS && kv_copy != MPI_KEYVAL_INVALID);
  MPI_Comm_create_keyval(copy_fn, delete_fn, &kv_refuse, &refusing);
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kv_null, NULL);
  MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kv_dup, NULL);
  copying.keyval = kv_copy;
  refusing.keyval = kv_refuse;
  SAY("keyvals distinct %d", kv_copy != kv_refuse && kv_refuse != kv_null && kv_null != kv_dup);

  MPI_Comm a;
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  get("unset kv_copy on a", a, kv_copy);
  rc = MPI_Comm_set_attr(a, kv_copy, (void*)(intptr_t)1);
  CHECK(rc == MPI_SUCCESS);
  MPI_Comm_set_attr(a, kv_refuse, (void*)(intptr_t)2);
  MPI_Comm_set_attr(a, kv_null, (void*)(intptr_t)3);
  MPI_Comm_set_attr(a, kv_dup, (void*)(intptr_t)4);
  get("kv_copy on a", a, kv_copy);
  get("kv_refuse on a", a, kv_refuse);
  get("kv_null on a", a, kv_null);
  get("kv_dup on a", a, kv_dup);
  get("kv_copy on world", MPI_COMM_WORLD, kv_copy);
  report(&copying);

  /* Replacing a value deletes the old one. */
  rc = MPI_Comm_set_attr(a, kv_copy, (void*)(intptr_t)11);
  CHECK(rc == MPI_SUCCESS);
  get("kv_copy on a after replace", a, kv_copy);
  report(&copying);

  /* Comm_dup: copying copies (+1000), refusing refuses, NULL_COPY drops, DUP_FN keeps. */
  MPI_Comm b;
  expect = a;
  rc = MPI_Comm_dup(a, &b);
  expect = MPI_COMM_NULL;
  CHECK(rc == MPI_SUCCESS);
  get("kv_copy on b", b, kv_copy);
  get("kv_refuse on b", b, kv_refuse);
  get("kv_null on b", b, kv_null);
  get("kv_dup on b", b, kv_dup);
  report(&copying);
  report(&refusing);

  /* Comm_idup and Comm_dup_with_info copy too. */
  MPI_Comm c, d;
  MPI_Request req;
  expect = b;
  rc = MPI_Comm_idup(b, &c, &req);
  CHECK(rc == MPI_SUCCESS);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  expect = MPI_COMM_NULL;
  get("kv_copy on idup of b", c, kv_copy);
  get("kv_dup on idup of b", c, kv_dup);
  rc = MPI_Comm_dup_with_info(a, MPI_INFO_NULL, &d);
  CHECK(rc == MPI_SUCCESS);
  get("kv_copy on dup_with_info of a", d, kv_copy);
  report(&copying);
  report(&refusing);

  /* Comm_split does not copy attributes. */
  MPI_Comm s;
  MPI_Comm_split(a, 0, 0, &s);
  get("kv_copy on split of a", s, kv_copy);
  MPI_Comm_free(&s);

  /* delete_attr calls the delete callback; the attribute is gone. */
  expect = a;
  rc = MPI_Comm_delete_attr(a, kv_copy);
  expect = MPI_COMM_NULL;
  CHECK(rc == MPI_SUCCESS);
  get("kv_copy on a after delete_attr", a, kv_copy);
  report(&copying);

  /* A delete callback that fails makes delete_attr fail with its error. */
  copying.fail_delete = MPI_ERR_OTHER;
  rc = MPI_Comm_delete_attr(d, kv_copy);
  SAY("delete_attr with failing callback: class %d (MPI_ERR_OTHER %d)", cls(rc), cls(rc) == MPI_ERR_OTHER);
  copying.fail_delete = MPI_SUCCESS;
  report(&copying);

  /* Comm_free deletes every attribute left: b has kv_copy (1011) and kv_dup. */
  expect = b;
  rc = MPI_Comm_free(&b);
  expect = MPI_COMM_NULL;
  CHECK(rc == MPI_SUCCESS && b == MPI_COMM_NULL);
  report(&copying);
  MPI_Comm_free(&c);
  report(&copying);

  /* A keyval freed while still attached: its attribute on a stays until a is freed, and its
     delete callback runs then. */
  rc = MPI_Comm_free_keyval(&kv_refuse);
  SAY("free_keyval while attached rc %d invalid %d", rc, kv_refuse == MPI_KEYVAL_INVALID);
  report(&refusing);
  expect = a;
  rc = MPI_Comm_free(&a);
  expect = MPI_COMM_NULL;
  CHECK(rc == MPI_SUCCESS);
  report(&refusing);

  /* Comm_free of d: whatever the failed delete_attr left is deleted now. */
  rc = MPI_Comm_free(&d);
  SAY("free d rc class %d", cls(rc));
  report(&copying);

  /* Attributes on MPI_COMM_WORLD, deleted explicitly. */
  MPI_Comm_set_attr(MPI_COMM_WORLD, kv_copy, (void*)(intptr_t)(50 + rank));
  get("kv_copy on world", MPI_COMM_WORLD, kv_copy);
  MPI_Comm_delete_attr(MPI_COMM_WORLD, kv_copy);
  get("kv_copy on world after delete", MPI_COMM_WORLD, kv_copy);
  report(&copying);

  rc = MPI_Comm_free_keyval(&kv_copy);
  CHECK(rc == MPI_SUCCESS && kv_copy == MPI_KEYVAL_INVALID);
  MPI_Comm_free_keyval(&kv_null);
  MPI_Comm_free_keyval(&kv_dup);

  /* MPI-1 interface. */
  int k1, k1null, k1dup;
  rc = MPI_Keyval_create(copy1_fn, delete1_fn, &k1, &mpi1);
  CHECK(rc == MPI_SUCCESS);
  mpi1.keyval = k1;
  MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &k1null, NULL);
  MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &k1dup, NULL);
  MPI_Comm e, f;
  MPI_Comm_dup(MPI_COMM_WORLD, &e);
  int v1 = 7 + rank; /* MPI-1 style: the attribute is a pointer to the program's data */
  rc = MPI_Attr_put(e, k1, (void*)(intptr_t)5);
  CHECK(rc == MPI_SUCCESS);
  MPI_Attr_put(e, k1null, &v1);
  MPI_Attr_put(e, k1dup, &v1);
  void* val = NULL;
  int flag = -1;
  rc = MPI_Attr_get(e, k1, &val, &flag);
  SAY("attr_get k1: rc %d flag %d value %ld", rc, flag, (long)(intptr_t)val);
  MPI_Attr_get(e, k1null, &val, &flag);
  SAY("attr_get k1null: flag %d points to v1 %d value %d", flag, val == &v1, flag ? *(int*)val : -1);
  MPI_Comm_dup(e, &f);
  MPI_Attr_get(f, k1, &val, &flag);
  SAY("attr_get k1 on dup: flag %d value %ld", flag, flag ? (long)(intptr_t)val : -1L);
  MPI_Attr_get(f, k1null, &val, &flag);
  SAY("attr_get k1null on dup: flag %d", flag);
  MPI_Attr_get(f, k1dup, &val, &flag);
  SAY("attr_get k1dup on dup: flag %d points to v1 %d", flag, val == &v1);
  rc = MPI_Attr_delete(e, k1);
  CHECK(rc == MPI_SUCCESS);
  MPI_Attr_get(e, k1, &val, &flag);
  SAY("attr_get k1 after attr_delete: flag %d", flag);
  report(&mpi1);
  MPI_Comm_free(&f);
  report(&mpi1);
  rc = MPI_Keyval_free(&k1);
  SAY("keyval_free rc %d invalid %d", rc, k1 == MPI_KEYVAL_INVALID);
  MPI_Keyval_free(&k1null);
  MPI_Keyval_free(&k1dup);
  MPI_Comm_free(&e);
  report(&mpi1);

  /* Predefined attributes of MPI_COMM_WORLD. */
  int* p = NULL;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &p, &flag);
  SAY("MPI_TAG_UB flag %d at least 32767 %d", flag, flag && *p >= 32767);
  MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &p, &flag);
  SAY("MPI_TAG_UB via Attr_get flag %d at least 32767 %d", flag, flag && *p >= 32767);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &p, &flag);
  SAY("MPI_HOST flag %d", flag);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &p, &flag);
  SAY("MPI_IO flag %d", flag);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &p, &flag);
  SAY("MPI_WTIME_IS_GLOBAL flag %d", flag);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &p, &flag);
  SAY("MPI_APPNUM flag %d value %d", flag, flag ? *p : -1);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &p, &flag);
  SAY("MPI_LASTUSEDCODE flag %d", flag);

  /* The inner-communicator pattern: copied by Comm_dup (the copy callback duplicates), freed
     by the delete callbacks on delete_attr and Comm_free. */
  int kv_inner;
  MPI_Comm_create_keyval(inner_copy_fn, inner_delete_fn, &kv_inner, NULL);
  MPI_Comm g, h;
  MPI_Comm_dup(MPI_COMM_WORLD, &g);
  MPI_Comm* inner = malloc(sizeof *inner);
  MPI_Comm_dup(MPI_COMM_WORLD, inner);
  MPI_Comm_set_attr(g, kv_inner, inner);
  rc = MPI_Comm_dup(g, &h);
  CHECK(rc == MPI_SUCCESS);
  MPI_Comm* hinner = NULL;
  MPI_Comm_get_attr(h, kv_inner, &hinner, &flag);
  int isum = -1, one = 1;
  if (flag) MPI_Allreduce(&one, &isum, 1, MPI_INT, MPI_SUM, *hinner);
  SAY("inner communicator copied to the duplicate: flag %d, distinct %d, allreduce on it %d", flag,
      flag && hinner != inner, isum);
  rc = MPI_Comm_delete_attr(g, kv_inner);
  CHECK(rc == MPI_SUCCESS);
  rc = MPI_Comm_free(&h);
  CHECK(rc == MPI_SUCCESS);
  MPI_Comm_free(&g);
  MPI_Comm_free_keyval(&kv_inner);
  SAY("inner delete callbacks %d, all ok %d", inner_deletes, inner_ok);

  /* Attributes on MPI_COMM_SELF, deleted by MPI_Finalize in the reverse order of setting (the
     callback prints on rank 0); one keyval is freed before. */
  int kv_selfs[3];
  for (int i = 0; i < 3; ++i) MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete_fn, &kv_selfs[i], NULL);
  MPI_Comm_set_attr(MPI_COMM_SELF, kv_selfs[1], (void*)(intptr_t)(70 + rank));
  MPI_Comm_set_attr(MPI_COMM_SELF, kv_selfs[2], (void*)(intptr_t)(80 + rank));
  MPI_Comm_set_attr(MPI_COMM_SELF, kv_selfs[0], (void*)(intptr_t)(90 + rank));
  MPI_Comm_free_keyval(&kv_selfs[2]);
  return cov_finish();
}
