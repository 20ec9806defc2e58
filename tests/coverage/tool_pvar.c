/* Coverage: MPI tool information interface performance variables: sessions
   (MPI_T_pvar_session_create/free), MPI_T_pvar_get_num/get_info/get_index, handles
   (MPI_T_pvar_handle_alloc/free, unbound and bound to a communicator), MPI_T_pvar_read, and
   MPI_T_pvar_start/stop/reset/readreset/write where the variable allows them, with the error
   each gives where it does not (every pvar of Open MPI 4.1 that works here is continuous and
   read-only) and on the whole session (MPI_T_PVAR_ALL_HANDLES). Values change from run to run:
   only return codes and checks are recorded. MPICH 4.0.2 has no performance variable; its
   MPI_T_pvar_get_info and MPI_T_pvar_handle_alloc crash natively on index 0 when there are none
   (MPI_T_pvar_get_info refuses -1 first; MPI_T_pvar_handle_alloc crashes on -1 too, so it is not
   called), so there only the calls that need no variable are made. */
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
  if (rc == MPI_T_ERR_INVALID_SESSION) return "MPI_T_ERR_INVALID_SESSION";
  if (rc == MPI_T_ERR_PVAR_NO_STARTSTOP) return "MPI_T_ERR_PVAR_NO_STARTSTOP";
  if (rc == MPI_T_ERR_PVAR_NO_WRITE) return "MPI_T_ERR_PVAR_NO_WRITE";
  if (rc == MPI_T_ERR_PVAR_NO_ATOMIC) return "MPI_T_ERR_PVAR_NO_ATOMIC";
  if (rc == MPI_T_ERR_INVALID) return "MPI_T_ERR_INVALID";
  snprintf(other, sizeof other, "other (%d)", rc);
  return other;
}

#ifdef OPEN_MPI
struct reader {
  int reads, errors;
};
static void* read_thread(void* arg) {
  struct reader* r = arg;
  MPI_T_pvar_session s;
  if (MPI_T_pvar_session_create(&s) != MPI_SUCCESS) {
    ++r->errors;
    return NULL;
  }
  int idx = -1, count = 0;
  MPI_T_pvar_get_index("pml_ob1_unexpected_msgq_length", MPI_T_PVAR_CLASS_SIZE, &idx);
  MPI_Comm comm = MPI_COMM_WORLD;
  MPI_T_pvar_handle h;
  if (MPI_T_pvar_handle_alloc(s, idx, &comm, &h, &count) != MPI_SUCCESS) ++r->errors;
  for (int i = 0; i < 200; ++i) {
    unsigned v[16];
    if (MPI_T_pvar_read(s, h, v) != MPI_SUCCESS) ++r->errors;
    ++r->reads;
  }
  if (MPI_T_pvar_handle_free(s, &h) != MPI_SUCCESS) ++r->errors;
  if (MPI_T_pvar_session_free(&s) != MPI_SUCCESS) ++r->errors;
  return NULL;
}
#endif

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "tool_pvar");
  int provided = -1;
  int rc = MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided);
  SAY("MPI_T_init_thread %s provided %d", terr(rc), provided);

  MPI_T_pvar_session s1 = MPI_T_PVAR_SESSION_NULL, s2 = MPI_T_PVAR_SESSION_NULL;
  int r1 = MPI_T_pvar_session_create(&s1), r2 = MPI_T_pvar_session_create(&s2);
  SAY("two sessions: %s %s, distinct %d", terr(r1), terr(r2), s1 != s2);

  int num = -1;
  MPI_T_pvar_get_num(&num);
  {
    int idx = -1;
    SAY("pvar_get_index(no such name): %s",
        terr(MPI_T_pvar_get_index("tsmpi_no_such_variable", MPI_T_PVAR_CLASS_COUNTER, &idx)));
  }
  /* start, stop and reset every handle of a session: valid with any number of handles */
  SAY("empty session: start %s stop %s reset %s", terr(MPI_T_pvar_start(s2, MPI_T_PVAR_ALL_HANDLES)),
      terr(MPI_T_pvar_stop(s2, MPI_T_PVAR_ALL_HANDLES)), terr(MPI_T_pvar_reset(s2, MPI_T_PVAR_ALL_HANDLES)));

