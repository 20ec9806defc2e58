/* asp_freed: calls on freed communicators and groups of MPI processes return their error class
   (MPI_ERR_COMM, MPI_ERR_GROUP) through MPI_ERRORS_RETURN instead of reaching the MPI with a
   handle it never made (on Open MPI, an address in a region that faults).

   usage: tsmpirun -asp K -np N asp_freed
   Each MPI process (one thread attached to each index) duplicates MPI_COMM_WORLD, takes a group
   of it, frees both, and calls on the stale handles: MPI_Comm_size, MPI_Comm_rank, MPI_Send,
   MPI_Barrier, MPI_Comm_dup, MPI_Comm_get_info (a call tsmpi refuses on these communicators)
   on the communicator; MPI_Group_size, MPI_Group_rank, MPI_Group_union, MPI_Comm_create on the
   group. Then MPI_COMM_WORLD still works (an Allreduce). Prints "asp_freed: rank R: ok". */
#include <omp.h>

#include "asp_util.h"

static void expect_class(int rc, int want, const char* what) {
  int cls = -1;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  CHECK(rc != MPI_SUCCESS && cls == want, "%s on a freed handle: rc %d class %d, expected class %d", what, rc, cls,
        want);
}

static void run(void) {
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
  MPI_Comm dup, stale_comm;
  MPI_Group group, stale_group;
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  MPI_OK(MPI_Comm_group(dup, &group));
  stale_comm = dup;
  stale_group = group;
  MPI_OK(MPI_Comm_free(&dup));
  MPI_OK(MPI_Group_free(&group));
  CHECK(dup == MPI_COMM_NULL && group == MPI_GROUP_NULL, "free did not set the handles to null");

  int n = -1, one = 1;
  MPI_Comm other;
  MPI_Group g2;
  MPI_Info info;
  expect_class(MPI_Comm_size(stale_comm, &n), MPI_ERR_COMM, "MPI_Comm_size");
  expect_class(MPI_Comm_rank(stale_comm, &n), MPI_ERR_COMM, "MPI_Comm_rank");
  expect_class(MPI_Send(&one, 1, MPI_INT, 0, 0, stale_comm), MPI_ERR_COMM, "MPI_Send");
  expect_class(MPI_Barrier(stale_comm), MPI_ERR_COMM, "MPI_Barrier");
  expect_class(MPI_Comm_dup(stale_comm, &other), MPI_ERR_COMM, "MPI_Comm_dup");
  expect_class(MPI_Comm_get_info(stale_comm, &info), MPI_ERR_COMM, "MPI_Comm_get_info");
  expect_class(MPI_Group_size(stale_group, &n), MPI_ERR_GROUP, "MPI_Group_size");
  expect_class(MPI_Group_rank(stale_group, &n), MPI_ERR_GROUP, "MPI_Group_rank");
  expect_class(MPI_Group_union(stale_group, stale_group, &g2), MPI_ERR_GROUP, "MPI_Group_union");
  expect_class(MPI_Comm_create(MPI_COMM_WORLD, stale_group, &other), MPI_ERR_GROUP, "MPI_Comm_create");

  int sum = 0;
  MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK(sum == asp_N, "MPI_Allreduce after the refusals gave %d, expected %d", sum, asp_N);
}

int main(int argc, char** argv) {
  asp_init(&argc, &argv, "asp_freed", MPIX_THREAD_ATTACH);
  int status = 0;
#pragma omp parallel num_threads(asp_K) reduction(| : status)
  {
    if (asp_attach(omp_get_thread_num()) == MPI_SUCCESS) {
      run();
      status |= asp_verdict();
      MPI_Finalize();
    } else {
      status = 1;
    }
  }
  return status;
}
