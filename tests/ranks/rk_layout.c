/* rk_layout: the shape of a threadcomm. A hybrid code that, for each configuration on the
   command line, makes a threadcomm over MPI_COMM_WORLD (or MPI_COMM_SELF), enters its OpenMP
   region ROUNDS times and frees it, then makes the next one.

   usage: rk_layout ROUNDS SPEC...    SPEC: "T" (every process T threads), "A,B" (process p gets
                                      entry p mod 2), or "self:T" (a threadcomm over MPI_COMM_SELF)

   In every region, at every thread-rank:
     - MPI_Comm_size = sum of the thread counts; MPI_Comm_rank in [offset, offset + T) where
       offset = sum of the counts of the lower processes; the T threads of a process hold each
       of those ranks exactly once (checked after the region); rank in MPI_COMM_WORLD unchanged;
     - an MPI_Allreduce of the ranks (sum = N(N-1)/2) and an MPI_Allgather of (rank, process):
       thread-rank r lives on the process the layout says;
     - MPI_Comm_compare: the threadcomm with itself MPI_IDENT, with its dup MPI_CONGRUENT, with
       a split by parity and reversed keys MPI_UNEQUAL (N > 1);
     - the dup: same rank and size; groups MPI_IDENT; MPI_Group_translate_ranks identity;
     - the split: size and rank from the parity/reversed-key rule; MPI_Group_translate_ranks from
       the split's group to the threadcomm's gives the expected members, and back;
     - MPI_Group_size/MPI_Group_rank of the threadcomm's group;
     - the dup and split freed inside the region (MPI_COMM_NULL after).
   After MPIX_Threadcomm_free the handle is MPI_COMM_NULL. */
#include <omp.h>

#include "ranks_util.h"

static int total_regions;

