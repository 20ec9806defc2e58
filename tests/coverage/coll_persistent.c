/* Coverage: the life of persistent collective requests (MPI_X_init on MPICH 4.0, MPIX_X_init on
   Open MPI 4.1's pcollreq extension), beyond the single start each init gets in coll_rooted.c,
   coll_all.c, coll_reduce.c and coll_neighbor.c: several persistent collectives on a duplicate of
   MPI_COMM_WORLD started together by MPI_Startall and completed together by MPI_Waitall, round
   after round with new data; MPI_Wait and MPI_Test on inactive persistent requests (empty
   status, at once); one completed by MPI_Test polling; a request freed without being started.
   MPI_Waitany/Waitsome/Testall/Testany/Testsome are not used on these requests: MPICH 4.0.2 gets
   them wrong natively (wrong results or MPI_ERR_IN_STATUS with MPI_ERR_PENDING). */
// ranks: 4
#include "coverage.h"
#ifdef OPEN_MPI
#include <mpi-ext.h> /* MPIX_*_init: Open MPI's persistent collectives (pcollreq extension) */
#endif

#if defined(MPICH) && MPI_VERSION >= 4
#define HAVE_PERSISTENT 1
#define PERSISTENT(name) MPI_##name##_init
#elif defined(OPEN_MPI) && OMPI_MAJOR_VERSION >= 5 /* MPI-4's names (the MPIX_ ones are kept too) */
#define HAVE_PERSISTENT 1
#define PERSISTENT(name) MPI_##name##_init
#elif defined(OPEN_MPI) && defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define HAVE_PERSISTENT 1
#define PERSISTENT(name) MPIX_##name##_init
#endif

static char text[4][1024];
static int text_next;
static const char* ints(const int* a, int n) {
  char* s = text[text_next++ % 4];
  int len = 0;
  s[0] = 0;
  for (int i = 0; i < n && len < 1000; ++i) len += snprintf(s + len, sizeof text[0] - len, i ? " %d" : "%d", a[i]);
  return s;
}
static void verify(const char* what, int rc, const int* got, const int* expected, int n) {
  SAY("%s: rc %d: %s", what, rc, ints(got, n));
  if (rc != MPI_SUCCESS || memcmp(got, expected, n * sizeof(int)) != 0) {
    SAY("check failed: %s: expected %s", what, ints(expected, n));
    ++cov_failures;
  }
}
static void fill(int* a, int n, int v) {
  for (int i = 0; i < n; ++i) a[i] = v;
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "coll_persistent"), size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) {
    SAY("needs 4 ranks, has %d", size);
    ++cov_failures;
    return cov_finish();
  }
#ifndef HAVE_PERSISTENT
  SAY("no persistent collectives in this MPI");
