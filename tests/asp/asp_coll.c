/* asp_coll: collectives over MPI processes of one and of different address spaces.

   usage: asp_coll [ROUNDS]   (default 2)

   MPI_Init_thread(MPIX_THREAD_ATTACH); an OpenMP region of 2K threads, thread t attached to
   index t % K. Thread t < K is the one collective-calling thread of its MPI process, the K MPI
   processes of an address space in the same collective at once. Communicators, each made from
   MPI_COMM_WORLD:
     world; a dup, made while an MPI_Comm_idup is pending, and that idup; a split by parity with reversed keys; MPI_Comm_create from a group of the
     ranks r % 3 != 1 in decreasing order (the others get MPI_COMM_NULL); MPI_Comm_create_group
     called by rank 0 and the odd ranks only; MPI_Comm_split_type(MPIX_COMM_TYPE_ADDRESS_SPACE);
     a periodic Cartesian ring (MPI_Cart_shift and MPI_Neighbor_alltoall checked too); the
     directed ring as a distributed graph (its neighbours and MPI_Neighbor_alltoall too);
     MPI_COMM_SELF.
   On each: its size, rank and members (MPI_Group_translate_ranks to the world group) as the
   construction says; then Barrier, Bcast (8 and 100000 ints, root size-1), Reduce (root 0),
   Allreduce (SUM, MAX), Allgather, Alltoall, Gather (root size/2), Gatherv (rank j gives j+1
   ints), Scatter (root size-1), Scan, Allgatherv, Alltoallv, Reduce_scatter_block, Exscan, an
   Allreduce with MPI_IN_PLACE of a non-commutative user operation on a derived datatype (each
   MPI process its own op and type), Iallreduce + Ibcast completed by one MPI_Waitall, and
   (where the MPI has persistent collectives) Allreduce_init + Bcast_init started three times;
   every result compared with what the members' world ranks give. ROUNDS times, the
   communicators made anew each round. Then both threads of each MPI process run the battery
   at once, each on its own dup of MPI_COMM_WORLD. Each MPI process gives its verdict and calls
   MPI_Finalize from its thread. */
#include <omp.h>

#include "asp_util.h"
#include "../common/persistent_collectives.h"

/* GCC 12 takes Open MPI's MPI_UNWEIGHTED for a zero-size array */
#pragma GCC diagnostic ignored "-Wstringop-overread"

enum { kBig = 100000 };

/* Sequences of digits 1..7 in base 8 as (value, length): concatenation is associative and not
   commutative, so a reduction must combine in rank order. inout = in ++ inout. */
static MPI_Datatype seq_type[ASP_MAXK];
static MPI_Op concat_op[ASP_MAXK];
static void concat_fn(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  long long *a = in, *b = inout;
  for (int i = 0; i < *len; ++i, a += 2, b += 2) {
    long long v = a[0];
    for (long long k = 0; k < b[1]; ++k) v = (v * 8) % 1000000007LL;
    b[0] = (v + b[0]) % 1000000007LL, b[1] += a[1];
  }
}
static void concat(long long* a, long long* b, int n) { concat_fn(a, b, &n, NULL); }

