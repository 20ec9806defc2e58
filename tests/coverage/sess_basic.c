/* Coverage: MPI-4 sessions (MPICH 4.0 only; Open MPI 4.1 is MPI 3.1 and has none):
   MPI_Session_init/finalize, MPI_Session_get_info, MPI_Session_get_num_psets/get_nth_pset/
   get_pset_info, MPI_Group_from_session_pset, MPI_Comm_create_from_group, the session error
   handler functions and MPI_Info_create_env. The session lives next to the world model that
   cov_init starts. */
// ranks: 2
#include <string.h>

#include "coverage.h"

#if MPI_VERSION >= 4 || defined(MPI_SESSION_NULL) /* Open MPI 5.0: sessions, MPI_VERSION 3 */
static int handler_calls = 0, handler_code = -1, handler_session_ok = 0;
static MPI_Session the_session;

static void session_handler(MPI_Session* session, int* code, ...) {
  ++handler_calls;
  handler_code = *code;
  handler_session_ok = *session == the_session;
}

/* "key=value" of every key of info, in order, into text; the MPI's own keys (Open MPI 5's "ompi_"
   ones, such as ompi_positioned_file_dir, which names the run's launcher process) without their
   values, which change from run to run. */
static void info_text(MPI_Info info, char* text, size_t cap) {
  int n = -1;
  MPI_Info_get_nkeys(info, &n);
  snprintf(text, cap, "%d keys", n);
  for (int i = 0; i < n; ++i) {
    char key[MPI_MAX_INFO_KEY + 1], value[256];
    int flag = 0, len = 0;
    MPI_Info_get_nthkey(info, i, key);
    MPI_Info_get_valuelen(info, key, &len, &flag);
    MPI_Info_get(info, key, sizeof value - 1, value, &flag);
    size_t used = strlen(text);
    snprintf(text + used, cap - used, " %s=%s", key, !flag ? "(none)" : strncmp(key, "ompi_", 5) ? value : "*");
  }
}
#endif

