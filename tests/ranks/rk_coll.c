/* rk_coll: every collective among thread-ranks, with the data checked at every rank.
   usage: rk_coll ROUNDS SPEC         (SPEC as in rk_layout)

   In an OpenMP region (entered ROUNDS times), on the threadcomm in blocking, nonblocking
   (I-form + MPI_Wait) and persistent form (MPI_X_init, or Open MPI 4.1's MPIX_X_init: started
   once, waited for, freed), then in blocking form on a split of it (colours by parity, keys
   reversed) and in blocking and nonblocking form on a dup of it (across processes the dup's
   collectives are hierarchical, as the threadcomm's), with roots other than 0 that change per
   round:
     Barrier (the process's threads all arrived: a per-process counter), Bcast (0 B, 4 B,
     64 KiB), Gather, Gatherv (counts by rank, blocks placed in reverse order), Scatter,
     Scatterv (zero counts included), Gather and Scatter of 64 KiB in all (a strided vector
     type sent, ints received; ints sent, one contiguous type received), Allgather,
     Allgatherv, Alltoall, Alltoallv (zero counts),
     Alltoallw (MPI_INT and MPI_DOUBLE blocks at byte displacements), Reduce (SUM, MAX on
     doubles, MINLOC on MPI_2INT, BXOR), Allreduce (SUM on long long, MAX), Reduce_scatter,
     Reduce_scatter_block, Scan, Exscan (rank 0's result not read), MPI_IN_PLACE wherever the
     standard allows it (Gather(v)/Scatter(v)/Reduce at the root, Allgather(v), Alltoall(v,w) (their send arguments NULL),
     Allreduce, Reduce_scatter(_block), Scan, Exscan);
     a user-defined non-commutative operation (2x2 integer matrices multiplied mod 10007, on a
     derived datatype) with Reduce, Allreduce, Scan, Exscan, Reduce_scatter_block: the result
     must be the rank-ordered product M_0 M_1 ... ;
     a stream of small broadcasts, 150 from each root in turn, one member stopping now and then
     (the root runs ahead of it), with Ibcasts and Allreduces among them;
     overlap: Iallreduce, Ialltoall and Ibcast started together, completed with one Waitall;
     persistent restarts, on the threadcomm and on the split: Allreduce_init, Bcast_init,
     Allgather_init and Barrier_init started 4 times with new inputs each time (MPI_Startall +
     MPI_Waitall, or MPI_Start + MPI_Test in reverse order), then an inactive one's empty status
     and MPI_ERR_ROOT from MPI_Bcast_init for a root out of range;
     the MPI-4 large-count forms (Bcast_c, Allreduce_c, Allgatherv_c, Alltoallv_c,
     Reduce_scatter_c, Iallreduce_c, Allreduce_init_c) where mpi.h has them (MPI_VERSION >= 4:
     MPICH). */
#include <omp.h>

#include "ranks_util.h"

enum { kLarge = 16384, kP = 10007 };

static MPI_Comm tc;
static int N_tc, T, offset;
static MPI_Datatype mat_type;
static MPI_Op mat_op;
static atomic_int arrived;

#include "../common/persistent_collectives.h"

/* mode 0: blocking; 1: the I-form + MPI_Wait; 2: the persistent form (init, MPI_Start,
   MPI_Wait, the request kept inactive, MPI_Request_free). */
