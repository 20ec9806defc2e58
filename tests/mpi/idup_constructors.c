/* Pending nonblocking duplications overlapped with every blocking communicator constructor
   (the shape of MPICH's threads/comm/idup_comm_gen): each of THREADS threads starts IDUPS
   duplications of its own communicator and, while they are pending, makes a duplicate, a split,
   a create, a create_group and an intercommunicator (create, then merge) from the same
   communicator, checking each; then it completes the duplications and checks them.
   Usage: idup_constructors [info] [threads] — "info" uses the _with_info forms. Needs an even
   number of ranks >= 2. */
#include "idup_overlap_util.h"

#define IDUPS 5

static int world_size;

static void* overlap(void* arg) {
  ThreadComm* self = arg;
  MPI_Comm comm = self->comm;
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Group group;
  MPI_Comm_group(comm, &group);

  MPI_Comm dups[IDUPS];
  MPI_Request requests[IDUPS];
  for (int i = 0; i < IDUPS; ++i) start_idup(comm, &dups[i], &requests[i]);

  MPI_Comm made;
  blocking_dup(comm, &made);
  check_comm(made, 0, size, 0, "dup");
  MPI_Comm_free(&made);

  /* Split by parity, reversed order: color's half. */
  MPI_Comm_split(comm, rank % 2, size - rank, &made);
  check_comm(made, 0, (size + 1 - rank % 2) / 2, 0, "split");
  int split_rank = -1;
  MPI_Comm_rank(made, &split_rank);
  /* Ordered by the key: the members of my color with a higher rank come first. */
  CHECK(split_rank == (size - 1 - rank) / 2, "split: rank %d, expected %d", split_rank, (size - 1 - rank) / 2);
  MPI_Comm_free(&made);

  /* Create: the upper half. */
  int range[1][3] = {{size / 2, size - 1, 1}};
  MPI_Group upper;
  MPI_Group_range_incl(group, 1, range, &upper);
  MPI_Comm_create(comm, upper, &made);
  MPI_Group_free(&upper);
  check_comm(made, rank < size / 2, size - size / 2, 0, "create");
  if (made != MPI_COMM_NULL) MPI_Comm_free(&made);

  /* Create_group: the even ranks, called by them only. */
  int odd[64], n_odd = 0;
  for (int r = 1; r < size; r += 2) odd[n_odd++] = r;
  MPI_Group even;
  MPI_Group_excl(group, n_odd, odd, &even);
  made = MPI_COMM_NULL;
  if (rank % 2 == 0) MPI_Comm_create_group(comm, even, 7, &made);
  MPI_Group_free(&even);
  check_comm(made, rank % 2 != 0, size - n_odd, 0, "create_group");
  if (made != MPI_COMM_NULL) MPI_Comm_free(&made);

  /* Intercommunicator between the lower and upper halves, then merged (lower half first). */
  const int lower = rank < size / 2;
  MPI_Comm local, inter;
  MPI_Comm_split(comm, lower, rank, &local);
  int remote_leader = lower ? size / 2 : 0;
  MPI_Intercomm_create(local, 0, comm, remote_leader, 99, &inter);
  MPI_Comm_free(&local);
  check_comm(inter, 0, lower ? size / 2 : size - size / 2, lower ? size - size / 2 : size / 2, "intercomm_create");
  MPI_Intercomm_merge(inter, !lower, &made);
  check_comm(made, 0, size, 0, "intercomm_merge");
  int merged_rank = -1;
  MPI_Comm_rank(made, &merged_rank);
  CHECK(merged_rank == rank, "intercomm_merge: rank %d, expected %d", merged_rank, rank);
  MPI_Comm_free(&made);
  MPI_Comm_free(&inter);

  MPI_Waitall(IDUPS, requests, MPI_STATUSES_IGNORE);
  for (int i = 0; i < IDUPS; ++i) {
    CHECK(requests[i] == MPI_REQUEST_NULL, "idup %d: request not freed", i);
    check_comm(dups[i], 0, size, 0, "idup");
    int cmp = -1;
    MPI_Comm_compare(dups[i], comm, &cmp);
    CHECK(cmp == MPI_CONGRUENT, "idup %d: not congruent with its parent (%d)", i, cmp);
    MPI_Comm_free(&dups[i]);
  }
  MPI_Group_free(&group);
  return NULL;
}

int main(int argc, char** argv) {
  test_init(&argc, &argv, "idup_constructors");
  overlap_forms_from_args(argc, argv);
  int threads = argc > 2 ? atoi(argv[2]) : 4;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (world_size < 2 || world_size % 2 || world_size > 64) {
    printf("idup_constructors: needs an even number of ranks from 2 to 64\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  run_threads_with_own_comms(threads, overlap);
  overlap_forms_done();
  return test_finish();
}