static void battery(MPI_Comm c, const char* name, const int* members, int n, int r) {
  int wr = asp_rank;
  (void)wr;
  asp_set_stage(name);
  CHECK(members[r] == asp_rank, "%s: member %d is world rank %d, I am %d", name, r, members[r], asp_rank);
  MPI_OK(MPI_Barrier(c));

  /* Bcast, small and large (rendezvous between address spaces). */
  int root = n - 1;
  int* big = malloc(sizeof(int) * kBig);
  for (int len = 8; len <= kBig; len = len == 8 ? kBig : kBig + 1) {
    if (r == root) pattern_fill(big, len, members[root], 0, len, 1);
    else memset(big, 0, sizeof(int) * len);
    MPI_OK(MPI_Bcast(big, len, MPI_INT, root, c));
    int bad = pattern_verify(big, len, members[root], 0, len, 1);
    CHECK(bad < 0, "%s: Bcast of %d ints from %d: element %d wrong", name, len, root, bad);
  }
  free(big);

  /* Reduce to 0, Allreduce SUM and MAX. */
  long long v[10], s[10], want_sum = 0;
  int wmax = -1;
  for (int j = 0; j < n; ++j) want_sum += members[j] + 1, wmax = members[j] > wmax ? members[j] : wmax;
  for (int j = 0; j < 10; ++j) v[j] = (long long)(asp_rank + 1) * (j + 1), s[j] = -1;
  MPI_OK(MPI_Reduce(v, s, 10, MPI_LONG_LONG, MPI_SUM, 0, c));
  if (r == 0)
    for (int j = 0; j < 10; ++j) CHECK(s[j] == want_sum * (j + 1), "%s: Reduce[%d] = %lld", name, j, s[j]);
  MPI_OK(MPI_Allreduce(v, s, 10, MPI_LONG_LONG, MPI_SUM, c));
  for (int j = 0; j < 10; ++j) CHECK(s[j] == want_sum * (j + 1), "%s: Allreduce SUM[%d] = %lld", name, j, s[j]);
  int mx = -1;
  MPI_OK(MPI_Allreduce(&asp_rank, &mx, 1, MPI_INT, MPI_MAX, c));
  CHECK(mx == wmax, "%s: Allreduce MAX = %d, expected %d", name, mx, wmax);

  /* Allgather of (world rank, rank), Alltoall of r*1000+j. */
  int* buf = malloc(sizeof(int) * 2 * n);
  int mine[2] = {asp_rank, r};
  MPI_OK(MPI_Allgather(mine, 2, MPI_INT, buf, 2, MPI_INT, c));
  for (int j = 0; j < n; ++j)
    CHECK(buf[2 * j] == members[j] && buf[2 * j + 1] == j, "%s: Allgather slot %d = (%d, %d)", name, j, buf[2 * j], buf[2 * j + 1]);
  int* a2a = malloc(sizeof(int) * n);
  for (int j = 0; j < n; ++j) buf[j] = r * 1000 + j;
  MPI_OK(MPI_Alltoall(buf, 1, MPI_INT, a2a, 1, MPI_INT, c));
  for (int j = 0; j < n; ++j) CHECK(a2a[j] == j * 1000 + r, "%s: Alltoall from %d = %d", name, j, a2a[j]);

  /* Gather to n/2, Gatherv to 0 (rank j gives j+1 ints members[j]*10+k). */
  MPI_OK(MPI_Gather(&asp_rank, 1, MPI_INT, buf, 1, MPI_INT, n / 2, c));
  if (r == n / 2)
    for (int j = 0; j < n; ++j) CHECK(buf[j] == members[j], "%s: Gather slot %d = %d", name, j, buf[j]);
  int *counts = malloc(sizeof(int) * n), *displs = malloc(sizeof(int) * n), total = 0;
  for (int j = 0; j < n; ++j) counts[j] = j + 1, displs[j] = total, total += j + 1;
  int *gv = malloc(sizeof(int) * total), *mv = malloc(sizeof(int) * (r + 1));
  for (int k = 0; k <= r; ++k) mv[k] = asp_rank * 10 + k;
  MPI_OK(MPI_Gatherv(mv, r + 1, MPI_INT, gv, counts, displs, MPI_INT, 0, c));
  if (r == 0)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k <= j; ++k)
        CHECK(gv[displs[j] + k] == members[j] * 10 + k, "%s: Gatherv rank %d element %d = %d", name, j, k, gv[displs[j] + k]);

  /* Scatter from size-1: rank j gets (j*7+3, members[j]). */
  int* sc = malloc(sizeof(int) * 2 * n);
  for (int j = 0; j < n; ++j) sc[2 * j] = j * 7 + 3, sc[2 * j + 1] = members[j];
  int got[2] = {-1, -1};
  MPI_OK(MPI_Scatter(sc, 2, MPI_INT, got, 2, MPI_INT, n - 1, c));
  CHECK(got[0] == r * 7 + 3 && got[1] == asp_rank, "%s: Scatter gave (%d, %d)", name, got[0], got[1]);

  /* Scan: sum of world rank + 1 over members 0..r. */
  long long one = asp_rank + 1, one_ = one, pre = -1, want_pre = 0;
  for (int j = 0; j <= r; ++j) want_pre += members[j] + 1;
  MPI_OK(MPI_Scan(&one, &pre, 1, MPI_LONG_LONG, MPI_SUM, c));
  CHECK(pre == want_pre, "%s: Scan = %lld, expected %lld", name, pre, want_pre);

  /* Allgatherv (rank j gives j+1 ints), Alltoallv (j+1 ints to rank j), Reduce_scatter_block,
     Exscan. */
  int* agv = malloc(sizeof(int) * total);
  MPI_OK(MPI_Allgatherv(mv, r + 1, MPI_INT, agv, counts, displs, MPI_INT, c));
  for (int j = 0; j < n; ++j)
    for (int k = 0; k <= j; ++k)
      CHECK(agv[displs[j] + k] == members[j] * 10 + k, "%s: Allgatherv rank %d element %d = %d", name, j, k, agv[displs[j] + k]);
  int *scnt = malloc(sizeof(int) * n), *sd = malloc(sizeof(int) * n), *rcnt = malloc(sizeof(int) * n), *rd = malloc(sizeof(int) * n);
  int *a2v_out = malloc(sizeof(int) * total), *a2v_in = malloc(sizeof(int) * n * (r + 1));
  for (int j = 0; j < n; ++j) {
    scnt[j] = j + 1, sd[j] = displs[j], rcnt[j] = r + 1, rd[j] = j * (r + 1);
    for (int k = 0; k <= j; ++k) a2v_out[displs[j] + k] = asp_rank * 100000 + j * 100 + k;
  }
  MPI_OK(MPI_Alltoallv(a2v_out, scnt, sd, MPI_INT, a2v_in, rcnt, rd, MPI_INT, c));
  for (int j = 0; j < n; ++j)
    for (int k = 0; k <= r; ++k)
      CHECK(a2v_in[j * (r + 1) + k] == members[j] * 100000 + r * 100 + k, "%s: Alltoallv from %d element %d = %d", name, j, k,
            a2v_in[j * (r + 1) + k]);
  long long* rsb = malloc(sizeof(long long) * 2 * n);
  for (int j = 0; j < 2 * n; ++j) rsb[j] = (long long)(asp_rank + 1) * (j + 1);
  long long rsb_out[2] = {-1, -1};
  MPI_OK(MPI_Reduce_scatter_block(rsb, rsb_out, 2, MPI_LONG_LONG, MPI_SUM, c));
  CHECK(rsb_out[0] == want_sum * (2 * r + 1) && rsb_out[1] == want_sum * (2 * r + 2), "%s: Reduce_scatter_block = %lld %lld",
        name, rsb_out[0], rsb_out[1]);
  long long ex = -1, want_ex = 0;
  for (int j = 0; j < r; ++j) want_ex += members[j] + 1;
  MPI_OK(MPI_Exscan(&one_, &ex, 1, MPI_LONG_LONG, MPI_SUM, c));
  CHECK(r == 0 || ex == want_ex, "%s: Exscan = %lld, expected %lld", name, ex, want_ex);

  /* A non-commutative operation (sequences concatenated in rank order), MPI_IN_PLACE. */
  long long seq[2] = {asp_rank % 7 + 1, 1}, want_seq[2] = {0, 0};
  for (int j = 0; j < n; ++j) {
    long long b[2] = {members[j] % 7 + 1, 1};
    concat(want_seq, b, 1); /* b = want ++ b */
    want_seq[0] = b[0], want_seq[1] = b[1];
  }
  MPI_OK(MPI_Allreduce(MPI_IN_PLACE, seq, 1, seq_type[asp_idx], concat_op[asp_idx], c));
  CHECK(seq[0] == want_seq[0] && seq[1] == want_seq[1], "%s: non-commutative Allreduce = (%lld, %lld), expected (%lld, %lld)",
        name, seq[0], seq[1], want_seq[0], want_seq[1]);
  free(agv);
  free(scnt);
  free(sd);
  free(rcnt);
  free(rd);
  free(a2v_out);
  free(a2v_in);
  free(rsb);

  /* Nonblocking: Iallreduce and Ibcast in flight together. */
  MPI_Request rq[2];
  long long isum = -1;
  int ib[4] = {0, 0, 0, 0};
  if (r == 0) ib[0] = 11, ib[1] = members[0], ib[2] = n, ib[3] = 44;
  MPI_OK(MPI_Iallreduce(&one, &isum, 1, MPI_LONG_LONG, MPI_SUM, c, &rq[0]));
  MPI_OK(MPI_Ibcast(ib, 4, MPI_INT, 0, c, &rq[1]));
  MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
  CHECK(isum == want_sum, "%s: Iallreduce = %lld, expected %lld", name, isum, want_sum);
  CHECK(ib[0] == 11 && ib[1] == members[0] && ib[2] == n && ib[3] == 44, "%s: Ibcast gave %d %d %d %d", name, ib[0], ib[1], ib[2], ib[3]);
