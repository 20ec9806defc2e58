/* Coverage: active-target RMA with MPI_Win_fence: every operation (MPI_Put, MPI_Get,
   MPI_Accumulate, MPI_Get_accumulate, MPI_Fetch_and_op, MPI_Compare_and_swap) on a window from
   MPI_Win_create, with fence assertions; the window contents and the fetched values are checked.
   The data are ints: Open MPI 4.1.4 crashes natively in MPI_Compare_and_swap on 8-byte integers
   (osc/rdma over btl/vader, in mca_btl_vader_emu_acswap). */
// ranks: 3
#include "coverage.h"

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "rma_fence"), size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;

  int mem[16];
  for (int i = 0; i < 16; ++i) mem[i] = 10 * rank + i;
  MPI_Win win;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

  /* Put and Get (a strided datatype on the target side). */
  int out[4] = {rank * 1000 + 1, rank * 1000 + 2, rank * 1000 + 3, rank * 1000 + 4}, in[4] = {0};
  MPI_Datatype stride2;
  MPI_Type_vector(4, 1, 2, MPI_INT, &stride2);
  MPI_Type_commit(&stride2);
  SAY("fence rc %d", MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
  SAY("put rc %d", MPI_Put(out, 4, MPI_INT, right, 8, 1, stride2, win)); /* mem[8,10,12,14] */
  SAY("get rc %d", MPI_Get(in, 4, MPI_INT, right, 0, 4, MPI_INT, win));  /* mem[0..3] untouched */
  MPI_Win_fence(0, win);
  SAY("put landed %d %d %d %d, kept %d %d", mem[8], mem[10], mem[12], mem[14], mem[9], mem[15]);
  SAY("get %d %d %d %d", in[0], in[1], in[2], in[3]);
  for (int i = 0; i < 4; ++i) CHECK(mem[8 + 2 * i] == left * 1000 + 1 + i && in[i] == 10 * right + i);

  /* Accumulate from every rank to every rank (MPI_SUM on mem[0..1], MPI_MAX on mem[2]). */
  int add[2] = {rank + 1, 100 * (rank + 1)}, mx = 50 + rank;
  for (int t = 0; t < size; ++t) {
    MPI_Accumulate(add, 2, MPI_INT, t, 0, 2, MPI_INT, MPI_SUM, win);
    MPI_Accumulate(&mx, 1, MPI_INT, t, 2, 1, MPI_INT, MPI_MAX, win);
  }
  MPI_Win_fence(0, win);
  int total = size * (size + 1) / 2;
  SAY("accumulate %d %d %d", mem[0], mem[1], mem[2]);
  CHECK(mem[0] == 10 * rank + total && mem[1] == 10 * rank + 1 + 100 * total && mem[2] == 50 + size - 1);

  /* Get_accumulate: each rank in turn (one fence epoch per rank) adds to mem[4] of rank 0 and
     fetches the old value; MPI_NO_OP fetches atomically without changing. */
  int old = -1, noop = -1;
  for (int turn = 0; turn < size; ++turn) {
    if (rank == turn) {
      int v = rank + 1;
      SAY("get_accumulate rc %d",
          MPI_Get_accumulate(&v, 1, MPI_INT, &old, 1, MPI_INT, 0, 4, 1, MPI_INT, MPI_SUM, win));
    }
    MPI_Win_fence(0, win);
  }
  MPI_Get_accumulate(NULL, 0, MPI_INT, &noop, 1, MPI_INT, 0, 4, 1, MPI_INT, MPI_NO_OP, win);
  MPI_Win_fence(0, win);
  int expect_old = 4 + rank * (rank + 1) / 2; /* rank 0's mem[4] = 4, then +1, +2, ... */
  SAY("get_accumulate old %d, no_op read %d", old, noop);
  CHECK(old == expect_old && noop == 4 + total);
  if (rank == 0) CHECK(mem[4] == 4 + total);

  /* Fetch_and_op: all ranks increment rank 0's mem[5]; the fetched values are distinct. */
  int inc = 1, fetched = -1, all[8];
  SAY("fetch_and_op rc %d", MPI_Fetch_and_op(&inc, &fetched, MPI_INT, 0, 5, MPI_SUM, win));
  MPI_Win_fence(0, win);
  MPI_Allgather(&fetched, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
  int seen = 0;
  for (int r = 0; r < size; ++r) seen |= 1 << (all[r] - 5);
  SAY("fetch_and_op fetched values distinct %d", seen == (1 << size) - 1);
  if (rank == 0) SAY("fetch_and_op final %d", mem[5]);
  if (rank == 0) CHECK(mem[5] == 5 + size);
  MPI_Fetch_and_op(NULL, &fetched, MPI_INT, 0, 5, MPI_NO_OP, win);
  MPI_Win_fence(0, win);
  SAY("fetch_and_op no_op %d", fetched);

  /* Compare_and_swap: every rank tries to swap rank 0's mem[6] from 6 to 100+rank; one wins. */
  int desired = 100 + rank, compare = 6, result = -1;
  SAY("compare_and_swap rc %d", MPI_Compare_and_swap(&desired, &compare, &result, MPI_INT, 0, 6, win));
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  int winner;
  if (rank == 0) winner = mem[6];
  MPI_Bcast(&winner, 1, MPI_INT, 0, MPI_COMM_WORLD);
  int won = result == 6, wins;
  MPI_Allreduce(&won, &wins, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  SAY("compare_and_swap winners %d, winner's value consistent %d", wins,
      wins == 1 && (!won || winner == 100 + rank) && (won || result == winner || result == 6));
  CHECK(wins == 1);

  /* Fence with MPI_MODE_NOSTORE / NOPUT assertions around a read-only epoch. */
  MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSTORE | MPI_MODE_NOPUT, win);
  int got = -1;
  MPI_Get(&got, 1, MPI_INT, left, 7, 1, MPI_INT, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  SAY("get with assertions %d", got);
  CHECK(got == 10 * left + 7);

  MPI_Type_free(&stride2);
  SAY("win_free rc %d", MPI_Win_free(&win));
  return cov_finish();
}