enum { kBlocking, kNonblocking, kPersistent };
static const char* const form_names[3] = {"blocking", "nonblocking", "persistent"};
#if HAVE_PCOLL
#define RUN_PERSISTENT(B, ...)                                                                 \
  do {                                                                                         \
    MPI_Request p_ = MPI_REQUEST_NULL;                                                         \
    MPI_OK(B##_init(__VA_ARGS__, MPI_INFO_NULL, &p_));                                         \
    MPI_OK(MPI_Start(&p_));                                                                    \
    MPI_OK(MPI_Wait(&p_, MPI_STATUS_IGNORE));                                                  \
    CHECK(p_ != MPI_REQUEST_NULL, "%s_init: MPI_Wait freed the persistent request", #B);      \
    MPI_OK(MPI_Request_free(&p_));                                                             \
    CHECK(p_ == MPI_REQUEST_NULL, "%s_init: MPI_Request_free left the handle", #B);           \
  } while (0)
#else
#define RUN_PERSISTENT(B, ...) CHECK(0, "%s: this MPI has no persistent collectives", #B)
#endif
#define RUN(mode, B, I, ...)                             \
  do {                                                   \
    if (mode == kNonblocking) {                          \
      MPI_Request q_ = MPI_REQUEST_NULL;                 \
      MPI_OK(I(__VA_ARGS__, &q_));                       \
      MPI_OK(MPI_Wait(&q_, MPI_STATUS_IGNORE));          \
      CHECK(q_ == MPI_REQUEST_NULL, "%s: request not freed", #I); \
    } else if (mode == kPersistent) {                    \
      RUN_PERSISTENT(B, __VA_ARGS__);                    \
    } else {                                             \
      MPI_OK(B(__VA_ARGS__));                            \
    }                                                    \
  } while (0)

static int V(int a, int i) { return a * 1000 + i; }
static int A(int a, int b, int i) { return a * 100000 + b * 100 + i; }

typedef struct {
  int m[4];
} Mat;
static Mat mat_of(int r) {
  Mat x = {{1, r + 1, (r * 3 + 1) % 5, 1 + r % 2}};
  return x;
}
static Mat mat_mul(Mat a, Mat b) {
  Mat c;
  c.m[0] = (int)(((long)a.m[0] * b.m[0] + (long)a.m[1] * b.m[2]) % kP);
  c.m[1] = (int)(((long)a.m[0] * b.m[1] + (long)a.m[1] * b.m[3]) % kP);
  c.m[2] = (int)(((long)a.m[2] * b.m[0] + (long)a.m[3] * b.m[2]) % kP);
  c.m[3] = (int)(((long)a.m[2] * b.m[1] + (long)a.m[3] * b.m[3]) % kP);
  return c;
}
/* inout = in * inout: in holds the lower ranks' contribution. */
static void mat_fn(void* in, void* inout, int* len, MPI_Datatype* type) {
  Mat* a = in;
  Mat* b = inout;
  for (int i = 0; i < *len; ++i) b[i] = mat_mul(a[i], b[i]);
}
/* The product of mat_of(from) ... mat_of(to - 1), times a per-element variation j. */
static Mat mat_elem(int r, int j) {
  Mat x = mat_of(r + 3 * j);
  return x;
}
static Mat fold(int from, int to, int j) {
  Mat p = {{1, 0, 0, 1}};
  for (int q = from; q < to; ++q) p = mat_mul(p, mat_elem(q, j));
  return p;
}
static int mat_eq(Mat a, Mat b) { return !memcmp(&a, &b, sizeof a); }

static void suite(MPI_Comm comm, int mode, int round, int on_tc) {
  int r, N;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &N);
  char what[96];
  const char* form = form_names[mode];
  int root = (1 + 3 * round + mode) % N;
  int* big = malloc((size_t)(kLarge + 4 * N * N + 64) * sizeof(int));
  int* big2 = malloc((size_t)(kLarge + 4 * N * N + 64) * sizeof(int));

  /* Barrier: every thread of this process arrived before any leaves. */
  snprintf(what, sizeof what, "%s Barrier", form);
  int before = on_tc ? atomic_fetch_add(&arrived, 1) : 0;
  RUN(mode, MPI_Barrier, MPI_Ibarrier, comm);
  if (on_tc) {
    int now = atomic_load(&arrived);
    CHECK(now >= (before / T + 1) * T, "%s: only %d arrivals in this process when leaving (own arrival %d, %d threads)",
          what, now, before, T);
  }
  RUN(mode, MPI_Barrier, MPI_Ibarrier, comm);

  /* Bcast. */
  static const int bsz[3] = {0, 1, kLarge};
  for (int z = 0; z < 3; ++z) {
    int n = bsz[z];
    snprintf(what, sizeof what, "%s Bcast of %d ints from %d", form, n, root);
    for (int i = 0; i < n + 1; ++i) big[i] = r == root ? V(root + round, i) : -1;
    RUN(mode, MPI_Bcast, MPI_Ibcast, big, n, MPI_INT, root, comm);
    for (int i = 0; i < n; ++i)
      if (big[i] != V(root + round, i)) {
        EXPECT_EQ(big[i], V(root + round, i), "element %d", i);
        break;
      }
    EXPECT_EQ(big[n], r == root ? V(root + round, n) : -1, "element past the count");
  }

  /* Gather / Gatherv, plain and in place at the root. */
  for (int inplace = 0; inplace < 2; ++inplace) {
    int groot = (N - 1 + inplace + round) % N;
    int s[3];
    for (int i = 0; i < 3; ++i) s[i] = V(r, i);
    snprintf(what, sizeof what, "%s Gather%s to %d", form, inplace ? " in place" : "", groot);
    for (int i = 0; i < 3 * N; ++i) big[i] = -1;
    if (r == groot && inplace)
      for (int i = 0; i < 3; ++i) big[3 * r + i] = V(r, i);
    RUN(mode, MPI_Gather, MPI_Igather, (inplace && r == groot) ? MPI_IN_PLACE : s, 3, MPI_INT, big, 3, MPI_INT, groot, comm);
    if (r == groot)
      for (int p = 0; p < N; ++p)
        for (int i = 0; i < 3; ++i) EXPECT_EQ(big[3 * p + i], V(p, i), "block %d element %d", p, i);
    /* Gatherv: p sends p%4+1 ints; blocks placed in reverse rank order. */
    int* cnt = malloc(N * sizeof(int));
    int* dsp = malloc(N * sizeof(int));
    int pos = 0;
    for (int p = N - 1; p >= 0; --p) {
      cnt[p] = p % 4 + 1;
      dsp[p] = pos;
      pos += cnt[p];
    }
    int sv[4];
    for (int i = 0; i < 4; ++i) sv[i] = V(r, 10 + i);
    snprintf(what, sizeof what, "%s Gatherv%s to %d", form, inplace ? " in place" : "", groot);
    for (int i = 0; i < pos; ++i) big[i] = -1;
    if (r == groot && inplace)
      for (int i = 0; i < cnt[r]; ++i) big[dsp[r] + i] = V(r, 10 + i);
    RUN(mode, MPI_Gatherv, MPI_Igatherv, (inplace && r == groot) ? MPI_IN_PLACE : sv, r % 4 + 1, MPI_INT, big, cnt, dsp,
        MPI_INT, groot, comm);
    if (r == groot)
      for (int p = 0; p < N; ++p)
        for (int i = 0; i < cnt[p]; ++i) EXPECT_EQ(big[dsp[p] + i], V(p, 10 + i), "block %d element %d", p, i);

    /* Scatter / Scatterv from the same root. */
    snprintf(what, sizeof what, "%s Scatter%s from %d", form, inplace ? " in place" : "", groot);
    if (r == groot)
      for (int p = 0; p < N; ++p)
        for (int i = 0; i < 2; ++i) big[2 * p + i] = A(p, groot, i);
    int rv[4] = {-1, -1, -1, -1};
    RUN(mode, MPI_Scatter, MPI_Iscatter, big, 2, MPI_INT, (inplace && r == groot) ? MPI_IN_PLACE : rv, 2, MPI_INT, groot,
        comm);
    if (!(inplace && r == groot))
      for (int i = 0; i < 2; ++i) EXPECT_EQ(rv[i], A(r, groot, i), "element %d", i);
    else
      for (int i = 0; i < 2; ++i) EXPECT_EQ(big[2 * r + i], A(r, groot, i), "root's own block %d", i);
    /* Scatterv: p gets p%3 ints (zero included), blocks in reverse order. */
    pos = 0;
    for (int p = N - 1; p >= 0; --p) {
      cnt[p] = p % 3;
      dsp[p] = pos;
      pos += cnt[p];
    }
    if (r == groot)
      for (int p = 0; p < N; ++p)
        for (int i = 0; i < cnt[p]; ++i) big[dsp[p] + i] = A(p, groot, 20 + i);
    for (int i = 0; i < 4; ++i) rv[i] = -1;
    snprintf(what, sizeof what, "%s Scatterv%s from %d", form, inplace ? " in place" : "", groot);
    RUN(mode, MPI_Scatterv, MPI_Iscatterv, big, cnt, dsp, MPI_INT, (inplace && r == groot) ? MPI_IN_PLACE : rv, r % 3,
        MPI_INT, groot, comm);
    if (!(inplace && r == groot)) {
      for (int i = 0; i < r % 3; ++i) EXPECT_EQ(rv[i], A(r, groot, 20 + i), "element %d", i);
      EXPECT_EQ(rv[r % 3], -1, "element past the count");
    }
    free(cnt);
    free(dsp);
  }

  /* Large Gather and Scatter (64 KiB in all): blocks sent as one strided vector and received
     as ints, then scattered as ints and received as one contiguous type of the same signature;
     in place at the root in alternate rounds, the root in another process in turn. */
  {
    int lg = kLarge / N, groot = (round + 2 * mode + 1) % N, inplace = (round + mode) % 2;
    MPI_Datatype strided, block;
    MPI_OK(MPI_Type_vector(lg, 1, 2, MPI_INT, &strided));
    MPI_OK(MPI_Type_commit(&strided));
    MPI_OK(MPI_Type_contiguous(lg, MPI_INT, &block));
    MPI_OK(MPI_Type_commit(&block));
    int* sv = malloc(2 * (size_t)lg * sizeof(int));
    for (int i = 0; i < lg; ++i) {
      sv[2 * i] = V(r, 30 + i);
      sv[2 * i + 1] = -7;
    }
    for (int i = 0; i < lg * N + 1; ++i) big[i] = -1;
    if (r == groot && inplace)
      for (int i = 0; i < lg; ++i) big[lg * r + i] = V(r, 30 + i);
    snprintf(what, sizeof what, "%s Gather of %d ints%s to %d", form, lg, inplace ? " in place" : "", groot);
    RUN(mode, MPI_Gather, MPI_Igather, (inplace && r == groot) ? MPI_IN_PLACE : sv, 1, strided, big, lg, MPI_INT, groot,
        comm);
    if (r == groot) {
      for (int p = 0; p < N; ++p)
        for (int i = 0; i < lg; ++i)
          if (big[lg * p + i] != V(p, 30 + i)) {
            EXPECT_EQ(big[lg * p + i], V(p, 30 + i), "block %d element %d", p, i);
            break;
          }
      EXPECT_EQ(big[lg * N], -1, "element past the blocks");
    }
    snprintf(what, sizeof what, "%s Scatter of %d ints%s from %d", form, lg, inplace ? " in place" : "", groot);
    if (r == groot)
      for (int p = 0; p < N; ++p)
        for (int i = 0; i < lg; ++i) big[lg * p + i] = A(p, groot, 40 + i);
    for (int i = 0; i < lg + 1; ++i) big2[i] = -1;
    RUN(mode, MPI_Scatter, MPI_Iscatter, big, lg, MPI_INT, (inplace && r == groot) ? MPI_IN_PLACE : big2, 1, block, groot,
        comm);
    const int* mine = (inplace && r == groot) ? big + lg * r : big2;
    for (int i = 0; i < lg; ++i)
      if (mine[i] != A(r, groot, 40 + i)) {
        EXPECT_EQ(mine[i], A(r, groot, 40 + i), "element %d", i);
        break;
      }
    if (!(inplace && r == groot)) EXPECT_EQ(big2[lg], -1, "element past the count");
    free(sv);
    MPI_OK(MPI_Type_free(&strided));
    MPI_OK(MPI_Type_free(&block));
  }

  /* Allgather / Allgatherv, plain and in place. */
  for (int inplace = 0; inplace < 2; ++inplace) {
    int s[2] = {V(r, 0), V(r, 1)};
    snprintf(what, sizeof what, "%s Allgather%s", form, inplace ? " in place" : "");
    for (int i = 0; i < 2 * N; ++i) big[i] = -1;
    if (inplace) big[2 * r] = s[0], big[2 * r + 1] = s[1];
    RUN(mode, MPI_Allgather, MPI_Iallgather, inplace ? MPI_IN_PLACE : s, 2, MPI_INT, big, 2, MPI_INT, comm);
    for (int p = 0; p < N; ++p)
      for (int i = 0; i < 2; ++i) EXPECT_EQ(big[2 * p + i], V(p, i), "block %d element %d", p, i);
    int* cnt = malloc(N * sizeof(int));
    int* dsp = malloc(N * sizeof(int));
    int pos = 0;
    for (int p = N - 1; p >= 0; --p) {
      cnt[p] = p % 3 + 1;
      dsp[p] = pos;
      pos += cnt[p];
    }
    int sv[3];
    for (int i = 0; i < 3; ++i) sv[i] = V(r, 30 + i);
    for (int i = 0; i < pos; ++i) big[i] = -1;
    if (inplace)
      for (int i = 0; i < cnt[r]; ++i) big[dsp[r] + i] = sv[i];
    snprintf(what, sizeof what, "%s Allgatherv%s", form, inplace ? " in place" : "");
    RUN(mode, MPI_Allgatherv, MPI_Iallgatherv, inplace ? MPI_IN_PLACE : sv, cnt[r], MPI_INT, big, cnt, dsp, MPI_INT, comm);
    for (int p = 0; p < N; ++p)
      for (int i = 0; i < cnt[p]; ++i) EXPECT_EQ(big[dsp[p] + i], V(p, 30 + i), "block %d element %d", p, i);
    free(cnt);
    free(dsp);
  }

  /* Alltoall (plain and in place), Alltoallv, Alltoallw. */
  for (int inplace = 0; inplace < 2; ++inplace) {
    for (int p = 0; p < N; ++p)
      for (int i = 0; i < 2; ++i) big[2 * p + i] = A(r, p, i), big2[2 * p + i] = -1;
    snprintf(what, sizeof what, "%s Alltoall%s", form, inplace ? " in place" : "");
    if (inplace) {
      RUN(mode, MPI_Alltoall, MPI_Ialltoall, MPI_IN_PLACE, 2, MPI_INT, big, 2, MPI_INT, comm);
      memcpy(big2, big, 2 * N * sizeof(int));
    } else {
      RUN(mode, MPI_Alltoall, MPI_Ialltoall, big, 2, MPI_INT, big2, 2, MPI_INT, comm);
    }
    for (int p = 0; p < N; ++p)
      for (int i = 0; i < 2; ++i) EXPECT_EQ(big2[2 * p + i], A(p, r, i), "from %d element %d", p, i);
  }
  {
    int *sc = malloc(N * sizeof(int)), *sd = malloc(N * sizeof(int)), *rc = malloc(N * sizeof(int)),
        *rd = malloc(N * sizeof(int));
    int spos = 0, rpos = 0;
    for (int p = 0; p < N; ++p) {
      sc[p] = (r + p) % 3;
      sd[p] = spos;
      spos += sc[p];
    }
    for (int p = N - 1; p >= 0; --p) {
      rc[p] = (p + r) % 3;
      rd[p] = rpos;
      rpos += rc[p];
    }
    for (int p = 0; p < N; ++p)
      for (int i = 0; i < sc[p]; ++i) big[sd[p] + i] = A(r, p, 40 + i);
    for (int i = 0; i < rpos + 1; ++i) big2[i] = -1;
    snprintf(what, sizeof what, "%s Alltoallv", form);
    RUN(mode, MPI_Alltoallv, MPI_Ialltoallv, big, sc, sd, MPI_INT, big2, rc, rd, MPI_INT, comm);
    for (int p = 0; p < N; ++p)
      for (int i = 0; i < rc[p]; ++i) EXPECT_EQ(big2[rd[p] + i], A(p, r, 40 + i), "from %d element %d", p, i);
    EXPECT_EQ(big2[rpos], -1, "element past the blocks");
    /* Alltoallv in place (rc is symmetric: rank r's block for p is p's block for r); the send
       arguments are ignored, as the standard says. */
    for (int p = 0; p < N; ++p)
      for (int i = 0; i < rc[p]; ++i) big2[rd[p] + i] = A(r, p, 60 + i);
    snprintf(what, sizeof what, "%s Alltoallv in place", form);
    RUN(mode, MPI_Alltoallv, MPI_Ialltoallv, MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, big2, rc, rd, MPI_INT, comm);
    for (int p = 0; p < N; ++p)
      for (int i = 0; i < rc[p]; ++i) EXPECT_EQ(big2[rd[p] + i], A(p, r, 60 + i), "from %d element %d", p, i);
    EXPECT_EQ(big2[rpos], -1, "element past the blocks");
    /* Alltoallw: pairs with (a+b) even exchange 1 double, odd 2 ints; byte displacements. */
    MPI_Datatype *st = malloc(N * sizeof *st), *rt = malloc(N * sizeof *rt);
    char* sb = malloc(16 * N);
    char* rb = malloc(16 * N);
    memset(rb, 0xff, 16 * N);
    for (int p = 0; p < N; ++p) {
      sd[p] = rd[p] = 16 * p;
      if ((r + p) % 2 == 0) {
        st[p] = rt[p] = MPI_DOUBLE;
        sc[p] = rc[p] = 1;
        double d = A(r, p, 50) + 0.5;
        memcpy(sb + 16 * p, &d, sizeof d);
      } else {
        st[p] = rt[p] = MPI_INT;
        sc[p] = rc[p] = 2;
        int two[2] = {A(r, p, 51), A(r, p, 52)};
        memcpy(sb + 16 * p, two, sizeof two);
      }
    }
    for (int inplace = 0; inplace < 2; ++inplace) {
      snprintf(what, sizeof what, "%s Alltoallw%s", form, inplace ? " in place" : "");
      if (inplace) {
        /* The blocks start in the receive buffer; the send arguments are ignored. */
        memcpy(rb, sb, 16 * N);
        RUN(mode, MPI_Alltoallw, MPI_Ialltoallw, MPI_IN_PLACE, NULL, NULL, NULL, rb, rc, rd, rt, comm);
      } else {
        RUN(mode, MPI_Alltoallw, MPI_Ialltoallw, sb, sc, sd, st, rb, rc, rd, rt, comm);
      }
      for (int p = 0; p < N; ++p) {
        if ((r + p) % 2 == 0) {
          double d;
          memcpy(&d, rb + 16 * p, sizeof d);
          CHECK(d == A(p, r, 50) + 0.5, "%s: from %d got %f", what, p, d);
        } else {
          int two[2];
          memcpy(two, rb + 16 * p, sizeof two);
          EXPECT_EQ(two[0], A(p, r, 51), "from %d element 0", p);
          EXPECT_EQ(two[1], A(p, r, 52), "from %d element 1", p);
        }
      }
    }
    free(st);
    free(rt);
    free(sb);
    free(rb);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
  }

  /* Reductions with predefined operations. */
  long long sum_r = (long long)N * (N - 1) / 2;
  for (int inplace = 0; inplace < 2; ++inplace) {
    int rroot = (root + inplace) % N;
    int s[3] = {r, r + 1, 2 * r}, out[3] = {-1, -1, -1};
    snprintf(what, sizeof what, "%s Reduce SUM%s to %d", form, inplace ? " in place" : "", rroot);
    if (inplace && r == rroot) memcpy(out, s, sizeof s);
    RUN(mode, MPI_Reduce, MPI_Ireduce, (inplace && r == rroot) ? MPI_IN_PLACE : s, out, 3, MPI_INT, MPI_SUM, rroot, comm);
    if (r == rroot) {
      EXPECT_EQ(out[0], sum_r, "element 0");
      EXPECT_EQ(out[1], sum_r + N, "element 1");
      EXPECT_EQ(out[2], 2 * sum_r, "element 2");
    }
    double dm = (r * 7) % N + 0.25, dmax = -1;
    snprintf(what, sizeof what, "%s Reduce MAX%s to %d", form, inplace ? " in place" : "", rroot);
    if (inplace && r == rroot) dmax = dm;
    RUN(mode, MPI_Reduce, MPI_Ireduce, (inplace && r == rroot) ? MPI_IN_PLACE : &dm, &dmax, 1, MPI_DOUBLE, MPI_MAX, rroot,
        comm);
    double want = -1;
    for (int q = 0; q < N; ++q)
      if ((q * 7) % N + 0.25 > want) want = (q * 7) % N + 0.25;
    if (r == rroot) CHECK(dmax == want, "%s: %f, expected %f", what, dmax, want);
    struct {
      int v, loc;
    } ml = {(r * 5 + 3) % 4, r}, mlo = {-1, -1};
    snprintf(what, sizeof what, "%s Reduce MINLOC%s to %d", form, inplace ? " in place" : "", rroot);
    if (inplace && r == rroot) mlo = ml;
    RUN(mode, MPI_Reduce, MPI_Ireduce, (inplace && r == rroot) ? MPI_IN_PLACE : &ml, &mlo, 1, MPI_2INT, MPI_MINLOC, rroot,
        comm);
    int wv = 99, wl = -1;
    for (int q = 0; q < N; ++q)
      if ((q * 5 + 3) % 4 < wv) wv = (q * 5 + 3) % 4, wl = q;
    if (r == rroot) {
      EXPECT_EQ(mlo.v, wv, "MINLOC value");
      EXPECT_EQ(mlo.loc, wl, "MINLOC location (lowest rank on ties)");
    }
    unsigned x = 0x5a5a0000u ^ (unsigned)r * 2654435761u, xo = 0, wx = 0;
    for (int q = 0; q < N; ++q) wx ^= 0x5a5a0000u ^ (unsigned)q * 2654435761u;
    snprintf(what, sizeof what, "%s Allreduce BXOR%s", form, inplace ? " in place" : "");
    if (inplace) xo = x;
    RUN(mode, MPI_Allreduce, MPI_Iallreduce, inplace ? MPI_IN_PLACE : &x, &xo, 1, MPI_UNSIGNED, MPI_BXOR, comm);
    EXPECT_EQ(xo, wx, "value");
    long long ls[2] = {r, (long long)r * r}, lo[2] = {-1, -1};
    snprintf(what, sizeof what, "%s Allreduce SUM long long%s", form, inplace ? " in place" : "");
    if (inplace) memcpy(lo, ls, sizeof ls);
    RUN(mode, MPI_Allreduce, MPI_Iallreduce, inplace ? MPI_IN_PLACE : ls, lo, 2, MPI_LONG_LONG, MPI_SUM, comm);
    EXPECT_EQ(lo[0], sum_r, "sum of ranks");
    EXPECT_EQ(lo[1], (long long)(N - 1) * N * (2 * N - 1) / 6, "sum of squares");
    int mx = -1, mi = (r * 3) % (N + 1);
    snprintf(what, sizeof what, "%s Allreduce MAX%s", form, inplace ? " in place" : "");
    if (inplace) mx = mi;
    RUN(mode, MPI_Allreduce, MPI_Iallreduce, inplace ? MPI_IN_PLACE : &mi, &mx, 1, MPI_INT, MPI_MAX, comm);
    int wmx = -1;
    for (int q = 0; q < N; ++q)
      if ((q * 3) % (N + 1) > wmx) wmx = (q * 3) % (N + 1);
    EXPECT_EQ(mx, wmx, "value");

    /* Reduce_scatter: p gets p%3+1 elements of the vector whose element j sums (q + j). */
    int* rc = malloc(N * sizeof(int));
    int tot = 0, mine_at = 0;
    for (int p = 0; p < N; ++p) {
      rc[p] = p % 3 + 1;
      if (p < r) mine_at += rc[p];
      tot += rc[p];
    }
    for (int j = 0; j < tot; ++j) big[j] = r + j;
    for (int j = 0; j < tot; ++j) big2[j] = -1;
    snprintf(what, sizeof what, "%s Reduce_scatter%s", form, inplace ? " in place" : "");
    if (inplace) {
      RUN(mode, MPI_Reduce_scatter, MPI_Ireduce_scatter, MPI_IN_PLACE, big, rc, MPI_INT, MPI_SUM, comm);
      memcpy(big2, big, rc[r] * sizeof(int));
    } else {
      RUN(mode, MPI_Reduce_scatter, MPI_Ireduce_scatter, big, big2, rc, MPI_INT, MPI_SUM, comm);
    }
    for (int i = 0; i < rc[r]; ++i) EXPECT_EQ(big2[i], sum_r + (long long)N * (mine_at + i), "element %d", i);
    free(rc);
    for (int j = 0; j < 2 * N; ++j) big[j] = 2 * r + j, big2[j] = -1;
    snprintf(what, sizeof what, "%s Reduce_scatter_block%s", form, inplace ? " in place" : "");
    if (inplace) {
      RUN(mode, MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, MPI_IN_PLACE, big, 2, MPI_INT, MPI_SUM, comm);
      memcpy(big2, big, 2 * sizeof(int));
    } else {
      RUN(mode, MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, big, big2, 2, MPI_INT, MPI_SUM, comm);
    }
    for (int i = 0; i < 2; ++i) EXPECT_EQ(big2[i], 2 * sum_r + (long long)N * (2 * r + i), "element %d", i);
    /* Scan / Exscan of r+1. */
    int sv = r + 1, so = -1;
    snprintf(what, sizeof what, "%s Scan%s", form, inplace ? " in place" : "");
    if (inplace) so = sv;
    RUN(mode, MPI_Scan, MPI_Iscan, inplace ? MPI_IN_PLACE : &sv, &so, 1, MPI_INT, MPI_SUM, comm);
    EXPECT_EQ(so, (r + 1) * (r + 2) / 2, "prefix sum");
    so = inplace ? sv : -1;
    snprintf(what, sizeof what, "%s Exscan%s", form, inplace ? " in place" : "");
    RUN(mode, MPI_Exscan, MPI_Iexscan, inplace ? MPI_IN_PLACE : &sv, &so, 1, MPI_INT, MPI_SUM, comm);
    if (r > 0) EXPECT_EQ(so, r * (r + 1) / 2, "exclusive prefix sum");
  }

  /* The non-commutative operation: two elements per rank (variations j = 0, 1). */
  {
    Mat in[2] = {mat_elem(r, 0), mat_elem(r, 1)}, out[2];
    int mroot = (N - 1 + round) % N;
    memset(out, 0, sizeof out);
    snprintf(what, sizeof what, "%s Reduce non-commutative to %d", form, mroot);
    RUN(mode, MPI_Reduce, MPI_Ireduce, in, out, 2, mat_type, mat_op, mroot, comm);
    if (r == mroot)
      for (int j = 0; j < 2; ++j) CHECK(mat_eq(out[j], fold(0, N, j)), "%s: element %d is not M_0 ... M_%d", what, j, N - 1);
    memset(out, 0, sizeof out);
    snprintf(what, sizeof what, "%s Allreduce non-commutative", form);
    RUN(mode, MPI_Allreduce, MPI_Iallreduce, in, out, 2, mat_type, mat_op, comm);
    for (int j = 0; j < 2; ++j) CHECK(mat_eq(out[j], fold(0, N, j)), "%s: element %d is not M_0 ... M_%d", what, j, N - 1);
    memcpy(out, in, sizeof in);
    snprintf(what, sizeof what, "%s Allreduce non-commutative in place", form);
    RUN(mode, MPI_Allreduce, MPI_Iallreduce, MPI_IN_PLACE, out, 2, mat_type, mat_op, comm);
    for (int j = 0; j < 2; ++j) CHECK(mat_eq(out[j], fold(0, N, j)), "%s: element %d is not M_0 ... M_%d", what, j, N - 1);
    memset(out, 0, sizeof out);
    snprintf(what, sizeof what, "%s Scan non-commutative", form);
    RUN(mode, MPI_Scan, MPI_Iscan, in, out, 2, mat_type, mat_op, comm);
    for (int j = 0; j < 2; ++j) CHECK(mat_eq(out[j], fold(0, r + 1, j)), "%s: element %d is not M_0 ... M_%d", what, j, r);
    memset(out, 0, sizeof out);
    snprintf(what, sizeof what, "%s Exscan non-commutative", form);
    RUN(mode, MPI_Exscan, MPI_Iexscan, in, out, 2, mat_type, mat_op, comm);
    if (r > 0)
      for (int j = 0; j < 2; ++j) CHECK(mat_eq(out[j], fold(0, r, j)), "%s: element %d is not M_0 ... M_%d", what, j, r - 1);
    /* Reduce_scatter_block: N elements, element p = mat_elem(q, p) at rank q; p gets the fold. */
    Mat* vin = malloc(N * sizeof(Mat));
    for (int p = 0; p < N; ++p) vin[p] = mat_elem(r, p);
    Mat one;
    snprintf(what, sizeof what, "%s Reduce_scatter_block non-commutative", form);
    RUN(mode, MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, vin, &one, 1, mat_type, mat_op, comm);
    CHECK(mat_eq(one, fold(0, N, r)), "%s: not the rank-ordered product", what);
    free(vin);
  }
  free(big);
  free(big2);
}

/* Three nonblocking collectives in flight at once, completed by one MPI_Waitall. */
static void overlap(MPI_Comm comm, int round) {
  int r, N;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &N);
  const char* what = "overlapped Iallreduce + Ialltoall + Ibcast";
  int root = (N / 2 + round) % N;
  long long s = r + 1, out = -1;
  int* a = malloc(N * sizeof(int));
  int* b = malloc(N * sizeof(int));
  for (int p = 0; p < N; ++p) a[p] = A(r, p, 60), b[p] = -1;
  int bc[5];
  for (int i = 0; i < 5; ++i) bc[i] = r == root ? V(root, 70 + i) : -1;
  MPI_Request q[3];
  MPI_OK(MPI_Iallreduce(&s, &out, 1, MPI_LONG_LONG, MPI_SUM, comm, &q[0]));
  MPI_OK(MPI_Ialltoall(a, 1, MPI_INT, b, 1, MPI_INT, comm, &q[1]));
  MPI_OK(MPI_Ibcast(bc, 5, MPI_INT, root, comm, &q[2]));
  MPI_OK(MPI_Waitall(3, q, MPI_STATUSES_IGNORE));
  EXPECT_EQ(out, (long long)N * (N + 1) / 2, "Iallreduce");
  for (int p = 0; p < N; ++p) EXPECT_EQ(b[p], A(p, r, 60), "Ialltoall from %d", p);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(bc[i], V(root, 70 + i), "Ibcast element %d", i);
  free(a);
  free(b);
}

/* A stream of small broadcasts (up to 32 bytes: a root leaves them without waiting for the
   others and may run ahead), 150 from each root in turn, each checked; one member (the root's
   next) stops for 2 ms twice per root, so the root runs far ahead of it (more rounds than the
   engine keeps: the root must wait for it before reusing them); every 50th call a nonblocking
   Ibcast started before and completed after a blocking one; every 100th an Allreduce. */
static void bcast_stream(MPI_Comm comm) {
  int r, N;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &N);
  const char* what = "broadcast stream";
  enum { kPerRoot = 150 };
  for (int i = 0; i < kPerRoot * N && i < 1200; ++i) {
    const int root = (i / kPerRoot) % N, n = 1 + i % 8;
    if (N > 1 && r == (root + 1) % N && (i % kPerRoot == 3 || i % kPerRoot == 80)) usleep(2000);
    int v[8], w[3] = {-1, -1, -1};
    for (int j = 0; j < 8; ++j) v[j] = r == root ? V(i, j) : -1;
    MPI_Request q = MPI_REQUEST_NULL;
    if (i % 50 == 0) {
      for (int j = 0; j < 3; ++j) w[j] = r == root ? V(i, 20 + j) : -1;
      MPI_OK(MPI_Ibcast(w, 3, MPI_INT, root, comm, &q));
    }
    MPI_OK(MPI_Bcast(v, n, MPI_INT, root, comm));
    for (int j = 0; j < 8; ++j) EXPECT_EQ(v[j], r == root || j < n ? V(i, j) : -1, "stream Bcast %d element %d", i, j);
    if (i % 50 == 0) {
      MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
      for (int j = 0; j < 3; ++j) EXPECT_EQ(w[j], V(i, 20 + j), "stream Ibcast %d element %d", i, j);
    }
    if (i % 100 == 99) {
      int s = r + i, sum = -1;
      MPI_OK(MPI_Allreduce(&s, &sum, 1, MPI_INT, MPI_SUM, comm));
      EXPECT_EQ(sum, N * (N - 1) / 2 + N * i, "stream Allreduce %d", i);
    }
  }
}

#if HAVE_PCOLL
/* Persistent collectives started again and again: their arguments are read at each start (the
   inputs change between starts); MPI_Startall and MPI_Waitall over four of them, or MPI_Start
   each and MPI_Test until done in the reverse order; an inactive request's empty status. */
static void persistent_restart(MPI_Comm comm, int round) {
  int r, N;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &N);
  char what[96];
  long long x = 0, sum = -1;
  int root = (round + 2) % N;
  int bc[6], mine[2];
  int* all = malloc(2 * (size_t)N * sizeof(int));
  MPI_Request p[4];
  MPI_OK(MPI_Allreduce_init(&x, &sum, 1, MPI_LONG_LONG, MPI_SUM, comm, MPI_INFO_NULL, &p[0]));
  MPI_OK(MPI_Bcast_init(bc, 6, MPI_INT, root, comm, MPI_INFO_NULL, &p[1]));
  MPI_OK(MPI_Allgather_init(mine, 2, MPI_INT, all, 2, MPI_INT, comm, MPI_INFO_NULL, &p[2]));
  MPI_OK(MPI_Barrier_init(comm, MPI_INFO_NULL, &p[3]));
  for (int k = 0; k < 4; ++k) {
    snprintf(what, sizeof what, "persistent collectives, start %d", k);
    x = r + 100LL * k;
    sum = -1;
    for (int i = 0; i < 6; ++i) bc[i] = r == root ? V(root + k, i) : -1;
    mine[0] = V(r, k);
    mine[1] = V(r, k + 50);
    for (int i = 0; i < 2 * N; ++i) all[i] = -1;
    if (k % 2 == 0) {
      MPI_OK(MPI_Startall(4, p));
      MPI_OK(MPI_Waitall(4, p, MPI_STATUSES_IGNORE));
    } else {
      for (int j = 0; j < 4; ++j) MPI_OK(MPI_Start(&p[j]));
      for (int j = 3; j >= 0; --j) {
        int flag = 0;
        while (!flag) MPI_OK(MPI_Test(&p[j], &flag, MPI_STATUS_IGNORE));
      }
    }
    EXPECT_EQ(sum, (long long)N * (N - 1) / 2 + 100LL * k * N, "Allreduce_init");
    for (int i = 0; i < 6; ++i) EXPECT_EQ(bc[i], V(root + k, i), "Bcast_init element %d", i);
    for (int q = 0; q < N; ++q) {
      EXPECT_EQ(all[2 * q], V(q, k), "Allgather_init from %d", q);
      EXPECT_EQ(all[2 * q + 1], V(q, k + 50), "Allgather_init from %d, second element", q);
    }
    for (int j = 0; j < 4; ++j) CHECK(p[j] != MPI_REQUEST_NULL, "%s: request %d freed by its completion", what, j);
  }
  MPI_Status st;
  st.MPI_SOURCE = -7;
  st.MPI_TAG = -7;
  MPI_OK(MPI_Wait(&p[0], &st));
  CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
        "MPI_Wait on an inactive persistent collective: source %d tag %d, expected an empty status", st.MPI_SOURCE,
        st.MPI_TAG);
  for (int j = 0; j < 4; ++j) {
    MPI_OK(MPI_Request_free(&p[j]));
    CHECK(p[j] == MPI_REQUEST_NULL, "MPI_Request_free left request %d", j);
  }
  /* A root out of range is refused by the init call, which makes no request. */
  MPI_Request bad = MPI_REQUEST_NULL;
  int rc = MPI_Bcast_init(bc, 1, MPI_INT, N, comm, MPI_INFO_NULL, &bad);
  CHECK(rk_error_class(rc) == MPI_ERR_ROOT && bad == MPI_REQUEST_NULL,
        "MPI_Bcast_init with root %d of %d: error class %d (expected MPI_ERR_ROOT), request %s", N, N, rk_error_class(rc),
        bad == MPI_REQUEST_NULL ? "null" : "made");
  free(all);
}
#endif