#if HAVE_PCOLL
  /* Persistent: Allreduce_init and Bcast_init started three times with new inputs, by
     MPI_Startall and MPI_Waitall. */
  long long px = 0, psum = -1;
  int pb[3];
  MPI_Request pq[2];
  MPI_OK(MPI_Allreduce_init(&px, &psum, 1, MPI_LONG_LONG, MPI_SUM, c, MPI_INFO_NULL, &pq[0]));
  MPI_OK(MPI_Bcast_init(pb, 3, MPI_INT, n - 1, c, MPI_INFO_NULL, &pq[1]));
  for (int k = 0; k < 3; ++k) {
    px = members[r] + 1000LL * k;
    psum = -1;
    for (int i = 0; i < 3; ++i) pb[i] = r == n - 1 ? members[r] * 10 + k + i : -1;
    MPI_OK(MPI_Startall(2, pq));
    MPI_OK(MPI_Waitall(2, pq, MPI_STATUSES_IGNORE));
    long long want = 1000LL * k * n;
    for (int j = 0; j < n; ++j) want += members[j];
    CHECK(psum == want, "%s: Allreduce_init, start %d: %lld, expected %lld", name, k, psum, want);
    for (int i = 0; i < 3; ++i)
      CHECK(pb[i] == members[n - 1] * 10 + k + i, "%s: Bcast_init, start %d: element %d is %d", name, k, i, pb[i]);
  }
  MPI_OK(MPI_Request_free(&pq[0]));
  MPI_OK(MPI_Request_free(&pq[1]));