int main(int argc, char** argv) {
#if MPI_VERSION >= 4 || defined(MPI_SESSION_NULL) /* Open MPI 5.0: sessions, MPI_VERSION 3 */
  /* MPI_Info_create_env may be called before MPI is initialized. */
  MPI_Info env_before = MPI_INFO_NULL;
  int env_before_rc = MPI_Info_create_env(argc, argv, &env_before);
#endif
  int rank = cov_init(&argc, &argv, "sess_basic");
#if MPI_VERSION >= 4 || defined(MPI_SESSION_NULL) /* Open MPI 5.0: sessions, MPI_VERSION 3 */
  char text[1024];
  int rc, n = -1;
  SAY("info_create_env before init rc %d", env_before_rc);
  MPI_Info_get_nkeys(env_before, &n);
  SAY("info_create_env before init keys %d", n);
  MPI_Info_free(&env_before);
  MPI_Info env = MPI_INFO_NULL;
  rc = MPI_Info_create_env(argc, argv, &env);
  info_text(env, text, sizeof text);
  SAY("info_create_env rc %d: %s", rc, text);
  MPI_Info_free(&env);

  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE");
  MPI_Session session = MPI_SESSION_NULL;
  rc = MPI_Session_init(info, MPI_ERRORS_RETURN, &session);
  MPI_Info_free(&info);
  SAY("session_init rc %d null %d", rc, session == MPI_SESSION_NULL);
  the_session = session;

  MPI_Info used = MPI_INFO_NULL;
  rc = MPI_Session_get_info(session, &used);
  info_text(used, text, sizeof text);
  SAY("session_get_info rc %d: %s", rc, text);
  MPI_Info_free(&used);

  int npsets = -1;
  rc = MPI_Session_get_num_psets(session, MPI_INFO_NULL, &npsets);
  SAY("get_num_psets rc %d: %d", rc, npsets);
  int have_world = 0, have_self = 0;
  for (int i = 0; i < npsets; ++i) {
    char name[MPI_MAX_PSET_NAME_LEN];
    int len = 0;
    rc = MPI_Session_get_nth_pset(session, MPI_INFO_NULL, i, &len, NULL); /* length only */
    int len2 = len;
    int rc2 = MPI_Session_get_nth_pset(session, MPI_INFO_NULL, i, &len2, name);
    SAY("pset %d: rc %d %d length %d name %s", i, rc, rc2, len, name);
    CHECK(len == (int)strlen(name) + 1);
    have_world |= strcmp(name, "mpi://WORLD") == 0;
    have_self |= strcmp(name, "mpi://SELF") == 0;
    MPI_Info pinfo = MPI_INFO_NULL;
    rc = MPI_Session_get_pset_info(session, name, &pinfo);
    info_text(pinfo, text, sizeof text);
    SAY("pset %d info rc %d: %s", i, rc, text);
    MPI_Info_free(&pinfo);
  }
  CHECK(have_world && have_self);

  /* A communicator over mpi://WORLD, made without MPI_COMM_WORLD. */
  MPI_Group wgroup = MPI_GROUP_NULL;
  rc = MPI_Group_from_session_pset(session, "mpi://WORLD", &wgroup);
  int gsize = -1, grank = -1;
  MPI_Group_size(wgroup, &gsize);
  MPI_Group_rank(wgroup, &grank);
  SAY("group_from_session_pset WORLD rc %d size %d rank %d", rc, gsize, grank);
  MPI_Comm wcomm = MPI_COMM_NULL;
  rc = MPI_Comm_create_from_group(wgroup, "org.tsmpi.coverage.sess_basic.world", MPI_INFO_NULL,
                                  MPI_ERRORS_RETURN, &wcomm);
  int crank = -1, csize = -1, sum = -1;
  MPI_Comm_rank(wcomm, &crank);
  MPI_Comm_size(wcomm, &csize);
  MPI_Allreduce(&crank, &sum, 1, MPI_INT, MPI_SUM, wcomm);
  SAY("comm_create_from_group rc %d rank %d of %d, allreduce %d", rc, crank, csize, sum);
  int ring = -1, right = (crank + 1) % csize, left = (crank + csize - 1) % csize, token = 60 + crank;
  MPI_Sendrecv(&token, 1, MPI_INT, right, 1, &ring, 1, MPI_INT, left, 1, wcomm, MPI_STATUS_IGNORE);
  SAY("ring on the session communicator got %d", ring);
  CHECK(ring == 60 + left);
  MPI_Errhandler comm_eh = MPI_ERRHANDLER_NULL;
  MPI_Comm_get_errhandler(wcomm, &comm_eh);
  SAY("session communicator error handler is MPI_ERRORS_RETURN %d", comm_eh == MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&comm_eh);
  MPI_Comm_free(&wcomm);
  MPI_Group_free(&wgroup);

  /* And one over mpi://SELF, with an info. */
  MPI_Group sgroup = MPI_GROUP_NULL;
  rc = MPI_Group_from_session_pset(session, "mpi://SELF", &sgroup);
  MPI_Group_size(sgroup, &gsize);
  SAY("group_from_session_pset SELF rc %d size %d", rc, gsize);
  MPI_Info cinfo;
  MPI_Info_create(&cinfo);
  MPI_Info_set(cinfo, "mpi_assert_no_any_tag", "true");
  MPI_Comm scomm = MPI_COMM_NULL;
  rc = MPI_Comm_create_from_group(sgroup, "org.tsmpi.coverage.sess_basic.self", cinfo, MPI_ERRORS_RETURN, &scomm);
  MPI_Info_free(&cinfo);
  MPI_Comm_size(scomm, &csize);
  int echo = -1, v = 77;
  MPI_Sendrecv(&v, 1, MPI_INT, 0, 2, &echo, 1, MPI_INT, 0, 2, scomm, MPI_STATUS_IGNORE);
  SAY("comm_create_from_group SELF rc %d size %d echo %d", rc, csize, echo);
  MPI_Comm_free(&scomm);
  MPI_Group_free(&sgroup);

  /* Session error handlers. */
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL, got = MPI_ERRHANDLER_NULL;
  /* MPICH 4.0.2 reports MPI_ERRORS_ARE_FATAL here although the session was made with
     MPI_ERRORS_RETURN (it does so natively too). */
  rc = MPI_Session_get_errhandler(session, &got);
  SAY("session_get_errhandler rc %d is MPI_ERRORS_RETURN %d MPI_ERRORS_ARE_FATAL %d", rc,
      got == MPI_ERRORS_RETURN, got == MPI_ERRORS_ARE_FATAL);
  MPI_Errhandler_free(&got);
  rc = MPI_Session_create_errhandler(session_handler, &eh);
  SAY("session_create_errhandler rc %d", rc);
  rc = MPI_Session_set_errhandler(session, eh);
  SAY("session_set_errhandler rc %d", rc);
  rc = MPI_Session_get_errhandler(session, &got);
  SAY("session_get_errhandler rc %d is ours %d", rc, got == eh);
  MPI_Errhandler_free(&got);
  rc = MPI_Session_call_errhandler(session, MPI_ERR_OTHER);
  SAY("session_call_errhandler rc %d: handler calls %d code is MPI_ERR_OTHER %d session ok %d", rc,
      handler_calls, handler_code == MPI_ERR_OTHER, handler_session_ok);
  rc = MPI_Session_set_errhandler(session, MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&eh);
  rc = MPI_Session_call_errhandler(session, MPI_ERR_OTHER);
  SAY("with MPI_ERRORS_RETURN call_errhandler rc %d, handler calls %d", rc, handler_calls);

  rc = MPI_Session_finalize(&session);
  SAY("session_finalize rc %d null %d", rc, session == MPI_SESSION_NULL);
#else
  SAY("no sessions in MPI %d.%d", MPI_VERSION, MPI_SUBVERSION);
#endif
  (void)rank;
  return cov_finish();
}
