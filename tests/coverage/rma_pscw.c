/* Coverage: generalized active-target synchronization (MPI_Win_post, MPI_Win_start,
   MPI_Win_complete, MPI_Win_wait, MPI_Win_test) on a window from MPI_Win_allocate: rank 0
   exposes its window to the others, who put, accumulate and get; then a ring where every rank is
   origin and target at once. Window contents and fetched values are checked. */
// ranks: 3
#include "coverage.h"

static MPI_Group group_of(MPI_Group world, int n, const int* ranks) {
  MPI_Group g;
  MPI_Group_incl(world, n, ranks, &g);
  return g;
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "rma_pscw"), size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;

  int* mem = NULL;
  MPI_Win win;
  MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
  for (int i = 0; i < 8; ++i) mem[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_Group world, origins, target;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int others[8], zero = 0;
  for (int r = 1; r < size; ++r) others[r - 1] = r;
  origins = group_of(world, size - 1, others);
  target = group_of(world, 1, &zero);

  /* Round 1: rank 0 exposes (post, wait); the others put at their rank and add to mem[0]. */
  if (rank == 0) {
    SAY("post rc %d", MPI_Win_post(origins, 0, win));
    SAY("wait rc %d", MPI_Win_wait(win));
    SAY("round 1 window %d %d %d", mem[0], mem[1], mem[2]);
    int sum = 0;
    for (int r = 1; r < size; ++r) {
      CHECK(mem[r] == 10 * r);
      sum += r;
    }
    CHECK(mem[0] == sum);
  } else {
    int v = 10 * rank;
    SAY("start rc %d", MPI_Win_start(target, 0, win));
    MPI_Put(&v, 1, MPI_INT, 0, rank, 1, MPI_INT, win);
    MPI_Accumulate(&rank, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win);
    SAY("complete rc %d", MPI_Win_complete(win));
  }

  /* Round 2: rank 0 exposes again and polls with MPI_Win_test; the others read back. */
  if (rank == 0) {
    MPI_Win_post(origins, MPI_MODE_NOPUT, win);
    int flag = 0, rc = MPI_SUCCESS;
    while (!flag && rc == MPI_SUCCESS) rc = MPI_Win_test(win, &flag);
    SAY("win_test rc %d flag %d", rc, flag);
  } else {
    int got[3] = {-1, -1, -1};
    MPI_Win_start(target, 0, win);
    MPI_Get(got, 3, MPI_INT, 0, 0, 3, MPI_INT, win);
    MPI_Win_complete(win);
    SAY("round 2 got %d %d %d", got[0], got[1], got[2]);
    CHECK(got[rank] == 10 * rank);
  }

  /* Round 3: a ring; each rank exposes to its left neighbour and accesses its right one. */
  MPI_Group from_left = group_of(world, 1, &left), to_right = group_of(world, 1, &right);
  MPI_Win_post(from_left, 0, win);
  MPI_Win_start(to_right, 0, win);
  int v[2] = {rank + 100, rank + 200}, old = -1;
  MPI_Put(v, 2, MPI_INT, right, 4, 2, MPI_INT, win);
  MPI_Fetch_and_op(&v[0], &old, MPI_INT, right, 6, MPI_REPLACE, win);
  MPI_Win_complete(win);
  MPI_Win_wait(win);
  SAY("ring got %d %d %d, old %d", mem[4], mem[5], mem[6], old);
  CHECK(mem[4] == left + 100 && mem[5] == left + 200 && mem[6] == left + 100 && old == 0);

  MPI_Group_free(&from_left);
  MPI_Group_free(&to_right);
  MPI_Group_free(&origins);
  MPI_Group_free(&target);
  MPI_Group_free(&world);
  SAY("win_free rc %d", MPI_Win_free(&win));
  return cov_finish();
}
