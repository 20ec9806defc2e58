/* rk_p2p_match: matching between thread-ranks: wildcards, probes, order, large messages.
   usage: rk_p2p_match ROUNDS SPEC [MESSAGES]   (SPEC as in rk_layout; MESSAGES per ordered
                                                 pair in part c, default 30)

   r = thread-rank, N = size; every rank sends to r+1 and r+2 (mod N; with N <= 2 these are
   the same rank or the rank itself, so one source then sends two messages with one tag, which
   must arrive in sending order).
     a. wildcards: 4 tags x 2 destinations, received with (MPI_ANY_SOURCE, MPI_ANY_TAG), then
        (MPI_ANY_SOURCE, tag), then (source, MPI_ANY_TAG): status source and tag, MPI_Get_count
        (tag k carries k+1 ints) and contents checked, every message exactly once and in order
        per (source, tag);
     b. probe -> allocate -> receive of sizes the receiver does not know (0 B to 64 KiB + r):
        MPI_Probe + MPI_Recv, MPI_Iprobe loop + MPI_Recv, MPI_Mprobe + MPI_Mrecv, MPI_Improbe
        loop + MPI_Imrecv + MPI_Wait, always with full wildcards;
     c. order: every ordered pair (a, b), self and across processes, MESSAGES numbered messages
        with one tag, every fifth of 64 KiB (eager and rendezvous mixed in one stream); the
        receiver takes them per source, then (second tag) with MPI_ANY_SOURCE: the numbers
        must rise by one per source;
     d. 4 MiB messages: to r+1 and to r+N/2, received from r-1 and r-N/2 (intra- and
        inter-process), every element checked;
     e. large copies a receiver shares with its waiting sender (delivery.cpp): to r+1, sizes
        around where sharing starts and not a multiple of its chunks (128 KiB - 4 B to 1 MiB +
        12 B), the sender waiting in MPI_Send, MPI_Ssend, MPI_Wait, an MPI_Test loop and a
        persistent send started three times; a 1 MiB message into a 600 KiB receive
        (MPI_ERR_TRUNCATE, the part that fits correct, the rest of a larger buffer untouched);
        a vector receive type (not shared). Every element checked. */
#include <omp.h>

#include "ranks_util.h"

enum { kLarge = 16384, kHuge = 1 << 20 /* ints: 4 MiB */ };

static MPI_Comm tc;
static int N, T, offset, messages = 30;

#define STAGE(name)                       \
  do {                                    \
    if (r == offset) rk_set_stage(name); \
    MPI_OK(MPI_Barrier(tc));              \
  } while (0)

/* The destinations of r: d[0] = r+1, d[1] = r+2. The j-th message of a sender with one tag is
   the j-th destination equal to the receiver. */
static int dest_of(int a, int j) { return (a + 1 + j) % N; }