#if MPI_VERSION >= 4
static void large_count(MPI_Comm comm, int round) {
  int r, N;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &N);
  const char* what = "large-count forms";
  int root = (round + 1) % N;
  int bc[7];
  for (int i = 0; i < 7; ++i) bc[i] = r == root ? V(root, 80 + i) : -1;
  MPI_OK(MPI_Bcast_c(bc, (MPI_Count)7, MPI_INT, root, comm));
  for (int i = 0; i < 7; ++i) EXPECT_EQ(bc[i], V(root, 80 + i), "Bcast_c element %d", i);
  long long s = r, o = -1;
  MPI_OK(MPI_Allreduce_c(&s, &o, (MPI_Count)1, MPI_LONG_LONG, MPI_SUM, comm));
  EXPECT_EQ(o, (long long)N * (N - 1) / 2, "Allreduce_c");
  MPI_Request pq;
  o = -1;
  MPI_OK(MPI_Allreduce_init_c(&s, &o, (MPI_Count)1, MPI_LONG_LONG, MPI_SUM, comm, MPI_INFO_NULL, &pq));
  MPI_OK(MPI_Start(&pq));
  MPI_OK(MPI_Wait(&pq, MPI_STATUS_IGNORE));
  EXPECT_EQ(o, (long long)N * (N - 1) / 2, "Allreduce_init_c");
  MPI_OK(MPI_Request_free(&pq));
  MPI_Request q;
  o = -1;
  MPI_OK(MPI_Iallreduce_c(&s, &o, (MPI_Count)1, MPI_LONG_LONG, MPI_MAX, comm, &q));
  MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
  EXPECT_EQ(o, N - 1, "Iallreduce_c MAX");
  MPI_Count* cnt = malloc(N * sizeof *cnt);
  MPI_Aint* dsp = malloc(N * sizeof *dsp);
  MPI_Count* cnt2 = malloc(N * sizeof *cnt2);
  MPI_Aint* dsp2 = malloc(N * sizeof *dsp2);
  MPI_Aint pos = 0;
  for (int p = N - 1; p >= 0; --p) {
    cnt[p] = p % 2 + 1;
    dsp[p] = pos;
    pos += cnt[p];
  }
  int sv[2] = {V(r, 90), V(r, 91)};
  int* all = malloc((pos + 1) * sizeof(int));
  MPI_OK(MPI_Allgatherv_c(sv, cnt[r], MPI_INT, all, cnt, dsp, MPI_INT, comm));
  for (int p = 0; p < N; ++p)
    for (int i = 0; i < cnt[p]; ++i) EXPECT_EQ(all[dsp[p] + i], V(p, 90 + i), "Allgatherv_c block %d element %d", p, i);
  free(all);
  /* Alltoallv_c: (r+p)%2+1 ints from r to p. */
  MPI_Aint sp = 0, rp = 0;
  for (int p = 0; p < N; ++p) {
    cnt[p] = (r + p) % 2 + 1;
    dsp[p] = sp;
    sp += cnt[p];
    cnt2[p] = (p + r) % 2 + 1;
    dsp2[p] = rp;
    rp += cnt2[p];
  }
  int* sb = malloc(sp * sizeof(int));
  int* rb = malloc(rp * sizeof(int));
  for (int p = 0; p < N; ++p)
    for (int i = 0; i < cnt[p]; ++i) sb[dsp[p] + i] = A(r, p, 93 + i);
  MPI_OK(MPI_Alltoallv_c(sb, cnt, dsp, MPI_INT, rb, cnt2, dsp2, MPI_INT, comm));
  for (int p = 0; p < N; ++p)
    for (int i = 0; i < cnt2[p]; ++i) EXPECT_EQ(rb[dsp2[p] + i], A(p, r, 93 + i), "Alltoallv_c from %d element %d", p, i);
  free(sb);
  free(rb);
  /* Reduce_scatter_c: one element each, element j of the vector sums (q + j). */
  int* v = malloc(N * sizeof(int));
  for (int j = 0; j < N; ++j) v[j] = r + j, cnt[j] = 1;
  int got = -1;
  MPI_OK(MPI_Reduce_scatter_c(v, &got, cnt, MPI_INT, MPI_SUM, comm));
  EXPECT_EQ(got, (long long)N * (N - 1) / 2 + (long long)N * r, "Reduce_scatter_c");
  free(v);
  free(cnt);
  free(dsp);
  free(cnt2);
  free(dsp2);
}
#endif

