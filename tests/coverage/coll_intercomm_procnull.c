/* Coverage: blocking rooted collectives on an intercommunicator (A = world {0,1}, B = world
   {2,3}) in which the members of the root's group other than the root pass MPI_PROC_NULL with
   their insignificant arguments as NULL buffers and arrays, count 0 (and a valid datatype and
   operation: Open MPI 4.1 refuses MPI_DATATYPE_NULL there), each followed by further
   collectives on the same intercommunicator. Open MPI's nonblocking forms of these calls lose
   step after such a call (the next nonblocking collective hangs), so only the blocking forms are
   made here, as a program would; coll_rooted.c covers the other forms with the root's arguments
   at MPI_PROC_NULL. */
// ranks: 4
#include "coverage.h"

static void verify(const char* what, int rc, const int* got, const int* expected, int n) {
  char text[256];
  int len = 0;
  text[0] = 0;
  for (int i = 0; i < n; ++i) len += snprintf(text + len, sizeof text - len, i ? " %d" : "%d", got[i]);
  SAY("%s: rc %d: %s", what, rc, text);
  if (rc != MPI_SUCCESS || memcmp(got, expected, n * sizeof(int)) != 0) {
    SAY("check failed: %s", what);
    ++cov_failures;
  }
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "coll_intercomm_procnull"), size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) {
    SAY("needs 4 ranks, has %d", size);
    ++cov_failures;
    return cov_finish();
  }
  int color = rank / 2, lr, rc;
  const int A = color == 0, B = color == 1;
  MPI_Comm local, inter;
  MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
  MPI_Comm_rank(local, &lr);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? 0 : 2, 80, &inter);
  int buf[4], exp[4], sbuf[4] = {10 * lr, 10 * lr + 1, 10 * lr + 2, 10 * lr + 3};
  for (int round = 0; round < 2; ++round) {
    char what[64];
    /* Bcast from A0 to B. */
    buf[0] = buf[1] = A && lr == 0 ? 100 + round : -1;
    if (A && lr == 0) rc = MPI_Bcast(buf, 2, MPI_INT, MPI_ROOT, inter);
    else if (A) rc = MPI_Bcast(NULL, 0, MPI_INT, MPI_PROC_NULL, inter);
    else rc = MPI_Bcast(buf, 2, MPI_INT, 0, inter);
    exp[0] = exp[1] = 100 + round;
    snprintf(what, sizeof what, "round %d bcast A0 -> B", round);
    verify(what, rc, buf, exp, A && lr == 1 ? 0 : 2);
    /* Gather from A to B1. */
    buf[0] = buf[1] = buf[2] = buf[3] = -1;
    if (A) rc = MPI_Gather(sbuf, 2, MPI_INT, NULL, 0, MPI_INT, 1, inter);
    else if (lr == 1) rc = MPI_Gather(NULL, 0, MPI_INT, buf, 2, MPI_INT, MPI_ROOT, inter);
    else rc = MPI_Gather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_PROC_NULL, inter);
    exp[0] = 0, exp[1] = 1, exp[2] = 10, exp[3] = 11;
    snprintf(what, sizeof what, "round %d gather A -> B1", round);
    verify(what, rc, buf, exp, B && lr == 1 ? 4 : 0);
    /* Scatter from B0 to A. */
    buf[0] = buf[1] = -1;
    if (A) rc = MPI_Scatter(NULL, 0, MPI_INT, buf, 2, MPI_INT, 0, inter);
    else if (lr == 0) rc = MPI_Scatter(sbuf, 2, MPI_INT, NULL, 0, MPI_INT, MPI_ROOT, inter);
    else rc = MPI_Scatter(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_PROC_NULL, inter);
    exp[0] = 2 * lr, exp[1] = 2 * lr + 1;
    snprintf(what, sizeof what, "round %d scatter B0 -> A", round);
    verify(what, rc, buf, exp, A ? 2 : 0);
    /* Reduce from B to A1. */
    buf[0] = -1;
    if (B) rc = MPI_Reduce(sbuf, NULL, 1, MPI_INT, MPI_SUM, 1, inter);
    else if (lr == 1) rc = MPI_Reduce(sbuf, buf, 1, MPI_INT, MPI_SUM, MPI_ROOT, inter);
    else rc = MPI_Reduce(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_PROC_NULL, inter);
    exp[0] = 10;
    snprintf(what, sizeof what, "round %d reduce B -> A1", round);
    verify(what, rc, buf, exp, A && lr == 1 ? 1 : 0);
    /* Allgather between the groups. */
    buf[0] = buf[1] = -1;
    rc = MPI_Allgather(&sbuf[0], 1, MPI_INT, buf, 1, MPI_INT, inter);
    exp[0] = 0, exp[1] = 10;
    snprintf(what, sizeof what, "round %d allgather", round);
    verify(what, rc, buf, exp, 2);
  }
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
  return cov_finish();
}