static void region_body(MPI_Comm tc, int N, int offset, int T, int round, int* seen, MPI_Comm parent) {
  int r = -1, n = -1;
  MPI_OK(MPI_Comm_rank(tc, &r));
  MPI_OK(MPI_Comm_size(tc, &n));
  rk_my = r;
  CHECK(n == N, "size %d, expected %d", n, N);
  CHECK(r >= offset && r < offset + T, "rank %d outside [%d, %d)", r, offset, offset + T);
  if (r >= offset && r < offset + T) atomic_fetch_add((atomic_int*)&seen[r - offset], 1);
  int wr;
  MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &wr));
  CHECK(wr == rk_wrank, "world rank %d inside the region, %d outside", wr, rk_wrank);

  /* Every thread-rank agrees on the layout. */
  long long sum = -1, mine = r;
  MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, tc));
  CHECK(sum == (long long)N * (N - 1) / 2, "sum of ranks %lld, expected %lld", sum, (long long)N * (N - 1) / 2);
  int my_pair[2] = {r, 0}, prank;
  MPI_Comm_rank(parent, &prank);
  my_pair[1] = prank;
  int* pairs = malloc(2 * N * sizeof *pairs);
  MPI_OK(MPI_Allgather(my_pair, 2, MPI_INT, pairs, 2, MPI_INT, tc));
  for (int i = 0; i < N; ++i) {
    CHECK(pairs[2 * i] == i, "allgather slot %d holds rank %d", i, pairs[2 * i]);
    if (i >= offset && i < offset + T)
      CHECK(pairs[2 * i + 1] == prank, "thread-rank %d is on process %d, expected %d", i, pairs[2 * i + 1], prank);
    else
      CHECK(pairs[2 * i + 1] != prank, "thread-rank %d claims this process %d", i, prank);
  }
  /* Ranks are contiguous per process, in process order. */
  for (int i = 1; i < N; ++i)
    CHECK(pairs[2 * i + 1] >= pairs[2 * i - 1], "thread-rank %d on process %d after %d on %d", i,
          pairs[2 * i + 1], i - 1, pairs[2 * i - 1]);
  free(pairs);

  int cmp = -1;
  MPI_OK(MPI_Comm_compare(tc, tc, &cmp));
  CHECK(cmp == MPI_IDENT, "compare(threadcomm, itself) = %d", cmp);

  /* Groups. */
  MPI_Group g = MPI_GROUP_NULL, gd = MPI_GROUP_NULL, gs = MPI_GROUP_NULL;
  MPI_OK(MPI_Comm_group(tc, &g));
  int gsz = -1, grk = -1;
  MPI_OK(MPI_Group_size(g, &gsz));
  MPI_OK(MPI_Group_rank(g, &grk));
  CHECK(gsz == N && grk == r, "group size %d rank %d, expected %d %d", gsz, grk, N, r);
  /* Handles of thread-ranks cross to Fortran and back (mixed-language programs; Open MPI's
     conversions are functions tsmpi answers, MPICH's casts). */
  CHECK(MPI_Comm_f2c(MPI_Comm_c2f(tc)) == tc && MPI_Group_f2c(MPI_Group_c2f(g)) == g,
        "c2f/f2c of the threadcomm or its group did not give them back");
  CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD && MPI_Comm_c2f(tc) != MPI_Comm_c2f(MPI_COMM_WORLD),
        "c2f/f2c of MPI_COMM_WORLD beside a threadcomm");

  /* Dup. */
  MPI_Comm d = MPI_COMM_NULL;
  MPI_OK(MPI_Comm_dup(tc, &d));
  int dr = -1, dn = -1;
  MPI_OK(MPI_Comm_rank(d, &dr));
  MPI_OK(MPI_Comm_size(d, &dn));
  CHECK(dr == r && dn == N, "dup rank %d size %d, expected %d %d", dr, dn, r, N);
  MPI_OK(MPI_Comm_compare(tc, d, &cmp));
  CHECK(cmp == MPI_CONGRUENT, "compare(threadcomm, dup) = %d, expected MPI_CONGRUENT", cmp);
  MPI_OK(MPI_Comm_compare(d, d, &cmp));
  CHECK(cmp == MPI_IDENT, "compare(dup, dup) = %d", cmp);
  MPI_OK(MPI_Comm_group(d, &gd));
  MPI_OK(MPI_Group_compare(g, gd, &cmp));
  CHECK(cmp == MPI_IDENT, "group_compare(threadcomm, dup) = %d", cmp);
  int* in = malloc(N * sizeof *in);
  int* out = malloc(N * sizeof *out);
  for (int i = 0; i < N; ++i) in[i] = i, out[i] = -7;
  MPI_OK(MPI_Group_translate_ranks(gd, N, in, g, out));
  for (int i = 0; i < N; ++i) CHECK(out[i] == i, "translate dup->threadcomm %d -> %d", i, out[i]);

  /* Split: colour by parity, keys reversed. Members of colour c in descending rank order. */
  int color = r % 2;
  MPI_Comm s = MPI_COMM_NULL;
  MPI_OK(MPI_Comm_split(tc, color, N - r, &s));
  int members = 0, above = 0;
  for (int i = 0; i < N; ++i)
    if (i % 2 == color) {
      ++members;
      if (i > r) ++above;
    }
  int sr = -1, sn = -1;
  MPI_OK(MPI_Comm_rank(s, &sr));
  MPI_OK(MPI_Comm_size(s, &sn));
  CHECK(sn == members && sr == above, "split colour %d: rank %d size %d, expected %d %d", color, sr, sn, above, members);
  MPI_OK(MPI_Comm_compare(tc, s, &cmp));
  CHECK(cmp == (N == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "compare(threadcomm, split) = %d (N=%d)", cmp, N);
  MPI_OK(MPI_Comm_group(s, &gs));
  for (int i = 0; i < members; ++i) in[i] = i, out[i] = -7;
  MPI_OK(MPI_Group_translate_ranks(gs, members, in, g, out));
  /* i-th member of the split: the i-th largest rank of colour c. */
  for (int i = 0, k = N - 1; i < members; ++i, --k) {
    while (k % 2 != color) --k;
    CHECK(out[i] == k, "translate split->threadcomm %d -> %d, expected %d", i, out[i], k);
  }
  for (int i = 0; i < N; ++i) in[i] = i, out[i] = -7;
  MPI_OK(MPI_Group_translate_ranks(g, N, in, gs, out));
  for (int i = 0; i < N; ++i) {
    int expect = MPI_UNDEFINED;
    if (i % 2 == color) {
      expect = 0;
      for (int j = i + 1; j < N; ++j)
        if (j % 2 == color) ++expect;
    }
    CHECK(out[i] == expect, "translate threadcomm->split %d -> %d, expected %d", i, out[i], expect);
  }
  /* A message on the split: ring among the colour's members, payload names the sender. */
  if (sn > 1) {
    int to = (sr + 1) % sn, from = (sr - 1 + sn) % sn, got = -1;
    int payload = r * 100 + round;
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(&payload, 1, MPI_INT, to, 3, &got, 1, MPI_INT, from, 3, s, &st));
    int from_tc = -1;
    MPI_Group_translate_ranks(gs, 1, &from, g, &from_tc);
    CHECK(got == from_tc * 100 + round, "split ring got %d, expected %d", got, from_tc * 100 + round);
    CHECK(st.MPI_SOURCE == from, "split ring status source %d, expected %d", st.MPI_SOURCE, from);
  }
  free(in);
  free(out);
  MPI_OK(MPI_Group_free(&gs));
  MPI_OK(MPI_Group_free(&gd));
  MPI_OK(MPI_Group_free(&g));
  CHECK(g == MPI_GROUP_NULL, "group not MPI_GROUP_NULL after free");
  MPI_OK(MPI_Comm_free(&s));
  MPI_OK(MPI_Comm_free(&d));
  CHECK(s == MPI_COMM_NULL && d == MPI_COMM_NULL, "communicators not MPI_COMM_NULL after free");
  MPI_OK(MPI_Barrier(tc));
}