#ifdef OPEN_MPI
  CHECK(num > 0);
  int info_other = 0, answered = 0, index_errors = 0;
  for (int i = 0; i < num; ++i) {
    char name[256], desc[1024];
    int nl = sizeof name, dl = sizeof desc, verbosity, var_class, bind, readonly, continuous, atomic;
    MPI_Datatype dt;
    MPI_T_enum en;
    int irc = MPI_T_pvar_get_info(i, name, &nl, &verbosity, &var_class, &dt, &en, desc, &dl, &bind, &readonly,
                                  &continuous, &atomic);
    if (irc != MPI_SUCCESS) {
      if (irc != MPI_T_ERR_INVALID_INDEX && irc != MPI_T_ERR_INVALID) ++info_other;
      continue;
    }
    ++answered;
    int idx = -1;
    if (MPI_T_pvar_get_index(name, var_class, &idx) != MPI_SUCCESS || idx > i) ++index_errors;
  }
  /* Open MPI answers MPI_T_ERR_INVALID_INDEX for variables of closed components and
     MPI_T_ERR_INVALID for the extra copies of pml_ob1_posted_recvq_length it lists */
  SAY("pvar_get_info: some answered %d, other errors %d; pvar_get_index errors %d",
      answered > 0, info_other, index_errors);
  {
    char name[64], desc[64];
    int nl = sizeof name, dl = sizeof desc, verbosity, var_class, bind, readonly, continuous, atomic;
    MPI_Datatype dt;
    MPI_T_enum en;
    SAY("pvar_get_info(num): %s", terr(MPI_T_pvar_get_info(num, name, &nl, &verbosity, &var_class, &dt, &en, desc, &dl,
                                                           &bind, &readonly, &continuous, &atomic)));
  }

  /* an unbound, continuous, read-only variable */
  {
    int idx = -1, count = -1;
    rc = MPI_T_pvar_get_index("mpool_hugepage_bytes_allocated", MPI_T_PVAR_CLASS_SIZE, &idx);
    int wrong = -1;
    int wrc = MPI_T_pvar_get_index("mpool_hugepage_bytes_allocated", MPI_T_PVAR_CLASS_COUNTER, &wrong);
    SAY("get_index: %s, with another class: %s", terr(rc), terr(wrc));
    char name[256], desc[1024];
    int nl = sizeof name, dl = sizeof desc, verbosity, var_class, bind, readonly, continuous, atomic;
    MPI_Datatype dt;
    MPI_T_enum en;
    MPI_T_pvar_get_info(idx, name, &nl, &verbosity, &var_class, &dt, &en, desc, &dl, &bind, &readonly, &continuous, &atomic);
    SAY("%s: class size %d, unbound %d, read-only %d, continuous %d, unsigned long %d", name, var_class == MPI_T_PVAR_CLASS_SIZE,
        bind == MPI_T_BIND_NO_OBJECT, readonly, continuous, dt == MPI_UNSIGNED_LONG);
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    rc = MPI_T_pvar_handle_alloc(s1, idx, NULL, &h, &count);
    SAY("handle_alloc %s count %d", terr(rc), count);
    unsigned long v[4] = {0}, w[4] = {0};
    SAY("read %s", terr(MPI_T_pvar_read(s1, h, v)));
    SAY("start %s", terr(MPI_T_pvar_start(s1, h)));
    SAY("stop %s", terr(MPI_T_pvar_stop(s1, h)));
    SAY("reset %s", terr(MPI_T_pvar_reset(s1, h)));
    SAY("readreset %s", terr(MPI_T_pvar_readreset(s1, h, w)));
    SAY("write %s", terr(MPI_T_pvar_write(s1, h, v)));
    SAY("whole session: start %s stop %s reset %s", terr(MPI_T_pvar_start(s1, MPI_T_PVAR_ALL_HANDLES)),
        terr(MPI_T_pvar_stop(s1, MPI_T_PVAR_ALL_HANDLES)), terr(MPI_T_pvar_reset(s1, MPI_T_PVAR_ALL_HANDLES)));
    SAY("read on the other session: %s", terr(MPI_T_pvar_read(s2, h, v)));
    rc = MPI_T_pvar_handle_free(s1, &h);
    SAY("handle_free %s, null after %d", terr(rc), h == MPI_T_PVAR_HANDLE_NULL);
  }
  /* bound to a communicator: one value per process of it */
  {
    int idx = -1, count = -1;
    rc = MPI_T_pvar_get_index("pml_ob1_unexpected_msgq_length", MPI_T_PVAR_CLASS_SIZE, &idx);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_T_pvar_handle hw, hd;
    MPI_Comm world = MPI_COMM_WORLD;
    int a1 = MPI_T_pvar_handle_alloc(s1, idx, &world, &hw, &count);
    int count2 = -1;
    int a2 = MPI_T_pvar_handle_alloc(s2, idx, &dup, &hd, &count2);
    SAY("bound to a communicator: index %s, alloc %s count %d, on a duplicate %s count %d", terr(rc), terr(a1), count,
        terr(a2), count2);
    /* a message this rank has not yet received is in its unexpected queue at most */
    unsigned v[16];
    if (rank == 1) MPI_Send(&rank, 1, MPI_INT, 0, 5, dup);
    MPI_Barrier(dup);
    SAY("read %s %s", terr(MPI_T_pvar_read(s1, hw, v)), terr(MPI_T_pvar_read(s2, hd, v)));
    if (rank == 0) {
      int got = -1;
      MPI_Recv(&got, 1, MPI_INT, 1, 5, dup, MPI_STATUS_IGNORE);
      SAY("received %d", got);
    }
    SAY("frees %s %s", terr(MPI_T_pvar_handle_free(s1, &hw)), terr(MPI_T_pvar_handle_free(s2, &hd)));
    MPI_Comm_free(&dup);
  }
  /* two threads, each with its own session */
  {
    struct reader r[2];
    memset(r, 0, sizeof r);
    pthread_t th[2];
    for (int i = 0; i < 2; ++i) pthread_create(&th[i], NULL, read_thread, &r[i]);
    for (int i = 0; i < 2; ++i) pthread_join(th[i], NULL);
    SAY("threads: reads %d %d errors %d %d", r[0].reads, r[1].reads, r[0].errors, r[1].errors);
  }