/* ---- a. wildcards ---- */
enum { kTags = 4 };
static void part_wildcards(int r, int round) {
  int out[2][kTags][kTags + 1];
  MPI_Request sq[2 * kTags];
  for (int j = 0; j < 2; ++j)
    for (int k = 0; k < kTags; ++k) {
      int d = dest_of(r, j);
      pattern_fill(out[j][k], k + 1, r, d, 10 + k, round * 2 + j);
    }
  for (int mode = 0; mode < 3; ++mode) {
    int base = 10 + 20 * mode; /* tags per mode: base + k */
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < kTags; ++k) {
        /* the payload was made with tag 10+k; the message travels with base+k */
        MPI_OK(MPI_Isend(out[j][k], k + 1, MPI_INT, dest_of(r, j), base + k, tc, &sq[j * kTags + k]));
      }
    /* Expected: from source s, j-th messages s sends to r. next[s][k] = how many taken. */
    int* next = calloc(N * kTags, sizeof(int));
    int got_total = 0;
    for (int i = 0; i < 2 * kTags; ++i) {
      int src = MPI_ANY_SOURCE, tag = MPI_ANY_TAG;
      if (mode == 1) tag = base + (i % kTags);
      if (mode == 2) {
        /* the i-th receive names a source: (r-1) for the first 4, (r-2) for the next 4 */
        src = (r - 1 - i / kTags + 2 * N) % N;
      }
      int in[kTags + 8];
      MPI_Status st;
      MPI_OK(MPI_Recv(in, kTags + 8, MPI_INT, src, tag, tc, &st));
      int s = st.MPI_SOURCE, k = st.MPI_TAG - base, c = -1;
      MPI_Get_count(&st, MPI_INT, &c);
      CHECK(s >= 0 && s < N && k >= 0 && k < kTags, "mode %d: status source %d tag %d", mode, s, st.MPI_TAG);
      if (!(s >= 0 && s < N && k >= 0 && k < kTags)) continue;
      if (src != MPI_ANY_SOURCE) CHECK(s == src, "mode %d: asked source %d, status says %d", mode, src, s);
      if (tag != MPI_ANY_TAG) CHECK(st.MPI_TAG == tag, "mode %d: asked tag %d, status says %d", mode, tag, st.MPI_TAG);
      CHECK(c == k + 1, "mode %d: count %d for tag %d", mode, c, st.MPI_TAG);
      /* which j: the next[s][k]-th destination of s equal to r */
      int nth = next[s * kTags + k]++, j = -1;
      for (int jj = 0, seen = 0; jj < 2; ++jj)
        if (dest_of(s, jj) == r) {
          if (seen == nth) j = jj;
          ++seen;
        }
      CHECK(j >= 0, "mode %d: message %d from %d with tag %d is one too many", mode, nth, s, st.MPI_TAG);
      if (j >= 0) CHECK(pattern_verify(in, k + 1, s, r, 10 + k, round * 2 + j) < 0,
                        "mode %d: from %d tag %d: wrong contents (not message %d of that pair, order?)", mode, s, st.MPI_TAG, j);
      ++got_total;
    }
    free(next);
    MPI_OK(MPI_Waitall(2 * kTags, sq, MPI_STATUSES_IGNORE));
    CHECK(got_total == 2 * kTags, "mode %d: %d messages", mode, got_total);
    MPI_OK(MPI_Barrier(tc));
  }
}

/* ---- b. probe -> allocate -> receive ---- */
static int unknown_size(int a, int j, int k) {
  if (k == 1) return 0;
  if (k == 2) return kLarge + a;
  return (a * 37 + j * 11 + k * 101) % 500 + 1;
}
static void part_probe(int r, int round) {
  for (int how = 0; how < 4; ++how) {
    int tagbase = 200 + 10 * how;
    int* out[2][3];
    MPI_Request sq[6];
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) {
        int n = unknown_size(r, j, k), d = dest_of(r, j);
        out[j][k] = malloc((n + 1) * sizeof(int));
        pattern_fill(out[j][k], n, r, d, tagbase + k, round * 2 + j);
        MPI_OK(MPI_Isend(out[j][k], n, MPI_INT, d, tagbase + k, tc, &sq[j * 3 + k]));
      }
    int* next = calloc(N * 3, sizeof(int));
    for (int i = 0; i < 6; ++i) {
      MPI_Status st;
      MPI_Message msg = MPI_MESSAGE_NULL;
      int flag = 0;
      switch (how) {
        case 0: MPI_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, tc, &st)); break;
        case 1:
          while (!flag) MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, tc, &flag, &st));
          break;
        case 2: MPI_OK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, tc, &msg, &st)); break;
        case 3:
          while (!flag) MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, tc, &flag, &msg, &st));
          break;
      }
      int s = st.MPI_SOURCE, k = st.MPI_TAG - tagbase, n = -1;
      MPI_Get_count(&st, MPI_INT, &n);
      CHECK(s >= 0 && s < N && k >= 0 && k < 3 && n >= 0, "probe %d: status source %d tag %d count %d", how, s, st.MPI_TAG, n);
      if (!(s >= 0 && s < N && k >= 0 && k < 3 && n >= 0)) break;
      int* in = malloc((n + 1) * sizeof(int));
      MPI_Status st2;
      if (how < 2) {
        MPI_OK(MPI_Recv(in, n, MPI_INT, s, st.MPI_TAG, tc, &st2));
      } else if (how == 2) {
        MPI_OK(MPI_Mrecv(in, n, MPI_INT, &msg, &st2));
        CHECK(msg == MPI_MESSAGE_NULL, "Mrecv left the message handle set");
      } else {
        MPI_Request rq;
        MPI_OK(MPI_Imrecv(in, n, MPI_INT, &msg, &rq));
        MPI_OK(MPI_Wait(&rq, &st2));
      }
      int c2 = -1;
      MPI_Get_count(&st2, MPI_INT, &c2);
      CHECK(st2.MPI_SOURCE == s && st2.MPI_TAG == st.MPI_TAG && c2 == n,
            "probe %d: received source %d tag %d count %d, probed %d %d %d", how, st2.MPI_SOURCE, st2.MPI_TAG, c2, s, st.MPI_TAG, n);
      int nth = next[s * 3 + k]++, j = -1;
      for (int jj = 0, seen = 0; jj < 2; ++jj)
        if (dest_of(s, jj) == r) {
          if (seen == nth) j = jj;
          ++seen;
        }
      CHECK(j >= 0, "probe %d: one message too many from %d tag %d", how, s, st.MPI_TAG);
      if (j >= 0) {
        CHECK(n == unknown_size(s, j, k), "probe %d: from %d tag %d count %d, expected %d", how, s, st.MPI_TAG, n, unknown_size(s, j, k));
        CHECK(pattern_verify(in, n, s, r, tagbase + k, round * 2 + j) < 0, "probe %d: from %d tag %d: wrong contents", how, s, st.MPI_TAG);
      }
      free(in);
    }
    free(next);
    MPI_OK(MPI_Waitall(6, sq, MPI_STATUSES_IGNORE));
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) free(out[j][k]);
    MPI_OK(MPI_Barrier(tc));
  }
}