#endif
  free(sc);
  free(gv);
  free(mv);
  free(counts);
  free(displs);
  free(a2a);
  free(buf);
}

/* Checks c against the expected members (world ranks in rank order), then runs the battery. */
static void on(MPI_Comm c, const char* name, const int* want, int nwant) {
  int member = -1;
  for (int j = 0; j < nwant; ++j)
    if (want[j] == asp_rank) member = j;
  if (member < 0) {
    CHECK(c == MPI_COMM_NULL, "%s: not a member, yet a communicator", name);
    return;
  }
  CHECK(c != MPI_COMM_NULL, "%s: MPI_COMM_NULL for member %d", name, member);
  if (c == MPI_COMM_NULL) return;
  int n = -1, r = -1;
  MPI_OK(MPI_Comm_size(c, &n));
  MPI_OK(MPI_Comm_rank(c, &r));
  CHECK(n == nwant && r == member, "%s: rank %d size %d, expected %d %d", name, r, n, member, nwant);
  if (n != nwant || r != member) return;
  MPI_Group g, wg;
  int *in = malloc(sizeof(int) * n), *out = malloc(sizeof(int) * n);
  MPI_OK(MPI_Comm_group(c, &g));
  MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
  for (int j = 0; j < n; ++j) in[j] = j;
  MPI_OK(MPI_Group_translate_ranks(g, n, in, wg, out));
  for (int j = 0; j < n; ++j) CHECK(out[j] == want[j], "%s: member %d is world rank %d, expected %d", name, j, out[j], want[j]);
  MPI_Group_free(&g);
  MPI_Group_free(&wg);
  battery(c, name, want, n, r);
  free(in);
  free(out);
}