static void run_config(const char* spec, int rounds) {
  MPI_Comm parent = MPI_COMM_WORLD;
  if (!strncmp(spec, "self:", 5)) {
    parent = MPI_COMM_SELF;
    spec += 5;
  }
  int prank;
  MPI_Comm_rank(parent, &prank);
  int T = rk_threads_of(spec, rk_wrank);
  int offset, N;
  rk_layout(parent, T, &offset, &N);
  MPI_Comm tc = MPI_COMM_NULL;
  static char stage[128];
  snprintf(stage, sizeof stage, "config %s%s: MPIX_Threadcomm_init", parent == MPI_COMM_SELF ? "self:" : "", spec);
  rk_set_stage(stage);
  MPI_OK(MPIX_Threadcomm_init(parent, T, &tc));
  CHECK(tc != MPI_COMM_NULL, "MPIX_Threadcomm_init gave MPI_COMM_NULL");
  if (tc == MPI_COMM_NULL) return;
  int* seen = calloc(T, sizeof *seen);
  for (int round = 0; round < rounds; ++round) {
    snprintf(stage, sizeof stage, "config %s%s: region %d (T=%d, N=%d)", parent == MPI_COMM_SELF ? "self:" : "", spec,
             round, T, N);
    rk_set_stage(stage);
    memset(seen, 0, T * sizeof *seen);
#pragma omp parallel num_threads(T)
    {
      if (omp_get_num_threads() != T) {
        rk_say("%s: rank %d: OpenMP gave %d threads, not %d\n", rk_name, rk_wrank, omp_get_num_threads(), T);
        MPI_Abort(MPI_COMM_WORLD, 5);
      }
      MPI_OK(MPIX_Threadcomm_start(tc));
      region_body(tc, N, offset, T, round, seen, parent);
      MPI_OK(MPIX_Threadcomm_finish(tc));
      rk_my = -1;
    }
    for (int i = 0; i < T; ++i)
      CHECK(seen[i] == 1, "config %s round %d: rank %d held by %d threads", spec, round, offset + i, seen[i]);
    ++total_regions;
    /* Between the regions the process is an ordinary MPI process again. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  }
  free(seen);
  snprintf(stage, sizeof stage, "config %s: MPIX_Threadcomm_free", spec);
  rk_set_stage(stage);
  MPI_OK(MPIX_Threadcomm_free(&tc));
  CHECK(tc == MPI_COMM_NULL, "threadcomm not MPI_COMM_NULL after MPIX_Threadcomm_free");
}

int main(int argc, char** argv) {
  rk_init(&argc, &argv, "rk_layout");
  if (argc < 3) {
    rk_say("usage: rk_layout ROUNDS SPEC...\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rounds = atoi(argv[1]);
  for (int i = 2; i < argc; ++i) run_config(argv[i], rounds);
  rk_say("rk_layout: rank %d: %d configurations, %d regions\n", rk_wrank, argc - 2, total_regions);
  return rk_finish();
}
