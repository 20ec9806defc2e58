/* Coverage: the MPI tool information interface's control variables and enumerations:
   MPI_T_init_thread/MPI_T_finalize (before MPI_Init and nested after it), MPI_T_cvar_get_num,
   MPI_T_cvar_get_info, MPI_T_cvar_get_index, MPI_T_cvar_handle_alloc/free, MPI_T_cvar_read and
   MPI_T_cvar_write on a writable variable (its value restored), MPI_T_enum_get_info and
   MPI_T_enum_get_item, and two threads reading variables at once. The number of variables and
   their values depend on the installation and the environment, so they are checked, not printed
   (Open MPI's set even changes with the components loaded). */
// ranks: 2
#include <pthread.h>
#include <string.h>

#include "coverage.h"

static const char* terr(int rc) {
  static char other[32];
  if (rc == MPI_SUCCESS) return "MPI_SUCCESS";
  if (rc == MPI_T_ERR_INVALID_INDEX) return "MPI_T_ERR_INVALID_INDEX";
  if (rc == MPI_T_ERR_INVALID_NAME) return "MPI_T_ERR_INVALID_NAME";
  if (rc == MPI_T_ERR_INVALID_HANDLE) return "MPI_T_ERR_INVALID_HANDLE";
  if (rc == MPI_T_ERR_INVALID_ITEM) return "MPI_T_ERR_INVALID_ITEM";
  if (rc == MPI_T_ERR_CVAR_SET_NEVER) return "MPI_T_ERR_CVAR_SET_NEVER";
  if (rc == MPI_T_ERR_CVAR_SET_NOT_NOW) return "MPI_T_ERR_CVAR_SET_NOT_NOW";
  if (rc == MPI_T_ERR_INVALID) return "MPI_T_ERR_INVALID";
  snprintf(other, sizeof other, "other (%d)", rc);
  return other;
}

/* a writable integer variable without binding, and a string one, per MPI */
#ifdef MPICH
static const char* writable = "MPIR_CVAR_REQUEST_POLL_FREQ";
static const char* stringvar = "MPIR_CVAR_NETLOC_NODE_FILE";
#else
/* writable at run time in Open MPI 4.1 and 5.0 (5.0 has no checkpoint/restart framework: its
   opal_cr_* variables are gone) */
static const char* writable = "allocator_bucket_num_buckets";
static const char* stringvar = "opal_signal";
static const char* readonly = "mpi_abort_delay"; /* MPICH 4.0.2 has no read-only variable */
#endif

struct reader {
  int index, reads, errors;
};
static void* read_thread(void* arg) {
  struct reader* r = arg;
  MPI_T_cvar_handle h;
  int count = 0;
  if (MPI_T_cvar_handle_alloc(r->index, NULL, &h, &count) != MPI_SUCCESS) {
    ++r->errors;
    return NULL;
  }
  int first = 0;
  MPI_T_cvar_read(h, &first);
  for (int i = 0; i < 300; ++i) {
    int v = -1;
    if (MPI_T_cvar_read(h, &v) != MPI_SUCCESS || v != first) ++r->errors;
    ++r->reads;
  }
  MPI_T_cvar_handle_free(&h);
  return NULL;
}

int main(int argc, char** argv) {
  /* MPI_T may be initialized before MPI itself */
  int pre = -1;
  int pre_rc = MPI_T_init_thread(MPI_THREAD_MULTIPLE, &pre);
  int pre_num = -1;
  MPI_T_cvar_get_num(&pre_num);
  int rank = cov_init(&argc, &argv, "tool_cvar");
  SAY("MPI_T_init_thread before MPI_Init: rc %d provided %d, variables %s", pre_rc, pre, pre_num > 0 ? "some" : "none");
  int provided = -1;
  int rc = MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided);
  SAY("MPI_T_init_thread again: rc %d provided %d", rc, provided);

  int num = -1, num2 = -2;
  MPI_T_cvar_get_num(&num);
  MPI_T_cvar_get_num(&num2);
  CHECK(num > 0 && num == num2 && num >= pre_num);
