/* Coverage: the MPI-4 large-count RMA functions (MPICH 4; Open MPI 4.1 has none, the program then
   only says so): MPI_Win_create_c, MPI_Win_allocate_c, MPI_Win_allocate_shared_c,
   MPI_Win_shared_query_c, MPI_Put_c, MPI_Get_c, MPI_Accumulate_c, MPI_Get_accumulate_c, MPI_Rput_c,
   MPI_Rget_c, MPI_Raccumulate_c, MPI_Rget_accumulate_c, with MPI_Count counts and MPI_Aint
   displacement units. Window contents and fetched values are checked. */
// ranks: 2
#include "coverage.h"

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "rma_bigcount"), size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
#if MPI_VERSION >= 4
  int right = (rank + 1) % size, left = (rank + size - 1) % size;

  /* MPI_Win_create_c with fence: put_c, get_c, accumulate_c, get_accumulate_c. */
  double mem[8];
  for (int i = 0; i < 8; ++i) mem[i] = rank * 10 + i;
  MPI_Win win;
  SAY("win_create_c rc %d", MPI_Win_create_c(mem, (MPI_Aint)sizeof mem, (MPI_Aint)sizeof(double), MPI_INFO_NULL,
                                             MPI_COMM_WORLD, &win));
  double out[2] = {rank + 0.5, rank + 1.5}, in[2] = {-1, -1}, add = 1.0, old = -1;
  MPI_Count two = 2, one = 1;
  MPI_Win_fence(0, win);
  SAY("put_c rc %d", MPI_Put_c(out, two, MPI_DOUBLE, right, 0, two, MPI_DOUBLE, win));
  SAY("get_c rc %d", MPI_Get_c(in, two, MPI_DOUBLE, left, 4, two, MPI_DOUBLE, win));
  SAY("accumulate_c rc %d", MPI_Accumulate_c(&add, one, MPI_DOUBLE, right, 2, one, MPI_DOUBLE, MPI_SUM, win));
  MPI_Win_fence(0, win);
  SAY("get_accumulate_c rc %d", MPI_Get_accumulate_c(&add, one, MPI_DOUBLE, &old, one, MPI_DOUBLE, right, 3, one,
                                                     MPI_DOUBLE, MPI_SUM, win));
  MPI_Win_fence(0, win);
  SAY("create_c window %g %g %g %g, got %g %g, old %g", mem[0], mem[1], mem[2], mem[3], in[0], in[1], old);
  CHECK(mem[0] == left + 0.5 && mem[1] == left + 1.5 && mem[2] == rank * 10 + 3 && mem[3] == rank * 10 + 4);
  CHECK(in[0] == left * 10 + 4 && in[1] == left * 10 + 5 && old == right * 10 + 3);
  MPI_Win_free(&win);

  /* MPI_Win_allocate_c with lock_all: the request-based large-count operations. */
  long* amem = NULL;
  SAY("win_allocate_c rc %d", MPI_Win_allocate_c((MPI_Aint)(4 * sizeof(long)), (MPI_Aint)sizeof(long),
                                                 MPI_INFO_NULL, MPI_COMM_WORLD, &amem, &win));
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
  for (int i = 0; i < 4; ++i) amem[i] = 0;
  MPI_Win_unlock(rank, win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock_all(0, win);
  MPI_Request req[4];
  long v = 100 + rank, inc = rank + 1, got = -1, fetched = -1, ten = 10;
  SAY("rput_c rc %d", MPI_Rput_c(&v, one, MPI_LONG, right, 0, one, MPI_LONG, win, &req[0]));
  SAY("raccumulate_c rc %d",
      MPI_Raccumulate_c(&inc, one, MPI_LONG, 0, 1, one, MPI_LONG, MPI_SUM, win, &req[1]));
  MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
  MPI_Win_flush_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  SAY("rget_c rc %d", MPI_Rget_c(&got, one, MPI_LONG, right, 0, one, MPI_LONG, win, &req[2]));
  MPI_Wait(&req[2], MPI_STATUS_IGNORE);
  SAY("rget_accumulate_c rc %d", MPI_Rget_accumulate_c(&ten, one, MPI_LONG, &fetched, one, MPI_LONG, 0, 1, one,
                                                       MPI_LONG, MPI_SUM, win, &req[3]));
  MPI_Wait(&req[3], MPI_STATUS_IGNORE);
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  long base = size * (size + 1) / 2;
  SAY("allocate_c: rget %ld, rget_accumulate fetched a valid value %d", got,
      fetched >= base && fetched < base + 10 * size && (fetched - base) % 10 == 0);
  CHECK(got == 100 + rank);
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
  SAY("allocate_c window %ld %ld", amem[0], rank == 0 ? amem[1] : -1L);
  CHECK(amem[0] == 100 + left);
  if (rank == 0) CHECK(amem[1] == base + 10 * size);
  MPI_Win_unlock(rank, win);
  MPI_Win_free(&win);

  /* MPI_Win_allocate_shared_c and MPI_Win_shared_query_c. */
  int* smem = NULL;
  SAY("win_allocate_shared_c rc %d", MPI_Win_allocate_shared_c((MPI_Aint)((rank + 1) * sizeof(int)),
                                                               (MPI_Aint)sizeof(int), MPI_INFO_NULL,
                                                               MPI_COMM_WORLD, &smem, &win));
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  smem[0] = 500 + rank;
  MPI_Win_sync(win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_sync(win);
  MPI_Aint qsize = -1, qdisp = -1;
  int* p = NULL;
  SAY("shared_query_c rc %d", MPI_Win_shared_query_c(win, left, &qsize, &qdisp, &p));
  SAY("left segment size %ld disp_unit %ld value %d", (long)qsize, (long)qdisp, p ? p[0] : -1);
  CHECK(p && p[0] == 500 + left && qsize == (MPI_Aint)((left + 1) * sizeof(int)));
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
#else
  SAY("MPI %d has no large-count RMA functions", MPI_VERSION);
  (void)rank, (void)size;
#endif
  return cov_finish();
}
