/* Coverage: passive-target RMA on a window from MPI_Win_allocate: MPI_Win_lock / MPI_Win_unlock
   (exclusive and shared), MPI_Win_lock_all / MPI_Win_unlock_all, MPI_Win_flush, MPI_Win_flush_all,
   MPI_Win_flush_local, MPI_Win_flush_local_all, MPI_Win_sync, and the request-based operations
   MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate completed with MPI_Wait / MPI_Waitall /
   MPI_Test. Window contents and fetched values are checked. */
// ranks: 3
#include "coverage.h"

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "rma_passive"), size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;

  int* mem = NULL;
  MPI_Win win;
  MPI_Win_allocate(16 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
  for (int i = 0; i < 16; ++i) mem[i] = 0;
  MPI_Win_unlock(rank, win);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Exclusive lock on the right neighbour: put, flush, get back, flush_local, unlock. */
  int v[2] = {rank + 1, rank + 2}, back[2] = {-1, -1};
  SAY("lock rc %d", MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
  MPI_Put(v, 2, MPI_INT, right, 0, 2, MPI_INT, win);
  SAY("flush rc %d", MPI_Win_flush(right, win));
  MPI_Get(back, 2, MPI_INT, right, 0, 2, MPI_INT, win);
  SAY("flush_local rc %d", MPI_Win_flush_local(right, win));
  SAY("read back %d %d", back[0], back[1]);
  CHECK(back[0] == rank + 1 && back[1] == rank + 2);
  SAY("unlock rc %d", MPI_Win_unlock(right, win));
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
  SAY("exclusive epoch left %d %d", mem[0], mem[1]);
  CHECK(mem[0] == left + 1 && mem[1] == left + 2);
  MPI_Win_unlock(rank, win);

  /* Shared lock on everyone: accumulate to all, flush_all, fetch_and_op, flush_local_all. */
  SAY("lock_all rc %d", MPI_Win_lock_all(0, win));
  for (int t = 0; t < size; ++t) MPI_Accumulate(&v[0], 1, MPI_INT, t, 2, 1, MPI_INT, MPI_SUM, win);
  SAY("flush_all rc %d", MPI_Win_flush_all(win));
  int one = 1, fetched = -1;
  MPI_Fetch_and_op(&one, &fetched, MPI_INT, 0, 3, MPI_SUM, win);
  SAY("flush_local_all rc %d", MPI_Win_flush_local_all(win));
  CHECK(fetched >= 0 && fetched < size);
  SAY("unlock_all rc %d", MPI_Win_unlock_all(win));
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
  SAY("lock_all epoch left %d %d", mem[2], mem[3]);
  CHECK(mem[2] == size * (size + 1) / 2 && mem[3] == (rank == 0 ? size : 0));
  MPI_Win_unlock(rank, win);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Request-based operations inside one lock_all epoch. */
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  MPI_Request req[4];
  int put[2] = {100 + rank, 200 + rank}, add = rank + 1, got[2] = {-1, -1}, old = -1, inc = 10;
  SAY("rput rc %d", MPI_Rput(put, 2, MPI_INT, right, 4, 2, MPI_INT, win, &req[0]));
  SAY("raccumulate rc %d", MPI_Raccumulate(&add, 1, MPI_INT, 0, 6, 1, MPI_INT, MPI_SUM, win, &req[1]));
  MPI_Status st[2];
  SAY("waitall rc %d", MPI_Waitall(2, req, st));
  MPI_Win_flush_all(win);
  MPI_Barrier(MPI_COMM_WORLD); /* every put and accumulate is complete at its target */
  SAY("rget rc %d", MPI_Rget(got, 2, MPI_INT, right, 4, 2, MPI_INT, win, &req[2]));
  MPI_Wait(&req[2], MPI_STATUS_IGNORE);
  SAY("rget got %d %d", got[0], got[1]);
  CHECK(got[0] == 100 + rank && got[1] == 200 + rank);
  SAY("rget_accumulate rc %d",
      MPI_Rget_accumulate(&inc, 1, MPI_INT, &old, 1, MPI_INT, 0, 6, 1, MPI_INT, MPI_SUM, win, &req[3]));
  int flag = 0;
  while (!flag) MPI_Test(&req[3], &flag, MPI_STATUS_IGNORE);
  CHECK(req[3] == MPI_REQUEST_NULL);
  /* rank 0's mem[6] is sum(rank+1) after the raccumulates, then +10 per rget_accumulate */
  int base = size * (size + 1) / 2;
  CHECK(old >= base && old < base + 10 * size && (old - base) % 10 == 0);
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
  SAY("request epoch left %d %d %d", mem[4], mem[5], rank == 0 ? mem[6] : -1);
  CHECK(mem[4] == 100 + left && mem[5] == 200 + left);
  if (rank == 0) CHECK(mem[6] == base + 10 * size);
  MPI_Win_unlock(rank, win);

  /* MPI_Win_sync: local stores made visible to others' gets inside one lock_all epoch. */
  MPI_Win_lock_all(0, win);
  mem[8] = 1000 + rank;
  SAY("win_sync rc %d", MPI_Win_sync(win));
  MPI_Barrier(MPI_COMM_WORLD);
  int seen = -1;
  MPI_Get(&seen, 1, MPI_INT, left, 8, 1, MPI_INT, win);
  MPI_Win_flush(left, win);
  MPI_Win_sync(win);
  MPI_Win_unlock_all(win);
  SAY("sync saw %d", seen);
  CHECK(seen == 1000 + left);

  /* Compare_and_swap under an exclusive lock, one rank after the other. */
  for (int turn = 0; turn < size; ++turn) {
    if (rank == turn) {
      int cmp = 0, mine = rank + 1, res = -1; /* rank 0's mem[9] starts at 0: only rank 0 swaps */
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
      MPI_Compare_and_swap(&mine, &cmp, &res, MPI_INT, 0, 9, win);
      MPI_Win_unlock(0, win);
      SAY("compare_and_swap under lock result %d", res);
      CHECK(res == (rank == 0 ? 0 : 1));
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  SAY("win_free rc %d", MPI_Win_free(&win));
  return cov_finish();
}