static void round_of(int round) {
  int N = asp_N, K = asp_K, R = asp_rank, nw = 0;
  int* want = malloc(sizeof(int) * N);
  MPI_Comm c;
  for (int j = 0; j < N; ++j) want[j] = j;
  on(MPI_COMM_WORLD, "world", want, N);

  /* An MPI_Comm_idup pending while a dup is made and used (collectives on the world between). */
  MPI_Comm ci = MPI_COMM_NULL;
  MPI_Request iq;
  MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &ci, &iq));
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
  on(c, "dup", want, N);
  MPI_OK(MPI_Comm_free(&c));
  MPI_OK(MPI_Wait(&iq, MPI_STATUS_IGNORE));
  on(ci, "idup", want, N);
  MPI_OK(MPI_Comm_free(&ci));

  nw = 0; /* split: same parity, reversed keys */
  for (int j = N - 1; j >= 0; --j)
    if (j % 2 == R % 2) want[nw++] = j;
  MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, R % 2, -R, &c));
  on(c, "split", want, nw);
  if (c != MPI_COMM_NULL) MPI_OK(MPI_Comm_free(&c));

  nw = 0; /* create: ranks r % 3 != 1, decreasing */
  for (int j = N - 1; j >= 0; --j)
    if (j % 3 != 1) want[nw++] = j;
  MPI_Group wg, g;
  MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
  MPI_OK(MPI_Group_incl(wg, nw, want, &g));
  MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
  on(c, "create", want, nw);
  if (c != MPI_COMM_NULL) MPI_OK(MPI_Comm_free(&c));
  MPI_Group_free(&g);

  nw = 0; /* create_group: rank 0 and the odd ranks, called by them only */
  for (int j = 0; j < N; ++j)
    if (j == 0 || j % 2 == 1) want[nw++] = j;
  if (R == 0 || R % 2 == 1) {
    MPI_OK(MPI_Group_incl(wg, nw, want, &g));
    MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 40 + round, &c));
    on(c, "create_group", want, nw);
    if (c != MPI_COMM_NULL) MPI_OK(MPI_Comm_free(&c));
    MPI_Group_free(&g);
  }
  MPI_Group_free(&wg);

  nw = 0; /* this address space */
  for (int j = 0; j < K; ++j) want[nw++] = R / K * K + j;
  MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPIX_COMM_TYPE_ADDRESS_SPACE, 0, MPI_INFO_NULL, &c));
  on(c, "split_type ADDRESS_SPACE", want, nw);
  if (c != MPI_COMM_NULL) MPI_OK(MPI_Comm_free(&c));

  /* A periodic ring of the world's MPI processes (Cartesian, topology.cpp): its collectives, the
     shift, and a neighbourhood alltoall whose block from the source is what the source sent
     its destination (with N = 2 one process is both). */
  int dims[1] = {N}, periods[1] = {1}, src = -5, dst = -5;
  MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 1, &c));
  for (int j = 0; j < N; ++j) want[j] = j;
  on(c, "cart ring", want, N);
  MPI_OK(MPI_Cart_shift(c, 0, 1, &src, &dst));
  CHECK(src == (R + N - 1) % N && dst == (R + 1) % N, "cart ring: MPI_Cart_shift gave %d, %d", src, dst);
  int out[2] = {10 * R + round * 1000, 10 * R + 1 + round * 1000}, in[2] = {-1, -1};
  MPI_OK(MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, c));
  CHECK(in[0] == 10 * src + 1 + round * 1000 && in[1] == 10 * dst + round * 1000,
        "cart ring: MPI_Neighbor_alltoall gave %d, %d", in[0], in[1]);
  MPI_OK(MPI_Comm_free(&c));

  /* The directed ring as a distributed graph (graph_topology.cpp): from R - 1, to R + 1. */
  const int from = (R + N - 1) % N, to = (R + 1) % N;
  MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &from, MPI_UNWEIGHTED, 1, &to, MPI_UNWEIGHTED,
                                        MPI_INFO_NULL, 0, &c));
  on(c, "dist graph ring", want, N);
  int indeg = -1, outdeg = -1, weighted = -1, got_from = -1, got_to = -1;
  MPI_OK(MPI_Dist_graph_neighbors_count(c, &indeg, &outdeg, &weighted));
  MPI_OK(MPI_Dist_graph_neighbors(c, 1, &got_from, MPI_UNWEIGHTED, 1, &got_to, MPI_UNWEIGHTED));
  CHECK(indeg == 1 && outdeg == 1 && !weighted && got_from == from && got_to == to,
        "dist graph ring: in %d out %d weighted %d, from %d to %d", indeg, outdeg, weighted, got_from, got_to);
  in[0] = -1;
  MPI_OK(MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, c));
  CHECK(in[0] == 10 * from + round * 1000, "dist graph ring: MPI_Neighbor_alltoall gave %d", in[0]);
  MPI_OK(MPI_Comm_free(&c));

  want[0] = R;
  on(MPI_COMM_SELF, "self", want, 1);
  free(want);
}

