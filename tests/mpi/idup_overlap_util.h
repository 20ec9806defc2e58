/* Shared by the programs that overlap pending MPI_Comm_idup with other communicator work
   (idup_constructors.c, idup_nonblocking.c, idup_start_flags.c): how a new communicator is
   checked, and which form of duplication a run uses. */
#ifndef TSMPI_IDUP_OVERLAP_UTIL_H
#define TSMPI_IDUP_OVERLAP_UTIL_H
#include "test_util.h"

/* "info" as the program's first argument: MPI_Comm_idup_with_info and MPI_Comm_dup_with_info
   (with an info object holding a hint the MPI may ignore) instead of the plain forms. */
static int use_info_forms;
static MPI_Info dup_hints = MPI_INFO_NULL;

static inline void overlap_forms_from_args(int argc, char** argv) {
  use_info_forms = argc > 1 && !strcmp(argv[1], "info");
  if (use_info_forms) {
    MPI_Info_create(&dup_hints);
    MPI_Info_set(dup_hints, "mpi_assert_no_any_tag", "false");
  }
}
static inline void overlap_forms_done(void) {
  if (dup_hints != MPI_INFO_NULL) MPI_Info_free(&dup_hints);
}

/* MPI_Comm_idup_with_info is MPI 4.0: MPICH 4 and Open MPI 5 have it, Open MPI 4.1 does not
   (there the info runs use MPI_Comm_idup beside MPI_Comm_dup_with_info). */
#if defined(MPICH) || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define HAVE_IDUP_WITH_INFO 1
#endif
static inline void start_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
#ifdef HAVE_IDUP_WITH_INFO
  if (use_info_forms) {
    MPI_Comm_idup_with_info(comm, dup_hints, newcomm, request);
    return;
  }
#endif
  MPI_Comm_idup(comm, newcomm, request);
}
static inline void blocking_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  if (use_info_forms)
    MPI_Comm_dup_with_info(comm, dup_hints, newcomm);
  else
    MPI_Comm_dup(comm, newcomm);
}

/* Checks a communicator made from `parent`'s processes (or MPI_COMM_NULL where this process is
   not in it): its sizes against the expected ones, and that it carries data. An
   intracommunicator sums its ranks with MPI_Allreduce; an intercommunicator sums the remote
   group's ranks. `what` names it in a failure. */
static inline void check_comm(MPI_Comm comm, int expect_null, int expect_size, int expect_remote, const char* what) {
  if (expect_null) {
    CHECK(comm == MPI_COMM_NULL, "%s: expected MPI_COMM_NULL", what);
    return;
  }
  CHECK(comm != MPI_COMM_NULL, "%s: got MPI_COMM_NULL", what);
  if (comm == MPI_COMM_NULL) return;
  int inter = 0, size = -1, rank = -1, remote = 0, sum = -1;
  MPI_Comm_test_inter(comm, &inter);
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  CHECK(size == expect_size, "%s: size %d, expected %d", what, size, expect_size);
  if (inter) {
    MPI_Comm_remote_size(comm, &remote);
    CHECK(remote == expect_remote, "%s: remote size %d, expected %d", what, remote, expect_remote);
  } else {
    CHECK(expect_remote == 0, "%s: an intracommunicator where an intercommunicator was expected", what);
  }
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm);
  int n = inter ? remote : size;
  CHECK(sum == n * (n - 1) / 2, "%s: sum of ranks %d, expected %d", what, sum, n * (n - 1) / 2);
}
#endif
