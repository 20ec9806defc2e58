/* MPI-4 sessions model: tsmpi must read its options at MPI_Session_init and print its
   statistics at the last MPI_Session_finalize when MPI_Init was never called.
   Exits 77 (skipped) on an MPI without sessions. */
#include <mpi.h>
#include <stdio.h>

int main(void) {
#if MPI_VERSION >= 4 || defined(MPI_SESSION_NULL) /* Open MPI 5.0 has sessions and says 3.1 */
  MPI_Session session;
  if (MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session) != MPI_SUCCESS) return 1;
  MPI_Group group;
  MPI_Group_from_session_pset(session, "mpi://WORLD", &group);
  MPI_Comm comm;
  MPI_Comm_create_from_group(group, "org.tsmpi.sessions-test", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
  int rank, size, sum = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm);
  int ok = sum == size * (size - 1) / 2;
  printf("sessions: rank %d of %d: %s\n", rank, size, ok ? "ok" : "WRONG");
  fflush(stdout);
  MPI_Comm_free(&comm);
  MPI_Group_free(&group);
  MPI_Session_finalize(&session);
  return ok ? 0 : 1;
#else
  printf("sessions: this MPI has no sessions (MPI_VERSION %d)\n", MPI_VERSION);
  return 77;
#endif
}