#ifdef MPICH
  SAY("cvars %d", num); /* fixed when MPICH is built */
#endif

  /* every variable's description; the index of each name is the first with that name */
  int info_errors = 0, other_errors = 0, index_errors = 0, with_enum = 0, no_object = 0;
  MPI_T_enum an_enum = MPI_T_ENUM_NULL;
  for (int i = 0; i < num; ++i) {
    char name[256], desc[1024];
    int nl = sizeof name, dl = sizeof desc, verbosity = -1, bind = -1, scope = -1;
    MPI_Datatype dt = MPI_DATATYPE_NULL;
    MPI_T_enum en = MPI_T_ENUM_NULL;
    int irc = MPI_T_cvar_get_info(i, name, &nl, &verbosity, &dt, &en, desc, &dl, &bind, &scope);
    if (irc != MPI_SUCCESS) {
      ++info_errors;
      if (irc != MPI_T_ERR_INVALID_INDEX) ++other_errors;
      continue;
    }
    if (en != MPI_T_ENUM_NULL) {
      ++with_enum;
      if (an_enum == MPI_T_ENUM_NULL) an_enum = en;
    }
    if (bind == MPI_T_BIND_NO_OBJECT) ++no_object;
    int idx = -1;
    if (MPI_T_cvar_get_index(name, &idx) != MPI_SUCCESS || idx > i) ++index_errors;
    else if (idx != i) {
      char n2[256];
      int l2 = sizeof n2;
      MPI_T_cvar_get_info(idx, n2, &l2, &verbosity, &dt, &en, desc, &dl, &bind, &scope);
      if (strcmp(n2, name) != 0) ++index_errors;
    }
  }
#ifdef OPEN_MPI
  /* Open MPI keeps the indices of variables of components it closed: those answer
     MPI_T_ERR_INVALID_INDEX, and how many there are depends on the environment */
  SAY("cvar_get_info errors other than MPI_T_ERR_INVALID_INDEX %d, some answered %d", other_errors, info_errors < num);
  SAY("some with an enumeration %d", with_enum > 0);
#else
  SAY("cvar_get_info errors %d", info_errors);
  SAY("with an enumeration %d", with_enum);