#else
  SAY("pvars %d", num);
  {
    /* with no variable MPICH 4.0.2 dereferences its empty table for index 0 (SIGSEGV natively);
       a negative index is refused before that */
    char name[64], desc[64];
    int nl = sizeof name, dl = sizeof desc, verbosity, var_class, bind, readonly, continuous, atomic;
    MPI_Datatype dt;
    MPI_T_enum en;
    SAY("pvar_get_info(-1): %s", terr(MPI_T_pvar_get_info(-1, name, &nl, &verbosity, &var_class, &dt, &en, desc, &dl, &bind,
                                                          &readonly, &continuous, &atomic)));
  }
  {
    unsigned long v[4];
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    SAY("on the null handle: read %s readreset %s write %s", terr(MPI_T_pvar_read(s1, h, v)),
        terr(MPI_T_pvar_readreset(s1, h, v)), terr(MPI_T_pvar_write(s1, h, v)));
    SAY("handle_free of the null handle %s", terr(MPI_T_pvar_handle_free(s1, &h)));
    SAY("read on the whole session %s", terr(MPI_T_pvar_read(s1, MPI_T_PVAR_ALL_HANDLES, v)));
  }
#endif

  r1 = MPI_T_pvar_session_free(&s1);
  r2 = MPI_T_pvar_session_free(&s2);
  SAY("session_free %s %s, null after %d", terr(r1), terr(r2), s1 == MPI_T_PVAR_SESSION_NULL && s2 == MPI_T_PVAR_SESSION_NULL);
  SAY("MPI_T_finalize %s", terr(MPI_T_finalize()));
  (void)rank;
  return cov_finish();
}