/* ---- c. order ---- */
static int order_count(int seq) { return seq % 5 == 4 ? kLarge : 2; }
static void part_order(int r, int round) {
  for (int pass = 0; pass < 2; ++pass) {
    int tag = 300 + pass;
    int total = N * messages;
    int** bufs = malloc(total * sizeof *bufs);
    MPI_Request* sq = malloc(total * sizeof *sq);
    for (int s = 0; s < messages; ++s)
      for (int k = 0; k < N; ++k) {
        int b = (r + k) % N, i = s * N + k, n = order_count(s);
        bufs[i] = malloc(n * sizeof(int));
        pattern_fill(bufs[i], n, r, b, tag, round);
        bufs[i][0] = s; /* the number */
        MPI_OK(MPI_Isend(bufs[i], n, MPI_INT, b, tag, tc, &sq[i]));
      }
    int* next = calloc(N, sizeof(int));
    int* in = malloc(kLarge * sizeof(int));
    int bad_order = 0, bad_data = 0;
    for (int i = 0; i < total; ++i) {
      int src = pass == 0 ? (r - 1 - i / messages + 2 * N) % N : MPI_ANY_SOURCE;
      MPI_Status st;
      MPI_OK(MPI_Recv(in, kLarge, MPI_INT, src, tag, tc, &st));
      int a = st.MPI_SOURCE, c = -1;
      MPI_Get_count(&st, MPI_INT, &c);
      if (a < 0 || a >= N) {
        CHECK(0, "order: status source %d", a);
        break;
      }
      int want = next[a]++;
      if (in[0] != want) {
        if (bad_order++ < 3) CHECK(in[0] == want, "order pass %d: from %d got number %d, expected %d", pass, a, in[0], want);
        continue;
      }
      if (c != order_count(want)) {
        bad_data++;
        continue;
      }
      int expect0 = in[0];
      in[0] = pattern_val(a, r, tag, round, 0);
      if (pattern_verify(in, c, a, r, tag, round) >= 0) bad_data++;
      in[0] = expect0;
    }
    CHECK(bad_order == 0, "order pass %d: %d messages out of order", pass, bad_order);
    CHECK(bad_data == 0, "order pass %d: %d messages with wrong size or contents", pass, bad_data);
    for (int a = 0; a < N; ++a) CHECK(next[a] == messages, "order pass %d: %d messages from %d", pass, next[a], a);
    MPI_OK(MPI_Waitall(total, sq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < total; ++i) free(bufs[i]);
    free(bufs);
    free(sq);
    free(next);
    free(in);
    MPI_OK(MPI_Barrier(tc));
  }
}

/* ---- d. 4 MiB ---- */
static void part_huge(int r, int round) {
  int to[2] = {(r + 1) % N, (r + N / 2) % N};
  int from[2] = {(r - 1 + N) % N, (r - N / 2 + N) % N};
  int* out[2];
  int* in[2];
  MPI_Request rq[4];
  MPI_Status st[4];
  for (int j = 0; j < 2; ++j) {
    out[j] = malloc(kHuge * sizeof(int));
    in[j] = malloc(kHuge * sizeof(int));
    MPI_OK(MPI_Irecv(in[j], kHuge, MPI_INT, from[j], 400 + j, tc, &rq[j]));
  }
  for (int j = 0; j < 2; ++j) {
    pattern_fill(out[j], kHuge, r, to[j], 400 + j, round);
    MPI_OK(MPI_Isend(out[j], kHuge, MPI_INT, to[j], 400 + j, tc, &rq[2 + j]));
  }
  MPI_OK(MPI_Waitall(4, rq, st));
  for (int j = 0; j < 2; ++j) {
    int c = -1;
    MPI_Get_count(&st[j], MPI_INT, &c);
    CHECK(st[j].MPI_SOURCE == from[j] && st[j].MPI_TAG == 400 + j && c == kHuge, "4 MiB from %d: status %d %d %d",
          from[j], st[j].MPI_SOURCE, st[j].MPI_TAG, c);
    int bad = pattern_verify(in[j], kHuge, from[j], r, 400 + j, round);
    CHECK(bad < 0, "4 MiB from %d: element %d wrong", from[j], bad);
    free(in[j]);
    free(out[j]);
  }
  /* Blocking 4 MiB around the ring with Sendrecv_replace. */
  int* buf = malloc(kHuge * sizeof(int));
  pattern_fill(buf, kHuge, r, to[0], 402, round);
  MPI_Status s1;
  MPI_OK(MPI_Sendrecv_replace(buf, kHuge, MPI_INT, to[0], 402, from[0], 402, tc, &s1));
  CHECK(pattern_verify(buf, kHuge, from[0], r, 402, round) < 0, "4 MiB Sendrecv_replace: wrong data");
  free(buf);
}

/* ---- e. shared copies ---- */
static void check_ints(const int* in, int n, int from, int r, int tag, int round, const char* what) {
  int bad = pattern_verify(in, n, from, r, tag, round);
  CHECK(bad < 0, "%s of %d ints from %d: element %d wrong", what, n, from, bad);
}

static void part_shared(int r, int round) {
  const int to = (r + 1) % N, from = (r - 1 + N) % N;
  static const int sizes[] = {32767, 32768, 32771, 65536 + 5, 262144 + 3};  /* ints */
  enum { kMax = 262144 + 3 };
  int* out = malloc(kMax * sizeof(int));
  int* in = malloc((kMax + 16) * sizeof(int));
  for (int w = 0; w < 4; ++w) /* how the sender waits */
    for (unsigned k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
      const int n = sizes[k], tag = 500 + w;
      MPI_Request rq, sq;
      MPI_Status st;
      MPI_OK(MPI_Irecv(in, n, MPI_INT, from, tag, tc, &rq));
      pattern_fill(out, n, r, to, tag, round + (int)k);
      if (w == 0) {
        MPI_OK(MPI_Send(out, n, MPI_INT, to, tag, tc));
      } else if (w == 1) {
        MPI_OK(MPI_Ssend(out, n, MPI_INT, to, tag, tc));
      } else if (w == 2) {
        MPI_OK(MPI_Isend(out, n, MPI_INT, to, tag, tc, &sq));
        MPI_OK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
      } else {
        int done = 0;
        MPI_OK(MPI_Isend(out, n, MPI_INT, to, tag, tc, &sq));
        while (!done) MPI_OK(MPI_Test(&sq, &done, MPI_STATUS_IGNORE));
      }
      MPI_OK(MPI_Wait(&rq, &st));
      int c = -1;
      MPI_Get_count(&st, MPI_INT, &c);
      CHECK(c == n && st.MPI_SOURCE == from, "wait %d, %d ints: count %d from %d", w, n, c, st.MPI_SOURCE);
      check_ints(in, n, from, r, tag, round + (int)k, "a shared copy");
    }
  /* A persistent send started three times, the payload changing. */
  MPI_Request ps;
  const int n = 65536 + 5;
  MPI_OK(MPI_Send_init(out, n, MPI_INT, to, 510, tc, &ps));
  for (int i = 0; i < 3; ++i) {
    MPI_Request rq;
    MPI_OK(MPI_Irecv(in, n, MPI_INT, from, 510, tc, &rq));
    pattern_fill(out, n, r, to, 510, round * 3 + i);
    MPI_OK(MPI_Start(&ps));
    MPI_OK(MPI_Wait(&ps, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    check_ints(in, n, from, r, 510, round * 3 + i, "a persistent send");
  }
  MPI_OK(MPI_Request_free(&ps));
  /* Truncation: 1 MiB into 600 KiB (153600 ints) of a larger buffer. */
  {
    const int big = 262144, fits = 153600;
    for (int i = 0; i < kMax + 16; ++i) in[i] = -7;
    MPI_Request rq;
    MPI_Status st;
    MPI_OK(MPI_Irecv(in, fits, MPI_INT, from, 511, tc, &rq));
    pattern_fill(out, big, r, to, 511, round);
    MPI_OK(MPI_Send(out, big, MPI_INT, to, 511, tc));
    int rc = MPI_Wait(&rq, &st);
    CHECK(rk_error_class(rc) == MPI_ERR_TRUNCATE, "1 MiB into 600 KiB: class %d, expected MPI_ERR_TRUNCATE", rk_error_class(rc));
    check_ints(in, fits, from, r, 511, round, "a truncated receive");
    int spill = -1;
    for (int i = fits; i < kMax + 16 && spill < 0; ++i)
      if (in[i] != -7) spill = i;
    CHECK(spill < 0, "1 MiB into 600 KiB: element %d beyond the receive written", spill);
  }
  /* A vector receive type: the copy goes through the MPI's unpacking, not shared. */
  {
    const int blocks = 65536, n = 2 * blocks; /* 512 KiB of ints in blocks of 2, stride 3 */
    MPI_Datatype v;
    MPI_OK(MPI_Type_vector(blocks, 2, 3, MPI_INT, &v));
    MPI_OK(MPI_Type_commit(&v));
    int* vin = malloc((size_t)3 * blocks * sizeof(int));
    for (int i = 0; i < 3 * blocks; ++i) vin[i] = -7;
    MPI_Request rq;
    MPI_OK(MPI_Irecv(vin, 1, v, from, 512, tc, &rq));
    pattern_fill(out, n, r, to, 512, round);
    MPI_OK(MPI_Send(out, n, MPI_INT, to, 512, tc));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    int bad = -1;
    for (int b = 0; b < blocks && bad < 0; ++b)
      if (vin[3 * b] != pattern_val(from, r, 512, round, 2 * b) || vin[3 * b + 1] != pattern_val(from, r, 512, round, 2 * b + 1) ||
          vin[3 * b + 2] != -7)
        bad = b;
    CHECK(bad < 0, "a vector receive of 512 KiB: block %d wrong", bad);
    free(vin);
    MPI_OK(MPI_Type_free(&v));
  }
  free(in);
  free(out);
}

int main(int argc, char** argv) {
  rk_init(&argc, &argv, "rk_p2p_match");
  if (argc < 3) {
    rk_say("usage: rk_p2p_match ROUNDS SPEC [MESSAGES]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rounds = atoi(argv[1]);
  T = rk_threads_of(argv[2], rk_wrank);
  if (argc > 3) messages = atoi(argv[3]);
  rk_layout(MPI_COMM_WORLD, T, &offset, &N);
  rk_set_stage("MPIX_Threadcomm_init");
  MPI_OK(MPIX_Threadcomm_init(MPI_COMM_WORLD, T, &tc));
  for (int round = 0; round < rounds; ++round) {
#pragma omp parallel num_threads(T)
    {
      if (omp_get_num_threads() != T) MPI_Abort(MPI_COMM_WORLD, 5);
      MPI_OK(MPIX_Threadcomm_start(tc));
      int r = -1;
      MPI_Comm_rank(tc, &r);
      rk_my = r;
      STAGE("a. wildcards");
      part_wildcards(r, round);
      STAGE("b. probe -> allocate -> receive");
      part_probe(r, round);
      STAGE("c. order");
      part_order(r, round);
      STAGE("d. 4 MiB");
      part_huge(r, round);
      STAGE("e. shared copies");
      part_shared(r, round);
      STAGE("end of region");
      MPI_OK(MPIX_Threadcomm_finish(tc));
      rk_my = -1;
    }
  }
  rk_set_stage("MPIX_Threadcomm_free");
  MPI_OK(MPIX_Threadcomm_free(&tc));
  rk_say("rk_p2p_match: rank %d: %d threads of %d thread-ranks, %d rounds\n", rk_wrank, T, N, rounds);
  return rk_finish();
}