#endif
  SAY("cvar_get_index errors %d, some unbound %d", index_errors, no_object > 0);
  {
    char name[64], desc[64];
    int nl = sizeof name, dl = sizeof desc, idx = -1;
    MPI_Datatype dt;
    MPI_T_enum en;
    int bind, scope, verbosity;
    SAY("cvar_get_info(num): %s", terr(MPI_T_cvar_get_info(num, name, &nl, &verbosity, &dt, &en, desc, &dl, &bind, &scope)));
    SAY("cvar_get_index(no such name): %s", terr(MPI_T_cvar_get_index("tsmpi_no_such_variable", &idx)));
  }

  /* an enumeration's items */
  if (an_enum != MPI_T_ENUM_NULL) {
    int items = -1;
    char ename[256];
    int el = sizeof ename;
    rc = MPI_T_enum_get_info(an_enum, &items, ename, &el);
    int item_errors = 0;
    for (int i = 0; i < items; ++i) {
      int value;
      char iname[256];
      int il = sizeof iname;
      if (MPI_T_enum_get_item(an_enum, i, &value, iname, &il) != MPI_SUCCESS || il <= 0) ++item_errors;
    }
    int value;
    char iname[64];
    int il = sizeof iname;
    SAY("enum_get_info %s, items %s, item errors %d, item past the end: %s", terr(rc), items > 0 ? "some" : "none",
        item_errors, terr(MPI_T_enum_get_item(an_enum, items, &value, iname, &il)));
  } else {
    /* MPICH 4.0.2 has no enumerations: only the null one can be named */
    int items = -1;
    char ename[64];
    int el = sizeof ename, value;
    SAY("enum_get_info(MPI_T_ENUM_NULL): %s", terr(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &items, ename, &el)));
    el = sizeof ename;
    SAY("enum_get_item(MPI_T_ENUM_NULL): %s", terr(MPI_T_enum_get_item(MPI_T_ENUM_NULL, 0, &value, ename, &el)));
  }

  /* write a writable variable, read it back, restore it */
  {
    int idx = -1;
    rc = MPI_T_cvar_get_index(writable, &idx);
    SAY("index of %s: %s", writable, terr(rc));
    MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
    int count = -1;
    rc = MPI_T_cvar_handle_alloc(idx, NULL, &h, &count);
    SAY("cvar_handle_alloc %s count %d", terr(rc), count);
    int old = -1, now = -1, back = -1;
    int r1 = MPI_T_cvar_read(h, &old);
    int v = old + 7;
    int r2 = MPI_T_cvar_write(h, &v);
    int r3 = MPI_T_cvar_read(h, &now);
    int r4 = MPI_T_cvar_write(h, &old);
    int r5 = MPI_T_cvar_read(h, &back);
    SAY("read %s, write %s, read %s (the value written %d), write %s, read %s (restored %d)", terr(r1), terr(r2), terr(r3),
        now == old + 7, terr(r4), terr(r5), back == old);
    rc = MPI_T_cvar_handle_free(&h);
    SAY("cvar_handle_free %s, null after %d", terr(rc), h == MPI_T_CVAR_HANDLE_NULL);
  }
  /* a string variable */
  {
    int idx = -1;
    rc = MPI_T_cvar_get_index(stringvar, &idx);
    MPI_T_cvar_handle h;
    int count = -1;
    int r2 = MPI_T_cvar_handle_alloc(idx, NULL, &h, &count);
    char* text = calloc((size_t)(count > 0 ? count : 1) + 1, 1);
    int r3 = MPI_T_cvar_read(h, text);
    SAY("string variable: index %s, alloc %s, read %s, terminated %d", terr(rc), terr(r2), terr(r3),
        count > 0 && memchr(text, 0, (size_t)count + 1) != NULL);
    MPI_T_cvar_handle_free(&h);
    free(text);
  }
#ifdef OPEN_MPI
  /* a variable that cannot be written */
  {
    int idx = -1, count = -1, scope = -1, bind = -1;
    char name[256];
    int nl = sizeof name;
    MPI_Datatype dt;
    MPI_T_enum en;
    rc = MPI_T_cvar_get_index(readonly, &idx);
    char desc[1024];
    int dl = sizeof desc, verbosity;
    MPI_T_cvar_get_info(idx, name, &nl, &verbosity, &dt, &en, desc, &dl, &bind, &scope);
    MPI_T_cvar_handle h;
    MPI_T_cvar_handle_alloc(idx, NULL, &h, &count);
    int v = 0;
    MPI_T_cvar_read(h, &v);
    int wrc = MPI_T_cvar_write(h, &v);
    SAY("read-only %s: index %s, scope constant or read-only %d, write %s", readonly, terr(rc),
        scope == MPI_T_SCOPE_CONSTANT || scope == MPI_T_SCOPE_READONLY, terr(wrc));
    MPI_T_cvar_handle_free(&h);
  }
#endif

  /* two threads reading one variable each */
  {
    int i1 = -1, i2 = -1;
    MPI_T_cvar_get_index(writable, &i1);
#ifdef MPICH
    MPI_T_cvar_get_index("MPIR_CVAR_POLLS_BEFORE_YIELD", &i2);
#else
    MPI_T_cvar_get_index("shmem_mmap_priority", &i2);
#endif
    struct reader r[2] = {{i1, 0, 0}, {i2, 0, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; ++i) pthread_create(&th[i], NULL, read_thread, &r[i]);
    for (int i = 0; i < 2; ++i) pthread_join(th[i], NULL);
    SAY("threads: reads %d %d errors %d %d", r[0].reads, r[1].reads, r[0].errors, r[1].errors);
  }

  rc = MPI_T_finalize();
  SAY("MPI_T_finalize %s", terr(rc));
  rc = MPI_T_finalize();
  SAY("MPI_T_finalize (the one before MPI_Init) %s", terr(rc));
  (void)rank;
  return cov_finish();
}
