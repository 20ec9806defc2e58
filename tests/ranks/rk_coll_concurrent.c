/* rk_coll_concurrent: many nonblocking collectives of one thread-rank in flight at once. Each
   runs on a worker thread as that rank, so several threads send as one rank side by side into
   the same receivers' mailboxes (on a communicator spanning processes, where the collectives go
   over point-to-point). Every thread-rank, ROUNDS times: start KINDS x COPIES collectives
   (Igather and Ireduce to a root that moves every round, Ibarrier, Iallgather), complete them
   with one MPI_Waitall, and check every result. A message lost between two workers of one rank
   hangs the program (its watchdog names the stage) or fails a check.
   usage: rk_coll_concurrent ROUNDS SPEC */
#include <omp.h>

#include "ranks_util.h"

enum { kCopies = 4, kKinds = 4 };

static MPI_Comm tc;
static int N, T, offset;

static int value(int round, int copy, int from) { return round * 10007 + copy * 101 + from; }

static void round_of(int r, int round) {
  const int root = (round * 3) % N;
  MPI_Request q[kCopies * kKinds];
  int gathered[kCopies][64 * 2], mine[kCopies][2], all[kCopies][64];
  long long sum[kCopies], contribution[kCopies];
  int n = 0;
  for (int c = 0; c < kCopies; ++c) {
    mine[c][0] = value(round, c, r);
    mine[c][1] = -value(round, c, r);
    contribution[c] = value(round, c, r);
    sum[c] = -1;
    for (int i = 0; i < 2 * N; ++i) gathered[c][i] = -1;
    for (int i = 0; i < N; ++i) all[c][i] = -1;
    MPI_OK(MPI_Igather(mine[c], 2, MPI_INT, gathered[c], 2, MPI_INT, root, tc, &q[n++]));
    MPI_OK(MPI_Ireduce(&contribution[c], &sum[c], 1, MPI_LONG_LONG, MPI_SUM, root, tc, &q[n++]));
    MPI_OK(MPI_Ibarrier(tc, &q[n++]));
    MPI_OK(MPI_Iallgather(&mine[c][0], 1, MPI_INT, all[c], 1, MPI_INT, tc, &q[n++]));
  }
  MPI_OK(MPI_Waitall(n, q, MPI_STATUSES_IGNORE));
  char what[64];
  snprintf(what, sizeof what, "concurrent collectives, round %d", round);
  for (int c = 0; c < kCopies; ++c) {
    for (int i = 0; i < N; ++i) EXPECT_EQ(all[c][i], value(round, c, i), "Iallgather copy %d from %d", c, i);
    if (r != root) continue;
    long long expect = 0;
    for (int i = 0; i < N; ++i) {
      expect += value(round, c, i);
      EXPECT_EQ(gathered[c][2 * i], value(round, c, i), "Igather copy %d from %d", c, i);
      EXPECT_EQ(gathered[c][2 * i + 1], -value(round, c, i), "Igather copy %d from %d, second", c, i);
    }
    EXPECT_EQ(sum[c], expect, "Ireduce copy %d", c);
  }
}

int main(int argc, char** argv) {
  rk_init(&argc, &argv, "rk_coll_concurrent");
  if (argc < 3) {
    rk_say("usage: rk_coll_concurrent ROUNDS SPEC\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rounds = atoi(argv[1]);
  T = rk_threads_of(argv[2], rk_wrank);
  rk_layout(MPI_COMM_WORLD, T, &offset, &N);
  if (N > 64) {
    rk_say("rk_coll_concurrent: at most 64 thread-ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  rk_set_stage("MPIX_Threadcomm_init");
  MPI_OK(MPIX_Threadcomm_init(MPI_COMM_WORLD, T, &tc));
#pragma omp parallel num_threads(T)
  {
    if (omp_get_num_threads() != T) MPI_Abort(MPI_COMM_WORLD, 5);
    MPI_OK(MPIX_Threadcomm_start(tc));
    int r = -1;
    MPI_Comm_rank(tc, &r);
    rk_my = r;
    if (r == offset) rk_set_stage("concurrent nonblocking collectives");
    for (int round = 0; round < rounds; ++round) round_of(r, round);
    MPI_OK(MPI_Barrier(tc));
    MPI_OK(MPIX_Threadcomm_finish(tc));
    rk_my = -1;
  }
  rk_set_stage("MPIX_Threadcomm_free");
  MPI_OK(MPIX_Threadcomm_free(&tc));
  rk_say("rk_coll_concurrent: rank %d: %d threads of %d thread-ranks, %d rounds\n", rk_wrank, T, N, rounds);
  return rk_finish();
}