int main(int argc, char** argv) {
  rk_init(&argc, &argv, "rk_coll");
  if (argc < 3) {
    rk_say("usage: rk_coll ROUNDS SPEC\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rounds = atoi(argv[1]);
  T = rk_threads_of(argv[2], rk_wrank);
  rk_layout(MPI_COMM_WORLD, T, &offset, &N_tc);
  MPI_Type_contiguous(4, MPI_INT, &mat_type);
  MPI_Type_commit(&mat_type);
  MPI_Op_create(mat_fn, 0, &mat_op);
  rk_set_stage("MPIX_Threadcomm_init");
  MPI_OK(MPIX_Threadcomm_init(MPI_COMM_WORLD, T, &tc));
  int large = 0;
  for (int round = 0; round < rounds; ++round) {
#pragma omp parallel num_threads(T)
    {
      if (omp_get_num_threads() != T) MPI_Abort(MPI_COMM_WORLD, 5);
      MPI_OK(MPIX_Threadcomm_start(tc));
      int r = -1;
      MPI_Comm_rank(tc, &r);
      rk_my = r;
      if (r == offset) rk_set_stage("blocking collectives");
      suite(tc, kBlocking, round, 1);
      MPI_OK(MPI_Barrier(tc));
      if (r == offset) rk_set_stage("nonblocking collectives");
      suite(tc, kNonblocking, round, 1);
      MPI_OK(MPI_Barrier(tc));
#if HAVE_PCOLL
      if (r == offset) rk_set_stage("persistent collectives");
      suite(tc, kPersistent, round, 1);
      persistent_restart(tc, round);
      MPI_OK(MPI_Barrier(tc));
#endif
      if (r == offset) rk_set_stage("a stream of small broadcasts");
      bcast_stream(tc);
      MPI_OK(MPI_Barrier(tc));
      if (r == offset) rk_set_stage("overlapped nonblocking collectives");
      overlap(tc, round);
      MPI_OK(MPI_Barrier(tc));
      if (r == offset) rk_set_stage("collectives on a split");
      MPI_Comm s = MPI_COMM_NULL;
      MPI_OK(MPI_Comm_split(tc, r % 2, N_tc - r, &s));
      suite(s, kBlocking, round, 0);
      bcast_stream(s);
      overlap(s, round);
#if HAVE_PCOLL
      persistent_restart(s, round);
#endif
      MPI_OK(MPI_Comm_free(&s));
      if (r == offset) rk_set_stage("collectives on a dup");
      MPI_Comm d = MPI_COMM_NULL;
      MPI_OK(MPI_Comm_dup(tc, &d));
      suite(d, kBlocking, round, 0);
      suite(d, kNonblocking, round, 0);
      overlap(d, round);
      MPI_OK(MPI_Comm_free(&d));
#if MPI_VERSION >= 4
      if (r == offset) rk_set_stage("large-count collectives");
      MPI_OK(MPI_Barrier(tc));
      large_count(tc, round);
      if (r == offset) large = 1;
#endif
      if (r == offset) rk_set_stage("end of region");
      MPI_OK(MPI_Barrier(tc));
      MPI_OK(MPIX_Threadcomm_finish(tc));
      rk_my = -1;
    }
  }
  rk_set_stage("MPIX_Threadcomm_free");
  MPI_OK(MPIX_Threadcomm_free(&tc));
  MPI_Op_free(&mat_op);
  MPI_Type_free(&mat_type);
  rk_say("rk_coll: rank %d: %d threads of %d thread-ranks, %d rounds%s%s\n", rk_wrank, T, N_tc, rounds,
         HAVE_PCOLL ? ", persistent forms" : "", large ? ", large-count forms" : "");
  return rk_finish();
}
