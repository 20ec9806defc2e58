/* Coverage: shared-memory windows. MPI_Win_allocate_shared on the node communicator
   (MPI_Comm_split_type), MPI_Win_shared_query for every rank and MPI_PROC_NULL, direct load/store
   into a neighbour's segment ordered by MPI_Win_sync and barriers inside a lock_all epoch, and a
   second window with alloc_shared_noncontig. Segment sizes, displacement units and the values
   stored are checked. */
// ranks: 3
#include "coverage.h"

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "rma_shared"), size;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &size);
  SAY("node size %d", size);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;

  int* mine = NULL;
  MPI_Win win;
  SAY("allocate_shared rc %d", MPI_Win_allocate_shared((rank + 1) * 4 * sizeof(int), sizeof(int), MPI_INFO_NULL,
                                                        node, &mine, &win));
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  for (int i = 0; i < (rank + 1) * 4; ++i) mine[i] = 100 * rank + i;
  MPI_Win_sync(win);
  MPI_Barrier(node);
  MPI_Win_sync(win);

  for (int r = 0; r < size; ++r) {
    MPI_Aint qsize = -1;
    int qdisp = -1;
    int* p = NULL;
    int rc = MPI_Win_shared_query(win, r, &qsize, &qdisp, &p);
    int ok = p != NULL;
    for (int i = 0; ok && i < (r + 1) * 4; ++i) ok = p[i] == 100 * r + i;
    SAY("shared_query rank %d rc %d size %ld disp_unit %d contents ok %d", r, rc, (long)qsize, qdisp, ok);
    CHECK(ok && qsize == (r + 1) * 4 * (MPI_Aint)sizeof(int));
    if (r == rank) CHECK(p == mine);
  }
  MPI_Aint qsize = -1;
  int qdisp = -1;
  int* first = NULL;
  MPI_Win_shared_query(win, MPI_PROC_NULL, &qsize, &qdisp, &first);
  SAY("shared_query MPI_PROC_NULL size %ld disp_unit %d", (long)qsize, qdisp);

  /* Store into the right neighbour's segment, then read what the left one stored into ours. */
  MPI_Aint rsize;
  int rdisp;
  int* rp = NULL;
  MPI_Win_shared_query(win, right, &rsize, &rdisp, &rp);
  MPI_Barrier(node);
  rp[0] = 7000 + rank;
  MPI_Win_sync(win);
  MPI_Barrier(node);
  MPI_Win_sync(win);
  SAY("store from the left neighbour %d", mine[0]);
  CHECK(mine[0] == 7000 + left);
  MPI_Win_unlock_all(win);
  SAY("win_free rc %d", MPI_Win_free(&win));

  /* A non-contiguous shared window and RMA operations on it. */
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  long* lm = NULL;
  MPI_Win_allocate_shared(2 * sizeof(long), sizeof(long), info, node, &lm, &win);
  MPI_Info_free(&info);
  lm[0] = lm[1] = 0;
  MPI_Win_fence(0, win);
  long val = 10 + rank;
  MPI_Put(&val, 1, MPI_LONG, right, 1, 1, MPI_LONG, win);
  MPI_Win_fence(0, win);
  long* lp = NULL;
  MPI_Win_shared_query(win, left, &qsize, &qdisp, &lp);
  /* Open MPI rounds a non-contiguous segment up to a page */
  SAY("noncontig window: own %ld, left's segment size >= 16 %d disp_unit %d value %ld", lm[1], qsize >= 16, qdisp,
      lp[1]);
  CHECK(lm[1] == 10 + left && lp[1] == 10 + (left + size - 1) % size);
  MPI_Win_free(&win);
  MPI_Comm_free(&node);
  return cov_finish();
}