static MPI_Comm dups[ASP_MAXK][2];

int main(int argc, char** argv) {
  asp_init(&argc, &argv, "asp_coll", MPIX_THREAD_ATTACH);
  int rounds = argc > 1 ? atoi(argv[1]) : 2, K = asp_K, status = 0;
#pragma omp parallel num_threads(2 * K) reduction(| : status)
  {
    if (omp_get_num_threads() != 2 * K) {
      asp_say("asp_coll: pid %d: %d OpenMP threads, need 2K=%d (OMP_DYNAMIC?): FAILED\n", (int)getpid(),
              omp_get_num_threads(), 2 * K);
      _exit(1);
    }
    int i = omp_get_thread_num() % K, role = omp_get_thread_num() / K;
    asp_attach(i);
    if (role == 0) { /* one collective-calling thread per MPI process */
      MPI_OK(MPI_Type_contiguous(2, MPI_LONG_LONG, &seq_type[i]));
      MPI_OK(MPI_Type_commit(&seq_type[i]));
      MPI_OK(MPI_Op_create(concat_fn, 0, &concat_op[i]));
      for (int round = 0; round < rounds; ++round) round_of(round);
      MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dups[i][0]));
      MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dups[i][1]));
    }
#pragma omp barrier
    /* Both threads of each MPI process at once, each in collectives on its own dup. */
    int* all = malloc(sizeof(int) * asp_N);
    for (int j = 0; j < asp_N; ++j) all[j] = j;
    on(dups[i][role], role ? "concurrent dup B" : "concurrent dup A", all, asp_N);
    free(all);
#pragma omp barrier /* every check of the address space done */
    if (role == 0) {
      MPI_OK(MPI_Comm_free(&dups[i][0]));
      MPI_OK(MPI_Comm_free(&dups[i][1]));
      MPI_OK(MPI_Op_free(&concat_op[i]));
      MPI_OK(MPI_Type_free(&seq_type[i]));
      asp_set_stage("verdict");
      status = asp_verdict();
      int rc = MPI_Finalize(); /* this MPI process's */
      if (rc != MPI_SUCCESS) {
        asp_say("asp_coll: rank %d: MPI_Finalize returned %d: FAILED\n", asp_rank, rc);
        status = 1;
      }
    }
  }
  return status;
}