#else
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int b[2], ar[2], a2a_s[4], a2a_r[4], rsb_s[4], rsb, exp[4], rc;
  MPI_Request req[5];
  rc = PERSISTENT(Bcast)(b, 2, MPI_INT, 2, comm, MPI_INFO_NULL, &req[0]);
  CHECK(rc == MPI_SUCCESS);
  rc = PERSISTENT(Allreduce)(MPI_IN_PLACE, ar, 2, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &req[1]);
  CHECK(rc == MPI_SUCCESS);
  rc = PERSISTENT(Alltoall)(a2a_s, 1, MPI_INT, a2a_r, 1, MPI_INT, comm, MPI_INFO_NULL, &req[2]);
  CHECK(rc == MPI_SUCCESS);
  rc = PERSISTENT(Barrier)(comm, MPI_INFO_NULL, &req[3]);
  CHECK(rc == MPI_SUCCESS);
  rc = PERSISTENT(Reduce_scatter_block)(rsb_s, &rsb, 1, MPI_INT, MPI_MAX, comm, MPI_INFO_NULL, &req[4]);
  CHECK(rc == MPI_SUCCESS);

  /* Rounds of MPI_Startall + MPI_Waitall with new data each time. */
  for (int round = 0; round < 3; ++round) {
    fill(b, 2, rank == 2 ? 20 + round : -1);
    ar[0] = rank + round, ar[1] = 1;
    for (int d = 0; d < 4; ++d) a2a_s[d] = 100 * round + 10 * rank + d, rsb_s[d] = 100 * round + ((rank + d) % 4);
    fill(a2a_r, 4, -1);
    rsb = -1;
    rc = MPI_Startall(5, req);
    SAY("round %d startall: rc %d", round, rc);
    rc = MPI_Waitall(5, req, MPI_STATUSES_IGNORE);
    char what[64];
    snprintf(what, sizeof what, "round %d waitall bcast", round);
    fill(exp, 2, 20 + round);
    verify(what, rc, b, exp, 2);
    snprintf(what, sizeof what, "round %d waitall allreduce in place", round);
    exp[0] = 6 + 4 * round, exp[1] = 4;
    verify(what, rc, ar, exp, 2);
    snprintf(what, sizeof what, "round %d waitall alltoall", round);
    for (int s = 0; s < 4; ++s) exp[s] = 100 * round + 10 * s + rank;
    verify(what, rc, a2a_r, exp, 4);
    snprintf(what, sizeof what, "round %d waitall reduce_scatter_block max", round);
    exp[0] = 100 * round + 3;
    verify(what, rc, &rsb, exp, 1);
    SAY("round %d requests kept %d", round,
        req[0] != MPI_REQUEST_NULL && req[1] != MPI_REQUEST_NULL && req[2] != MPI_REQUEST_NULL &&
            req[3] != MPI_REQUEST_NULL && req[4] != MPI_REQUEST_NULL);
    if (rc != MPI_SUCCESS) { /* the requests' state is unknown: end here rather than hang */
      SAY("stopped after round %d", round);
      return cov_finish();
    }
  }

  /* Inactive requests (completed, not started again): MPI_Wait and MPI_Test return at once with
     an empty status. (Before their first start MPICH 4.0.2 gets this wrong natively: MPI_Wait
     hangs, MPI_Test gives flag 0.) */
  {
    MPI_Status st;
    int flag = 0, count = -1;
    rc = MPI_Wait(&req[0], &st);
    MPI_Get_count(&st, MPI_INT, &count);
    SAY("wait on inactive request: rc %d still a request %d source is MPI_ANY_SOURCE %d count %d", rc,
        req[0] != MPI_REQUEST_NULL, st.MPI_SOURCE == MPI_ANY_SOURCE, count);
    rc = MPI_Test(&req[1], &flag, MPI_STATUS_IGNORE);
    SAY("test on inactive request: rc %d flag %d still a request %d", rc, flag, req[1] != MPI_REQUEST_NULL);
  }

  /* One more round of the bcast, completed by MPI_Test polling. */
  {
    int flag = 0;
    fill(b, 2, rank == 2 ? 99 : -1);
    rc = MPI_Start(&req[0]);
    while (rc == MPI_SUCCESS && !flag) rc = MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE);
    fill(exp, 2, 99);
    verify("bcast completed by MPI_Test", rc, b, exp, 2);
  }

  for (int i = 0; i < 5; ++i) {
    rc = MPI_Request_free(&req[i]);
    CHECK(rc == MPI_SUCCESS && req[i] == MPI_REQUEST_NULL);
  }
  /* Initialized, never started, freed. */
  MPI_Request unused;
  rc = PERSISTENT(Allreduce)(a2a_s, a2a_r, 4, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &unused);
  CHECK(rc == MPI_SUCCESS);
  rc = MPI_Request_free(&unused);
  SAY("never started request freed: rc %d null %d", rc, unused == MPI_REQUEST_NULL);
  MPI_Comm_free(&comm);
#endif
  return cov_finish();
}
